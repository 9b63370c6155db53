"""The tutor's verdicts mean what the terminal's mean, over MCP: a recall question's model
answer only after a non-empty answer; a note after a number read, never ignored; a repeated
choice asked again."""

from __future__ import annotations

import anyio
import pytest

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
