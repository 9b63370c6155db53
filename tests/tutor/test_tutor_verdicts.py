"""The tutor's verdicts mean what the terminal's mean, over MCP: a recall question's model
answer only after a non-empty answer; a note after a number read, never ignored; a repeated
choice asked again; revealed work shown as revealed."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from minimodel.cli import main
from minimodel.lab import path as learning_path
from minimodel.lab.exercises import get_exercise
from minimodel.lab.patching import apply_patch_to_texts
from minimodel.lab.progress import Progress
from minimodel.lab.quiz import load_quiz
from minimodel.lab.quiz.session import parse_input, save_partial
from minimodel.tutor.learner import Learner

from tutor_client import tutor_session

pytest.importorskip("mcp")


def answer_before(learner_dir, lang: str, quiz, question_id: str) -> None:
    """Save right answers to the questions before ``question_id`` (single choices here), as a
    take stopped there would have, so the tutor asks ``question_id`` next."""
    before = quiz.questions[:quiz.ids.index(question_id)]
    assert {q.kind for q in before} == {"single"}
    save_partial(Learner(str(learner_dir), lang).progress(), quiz,
                 {q.id: parse_input(q, str(q.answer + 1), lang) for q in before})


@pytest.mark.parametrize("lang", ["en", "es"])
def test_recall_model_answer_only_after_an_answer_and_notes_are_read(lang, tmp_path):
    learner_dir = tmp_path / "learner"
    recall_quiz = load_quiz("tied-gradient")          # a multiple choice, then a recall question
    multi, recall = recall_quiz.questions
    numbers = load_quiz("phase-13-embeddings")
    rows = numbers.question("q-13-03")                   # 4 rows
    answer_before(learner_dir, lang, numbers, rows.id)
    model = recall.answer[lang].strip()

    async def walk() -> None:
        async with tutor_session(learner_dir, lang) as tutor:
            async def answer(question, typed):
                return await tutor.call("quiz_answer", quiz=question_quiz[question.id],
                                        question_id=question.id, answer=typed)

            question_quiz = {multi.id: recall_quiz.id, recall.id: recall_quiz.id,
                             rows.id: numbers.id}
            # a repeated choice is asked again, naming the choice
            twice = ",".join(str(multi.answer[0] + 1) for _ in range(2))
            again = await answer(multi, twice)
            assert again["status"] == "unclear" and str(multi.answer[0] + 1) in again["reason"]
            assert (await answer(multi, ",".join(str(i + 1) for i in multi.answer)))[
                "status"] == "right"
            # no model answer for an empty or blank answer
            for empty in ("", "   ", "\n\t "):
                got = await answer(recall, empty)
                assert got["status"] == "unclear" and "model_answer" not in got, got
                assert "rubric" not in got and model[:40] not in str(got)
            attempt = await answer(recall, "E gets two gradients that add up")
            assert attempt["status"] == "self_mark" and attempt["model_answer"].strip() == model
            assert (await answer(recall, "yes" if lang == "en" else "sí"))["status"] == "recalled"

            # a note after a number: read as words, working or a list, never ignored
            for typed in ("4 (not)", "4 [o más]", "4 (ids 1, 3, 7)", "4 {in thousands}"):
                got = await answer(rows, typed)
                assert got["status"] == "unclear" and got["reason"], (typed, got)
            assert (await answer(rows, "4 (columns)" if lang == "en" else "4 (columnas)"))[
                "status"] == "wrong"

    anyio.run(walk)


def test_a_right_answer_with_checkable_working_is_right_over_the_tutor(tmp_path):
    learner_dir = tmp_path / "learner"
    numbers = load_quiz("phase-13-embeddings")
    rows = numbers.question("q-13-03")
    answer_before(learner_dir, "es", numbers, rows.id)

    async def walk() -> None:
        async with tutor_session(learner_dir, "es") as tutor:
            got = await tutor.call("quiz_answer", quiz=numbers.id, question_id=rows.id,
                                   answer="4 (filas 1, 3, 7 y 9)")
            assert got["status"] == "right", got

    anyio.run(walk)


def test_revealed_work_is_shown_as_revealed_by_the_tutor(tmp_path):
    """A fix after break_give_up and a pass after viewing the solution (in the terminal) are
    "revealed" in break_check, exercise_check, break_list, exercise_list and lab_status; at the
    end of the path next_step counts them apart."""
    learner_dir = tmp_path / "learner"
    exercise = get_exercise("gelu-tanh")
    assert main(["exercise", "solution", exercise.id, "--yes",
                 "--learner-dir", str(learner_dir)]) == 0
    mine = tmp_path / "gelu.py"    # written from the solution just read, not a copy of it
    mine.write_text(exercise.reference_path.read_text(encoding="utf-8")
                    + "\n\ndef _note():\n    return 'after reading the solution'\n",
                    encoding="utf-8")
    break_id = "loss-crash-after-merge"

    async def walk() -> None:
        async with tutor_session(learner_dir, "en") as tutor:
            started = await tutor.call("break_start", break_id=break_id)
            root = Path(started["workdir"])
            fix = await tutor.call("break_give_up", break_id=break_id, learner_gives_up=True)
            texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8")
                     for p in (root / "minimodel").rglob("*.py")}
            for rel, text in apply_patch_to_texts(fix["diff"], texts, strip=1).items():
                (root / rel).write_text(text, encoding="utf-8")
            checked = await tutor.call("break_check", break_id=break_id)
            assert checked["fixed"] is True and checked["revealed"] is True
            assert "recorded as fixed after viewing the fix" in checked["say"]
            row = next(r for r in await tutor.call("break_list") if r["id"] == break_id)
            assert row["status"] == "fixed" and row["revealed"] is True

            judged = await tutor.call("exercise_check", exercise_id=exercise.id, file=str(mine))
            assert judged["passed"] is True and judged["revealed"] is True
            assert "passed after viewing the solution" in judged["say"]
            listed = await tutor.call("exercise_list")
            assert [r["id"] for r in listed if r["revealed"]] == [exercise.id]

            status = await tutor.call("lab_status")
            revealed = {(s["kind"], s["id"]) for lesson in status["path"]
                        for s in lesson["steps"] if s.get("revealed")}
            on_path = {(s.kind, s.id) for s in learning_path.steps()}
            assert revealed == {("break", break_id), ("exercise", exercise.id)} & on_path
            assert status["totals"]["exercise"]["revealed"] == \
                int(("exercise", exercise.id) in on_path)

    anyio.run(walk)

    done_dir = tmp_path / "done"          # a learner at the end of the path
    progress, steps = Progress(done_dir), learning_path.steps()
    shown = next(s for s in steps if s.kind == "exercise")
    for step in steps:
        if step.kind == "lesson":
            learning_path.mark(progress, step, "read")
        elif step.kind == "quiz":
            progress.record("quiz", step.id, "taken", attempts=1, best_score=1, total=1)
        else:
            progress.record(step.kind, step.id, learning_path.DONE_STATUS[step.kind],
                            revealed=step is shown)

    async def at_the_end() -> None:
        async with tutor_session(done_dir, "es") as tutor:
            report = await tutor.call("next_step")
            assert report["step"] is None and report["revealed"] == [shown.key]
            assert "1 de ellos tras ver la respuesta" in report["say"]
            assert f"exercise {shown.id} (superado tras ver la solución)" in report["say"]

    anyio.run(at_the_end)
