"""Quizzes, one question at a time, graded as ``minimodel quiz take`` grades them.

The answer is read by the interactive take's own parser (:func:`parse_input`: choice numbers
from 1, numbers and terms as typed, in the learner's language) and graded by
:func:`is_correct`; what cannot be read one way is asked again with the reason, never graded.
Answers so far are kept as the interactive take keeps them when interrupted (the progress
entry's ``partial``), so a take begun with the tutor can be finished in the terminal and the
other way round; the last answer grades and records the whole take (:func:`finish_take`).

A wrong answer is not corrected with the expected answer: the assistant helps the learner find
it (``quiz review`` brings the question back); a right one comes with its explanation. A recall
question shows its model answer and rubric only after the learner has answered (an empty or
blank answer is asked again: shown first, the model answer would be read instead of recalled),
then asks for the learner's own mark, as the terminal does.
"""

from __future__ import annotations

import threading
from typing import Any

from minimodel.lab import path as learning_path
from minimodel.lab.i18n import pick
from minimodel.lab.quiz import is_correct, load_quiz
from minimodel.lab.quiz.loader import Question, Quiz, list_quizzes
from minimodel.lab.quiz.numbers import Unreadable
from minimodel.lab.quiz.render import how_to_answer, rubric_lines
from minimodel.lab.quiz.session import (finish_take, parse_input, save_partial, saved_partial,
                                        wrong_unit)
from minimodel.lab.suggest import Suggest
from minimodel.messages import say
from minimodel.tutor.learner import Learner


def _shown(question: Question, lang: str) -> dict[str, Any]:
    """A question as the learner sees it: prompt, numbered choices, how to answer."""
    return {"id": question.id, "kind": question.kind, "title": pick(question.title, lang),
            "prompt": pick(question.prompt, lang).strip(),
            "choices": [f"{i}. {pick(c, lang)}" for i, c in enumerate(question.choices, 1)],
            "how_to_answer": how_to_answer(question, lang)}


class QuizDesk:
    """The quiz tools. Remembers, for this session, which recall questions have shown their
    model answer (the learner answered; the self-mark comes next)."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner
        self._revealed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._loaded: dict[str, Quiz] = {}  # reading and checking a quiz file takes a while

    def _load(self, key: str, lang: str) -> Quiz:
        if key not in self._loaded:
            self._loaded[key] = load_quiz(key, lang=lang)
        return self._loaded[key]

    def _quiz(self, quiz: str | None, lang: str) -> Quiz:
        if quiz:
            return self._load(str(quiz), lang)
        step = learning_path.pending(self.learner.progress())
        if step is None or step.kind != "quiz":
            raise ValueError(say("tutor.quiz.name_one", lang))
        return self._load(step.id, lang)

    def list(self, lang: str | None = None) -> list[dict[str, Any]]:
        """``quiz list --json`` with each quiz's attempts and best score."""
        lang = self.learner.pick_lang(lang)
        progress = self.learner.progress()
        rows = []
        for quiz_id in list_quizzes():
            quiz, record = self._load(quiz_id, lang), progress.get("quiz", quiz_id) or {}
            rows.append({"id": quiz.id, "title": pick(quiz.title, lang),
                         "questions": len(quiz.questions),
                         "attempts": int(record.get("attempts", 0)),
                         "best_score": record.get("best_score"),
                         "answered_in_this_take": len(record.get("partial") or {})})
        return rows

    def question(self, quiz: str | None = None, lang: str | None = None) -> dict[str, Any]:
        """The next unanswered question of the quiz's current take (a new take after a
        finished one)."""
        lang = self.learner.pick_lang(lang)
        found = self._quiz(quiz, lang)
        progress = self.learner.progress()
        answered = saved_partial(progress, found, lang)
        todo = [q for q in found.questions if q.id not in answered]
        if not todo:  # every answer saved (a take stopped after its last one): grade it, as
            with self._lock:   # `quiz take` does when it resumes with nothing left to ask
                return self._finish(progress, found, answered, lang, {"quiz": found.id})
        question = todo[0]
        return {"quiz": found.id, "title": pick(found.title, lang),
                "number": found.ids.index(question.id) + 1, "total": len(found.questions),
                "answered": len(answered), "question": _shown(question, lang),
                "say": say("tutor.quiz.ask_first", lang)}

    def answer(self, quiz: str, question_id: str, answer: str,
               lang: str | None = None) -> dict[str, Any]:
        """Grade the learner's answer to the current question, exactly as typed."""
        lang = self.learner.pick_lang(lang)
        found = self._quiz(quiz, lang)
        progress = self.learner.progress()
        with self._lock:
            answers = saved_partial(progress, found, lang)
            current = next(q for q in found.questions if q.id not in answers)
            if question_id != current.id:
                raise ValueError(say("tutor.quiz.not_current", lang, asked=question_id,
                                     current=current.id, quiz=found.id))
            out: dict[str, Any] = {"quiz": found.id, "question": current.id}
            if current.kind == "recall" and (found.id, current.id) not in self._revealed:
                if not str(answer).strip():  # the model answer only after an attempt
                    return {**out, "status": "unclear",
                            "reason": say("tutor.quiz.recall_first", lang),
                            "say": say("tutor.quiz.again", lang)}
                self._revealed.add((found.id, current.id))
                return {**out, "status": "self_mark",
                        "model_answer": pick(current.answer, lang),
                        "rubric": rubric_lines(current, lang),
                        "say": say("quiz.ask.recall", lang)}
            try:
                parsed = parse_input(current, str(answer), lang)
            except Unreadable as exc:
                return {**out, "status": "unclear", "reason": exc.reason,
                        "say": say("tutor.quiz.again", lang)}
            except ValueError:
                return {**out, "status": "unclear",
                        "reason": say(f"quiz.bad.{current.kind}", lang, n=len(current.choices)),
                        "say": say("tutor.quiz.again", lang)}
            self._revealed.discard((found.id, current.id))
            right = is_correct(current, parsed, lang)
            answers[current.id] = parsed
            if current.kind == "recall":
                out.update(status="recalled" if right else "not_recalled")
            else:
                out.update(status="right" if right else "wrong")
            if right and current.kind != "recall":
                out["explanation"] = pick(current.explanation, lang)
            elif not right and (unit := wrong_unit(current, parsed, lang)):
                out["note"] = unit
            if len(answers) < len(found.questions):
                save_partial(progress, found, answers)
                out["say"] = say(f"tutor.quiz.{'right' if right else 'wrong'}", lang)
                return out
            return self._finish(progress, found, answers, lang, out)

    def _finish(self, progress, found: Quiz, answers: dict[str, Any], lang: str,
                out: dict[str, Any]) -> dict[str, Any]:
        """Grade and record the whole take; the score and the ids missed (not the answers)."""
        report, entry = finish_take(progress, found, answers, lang)
        out.update(finished=True, score=report["score"], total=report["total"],
                   best_score=entry["best_score"],
                   missed=[r["id"] for r in report["results"] if not r["correct"]],
                   say=say("tutor.quiz.finished", lang, score=report["score"],
                           total=report["total"],
                           command=Suggest(lang, progress.learner_dir)("quiz", "review", found.id)))
        return out
