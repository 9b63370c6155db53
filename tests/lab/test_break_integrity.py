"""A green `break check` can be trusted: what a learner who wants green without fixing the
cause might try, and what each attempt gets now.

Classes of attack (each a test below):
* edit the workspace's copy of the check machinery (harness) -> ignored, the checks come from
  the installed package;
* drop files named like the harness, the invariants or numpy into the workspace -> never
  imported (`python -I`, only the `minimodel` package is mapped to the workspace);
* print a verdict line from library code -> not a verdict (no one-time token);
* patch the checks in memory / end the process from library code -> refused by the tamper
  scan before anything runs;
* a fake fix that hides the symptom -> rejected by the invariants (lab validate runs every
  shipped fake; the tests here prove validate notices a fake that is accepted and a declared
  failing invariant that passes).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from minimodel.cli import main
from minimodel.lab.breaks import load_break, start
from minimodel.lab.breaks.catalog import load_all
from minimodel.lab.breaks.runner import is_fixed, parse_checks, run_script
from minimodel.lab.breaks.tamper import scan_file
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
    assert {d["id"] for d in result["details"] if not d["ok"]} == {"refuses-mismatch",
                                                                    "every-path-agrees"}


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


def test_names_the_original_file_already_uses_are_not_findings():
    old = "import sys\nprint(sys.modules)\n"
    assert scan_file("m.py", old + "x = 1\n", old) == []
    found = scan_file("m.py", old + "sys.exit(0)\n", old)
    assert [(f.name, f.line) for f in found] == [("exit", 3)]
    assert scan_file("new.py", "import ctypes\n", None)[0].name == "ctypes"
    assert scan_file("m.py", "def broken(:\n", old) == []  # the checks report the SyntaxError


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
    edit_yaml(folder, fails_under_bug=["refuses-mismatch", "every-path-agrees", "one-matrix"])
    problems = validate_break(load_all(content)[0])
    assert any("'one-matrix' PASSES on the broken workspace" in p for p in problems), problems


def test_validate_notices_an_undeclared_failure_and_a_missing_fake(tmp_path):
    content = copy_break(tmp_path, BREAK)
    folder = content / BREAK
    edit_yaml(folder, fails_under_bug=["refuses-mismatch"])
    (folder / "fakes" / "vague-error.patch").unlink()
    problems = validate_break(load_all(content)[0])
    assert any("'every-path-agrees' FAILS on the broken workspace without being declared" in p
               for p in problems), problems
    assert any("fake 'vague-error' is listed but" in p for p in problems)


def test_every_break_ships_three_fakes_with_ideas():
    for brk in load_all():
        assert len(brk.fakes) >= 3, brk.id
        for fake in brk.fakes:
            assert fake["idea"].strip() and brk.fake_path(fake["name"]).is_file()
