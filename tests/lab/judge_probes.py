"""What the judge's run-time probes run first in a child process: load the judge's own files
(``_enforce``, ``family``) from the folder given as argv[1], then numpy and torch; the rule is
argv[2] as JSON. Each probe appends its own lines (tests/lab/test_judge_*.py)."""

PROBE_PRELUDE = """
import importlib.util, json, sys
here = sys.argv[1]

def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{here}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

import numpy, torch
rule = json.loads(sys.argv[2])
calls = []
"""


def first_static_finding(code: str, exercise_id: str) -> list[tuple[str, int]]:
    """The static scan's first finding (name, line) for ``y = code`` on line 4 of a small file,
    under the exercise's forbidden names; [] when the scan finds nothing."""
    from minimodel.lab.exercises import aliases, get_exercise
    from minimodel.lab.exercises.astscan import scan_source
    from minimodel.lab.exercises.judge import forbidden_names

    found = scan_source(f"import torch\n\nx = f = 1\ny = {code}\n",
                        forbidden_names(get_exercise(exercise_id)), None, aliases.table())
    return [(f.name, f.line) for f in found][:1]


def verdict(exercise, source, tmp_path):
    """The judge's result for ``source`` saved as a solution file, on a fixed seed."""
    from minimodel.lab.exercises import check_solution

    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    return check_solution(exercise, path, seed=3)


def refused(result):
    """(name, line) of every forbidden use the result reports."""
    return [(f["name"], f["line"]) for f in result["forbidden"]]
