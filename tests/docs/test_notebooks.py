"""Lessons as Jupyter notebooks: generated from the lesson's one source, and an exercise checked
in place through the same judge and the same progress as `minimodel exercise check`."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
import textwrap

import nbformat
import numpy as np
import pytest

from minimodel.cli import main
from minimodel.lab.lessons import find_lesson, load_lessons
from minimodel.lab.notebook import exercise, solution_source
from minimodel.lab.progress import Progress
from minimodel.site.notebooks import (lesson_notebook, notebook_output_problems,
                                      write_notebook)

nbclient = pytest.importorskip("nbclient", reason="the notebook extra: pip install -e .[notebook]")


def _code(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_notebook_is_the_lesson_code_then_the_exercise(demo_lessons):
    lesson = find_lesson("runnable-demo", demo_lessons)
    for lang in ("en", "es"):
        notebook = lesson_notebook(lesson, lang, demo_lessons)
        code = _code(notebook)
        assert code[0].startswith("import numpy as np") and "print(E[[2, 0, 2]])" in code[0]
        assert "plt.show()" in code[1]
        markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        assert "```output" not in markdown and "[[4. 5.]" not in markdown   # the cell prints it
        assert "```bash\nminimodel lab notebook 99" in markdown        # shown, not a %%bash cell
        assert "$$" in markdown and "title:" not in markdown
        assert "!!!" not in markdown and "> **" in markdown             # admonition as a quote
        assert "def embed(ids, E):" in code[2] and "NotImplementedError" in code[2]
        assert f'exercise("embedding-lookup", lang="{lang}")' in code[3]
        assert "ex.check(embed)" in code[3]
        assert notebook.metadata["minimodel"] == {"lesson": lesson.stem, "lang": lang}


def test_a_learners_notebook_is_kept_unless_forced(tmp_path, demo_lessons):
    lesson = find_lesson("runnable-demo", demo_lessons)
    path, written = write_notebook(lesson, "es", tmp_path, lessons_dir=demo_lessons)
    assert written and path.name == "runnable-demo.es.ipynb"
    path.write_text(path.read_text(encoding="utf-8").replace("fila 0", "mi fila"),
                    encoding="utf-8")
    assert write_notebook(lesson, "es", tmp_path, lessons_dir=demo_lessons) == (path, False)
    assert "mi fila" in path.read_text(encoding="utf-8")
    write_notebook(lesson, "es", tmp_path, force=True, lessons_dir=demo_lessons)
    assert "mi fila" not in path.read_text(encoding="utf-8")


def test_the_command_writes_the_notebook(tmp_path, capsys):
    lesson = load_lessons()[0]
    assert main(["lab", "notebook", str(lesson.number), "--out", str(tmp_path),
                 "--no-open", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["lesson"] == lesson.stem and report["written"] is True
    assert nbformat.read(report["path"], as_version=4).cells
    assert main(["lab", "notebook", "no-such-lesson", "--out", str(tmp_path)]) == 2
    assert "the lessons are" in capsys.readouterr().err


def test_all_writes_every_lesson_so_links_between_notebooks_land(tmp_path, capsys):
    lessons = load_lessons()
    mine = tmp_path / f"{lessons[2].stem}.es.ipynb"
    mine.write_text("{}", encoding="utf-8")                    # a learner's notebook: kept
    assert main(["lab", "notebook", "all", "--lang", "es", "--out", str(tmp_path),
                 "--no-open", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [n["lesson"] for n in report["notebooks"]] == [lesson.stem for lesson in lessons]
    assert [n["written"] for n in report["notebooks"]].count(False) == 1
    assert mine.read_text(encoding="utf-8") == "{}"
    notebook = nbformat.read(tmp_path / f"{lessons[12].stem}.es.ipynb", as_version=4)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    targets = set(re.findall(r"\]\(([\w-]+\.es\.ipynb)", markdown))
    assert targets and all((tmp_path / name).is_file() for name in targets)
    assert main(["lab", "notebook", "01", "--out", str(tmp_path / "one"), "--no-open"]) == 0
    assert "minimodel lab notebook all" in capsys.readouterr().out     # the others are missing


def test_a_function_is_sent_with_the_imports_and_helpers_it_uses(tmp_path):
    cells = tmp_path / "cells.py"        # top-level code, as a notebook's cells define it
    cells.write_text("import numpy as np\nfrom numpy import take\n\n\n"
                     "def helper(ids):\n    return np.asarray(ids)\n\n\n"
                     "def embed(ids, E):\n    return take(E, helper(ids), axis=0)\n",
                     encoding="utf-8")
    spec = importlib.util.spec_from_file_location("__main__", cells)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source, shown_as = solution_source(module.embed)
    assert "import numpy as np" in source and "from numpy import take" in source
    assert "def helper(ids):" in source and "def embed(ids, E):" in source
    assert source.index("def helper") < source.index("def embed")
    assert shown_as == "embed()"
    with pytest.raises(TypeError, match="check\\(\\) takes your function"):
        solution_source(42)


def test_constants_ufuncs_and_classes_go_along_and_the_rest_is_refused(tmp_path, monkeypatch):
    # Regression: a notebook helper `_erf = np.vectorize(...)` (lesson 11's own trick) made
    # ex.check(gelu) crash with AttributeError: 'vectorize' object has no attribute
    # '__qualname__'; and a notebook variable named like an attribute (`mean`, read as
    # `x.mean()`) must not be pulled in.
    cells = tmp_path / "cells.py"
    cells.write_text(textwrap.dedent("""\
        import math
        import numpy as np
        from numpy import sqrt
        C = 0.044715
        mean = np.zeros(3)
        _erf = np.vectorize(math.erf)


        class Scale:
            k = 0.5


        def gelu(x):
            inner = sqrt(2 / math.pi) * (x + C * x ** 3)
            return Scale.k * x * (1 + np.tanh(inner)) + 0 * x.mean()


        def gelu_erf(x):
            return 0.5 * x * (1 + _erf(x / math.sqrt(2)))
        """), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("__main__", cells)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "__main__", module)   # where a kernel's classes live
    source, _ = solution_source(module.gelu)
    assert source.splitlines()[:4] == ["import math", "import numpy as np",
                                       "from numpy import sqrt", "C = 0.044715"]
    assert "class Scale:" in source and "mean =" not in source
    namespace: dict = {}
    exec(source, namespace)            # the judge's fresh process sees the same function
    assert abs(namespace["gelu"](np.array(1.0)) - 0.8412) < 1e-4
    for lang, words in (("en", "reads the notebook variable _erf (a vectorize)"),
                        ("es", "lee la variable del cuaderno _erf (un vectorize)")):
        with pytest.raises(ValueError, match=re.escape(words)):
            solution_source(module.gelu_erf, lang)
        # In the notebook: a failed verdict that says why, no traceback, nothing recorded.
        verdict = exercise("gelu-tanh", lang, learner_dir=tmp_path / "learner").check(
            module.gelu_erf)
        assert not verdict.passed and words in repr(verdict)
        assert Progress(tmp_path / "learner").get("exercise", "gelu-tanh") is None


# the learner's own right answer (the lab's reference, `return E[ids]`, typed verbatim is a
# copy: practice, never recorded)
RIGHT = "def embed(ids, E):\n    rows = E[ids]\n    return rows\n"
WRONG = "def embed(ids, E):\n    return E[ids] * 2\n"


def test_the_notebook_runs_and_checks_through_the_judge(tmp_path, monkeypatch, demo_lessons):
    """The generated notebook, executed by a real kernel: the lesson's cells run, the stub
    fails the check, a right `embed` passes, a wrong one fails, hints climb, the solution is
    shown once tried, and progress lands in the learner folder as the CLI records it."""
    learner = tmp_path / "learner"
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(learner))
    monkeypatch.delenv("MPLBACKEND", raising=False)     # the kernel's inline backend draws
    notebook = lesson_notebook(find_lesson("runnable-demo", demo_lessons), "en", demo_lessons)
    stub_check = len(notebook.cells) - 2
    notebook.cells.append(nbformat.v4.new_code_cell(textwrap.dedent("""\
        stub_verdict = _
        assert not stub_verdict.passed, stub_verdict
        """)))
    notebook.cells += [nbformat.v4.new_code_cell(RIGHT + "right = ex.check(embed)\n"
                                                 "assert right.passed, right"),
                       nbformat.v4.new_code_cell(WRONG + "wrong = ex.check(embed)\n"
                                                 "assert not wrong.passed, wrong\nwrong"),
                       nbformat.v4.new_code_cell("ex.hint()"),
                       nbformat.v4.new_code_cell("ex.hint()"),
                       nbformat.v4.new_code_cell("ex.solution()")]
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    lesson_cells = [cell.outputs for cell in notebook.cells if cell.cell_type == "code"]
    assert any("[[4. 5.]" in o.get("text", "") for o in lesson_cells[0])
    # what the cells printed agrees with the lesson's output blocks, by the lesson check's rule
    demo = find_lesson("runnable-demo", demo_lessons).path("en", demo_lessons)
    assert notebook_output_problems(notebook, demo) == ([], [])
    for old, new, drift in (("4.", "7.", True), ("[[", "[", False)):   # a value, a shape
        changed = copy.deepcopy(notebook)
        first = next(cell for cell in changed.cells if cell.cell_type == "code")
        for out in first.outputs:
            out["text"] = out.get("text", "").replace(old, new)
        problems, drifts = notebook_output_problems(changed, demo)
        [found] = drifts if drift else problems
        assert "runnable-demo.md:" in found and not (problems if drift else drifts)
    assert any("image/png" in o.get("data", {}) for o in lesson_cells[1])   # the figure
    verdict_html = [o["data"]["text/html"] for o in notebook.cells[stub_check].outputs
                    if "text/html" in o.get("data", {})]
    assert verdict_html and "NOT PASSED" in verdict_html[0]
    # Hints and the solution are printed once: no second, quoted copy as the cell's value.
    first, second, shown = ([o for o in cell.outputs] for cell in notebook.cells[-3:])
    assert [o["output_type"] for o in first + second + shown] == ["stream"] * 3
    assert first[0]["text"].startswith("Hint 1 of 3") and second[0]["text"].startswith("Hint 2")
    assert "def embed" in shown[0]["text"] and "solution viewed" in shown[0]["text"]
    wrong_html = [o["data"]["text/html"] for o in notebook.cells[-4].outputs
                  if "text/html" in o.get("data", {})]
    assert len(wrong_html) == 1 and wrong_html[0].count("cases passed") == 1   # said once
    record = Progress(learner).get("exercise", "embedding-lookup")
    assert record["status"] == "passed" and record["attempts"] == 3
    assert record["hint_level"] == 2 and record["solution_viewed"] is True
    assert record["file"] == "notebook:embed()"


def test_the_command_speaks_spanish(tmp_path, capsys):
    assert main(["lab", "notebook", "01", "--lang", "es", "--out", str(tmp_path),
                 "--no-open"]) == 0
    out = capsys.readouterr().out
    first = load_lessons()[0].stem                    # lesson 01: the first in path.yaml
    assert out.startswith("escrito ") and f"{first}.es.ipynb" in out
    assert main(["lab", "notebook", "01", "--lang", "es", "--out", str(tmp_path),
                 "--no-open"]) == 0
    assert "se conserva tu cuaderno" in capsys.readouterr().out


def test_a_spanish_verdict_names_its_cases_in_spanish():
    from minimodel.lab.notebook import Verdict

    result = {"passed": False, "message": "", "cases": [
        {"name": "visible 1", "status": "failed", "message": "forma (2, 3), se esperaba (2, 4)"},
        {"name": "hidden 2", "status": "error", "message": "ValueError"},
        {"name": "visible 2", "status": "passed", "message": ""}]}
    text, page = repr(Verdict(result, "es")), Verdict(result, "es")._repr_html_()
    for shown in (text, page):
        assert "caso visible 1" in shown and "oculto 2" in shown
        assert "visible case" not in shown and "hidden" not in shown
    assert "visible case 1" in repr(Verdict(result, "en"))
