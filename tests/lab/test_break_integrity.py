"""A green `break check` can be trusted: what a learner who wants green without fixing the
cause might try, and what each attempt gets now.

Classes of attack (each a test below):
* edit the workspace's copy of the check machinery (harness) -> ignored, the checks come from
  the installed package;
* drop files named like the harness, the invariants or numpy into the workspace -> never
  imported (`python -I`, only the `minimodel` package is mapped to the workspace);
* print a verdict line from library code -> not a verdict (no one-time token);
* patch the checks in memory / end the process from library code, or rebind what the checks
  use (``np.allclose = ...`` and every other write into an imported module) -> refused by the
  tamper scan before anything runs, whatever encoding Python reads the file with (BOM, coding
  cookie); a changed file the scan cannot decode is refused ("save it as UTF-8");
* hide the edit in compiled bytecode (a sourceless ``.pyc``, an unchecked-hash ``__pycache__``
  entry) -> never loaded: the workspace runs from its ``.py`` sources only;
* a fake fix that hides the symptom -> rejected by the invariants (lab validate runs every
  shipped fake; the tests here prove validate notices a fake that is accepted and a declared
  failing invariant that passes).
"""

from __future__ import annotations

import json
import os
import py_compile
import shutil
import sys
from pathlib import Path

import pytest
import yaml

import minimodel

from minimodel.cli import main
from minimodel.lab.breaks import load_break, start
from minimodel.lab.breaks.catalog import load_all
from minimodel.lab.breaks.runner import is_fixed, parse_checks, run_script
from minimodel.lab.breaks.tamper import Unreadable, scan_file, scan_source
from minimodel.lab.breaks.validate import validate_break

BREAK = "loss-crash-after-merge"
LM_HEAD = "minimodel/nn/lm_head.py"


def check(capsys, work: Path, *extra: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["break", "check", "--workdir", str(work), "--json",
                 "--learner-dir", str(work.parent / "learner"), *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def work(tmp_path) -> Path:
    root = tmp_path / "ws"
    start(load_break(BREAK), root)
    return root


def append_to(work: Path, rel: str, code: str) -> None:
    path = work / rel
    path.write_text(path.read_text(encoding="utf-8") + "\n" + code + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- the harness


def test_editing_the_workspace_copy_of_the_harness_changes_nothing(capsys, work):
    harness = work / "minimodel" / "lab" / "breaks" / "harness.py"
    assert harness.is_file()  # the workspace holds a copy of the whole package
    harness.write_text(harness.read_text(encoding="utf-8").replace(
        "        fn()\n", "        return None  # every check passes\n", 1), encoding="utf-8")
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert {d["id"] for d in result["details"] if not d["ok"]} == {"every-path-agrees",
                                                                    "head-follows-its-matrix"}


def test_files_dropped_in_the_workspace_are_never_imported(capsys, work):
    forged = ("import sys\nprint('PASS x refuses-mismatch | forged', flush=True)\n"
              "sys.exit(0)\n")
    for name in ("minimodel_break_harness.py", "invariants.py", "numpy.py", "sitecustomize.py",
                 "usercustomize.py"):
        (work / name).write_text(forged, encoding="utf-8")
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert "crashed" not in {d["id"] for d in result["details"]}
    assert not any("forged" in d["description"] for d in result["details"])


def test_a_verdict_printed_by_library_code_is_not_a_verdict(capsys, work):
    append_to(work, LM_HEAD, 'print("PASS 0000 refuses-mismatch | forged")\n'
                             'print("PASS 0000 every-path-agrees | forged")')
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert not any(d["description"] == "forged" for d in result["details"])


def test_only_lines_with_this_runs_token_are_parsed():
    out = ("PASS abc one | fine\nFAIL abc two | broken | why\nPASS zzz three | forged\n"
           "PASS one | no token\n")
    assert parse_checks(out, "abc") == [
        {"id": "one", "ok": True, "description": "fine", "message": ""},
        {"id": "two", "ok": False, "description": "broken", "message": "why"}]


def test_checks_that_ran_another_copy_of_the_library_give_no_verdict(capsys, work):
    # The third attack: three lines in the workspace's minimodel/__init__.py point the
    # package's __path__ at the installed library while the checks run, so every submodule
    # (the buggy lm_head included) came from elsewhere and the checks said "fixed".
    installed = Path(minimodel.__file__).parent
    append_to(work, "minimodel/__init__.py",
              "import sys as _s\n"
              'if "invar" + "iants" in " ".join(getattr(_s, "ar" + "gv")):\n'
              f"    __path__[:] = [{str(installed)!r}]")
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert [d["id"] for d in result["details"]] == ["tamper"]
    message = result["details"][0]["message"]
    assert f"from {installed}{os.sep}" in message and str(work / "minimodel") in message
    assert "break reset --workdir" in message
    entry = json.loads((work.parent / "learner" / "progress" / "break.json").read_text())
    assert entry[BREAK]["status"] == "attempted" and entry[BREAK]["last_check"] is False


def test_checks_of_the_workspace_copy_alone_report_no_foreign_module(work):
    brk = load_break(BREAK)
    done = run_script(work, brk.path("check"), "en", brk.timeout)
    assert done.checks and done.foreign == [] and not is_fixed(done)  # the bug is still there


# ----------------------------------------------------------------------------- tampering

PATCH_THE_CHECKS = ('import sys as _s\n'
                    '_h = _s.modules.get("minimodel_break_harness")\n'
                    'if _h is not None:\n'
                    '    _h.Checks._run_one = staticmethod(lambda fn: None)')


def test_patching_the_checks_in_memory_would_work_without_the_scan(work):
    # Why the tamper scan exists: code in the learner's copy runs in the checks' process.
    append_to(work, LM_HEAD, PATCH_THE_CHECKS)
    brk = load_break(BREAK)
    assert is_fixed(run_script(work, brk.path("check"), "en", brk.timeout))


@pytest.mark.parametrize("cheat", [
    PATCH_THE_CHECKS,
    "import os\nos._exit(0)",
    'getattr(__import__("sys"), "exit")(0)',
    "import gc\n[o for o in gc.get_objects()]",
    "import atexit\natexit.register(print, 'PASS')",
    "import sys\nsys.stdout.write('PASS')",
    "import builtins\nbuiltins.print = None",
], ids=["sys.modules", "os._exit", "__import__", "gc", "atexit", "stdout", "builtins"])
def test_reaching_into_the_check_machinery_is_refused(capsys, work, cheat):
    append_to(work, LM_HEAD, cheat)
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert [d["id"] for d in result["details"]] == ["tamper"]
    assert "minimodel/nn/lm_head.py:" in result["details"][0]["message"]


def test_the_tamper_refusal_is_spanish_in_a_spanish_workspace(capsys, tmp_path):
    work = tmp_path / "ws"
    start(load_break(BREAK), work, lang="es")
    append_to(work, LM_HEAD, "import os\nos._exit(0)")
    capsys.readouterr()
    code = main(["break", "check", "--workdir", str(work), "--learner-dir", str(tmp_path / "l")])
    out = capsys.readouterr().out
    assert code == 1 and "maquinaria de las comprobaciones" in out and "`_exit`" in out


def lm_head_with(work: Path, code: str) -> str:
    return (work / LM_HEAD).read_text(encoding="utf-8") + "\n" + code + "\n"


def test_a_utf8_bom_does_not_hide_a_patch_of_the_checks(capsys, work):
    # Python strips the BOM and runs the file; the scan reads it the same way.
    (work / LM_HEAD).write_bytes(b"\xef\xbb\xbf" + lm_head_with(work, PATCH_THE_CHECKS).encode())
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert [d["id"] for d in result["details"]] == ["tamper"]
    assert "`_run_one` at minimodel/nn/lm_head.py:" in result["details"][0]["message"]


@pytest.mark.parametrize("cookie", ["# -*- coding: latin-1 -*-",
                                    "# vim: set fileencoding=cp1252 :"])
def test_a_coding_cookie_python_accepts_is_read_with_its_encoding_and_scanned(capsys, work,
                                                                               cookie):
    cheat = lm_head_with(work, "import os\nos._exit(0)")
    text = f"{cookie}\n# r\u00e9sum\u00e9 of the fix\n" + cheat
    (work / LM_HEAD).write_bytes(text.encode("latin-1", errors="replace"))
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    message = result["details"][0]["message"]
    assert "`_exit` at minimodel/nn/lm_head.py:" in message and "UTF-8" not in message


@pytest.mark.parametrize("data, line, detail", [
    (b"x = 1\ny = '\xe9t\xe9'\n", 2, "byte 0xe9 is not utf-8"),       # latin-1, no cookie
    (b"# coding: klingon\nx = 1\n", 0, "unknown encoding: klingon"),
    (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", 0, "encoding problem: utf-8"),  # BOM + cookie
    (b"# coding: ascii\nx = 1\ns = '\xc3\xa9'\n", 3, "byte 0xc3 is not ascii"),
])
def test_a_file_the_scan_cannot_decode_is_itself_a_finding(data, line, detail):
    assert scan_source("minimodel/x.py", data, None) == [Unreadable("minimodel/x.py", line, detail)]


def test_an_undecodable_edit_is_refused_with_the_fix_save_as_utf8(capsys, work):
    (work / LM_HEAD).write_bytes(lm_head_with(work, "# caf\u00e9").encode("utf-8")
                                 .replace("caf\u00e9".encode(), b"caf\xe9"))
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False and result["exit_code"] is None
    message = result["details"][0]["message"]
    assert "minimodel/nn/lm_head.py:" in message and "byte 0xe9 is not utf-8" in message
    assert "save each file as UTF-8" in message


def test_a_file_python_would_not_compile_is_left_to_the_checks(capsys, work):
    # A file that does not parse cannot run: the importer compiles the same bytes with the same
    # parser, so the checks run and report the SyntaxError (the learner's most useful message).
    for data in (b"def broken(:\n", b"x = 1\0\n", b"\xef\xbb\xbfdef f(:\n"):
        assert scan_source("minimodel/x.py", data, None) == []
        with pytest.raises((SyntaxError, ValueError)):
            compile(data, "x.py", "exec", dont_inherit=True)
    (work / LM_HEAD).write_text(lm_head_with(work, PATCH_THE_CHECKS + "\ndef broken(:"),
                                encoding="utf-8")
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert "SyntaxError" in " ".join(d["message"] for d in result["details"])


def test_compiled_bytecode_in_the_workspace_is_never_loaded(capsys, work, tmp_path):
    cheat = tmp_path / "cheat.py"
    cheat.write_text(PATCH_THE_CHECKS + "\n", encoding="utf-8")
    # A sourceless module beside the sources, imported by an innocent-looking line ...
    py_compile.compile(str(cheat), cfile=str(work / "minimodel/nn/helper.pyc"), doraise=True)
    append_to(work, LM_HEAD, "from minimodel.nn import helper as _helper")
    # ... and a cached copy of lm_head that Python would trust without looking at the source.
    tag = sys.implementation.cache_tag
    py_compile.compile(str(cheat), doraise=True,
                       cfile=str(work / f"minimodel/nn/__pycache__/lm_head.{tag}.pyc"),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    # the source of lm_head ran (it is what imports helper), and helper.pyc was not found
    assert "cannot import name 'helper'" in " ".join(d["message"] for d in result["details"])


def test_source_hidden_in_a_cache_folder_is_never_imported(capsys, work):
    # `__pycache__` is skipped by the scan (caches change on their own), so it is never a
    # package either: a .py file there cannot run.
    cache = work / "minimodel" / "nn" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "notes.py").write_text(PATCH_THE_CHECKS + "\n", encoding="utf-8")
    append_to(work, LM_HEAD, "from minimodel.nn.__pycache__ import notes as _notes")
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert "No module named 'minimodel.nn.__pycache__'" in " ".join(
        d["message"] for d in result["details"])


def test_names_the_original_file_already_uses_are_not_findings():
    old = "import sys\nprint(sys.modules)\n"
    assert scan_file("m.py", old + "x = 1\n", old) == []
    found = scan_file("m.py", old + "sys.exit(0)\n", old)
    assert [(f.name, f.line) for f in found] == [("exit", 3)]
    assert scan_file("new.py", "import ctypes\n", None)[0].name == "ctypes"
    assert scan_file("m.py", "def broken(:\n", old) == []  # the checks report the SyntaxError


# A library file's writes into modules the checks also use (numpy above all): the attack's
# `np.allclose = lambda *a, **k: True` and the other spellings of the same write.
MODULE_WRITES = {
    "np.allclose": "np.allclose = lambda *a, **k: True",
    "numpy.testing": "import numpy\nnumpy.testing.assert_allclose = lambda *a, **k: None",
    "setattr": 'setattr(np, "isclose", lambda *a, **k: True)',
    "from-import": "from numpy import linalg\nlinalg.norm = lambda *a, **k: 0.0",
    "module-global": ("from minimodel.nn import embedding as _emb\n"
                      "_emb.np.allclose = lambda *a, **k: True"),
    "ndarray": "np.ndarray.__eq__ = lambda a, b: True",
    "math": "import math\nmath.isclose = lambda *a, **k: True",
    "operator": "import operator\noperator.eq = lambda a, b: True",
    "partial": "import functools\nnp.allclose = functools.partial(np.allclose, atol=1e9)",
    "alias-import": "import numpy as _n\n_n.array_equal = lambda *a: True",
    "alias-name": "_m = np\n_m.allclose = lambda *a, **k: True",
    "alias-loop": "for _m in (np,):\n    _m.allclose = lambda *a, **k: True",
    "augmented": "np.e += 1",
    "del": "del np.isclose",
    "delattr": 'delattr(np, "isclose")',
    "object-setattr": 'object.__setattr__(np, "isclose", len)',
    "vars": 'vars(np)["allclose"] = lambda *a, **k: True',
    "__dict__": 'np.__dict__.update(allclose=lambda *a, **k: True)',
    "getattr": 'getattr(np, "testing").assert_allclose = print',
    "__code__": "np.allclose.__code__ = (lambda *a, **k: True).__code__",
}


@pytest.mark.parametrize("cheat", MODULE_WRITES.values(), ids=MODULE_WRITES.keys())
def test_a_write_into_an_imported_module_is_refused_with_its_file_and_line(capsys, tmp_path,
                                                                           cheat):
    # The bug stays; the write would forge a check in the same process. lm_head.py imports
    # numpy as np, like every library file.
    work = tmp_path / "ws"
    start(load_break(BREAK), work)
    lines = (work / LM_HEAD).read_text(encoding="utf-8").count("\n") + 2
    append_to(work, LM_HEAD, cheat)
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert [d["id"] for d in result["details"]] == ["tamper"]
    line = lines + cheat.count("\n")  # the write is the cheat's last line
    assert f"at {LM_HEAD}:{line}" in result["details"][0]["message"], result


def test_the_attack_on_np_allclose_is_refused(capsys, tmp_path):
    # The attack: the bug of frequent-tokens-learn-slowly kept, numpy's allclose patched.
    work = tmp_path / "ws"
    start(load_break("frequent-tokens-learn-slowly"), work)
    append_to(work, "minimodel/nn/embedding.py", "np.allclose = lambda *args, **kwargs: True")
    code, result = check(capsys, work)
    assert code == 1 and result["fixed"] is False
    assert "`np.allclose` at minimodel/nn/embedding.py:" in result["details"][0]["message"]


def test_the_checks_compare_with_numpy_functions_taken_before_the_workspace_runs(tmp_path):
    # Without the scan (run_script directly), the patched np.allclose forges nothing: the
    # checks compare with the harness's allclose, captured before the library was imported.
    work = tmp_path / "ws"
    brk = load_break("frequent-tokens-learn-slowly")
    start(brk, work)
    append_to(work, "minimodel/nn/embedding.py",
              "np.allclose = np.array_equal = lambda *args, **kwargs: True")
    done = run_script(work, brk.path("check"), "en", brk.timeout)
    assert done.checks and not is_fixed(done)


@pytest.mark.parametrize("honest", [
    "class Box:\n    def __init__(self):\n        self.weight = np.zeros(3)",
    "def step(param, g):\n    param.grad = g\n    param.data = param.data - 0.1 * g",
    "def f():\n    out = np.zeros((2, 3))\n    out[np.arange(2)] = 1.0\n    out.shape = (3, 2)",
    "EPS = 1e-5\nEPS += 1e-6\nTABLE = {}\nTABLE[np.float32] = 1",
    "allclose = np.allclose  # a local name of this file",
], ids=["self", "param-grad-data", "local-array", "own-constants", "own-name"])
def test_honest_writes_are_not_findings(honest):
    old = "import numpy as np\n"
    assert scan_file("m.py", old + honest + "\n", old) == []


def test_a_write_into_a_module_the_original_file_already_made_is_not_a_finding():
    old = "import numpy as np\nnp.set_printoptions = print\n"
    assert scan_file("m.py", old + "x = 1\n", old) == []
    found = scan_file("m.py", old + "np.isclose = print\n", old)
    assert [(f.name, f.line) for f in found] == [("np.isclose", 3)]


def test_every_real_fix_passes_the_tamper_scan():
    # The rule is validate's (breaks section), so a new break that validate accepts passes.
    from minimodel.lab.breaks.validate import _fix_looks_like_tampering
    from minimodel.lab.breaks.workspace import installed_package_dir

    for brk in load_all():
        assert _fix_looks_like_tampering(brk, installed_package_dir().resolve()) == [], brk.id


def test_validate_refuses_a_bug_whose_real_fix_looks_like_tampering(tmp_path):
    from minimodel.lab.breaks.catalog import Break
    from minimodel.lab.breaks.validate import _fix_looks_like_tampering

    # A library file that uses sys.exit, and a bug patch that deletes that line: restoring it
    # (the real fix) would be refused by `break check`'s scan.
    package = tmp_path / "src" / "minimodel"
    package.mkdir(parents=True)
    (package / "m.py").write_text("import sys\n\n\ndef stop():\n    sys.exit(1)\n", "utf-8")
    folder = tmp_path / "content" / "b"
    folder.mkdir(parents=True)
    (folder / "bug.patch").write_text(
        "--- a/minimodel/m.py\n+++ b/minimodel/m.py\n@@ -1,5 +1,5 @@\n-import sys\n+import os\n"
        " \n \n def stop():\n-    sys.exit(1)\n+    os.abort()\n", encoding="utf-8")

    found = _fix_looks_like_tampering(Break("b", folder, {}), package)
    assert found and all("which `break check` refuses as tampering" in p for p in found)
    assert any("'exit' in minimodel/m.py" in p for p in found), found


def test_structure_names_too_few_predictions_and_cause_words_an_untranslated_title_and_asserts(
        tmp_path):
    from minimodel.lab.breaks.catalog import structure_problems

    content = copy_break(tmp_path, BREAK)
    folder = content / BREAK
    data = yaml.safe_load((folder / "break.yaml").read_text(encoding="utf-8"))
    edit_yaml(folder, predict=data["predict"][:1], cause_words=data["cause_words"][:1],
              title={"en": data["title"]["en"], "es": data["title"]["en"]})
    (folder / "invariants.py").write_text((folder / "invariants.py").read_text("utf-8")
                                          + "\nassert 1 + 1 == 2\n", encoding="utf-8")
    problems = structure_problems(load_all(content)[0])
    where = f"break {BREAK}"
    assert f"{where}: has 1 predict question(s); ask at least 2 (what the learner expects to " \
           "see before running the experiment)" in problems
    assert f"{where}: the Spanish title is the English one; translate it" in problems
    assert any(p.startswith(f"{where}: invariants.py uses assert at line(s) [") for p in problems)
    assert any(p.startswith(f"{where}: cause_words lists 1 word; list at least 2") for p in problems)


# ----------------------------------------------------------------------------- seeds


def test_a_seed_replays_the_same_sizes(capsys, work):
    _, first = check(capsys, work, "--seed", "12345")
    _, again = check(capsys, work, "--seed", "12345")
    assert first["seed"] == again["seed"] == 12345
    assert [d["message"] for d in first["details"]] == [d["message"] for d in again["details"]]
    _, other = check(capsys, work, "--seed", "54321")
    assert [d["message"] for d in other["details"]] != [d["message"] for d in first["details"]]


def test_without_a_seed_every_check_draws_fresh_sizes(capsys, work):
    seeds = {check(capsys, work)[1]["seed"] for _ in range(3)}
    assert len(seeds) == 3


# ----------------------------------------------------------------------------- validate


def copy_break(tmp_path: Path, break_id: str) -> Path:
    content = tmp_path / "content"
    shutil.copytree(load_break(break_id).folder, content / break_id)
    return content


def edit_yaml(folder: Path, **changes) -> None:
    path = folder / "break.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_validate_notices_an_accepted_fake(tmp_path):
    content = copy_break(tmp_path, BREAK)
    folder = content / BREAK
    work = tmp_path / "ws"
    fix = start(load_break(BREAK), work).fix_diff()
    (folder / "fakes" / "the-real-fix.patch").write_text(fix, encoding="utf-8")
    fakes = yaml.safe_load((folder / "break.yaml").read_text(encoding="utf-8"))["fakes"]
    edit_yaml(folder, fakes=fakes + [{"name": "the-real-fix", "idea": "not a fake at all"}])
    brk = load_all(content)[0]
    problems = validate_break(brk)
    assert any("fake 'the-real-fix'" in p and "ACCEPT" in p for p in problems), problems
    assert any("fake 'the-real-fix'" in p and "neither 'SYMPTOM:' nor 'CAUSE REMAINS:'" in p
               for p in problems)


def test_validate_notices_a_check_that_stopped_failing_under_the_bug(tmp_path):
    # one-matrix holds under this bug; declaring it broken must be reported, even though
    # other invariants of the break do fail.
    content = copy_break(tmp_path, BREAK)
    folder = content / BREAK
    edit_yaml(folder,
              fails_under_bug=["every-path-agrees", "head-follows-its-matrix", "one-matrix"])
    problems = validate_break(load_all(content)[0])
    assert any("'one-matrix' PASSES on the broken workspace" in p for p in problems), problems


def test_validate_notices_an_undeclared_failure_and_a_missing_fake(tmp_path):
    content = copy_break(tmp_path, BREAK)
    folder = content / BREAK
    edit_yaml(folder, fails_under_bug=["head-follows-its-matrix"])
    (folder / "fakes" / "grow-only.patch").unlink()
    problems = validate_break(load_all(content)[0])
    assert any("'every-path-agrees' FAILS on the broken workspace without being declared" in p
               for p in problems), problems
    assert any("fake 'grow-only' is listed but" in p for p in problems)


def test_every_break_ships_three_fakes_with_ideas():
    for brk in load_all():
        assert len(brk.fakes) >= 3, brk.id
        for fake in brk.fakes:
            assert fake["idea"].strip() and brk.fake_path(fake["name"]).is_file()
