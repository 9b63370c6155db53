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
