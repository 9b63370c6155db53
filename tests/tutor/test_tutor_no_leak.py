"""No tool of ``minimodel tutor`` gives away what the lab keeps back: every tool is called for
every item over the SDK's stdio client, and every answer is scanned for the reference solutions,
hidden cases' expected values, later hints, breaks' causes and the bug and fix patches.

The only tool that may show a fix is ``break_give_up`` after the learner gave up (as ``break
diff``); called without that, it must refuse without the fix. A passed break check may tell
the cause (the learner found it): the walk never fixes a break, so nothing may tell it here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from minimodel.lab.breaks import Workspace, load_all
from minimodel.lab.exercises import all_exercises, stub_text
from minimodel.lab.exercises.judge import build_cases, expected_outputs
from minimodel.lab.i18n import pick
from minimodel.lab.lessons import load_lessons
from minimodel.lab.quiz import list_quizzes, load_quiz
from minimodel.lab.quiz.grading import expected_value
from minimodel.tutor.server import tools

from tutor_client import ToolFailed, Tutor, tutor_session
from walks import CHOICE_KINDS, typed

pytest.importorskip("mcp")


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _sentences(text: str, shortest: int = 30) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
            if len(s.strip()) >= shortest]


def _patch_lines(patch: str, shortest: int = 14) -> list[str]:
    """The changed lines of a unified diff (what a fix or a bug writes), long enough to mean
    something."""
    return [line[1:].strip() for line in patch.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
            and len(line[1:].strip()) >= shortest]


class Scanner:
    """Forbidden strings, and the check that an answer holds none of them."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def absent(self, where: str, answer: Any, forbidden: list[str]) -> None:
        text = _text(answer)
        flat = " ".join(text.replace("\\n", " ").split())
        for item in forbidden:
            if item in text or item in flat or json.dumps(item, ensure_ascii=False)[1:-1] in text:
                self.found.append(f"{where}: {item[:80]!r}")


def test_every_tool_is_scanned():
    """The table the server registers is the table this file walks."""
    walked = {"lab_status", "next_step", "read_lesson", "mark_lesson_read", "quiz_list",
              "quiz_question", "quiz_answer", "break_list", "break_start", "break_predict",
              "break_run", "break_hint", "break_check", "break_give_up", "exercise_list",
              "exercise_show", "exercise_hint", "exercise_check", "doctor", "explorer_page"}
    from minimodel.tutor.learner import Learner

    assert set(tools(Learner())) == walked


async def _breaks(tutor: Tutor, scan: Scanner, lang: str, heavy: bool) -> None:
    for brk in load_all():
        causes = _sentences(brk.text("explanation", lang))
        patch = _patch_lines(brk.patch_text)
        hints = brk.texts("hints", lang)
        started = await tutor.call("break_start", break_id=brk.id)
        fix = _patch_lines(Workspace.open(started["workdir"]).fix_diff())
        secret = causes + patch + fix
        answers = [started]
        try:
            await tutor.call("break_run", break_id=brk.id)
            raise AssertionError(f"{brk.id}: ran before the predictions")
        except ToolFailed as refused:
            assert "NOTES.md" in str(refused)
        count = len(brk.texts("predict", lang))
        answers.append(await tutor.call("break_predict", break_id=brk.id,
                                        predictions=["a guess"] * count))
        if heavy:
            answers.append(await tutor.call("break_run", break_id=brk.id))
        for rung in range(1, len(hints) + 2):
            shown = await tutor.call("break_hint", break_id=brk.id)
            assert shown["hint"] == min(rung, len(hints))
            scan.absent(f"{brk.id} hint {rung}", shown, hints[shown["hint"]:] + secret)
            for earlier in answers if rung <= len(hints) else []:
                scan.absent(f"{brk.id} before hint {rung}", earlier, hints[rung - 1:])
            answers.append(shown)
        if heavy:
            checked = await tutor.call("break_check", break_id=brk.id)
            assert checked["fixed"] is False
            answers.append(checked)
        try:
            await tutor.call("break_give_up", break_id=brk.id)
            raise AssertionError(f"{brk.id}: the fix was shown without giving up")
        except ToolFailed as refused:
            scan.absent(f"{brk.id} give_up refused", str(refused), secret)
        answers.append(await tutor.call("break_list"))
        for answer in answers:
            scan.absent(f"{brk.id}", answer, secret)


def _hidden_values(exercise_id: str, seed: int) -> list[str]:
    """The hidden cases' expected values of a check with ``seed``, as the judge prints numbers."""
    ex = next(e for e in all_exercises() if e.id == exercise_id)
    cases = build_cases(ex, seed)
    values = []
    for case, expected in zip(cases, expected_outputs(ex, cases)):
        if case.hidden:
            for array in expected.exact:
                for v in np.asarray(array, dtype=np.float64).ravel()[:40]:
                    text = f"{v:.8g}"
                    if len(text.lstrip("-")) >= 6:
                        values.append(text)
    return values


async def _exercises(tutor: Tutor, scan: Scanner, lang: str, heavy: bool) -> None:
    for ex in all_exercises():
        public = stub_text(ex, lang) + ex.text("statement", lang)
        reference = [line.strip() for line in ex.reference_path.read_text(
            encoding="utf-8").splitlines() if len(line.strip()) >= 25
            and not line.strip().startswith("#") and line.strip() not in public]
        hints = ex.hint_list(lang)
        shown = await tutor.call("exercise_show", exercise_id=ex.id)
        scan.absent(f"{ex.id} show", shown, reference + hints)
        for rung in range(1, len(hints) + 2):
            hint = await tutor.call("exercise_hint", exercise_id=ex.id)
            scan.absent(f"{ex.id} hint {rung}", hint, hints[hint["hint"]:] + reference)
        if heavy:
            wrong = next((e for e in ex.wrong if e["expect"] == "wrong"), ex.wrong[0])
            Path(shown["file"]).write_text(ex.wrong_source(wrong), encoding="utf-8")
            checked = await tutor.call("exercise_check", exercise_id=ex.id, seed=12345)
            assert checked["passed"] is False
            scan.absent(f"{ex.id} check", checked, reference + _hidden_values(ex.id, 12345))
        scan.absent(f"{ex.id} list", await tutor.call("exercise_list"), reference)


async def _quizzes(tutor: Tutor, scan: Scanner, lang: str) -> None:
    for quiz_id in list_quizzes():
        quiz = load_quiz(quiz_id)
        for question in quiz.questions:
            asked = await tutor.call("quiz_question", quiz=quiz_id)
            assert asked["question"]["id"] == question.id
            explanation = _sentences(pick(question.explanation, lang), 20)
            scan.absent(f"{question.id} asked", asked, explanation)
            if question.kind == "recall":
                first = await tutor.call("quiz_answer", quiz=quiz_id, question_id=question.id,
                                         answer="I am not sure")
                assert first["status"] == "self_mark"
                await tutor.call("quiz_answer", quiz=quiz_id, question_id=question.id,
                                 answer="no")
                continue
            if question.kind not in CHOICE_KINDS + ("numeric",):
                await tutor.call("quiz_answer", quiz=quiz_id, question_id=question.id,
                                 answer=typed(question, lang, right=True))
                continue
            answer = await tutor.call("quiz_answer", quiz=quiz_id, question_id=question.id,
                                      answer=typed(question, lang, right=False))
            assert answer["status"] == "wrong", (question.id, answer)
            secret = explanation[:]
            if question.kind == "numeric":
                value = expected_value(question, lang)
                if len(value) > 1:   # a one-digit answer ("1") is in any text; not scannable
                    secret.append(value)
            else:
                right = question.answer if isinstance(question.answer, list) else [question.answer]
                secret += [pick(question.choices[i], lang) for i in right]
            scan.absent(f"{question.id} wrong", answer, secret)
            assert "explanation" not in answer and "expected" not in _text(answer)


def _lesson_and_path_tools(tutor: Tutor):
    async def walk(scan: Scanner, lang: str) -> None:
        causes = [s for brk in load_all() for s in _sentences(brk.text("explanation", lang))]
        for lesson in load_lessons():
            scan.absent(lesson.stem, await tutor.call("read_lesson", lesson=lesson.stem), causes)
        for name in ("lab_status", "next_step", "quiz_list"):
            scan.absent(name, await tutor.call(name), causes)
        first = load_lessons()[0]
        scan.absent("mark_lesson_read", await tutor.call("mark_lesson_read",
                                                          lesson=first.stem), causes)
    return walk


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "es"])
def test_no_tool_gives_away_what_the_lab_keeps_back(lang, tmp_path, tiny_run):
    heavy = lang == "en"   # runs, checks and the judge speak both languages the same way
    scan = Scanner()

    async def walk() -> None:
        async with tutor_session(tmp_path / "learner", lang) as tutor:
            await _lesson_and_path_tools(tutor)(scan, lang)
            await _quizzes(tutor, scan, lang)
            await _breaks(tutor, scan, lang, heavy)
            await _exercises(tutor, scan, lang, heavy)
            everything = [s for brk in load_all()
                          for s in _sentences(brk.text("explanation", lang))
                          + _patch_lines(brk.patch_text)]
            report = await tutor.call("doctor", path=str(tiny_run))
            assert report["healthy"] is True
            page = await tutor.call("explorer_page", runs=[str(tiny_run)])
            assert Path(page["page"]).is_file() and Path(page["page"]).stat().st_size > 1000
            scan.absent("doctor", report, everything)
            scan.absent("explorer_page", page, everything)

    anyio.run(walk)
    assert scan.found == [], "\n".join(scan.found)


def test_exercise_check_judges_only_a_learner_py_file_outside_the_package(tmp_path):
    """``exercise_check``'s ``file`` was any path: the reference itself passed (a chosen seed
    or not), and any other file's first line that does not parse as Python came back in the
    load error (a break's YAML gave its line 10, a wrong fix's idea; a patch names the bugged
    file). The tool now judges a ``.py`` file (links resolved) outside the package only."""
    from minimodel.lab.breaks import load_break
    from minimodel.lab.exercises import get_exercise
    from minimodel.tutor.learner import Learner
    from minimodel.tutor.exercise_tools import ExerciseDesk

    desk = ExerciseDesk(Learner(str(tmp_path / "learner"), "en"))
    ex = get_exercise("gelu-tanh")
    brk = load_break("frequent-tokens-learn-slowly")
    folder = Path(brk.folder) if hasattr(brk, "folder") else ex.folder.parents[1] / "breaks" \
        / brk.id
    link = tmp_path / "notes.py"
    link.symlink_to(folder / "break.yaml")
    for file in (ex.reference_path, folder / "break.yaml", folder / "bug.patch", link,
                 ex.folder / "exercise.yaml"):
        with pytest.raises(ValueError, match="not a learner's solution"):
            desk.check("gelu-tanh", file=str(file), seed=1)
    mine = tmp_path / "mine.py"
    mine.write_text("import numpy as np\n\ndef gelu(x):\n    return x\n", encoding="utf-8")
    assert desk.check("gelu-tanh", file=str(mine), seed=1)["status"] == "wrong"


def test_the_reference_checked_as_a_solution_is_never_a_recorded_pass(tmp_path):
    """``minimodel exercise check ID --file <the package's reference.py>`` without a seed
    recorded a pass for no work: a file of the package is judged (validation needs it) but is
    always practice."""
    from minimodel.lab.exercise_progress import record_check
    from minimodel.lab.exercises import check_solution, get_exercise
    from minimodel.lab.progress import Progress

    ex = get_exercise("gelu-tanh")
    result = check_solution(ex, ex.reference_path)
    assert result["passed"] is True and result["practice"] is True, result["message"]
    assert "a copy of the lab's own solution" in result["message"]
    progress = Progress(str(tmp_path / "learner"))
    record_check(progress, ex.id, result, str(ex.reference_path))
    assert progress.get("exercise", ex.id)["status"] != "passed"


def test_explorer_page_replaces_only_an_html_file(tmp_path, tiny_run):
    """``explorer_page``'s ``out`` was any path, and the page replaced that file: a learner's
    progress, a solution, the package's ``reference.py`` (the next check then refused to
    grade), a shell's start-up file. Only a file whose name (links resolved) ends in .html is
    written now."""
    from minimodel.tutor.learner import Learner
    from minimodel.tutor.model_tools import explorer_page

    learner = Learner(str(tmp_path / "learner"), "en")
    victim = tmp_path / "progress.json"
    victim.write_text('{"kept": true}', encoding="utf-8")
    link = tmp_path / "page.html"
    link.symlink_to(victim)
    for out in (victim, tmp_path / "solution.py", link):
        with pytest.raises(ValueError, match="not an .html file"):
            explorer_page(learner, [str(tiny_run)], out=str(out))
    assert victim.read_text(encoding="utf-8") == '{"kept": true}'
    assert not (tmp_path / "solution.py").exists()
    page = explorer_page(learner, [str(tiny_run)], out=str(tmp_path / "ok.html"))
    assert Path(page["page"]).is_file()
