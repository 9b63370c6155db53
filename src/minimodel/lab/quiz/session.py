"""Taking and reviewing a quiz: progress records and the interactive Rich session.

The progress entry of a quiz (``progress/quiz.json``) holds::

    status        "passed" (best score is perfect) | "attempted" | "in-progress"
    score, total  the last full attempt;  best_score  the best one;  attempts  how many
    results       {question id: bool} of the last attempt
    boxes         Leitner boxes for review (see :mod:`minimodel.lab.quiz.review`)
    partial       answers of an interrupted interactive take, resumed next time (or null)

Input is read with ``Console.input`` (plain ``input()`` underneath), so a session can be driven
through stdin by scripts and tests.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any, Callable

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

from minimodel.lab.i18n import pick
from minimodel.lab.progress import Progress
from minimodel.lab.quiz import review
from minimodel.lab.quiz.grading import check_answers, grade, is_correct, normalise
from minimodel.lab.quiz.loader import Question, Quiz
from minimodel.lab.quiz.render import answer_lines
from minimodel.lab.quiz.ui import t


def record_take(progress: Progress, quiz: Quiz, report: dict[str, Any],
                on: dt.date | None = None) -> dict[str, Any]:
    """Store a graded full attempt: score, best score, per-question results, Leitner boxes."""
    prev = progress.get("quiz", quiz.id) or {}
    results = {r["id"]: bool(r["correct"]) for r in report["results"]}
    best = max(int(prev.get("best_score", 0)), report["score"])
    return progress.record(
        "quiz", quiz.id, "passed" if best == report["total"] else "attempted",
        score=report["score"], total=report["total"], best_score=best,
        attempts=int(prev.get("attempts", 0)) + 1, results=results,
        boxes=review.update_boxes(prev.get("boxes", {}), results, on), partial=None)


def record_review(progress: Progress, quiz: Quiz, results: dict[str, bool],
                  on: dt.date | None = None) -> dict[str, Any]:
    """Move the reviewed questions between Leitner boxes; scores are left alone."""
    prev = progress.get("quiz", quiz.id) or {}
    return progress.record("quiz", quiz.id, prev.get("status", "in-progress"),
                           total=len(quiz.questions),
                           boxes=review.update_boxes(prev.get("boxes", {}), results, on),
                           reviewed=(on or review.today()).isoformat())


def save_partial(progress: Progress, quiz: Quiz, answers: dict[str, Any]) -> None:
    """Keep the answers of an interrupted take so the next run resumes from them."""
    prev = progress.get("quiz", quiz.id) or {}
    progress.record("quiz", quiz.id, prev.get("status", "in-progress"),
                    total=len(quiz.questions), partial=answers)


def saved_partial(progress: Progress, quiz: Quiz) -> dict[str, Any]:
    """The saved partial answers, dropping any that no longer fit the quiz (it may have changed)."""
    partial = (progress.get("quiz", quiz.id) or {}).get("partial") or {}
    kept = {}
    for qid, answer in partial.items() if isinstance(partial, dict) else ():
        try:
            kept.update(check_answers(quiz, {qid: answer}))
        except ValueError:
            continue
    return kept


# --- interactive -------------------------------------------------------------------------


def parse_input(question: Question, raw: str) -> Any:
    """Turn what the learner typed into an answer; ValueError when it does not parse.

    Choices are numbered from 1 on screen (people count from 1), answers are 0-based inside.
    """
    raw = raw.strip()
    n = len(question.choices)
    if question.kind in ("single", "multi"):
        parts = [p for p in raw.replace(";", ",").replace(" ", ",").split(",") if p]
        if not parts or (question.kind == "single" and len(parts) != 1):
            raise ValueError(raw)
        indices = [int(p) - 1 for p in parts]  # int() raises ValueError on junk
        if any(not 0 <= i < n for i in indices):
            raise ValueError(raw)
        return indices[0] if question.kind == "single" else sorted(set(indices))
    if question.kind == "free":
        if not normalise(raw):
            raise ValueError(raw)
        return raw
    readings = numeric_readings(raw)
    target = float(question.answer["value"])
    return min(readings, key=lambda value: abs(value - target))


_GROUPED = re.compile(r"[+-]?\d{1,3}(?:([.,])\d{3})+")


def numeric_readings(raw: str) -> list[float]:
    """The numbers a learner may mean by ``raw``; ValueError when there is none.

    People type numbers the way they write them: ``2,097,152`` or ``2.097.152`` or
    ``2 097 152`` (thousands separators in English, Spanish and SI style), ``6,238`` or ``6.238``
    (decimal comma or point). ``65,536`` and ``6.238`` are genuinely ambiguous (a group of
    thousands or three decimals); both readings are returned and the caller keeps the one on
    the question's scale, since the two differ by a factor of 1000.
    """
    text = re.sub(r"[\s_\u00a0\u202f\u2009]", "", raw)
    if not text:
        raise ValueError(raw)
    if "," in text and "." in text:  # the last separator is the decimal one
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        group = "." if decimal == "," else ","
        return [float(text.replace(group, "").replace(decimal, "."))]
    readings = []
    match = _GROUPED.fullmatch(text)
    if match:  # digits grouped by threes: thousands separators
        readings.append(float(text.replace(match.group(1), "")))
    if text.count(",") <= 1 and text.count(".") <= 1:  # one separator: a decimal mark
        try:
            readings.append(float(text.replace(",", ".")))
        except ValueError:
            pass
    readings = [value for value in readings if math.isfinite(value)]  # "inf", "nan" are typos
    if not readings:
        raise ValueError(raw)
    return readings


def show_question(console: Console, question: Question, number: int, total: int,
                  lang: str, note: str = "") -> None:
    """Print one question: a panel with the prompt and, for choice questions, numbered choices."""
    body = pick(question.prompt, lang).strip()
    if question.choices:
        body += "\n\n" + "\n".join(f"{i + 1}. {pick(c, lang)}"
                                   for i, c in enumerate(question.choices))
    title = f"[{number}/{total}] {question.id} · {t('kind.' + question.kind, lang)}"
    console.print(Panel(Markdown(body), title=Text(title + (f" · {note}" if note else "")),
                        subtitle=Text(pick(question.title, lang)), expand=False))


def ask(console: Console, question: Question, lang: str) -> Any:
    """Prompt until the input parses. Ctrl-C / end of input propagate to the caller."""
    while True:
        raw = console.input(Text(t(f"ask.{question.kind}", lang) + ": ", style="bold"))
        try:
            return parse_input(question, raw)
        except ValueError:
            console.print(Text(t(f"bad.{question.kind}", lang, n=len(question.choices)),
                               style="yellow"))


def feedback(console: Console, question: Question, correct: bool, lang: str) -> None:
    """Right or wrong, the expected answer when wrong, and the explanation."""
    if correct:
        console.print(Text(t("right", lang), style="bold green"))
    else:
        console.print(Text(t("wrong", lang), style="bold red"))
        console.print(Markdown(f"**{t('expected', lang)}:**\n\n" +
                               "\n".join(answer_lines(question, lang))))
    console.print(Markdown(f"*{t('explanation', lang)}:* {pick(question.explanation, lang)}"))
    console.print()


def ask_all(console: Console, questions: list[Question], lang: str,
            answers: dict[str, Any], notes: dict[str, str] | None = None,
            on_answer: Callable[[Question, Any, bool], None] | None = None,
            quiz: Quiz | None = None) -> None:
    """Ask ``questions`` in order, filling ``answers`` in place as each one is given.

    Filling in place is what lets the caller save the answers so far when Ctrl-C interrupts.
    With ``quiz``, questions are numbered by their place in the whole quiz (a resumed take
    continues at [5/26] rather than restarting at [1/22]).
    """
    for number, question in enumerate(questions, start=1):
        total = len(questions)
        if quiz is not None:
            number, total = quiz.ids.index(question.id) + 1, len(quiz.questions)
        show_question(console, question, number, total, lang,
                      (notes or {}).get(question.id, ""))
        answer = ask(console, question, lang)
        correct = is_correct(question, answer)
        answers[question.id] = answer
        if on_answer:
            on_answer(question, answer, correct)
        feedback(console, question, correct, lang)


def interactive_take(quiz: Quiz, progress: Progress, lang: str, console: Console,
                     restart: bool = False) -> int:
    """Run a take in the terminal. Exit code: 0 done, 130 Ctrl-C, 1 input ended early."""
    answers = {} if restart else saved_partial(progress, quiz)
    if answers:
        console.print(Text(t("resume", lang, n=len(answers)), style="cyan"))
    console.rule(Text(pick(quiz.title, lang)))
    todo = [q for q in quiz.questions if q.id not in answers]
    try:
        ask_all(console, todo, lang, answers, quiz=quiz)
    except (KeyboardInterrupt, EOFError) as stop:
        save_partial(progress, quiz, answers)
        console.print()
        console.print(Text(t("saved", lang, n=len(answers)), style="yellow"))
        return 130 if isinstance(stop, KeyboardInterrupt) else 1
    report = grade(quiz, answers)
    entry = record_take(progress, quiz, report)
    console.print(Text(t("score", lang, **report) + " · " +
                       t("best", lang, best=entry["best_score"], total=report["total"]),
                       style="bold"))
    return 0


def interactive_review(quiz: Quiz, progress: Progress, lang: str, console: Console,
                       include_all: bool = False, limit: int | None = None) -> int:
    """Review due questions (missed first) in the terminal, updating Leitner boxes."""
    boxes = (progress.get("quiz", quiz.id) or {}).get("boxes", {})
    queue = review.review_queue(quiz, boxes, include_all=include_all)[:limit]
    if not queue:
        due = review.next_due(boxes)
        console.print(t("review.none", lang, due=due) if due else t("review.none_at_all", lang))
        return 0
    console.print(Text(t("review.head", lang, n=len(queue)), style="cyan"))
    notes = {item["id"]: t("reason." + item["reason"], lang) for item in queue}
    results: dict[str, bool] = {}
    answers: dict[str, Any] = {}
    code = 0
    try:
        ask_all(console, [quiz.question(item["id"]) for item in queue], lang, answers, notes,
                on_answer=lambda q, _a, ok: results.__setitem__(q.id, ok))
    except (KeyboardInterrupt, EOFError) as stop:
        console.print()
        console.print(Text(t("review.saved", lang, n=len(results)), style="yellow"))
        code = 130 if isinstance(stop, KeyboardInterrupt) else 1
    if results:
        record_review(progress, quiz, results)
    if code == 0:
        console.print(Text(t("score", lang, score=sum(results.values()), total=len(results)),
                           style="bold"))
    return code
