"""Revealed work is shown as revealed everywhere: a pass after `exercise solution` is "passed
after viewing the solution", a fix after `break diff` is "fixed after viewing the fix", in
`exercise list`, `break list`, `lab status`, `lab next`'s end of the path and their `--json`,
in both languages. It completes the step (counted apart); an own pass before viewing stays
own. The rule is sticky: once the answer was shown, every later pass or fix is revealed. (It
replaced "a pass after a fresh start clears the mark": the fifth attack recorded the answer as
own work after `break diff`, `break reset`, the patch plus `if False: pass`, and after
`exercise solution` with the reference plus a future import or `** 2.0`.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minimodel.cli import main
from minimodel.lab import path as learning_path
from minimodel.lab.breaks.workspace import Workspace
from minimodel.lab.exercises import get_exercise
from minimodel.lab.notebook import NotebookExercise
from minimodel.lab.patching import apply_patch_to_texts
from minimodel.lab.progress import Progress
from minimodel.lab.revealed import after_attempt
from own_work import retyped

EXERCISE = "gelu-tanh"
BREAK = "loss-crash-after-merge"


@pytest.fixture
def learner(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "240")   # table cells on one line
    return tmp_path / "learner"


def run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("prev, done_now, expected", [
    ({}, True, False),                                                   # own pass
    ({"status": "attempted", "viewed": True}, True, True),               # pass after viewing
    ({"status": "passed", "revealed": False, "viewed": True}, True, False),  # own first
    ({"status": "passed", "revealed": True, "viewed": True}, False, True),   # failing
    # the old rule's "fresh start clears the mark" (seen_since_start False): sticky now
    ({"status": "passed", "revealed": True, "viewed": True, "seen_since_start": False}, True,
     True),
    ({"status": "attempted", "viewed": True, "seen_since_start": False}, True, True),
])
def test_the_mark_after_an_attempt(prev, done_now, expected):
    for kind, field, done in (("exercise", "solution_viewed", "passed"),
                              ("break", "revealed_fix", "fixed")):
        entry = {(field if k == "viewed" else k): v for k, v in prev.items()}
        if entry.get("status") == "passed":
            entry["status"] = done
        assert after_attempt(kind, entry, done_now) is expected, (kind, entry)


def learner_solution(tmp_path: Path, name: str) -> Path:
    """A right solution the learner wrote from the reference they were shown (not a copy of
    it: a copy of the reference's function is practice, or a pass after viewing it)."""
    ex = get_exercise(EXERCISE)
    path = tmp_path / name
    path.write_text(retyped(ex.reference_path.read_text(encoding="utf-8"))
                    + "\n\ndef _note():\n    return 'written after reading the solution'\n",
                    encoding="utf-8")
    return path


def test_a_pass_after_viewing_the_solution_is_shown_as_such_everywhere(capsys, learner,
                                                                        tmp_path):
    assert run(capsys, "exercise", "start", EXERCISE, "--file", "mine.py")[0] == 0
    code, shown = run(capsys, "exercise", "solution", EXERCISE, "--yes")
    assert code == 0 and "def " in shown
    mine = learner_solution(tmp_path, "mine.py")
    code, out = run(capsys, "exercise", "check", EXERCISE, "--file", str(mine), "--json")
    result = json.loads(out)
    assert code == 0 and result["passed"] is True and result["revealed"] is True
    code, out = run(capsys, "exercise", "check", EXERCISE, "--file", str(mine))
    assert code == 0 and "Recorded as passed after viewing the solution" in flat(out)

    listed = json.loads(run(capsys, "exercise", "list", "--json")[1])
    row = next(item for item in listed if item["id"] == EXERCISE)
    assert row["status"] == "passed" and row["revealed"] is True
    assert all(not item["revealed"] for item in listed if item["id"] != EXERCISE)
    assert "passed after viewing the solution" in flat(run(capsys, "exercise", "list")[1])
    assert "superado tras ver la solución" in flat(
        run(capsys, "exercise", "list", "--lang", "es")[1])

    status = json.loads(run(capsys, "lab", "status", "--json")[1])
    step = next(s for lesson in status["path"] for s in lesson["steps"]
                if s["kind"] == "exercise" and s["id"] == EXERCISE)
    assert step["done"] is True and step["revealed"] is True   # done, and shown apart
    assert status["totals"]["exercise"]["revealed"] == 1
    assert status["totals"]["exercise"]["done"] >= 1
    text = flat(run(capsys, "lab", "status")[1])
    assert "passed after viewing the solution" in text
    assert "of them 1 after viewing the solution" in text
    es = flat(run(capsys, "lab", "status", "--lang", "es")[1])
    assert "superado tras ver la solución" in es and "de ellos, 1 tras ver la solución" in es

    # a fresh start, then a pass: still after viewing the solution (the rule is sticky; the
    # old rule made this the learner's own again)
    assert run(capsys, "exercise", "start", EXERCISE, "--file", "again.py", "--force")[0] == 0
    again = learner_solution(tmp_path, "again.py")
    result = json.loads(run(capsys, "exercise", "check", EXERCISE, "--file", str(again),
                            "--json")[1])
    assert result["passed"] is True and result["revealed"] is True
    entry = Progress().get("exercise", EXERCISE)
    assert entry["status"] == "passed" and entry["revealed"] is True
    assert entry["solution_viewed"] is True
    assert "passed after viewing" in flat(run(capsys, "exercise", "list")[1])


def test_viewing_the_solution_after_an_own_pass_leaves_it_own(capsys, learner, tmp_path):
    mine = learner_solution(tmp_path, "mine.py")
    assert run(capsys, "exercise", "check", EXERCISE, "--file", str(mine))[0] == 0
    assert run(capsys, "exercise", "solution", EXERCISE)[0] == 0   # passed: no --yes needed
    result = json.loads(run(capsys, "exercise", "check", EXERCISE, "--file", str(mine),
                            "--json")[1])
    assert result["revealed"] is False
    assert Progress().get("exercise", EXERCISE)["revealed"] is False


def apply_diff(root: Path, diff: str) -> None:
    """What `break diff | patch -p1 -d DIR` does."""
    texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8")
             for p in (root / "minimodel").rglob("*.py")}
    for rel, text in apply_patch_to_texts(diff, texts, strip=1).items():
        (root / rel).write_text(text, encoding="utf-8")


def test_a_fix_after_break_diff_is_shown_as_such_even_after_a_reset(capsys, learner,
                                                                    tmp_path):
    work = tmp_path / "ws"
    assert run(capsys, "break", "start", BREAK, "--workdir", str(work))[0] == 0
    code, diff = run(capsys, "break", "diff", "--workdir", str(work))
    assert code == 0 and diff.startswith("--- a/minimodel/")   # stdout: the diff alone
    main(["break", "diff", "--workdir", str(work)])
    assert "recorded as fixed after viewing the fix" in flat(capsys.readouterr().err)
    apply_diff(work, diff)
    code, out = run(capsys, "break", "check", "--workdir", str(work), "--json")
    result = json.loads(out)
    assert code == 0 and result["fixed"] is True and result["revealed"] is True

    rows = json.loads(run(capsys, "break", "list", "--json")[1])
    row = next(r for r in rows if r["id"] == BREAK)
    assert row["status"] == "fixed" and row["revealed"] is True
    assert "fixed after viewing the fix" in flat(run(capsys, "break", "list")[1])
    assert "arreglado tras ver el arreglo" in flat(run(capsys, "break", "list", "--lang", "es")[1])
    status = json.loads(run(capsys, "lab", "status", "--json")[1])
    step = next(s for lesson in status["path"] for s in lesson["steps"]
                if s["kind"] == "break" and s["id"] == BREAK)
    assert step["done"] is True and step["revealed"] is True
    assert status["totals"]["break"]["revealed"] == 1
    assert "of them 1 after viewing the fix" in flat(run(capsys, "lab", "status")[1])

    code, out = run(capsys, "break", "check", "--workdir", str(work))
    assert code == 0 and "Recorded as fixed after viewing the fix" in flat(out)
    assert "after a reset too" in flat(out)

    # reset, then the diff seen before pasted back (the third attack: diff, reset, patch,
    # check): the fix is the one the lab showed, so it stays revealed
    assert run(capsys, "break", "reset", "--workdir", str(work))[0] == 0
    apply_diff(work, diff)
    head = work / "minimodel" / "nn" / "lm_head.py"
    head.write_text("# my fix\n" + head.read_text(encoding="utf-8"), encoding="utf-8")
    result = json.loads(run(capsys, "break", "check", "--workdir", str(work), "--json")[1])
    assert result["fixed"] is True and result["revealed"] is True   # a comment changes nothing
    assert "fixed after viewing the fix" in flat(run(capsys, "break", "list")[1])

    # reset, then a fix with a change of the learner's own (here, its own message): still
    # after viewing the fix (the old rule made this own work; the sticky rule does not compare)
    assert run(capsys, "break", "reset", "--workdir", str(work))[0] == 0
    apply_diff(work, diff)
    text = head.read_text(encoding="utf-8")
    assert "A tied head reuses the embedding matrix, so " in text
    head.write_text(text.replace("A tied head reuses the embedding matrix, so ",
                                 "The tied head is the embedding matrix, so "),
                    encoding="utf-8")
    result = json.loads(run(capsys, "break", "check", "--workdir", str(work), "--json")[1])
    assert result["fixed"] is True and result["revealed"] is True
    entry = Progress().get("break", BREAK)
    assert entry["revealed"] is True and entry["revealed_fix"] is True
    assert "fixed after viewing the fix" in flat(run(capsys, "break", "list")[1])


def test_a_fix_shown_through_another_learner_folder_marks_the_workspace(capsys, learner,
                                                                       tmp_path):
    """The sixth attack: `break diff --learner-dir OTHER` showed the fix while the learner's own
    folder recorded nothing, so the fix checked from it was recorded as the learner's own.
    The mark lives in the workspace too (`.break.json`): any check of it reads it, a restart
    with --force keeps it."""
    work = tmp_path / "ws"
    other = tmp_path / "other-learner"
    assert run(capsys, "break", "start", BREAK, "--workdir", str(work))[0] == 0
    code, diff = run(capsys, "break", "diff", "--workdir", str(work),
                     "--learner-dir", str(other))
    assert code == 0 and diff.startswith("--- a/minimodel/")
    assert not (Progress().get("break", BREAK) or {}).get("revealed_fix")   # own folder: none
    assert Workspace.open(work).fix_shown is True
    assert json.loads((work / ".break.json").read_text(encoding="utf-8"))["fix_shown"] is True
    apply_diff(work, diff)
    result = json.loads(run(capsys, "break", "check", "--workdir", str(work), "--json")[1])
    assert result["fixed"] is True and result["revealed"] is True
    entry = Progress().get("break", BREAK)
    assert entry["revealed"] is True and entry["revealed_fix"] is True
    # a restart of the same workspace keeps the mark
    assert run(capsys, "break", "start", BREAK, "--workdir", str(work), "--force")[0] == 0
    assert Workspace.open(work).fix_shown is True


def test_a_workspace_whose_fix_was_never_shown_is_unmarked(capsys, learner, tmp_path):
    work = tmp_path / "ws"
    assert run(capsys, "break", "start", BREAK, "--workdir", str(work))[0] == 0
    apply_diff(work, Workspace.open(work).fix_diff())   # the fix, without recording a view
    assert Workspace.open(work).fix_shown is False
    result = json.loads(run(capsys, "break", "check", "--workdir", str(work), "--json")[1])
    assert result["fixed"] is True and result["revealed"] is False


def test_a_fix_made_before_viewing_stays_own_when_pasted_back_after_viewing(capsys, learner,
                                                                            tmp_path):
    """Own first: a fix checked before the diff was ever shown stays own, even if the same
    fix is checked again after viewing it, resetting and pasting."""
    work = tmp_path / "ws"
    assert run(capsys, "break", "start", BREAK, "--workdir", str(work))[0] == 0
    diff = Workspace.open(work).fix_diff()   # the fix, without recording a view
    apply_diff(work, diff)
    assert json.loads(run(capsys, "break", "check", "--workdir", str(work),
                          "--json")[1])["revealed"] is False
    run(capsys, "break", "diff", "--workdir", str(work))
    assert run(capsys, "break", "reset", "--workdir", str(work))[0] == 0
    apply_diff(work, diff)
    result = json.loads(run(capsys, "break", "check", "--workdir", str(work), "--json")[1])
    assert result["fixed"] is True and result["revealed"] is False


def finish_the_path(progress: Progress, revealed: set[str]) -> None:
    """Record every step of the path done, as the commands record them; the steps in
    ``revealed`` done after viewing the answer."""
    for step in learning_path.steps():
        if step.kind == "lesson":
            learning_path.mark(progress, step, "read")
        elif step.kind == "quiz":
            progress.record("quiz", step.id, "taken", attempts=1, best_score=1, total=1)
        else:
            progress.record(step.kind, step.id, learning_path.DONE_STATUS[step.kind],
                            revealed=step.key in revealed)


def test_the_end_of_the_path_counts_revealed_steps_apart(capsys, learner):
    steps = learning_path.steps()
    brk = next(s for s in steps if s.kind == "break")
    ex = next(s for s in steps if s.kind == "exercise")
    finish_the_path(Progress(), {brk.key, ex.key})
    report = json.loads(run(capsys, "lab", "next", "--json")[1])
    assert report["step"] is None and report["revealed"] == [
        s.key for s in steps if s.key in (brk.key, ex.key)]
    text = flat(run(capsys, "lab", "next")[1])
    total = len(steps)
    assert f"{total} of {total} steps done, 2 of them after viewing the answer" in text
    assert f"break {brk.id} (fixed after viewing the fix)" in text
    assert f"exercise {ex.id} (passed after viewing the solution)" in text
    es = flat(run(capsys, "lab", "next", "--lang", "es")[1])
    assert f"{total} de {total} pasos hechos, 2 de ellos tras ver la respuesta" in es
    assert f"exercise {ex.id} (superado tras ver la solución)" in es


def test_the_end_of_an_own_path_says_nothing_of_revealed_steps(capsys, learner):
    finish_the_path(Progress(), set())
    assert json.loads(run(capsys, "lab", "next", "--json")[1])["revealed"] == []
    assert "after viewing" not in run(capsys, "lab", "next")[1]


def test_a_notebook_pass_after_the_solution_says_so(capsys, learner, tmp_path):
    ex = NotebookExercise(EXERCISE, learner_dir=learner)
    ex.hint()
    ex.solution()                         # after a hint: shown, and recorded
    verdict = ex.check(str(learner_solution(tmp_path, "cell.py")))
    assert verdict.passed and "PASSED (passed after viewing the solution)" in repr(verdict)
    assert "passed after viewing the solution" in verdict._repr_html_()
    assert Progress(learner).get("exercise", EXERCISE)["revealed"] is True


# The fifth attack (H6b, H7): the answer shown, then a no-op edit recorded as own work. Each
# edit below is a different program from the answer, so no comparison of content could catch
# all of them; the sticky rule does not compare.
NO_OP_EDITS = {
    "a future import": lambda text: "from __future__ import annotations\n" + text,
    "pass after return": lambda text: text + "    pass\n",
    "a square written ** 2.0 and a cube x*x*x": lambda text: text.replace("x**3", "x * x * x"),
    "an if False block": lambda text: text + "\nif False:\n    pass\n",
}


@pytest.mark.parametrize("edit", list(NO_OP_EDITS))
def test_the_shown_solution_with_a_no_op_edit_is_recorded_after_viewing(edit, capsys, learner,
                                                                        tmp_path):
    assert run(capsys, "exercise", "solution", EXERCISE, "--yes")[0] == 0
    assert run(capsys, "exercise", "start", EXERCISE, "--file", "mine.py")[0] == 0
    mine = tmp_path / "mine.py"
    reference = get_exercise(EXERCISE).reference_path.read_text(encoding="utf-8")
    mine.write_text(NO_OP_EDITS[edit](reference), encoding="utf-8")
    result = json.loads(run(capsys, "exercise", "check", EXERCISE, "--file", str(mine),
                            "--json")[1])
    assert result["passed"] is True and result["practice"] is False, result["message"]
    assert result["revealed"] is True
    es = flat(run(capsys, "exercise", "list", "--lang", "es")[1])
    assert "superado tras ver la solución" in es


@pytest.mark.parametrize("edit", ["none", "if False: pass", "a comment"])
def test_diff_reset_then_the_patch_again_is_fixed_after_viewing(edit, capsys, learner,
                                                                tmp_path):
    work = tmp_path / "ws"
    assert run(capsys, "break", "start", BREAK, "--workdir", str(work))[0] == 0
    diff = run(capsys, "break", "diff", "--workdir", str(work))[1]
    assert run(capsys, "break", "reset", "--workdir", str(work))[0] == 0
    apply_diff(work, diff)
    head = work / "minimodel" / "nn" / "lm_head.py"
    text = head.read_text(encoding="utf-8")
    head.write_text({"none": text, "if False: pass": text + "\nif False:\n    pass\n",
                     "a comment": "# mine\n" + text}[edit], encoding="utf-8")
    result = json.loads(run(capsys, "break", "check", "--workdir", str(work), "--json")[1])
    assert result["fixed"] is True and result["revealed"] is True
    status = json.loads(run(capsys, "lab", "status", "--json")[1])
    step = next(s for lesson in status["path"] for s in lesson["steps"]
                if s["kind"] == "break" and s["id"] == BREAK)
    assert step["done"] is True and step["revealed"] is True   # done, shown apart
