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
import os
import sys
from typing import Any, Callable

from rich.console import Console
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from minimodel.lab.i18n import pick
from minimodel.lab.progress import Progress
from minimodel.lab.quiz import review
from minimodel.lab.quiz.choices import choice_number
from minimodel.lab.quiz.grading import (check_answer, check_answers, grade, is_correct, outcomes,
                                        read_yes_no, repeated)
from minimodel.lab.quiz.numbers import Number, Unreadable, unit_name
from minimodel.lab.quiz.loader import Question, Quiz
from minimodel.lab.quiz.render import answer_lines, bare_answer, how_to_answer, rubric_lines
from minimodel.lab.quiz.schema import AUTO_GRADED
from minimodel.lab.suggest import Suggest
from minimodel.messages import say


def record_take(progress: Progress, quiz: Quiz, report: dict[str, Any],
                on: dt.date | None = None) -> dict[str, Any]:
    """Store a graded full attempt: score, best score, per-question results, Leitner boxes.

    Recall questions (self-marked) move through the Leitner boxes like the others, and their
    marks are kept under ``recalled``; they never enter the score or the pass status.
    """
    prev = progress.get("quiz", quiz.id) or {}
    results = {r["id"]: bool(r["correct"]) for r in report["results"]}
    recalled = {r["id"]: bool(r["recalled"]) for r in report["recall"]["results"]}
    best = max(int(prev.get("best_score", 0)), report["score"])
    return progress.record(
        "quiz", quiz.id, "passed" if best == report["total"] else "attempted",
        score=report["score"], total=report["total"], best_score=best,
        attempts=int(prev.get("attempts", 0)) + 1, results=results, recalled=recalled,
        boxes=review.update_boxes(prev.get("boxes", {}), outcomes(report), on), partial=None)


def finish_take(progress: Progress, quiz: Quiz, answers: dict[str, Any], lang: str
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Grade a take whose every question was answered (as typed, in ``lang``) and record it;
    returns the report (:func:`grade`'s) and the progress entry."""
    report = grade(quiz, answers, lang)
    return report, record_take(progress, quiz, report)


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


def saved_partial(progress: Progress, quiz: Quiz, lang: str) -> dict[str, Any]:
    """The saved partial answers, dropping any that no longer fit the quiz (it may have changed)
    or cannot be read in ``lang`` (they are asked again)."""
    partial = (progress.get("quiz", quiz.id) or {}).get("partial") or {}
    kept = {}
    for qid, answer in partial.items() if isinstance(partial, dict) else ():
        try:
            check_answers(quiz, {qid: answer}, lang)
        except ValueError:
            continue
        kept[qid] = answer  # as typed (a number's text), so the end screen can show it
    return kept


# --- interactive -------------------------------------------------------------------------

# What leaves a review at any answer prompt, answers so far saved (in either language).
QUIT_WORDS = {"q", "quit", "salir"}


class Quit(Exception):
    """The learner typed a quit word: save what was answered and leave (not an interruption)."""


def with_quit_hint(prompt: str, lang: str) -> str:
    """``prompt`` saying that q leaves: "Your answer (one number; q saves and leaves)"."""
    hint = say("quiz.ask.quit", lang)
    return f"{prompt[:-1]}; {hint})" if prompt.endswith(")") else f"{prompt} ({hint})"


def parse_input(question: Question, raw: str, lang: str = "en") -> Any:
    """Turn what the learner typed into an answer; ValueError when it does not parse
    (Unreadable, with the reason to show, when a number or a term cannot be read one way).

    Choices are numbered from 1 on screen (people count from 1), answers are 0-based inside;
    commas, semicolons and spaces all separate them (``1,3`` = ``1 3``: a choice number is one
    number, so a space cannot join two); each is read by :func:`choice_number` (``2``, ``2.``,
    ``(2)``, ``two``, ``dos``); a choice typed twice (``2,4,2,4``) is asked again: a
    repeat is a slip or a guess, never an answer to read one way. A numeric or short answer is
    kept as typed: it is graded from the text (the same way as in an answers file) and the end
    screen shows it.
    A recall question's input is the learner's yes/no after seeing the rubric.
    """
    raw = raw.strip()
    n = len(question.choices)
    kind = question.kind
    if kind in ("single", "multi", "order"):
        parts = [p for p in raw.replace(";", ",").replace(" ", ",").split(",") if p]
        indices = [choice_number(p) - 1 for p in parts]  # ValueError on junk
        if not indices or any(not 0 <= i < n for i in indices):
            raise ValueError(raw)
        if kind != "single" and (twice := repeated(indices)) is not None:
            raise Unreadable(say("quiz.reask.repeated", lang, answer=raw, choice=twice + 1))
        if kind == "single":
            if len(indices) != 1:
                raise ValueError(raw)
            return indices[0]
        if kind == "order":
            if sorted(indices) != list(range(n)):
                raise ValueError(raw)
            return indices
        return sorted(set(indices))
    if kind in ("numeric", "short"):
        if not raw:
            raise ValueError(raw)
        try:
            check_answer(question, raw, lang)
        except Unreadable as exc:
            raise Unreadable(exc.reason) from None
        except TypeError:
            raise ValueError(raw) from None
        return raw
    return read_yes_no(raw)


def shown_answer(question: Question, answer: Any, lang: str) -> str:
    """What the learner answered, as they saw it: ``2. <choice>`` for choices, the typed text."""
    if question.kind in ("single", "multi", "order") and isinstance(answer, (int, list)):
        picked = [answer] if isinstance(answer, int) else answer
        return "; ".join(f"{i + 1}. {pick(question.choices[i], lang)}" for i in picked
                         if 0 <= i < len(question.choices))
    if isinstance(answer, Number):
        return str(answer.value)
    return str(answer)


def show_question(console: Console, question: Question, number: int, total: int,
                  lang: str, note: str = "") -> None:
    """Print one question: a panel with the prompt and, for choice questions, numbered choices."""
    body = pick(question.prompt, lang).strip()
    if question.choices:
        body += "\n\n" + "\n".join(f"{i + 1}. {pick(c, lang)}"
                                   for i, c in enumerate(question.choices))
    title = f"[{number}/{total}] {question.id} · {say(f'quiz.kind.{question.kind}', lang)}"
    console.print(Panel(Markdown(body), title=Text(title + (f" · {note}" if note else "")),
                        subtitle=Text(pick(question.title, lang)), expand=False))


def ask(console: Console, question: Question, lang: str, can_quit: bool = False) -> Any:
    """Prompt until the input parses. Ctrl-C / end of input propagate to the caller; with
    ``can_quit``, a quit word (:data:`QUIT_WORDS`) at any prompt raises :class:`Quit`, and the
    prompt says so.

    A recall question first waits while the learner answers in their head or on paper, then
    shows the model answer and its rubric and asks for the learner's own yes/no mark.
    """
    def quits(typed: str) -> bool:
        return can_quit and typed.strip().lower() in QUIT_WORDS

    how = how_to_answer(question, lang)
    if can_quit:
        how = with_quit_hint(how, lang)
    if question.kind == "recall":
        typed = read_recall_answer(console, say("quiz.ask.recall.think", lang) + " ")
        if len(typed) == 1 and quits(typed[0]):
            raise Quit
        if typed:
            console.print(Text(f"{say('quiz.recall.typed', lang)}:", style="bold"))
            console.print(Padding(Text("\n".join(typed)), (0, 0, 0, 4)))
        console.print(Markdown(f"**{say('quiz.model_answer', lang)}:** "
                               f"{pick(question.answer, lang)}\n\n"
                               f"**{say('quiz.rubric', lang)}:**\n\n"
                               + "\n".join(rubric_lines(question, lang))))
    while True:
        raw = read_line(console, Text(how + ": ", style="bold"))
        if quits(raw):
            raise Quit
        try:
            return parse_input(question, raw, lang)
        except Unreadable as exc:
            console.print(Text(exc.reason, style="yellow"))
        except ValueError:
            console.print(Text(say(f"quiz.bad.{question.kind}", lang, n=len(question.choices)),
                               style="yellow"))


def read_line(console: Console, prompt: Text) -> str:
    """One line typed after ``prompt``. From a pipe or a file nothing echoes the answer and its
    newline, so the line is ended here: the feedback starts on a line of its own instead of
    after the prompt ("Your answer (one number): Not quite.")."""
    line = console.input(prompt)
    isatty = getattr(sys.stdin, "isatty", None)  # a stand-in stdin may not say
    if isatty is not None and not isatty():
        console.print()
    return line


def read_recall_answer(console: Console, prompt: str) -> list[str]:
    """What the learner wrote at a recall question: at a terminal, the lines typed (or pasted)
    up to the first empty line; from a pipe or a file, one line.

    Why both: at a terminal a pasted answer of several lines must end here, not land its
    second line (``no``, ``si``) on the yes/no self-mark prompt that follows. Piped answers
    come one per line (``printf '2\nmy answer\ny\n' | minimodel quiz take ...``): waiting for
    an empty line there would swallow the self-mark and every answer after it.
    """
    lines = [read_line(console, Text(prompt, style="bold"))]
    while sys.stdin.isatty() and lines[-1].strip():
        lines.append(console.input(""))
    return [line for line in lines if line.strip()]


def inline_code(text: str, style: str = "") -> Text:
    """Terminal text with Markdown's `code` spans drawn as code, not as raw backticks."""
    parts = text.split("`")
    if len(parts) % 2 == 0:       # an odd number of backticks: not code spans, show as typed
        return Text(text, style=style)
    return Text.assemble(*[(part, "bold cyan" if i % 2 else style) for i, part in enumerate(parts)])


def correction(question: Question, answer: Any, lang: str) -> list[Text]:
    """What the learner answered (when there is an answer) and why its unit was wrong (when
    it was): the lines shown under a wrong answer, at once and on the end screen."""
    lines = [] if answer is None else [inline_code(
        f"{say('quiz.your_answer', lang)}: {shown_answer(question, answer, lang)}")]
    if unit := wrong_unit(question, answer, lang):
        lines.append(Text(unit, style="yellow"))
    return lines


def expected(question: Question, lang: str) -> str:
    """The expected answer as Markdown after its heading: a one-line answer (a value, the
    accepted forms, the one right choice) on the heading's line; the right choices, or the
    choices in the right order, listed under it — never the whole list of options."""
    kind = question.kind
    heading = f"**{say('quiz.expected', lang)}:**"
    if kind in ("single", "multi", "order"):
        ids = [question.answer] if kind == "single" else list(question.answer)
        # "- **3.** text": bullets, since a Markdown list renumbers "3." as 1
        lines = [f"- **{i + 1}.** {pick(question.choices[i], lang)}" for i in ids]
        if kind == "single":
            return f"{heading} **{ids[0] + 1}.** {pick(question.choices[ids[0]], lang)}"
        if kind == "order":
            lines.insert(0, f"{say('quiz.right_order', lang)}: **"
                         + ", ".join(str(i + 1) for i in ids) + "**\n")
        return heading + "\n\n" + "\n".join(lines)
    if kind in ("numeric", "short"):   # "Expected: **65 536**", not "Expected: Value: ..."
        return f"{heading} {bare_answer(question, lang)}"
    return heading + "\n\n" + "\n".join(answer_lines(question, lang))   # recall: model answer


def feedback(console: Console, question: Question, correct: bool, lang: str,
             answer: Any = None) -> None:
    """Right or wrong (recall: the learner's own mark); when wrong, what the learner answered,
    why a unit was wrong, and the expected answer; then the explanation."""
    if question.kind == "recall":
        console.print(Text(say("quiz.recalled" if correct else "quiz.not_recalled", lang),
                           style="cyan"))
    elif correct:
        console.print(Text(say("quiz.right", lang), style="bold green"))
    else:
        console.print(Text(say("quiz.wrong", lang), style="bold red"))
        for line in correction(question, answer, lang):
            console.print(line)
        console.print(Markdown(expected(question, lang)))
    console.print(Markdown(f"*{say('quiz.explanation', lang)}:* "
                           f"{pick(question.explanation, lang)}"))
    console.print()


def wrong_unit(question: Question, answer: Any, lang: str) -> str:
    """"The question asks for rows, not columns." when a typed number named another unit."""
    if question.kind != "numeric" or not isinstance(answer, str):
        return ""
    try:
        number = check_answer(question, answer, lang)
    except ValueError:
        return ""
    if not number.wrong_unit:
        return ""
    units = unit_name(question.answer, question.prompt, lang) or say("quiz.reask.no_unit", lang)
    return say("quiz.wrong_unit", lang, units=units, unit=number.wrong_unit)


def ask_all(console: Console, questions: list[Question], lang: str,
            answers: dict[str, Any], notes: dict[str, str] | None = None,
            on_answer: Callable[[Question, Any, bool], None] | None = None,
            quiz: Quiz | None = None, can_quit: bool = False) -> None:
    """Ask ``questions`` in order, filling ``answers`` in place as each one is given (with
    ``can_quit``, a quit word raises :class:`Quit`, see :func:`ask`).

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
        answer = ask(console, question, lang, can_quit)
        correct = is_correct(question, answer, lang)
        answers[question.id] = answer
        if on_answer:
            on_answer(question, answer, correct)
        feedback(console, question, correct, lang, answer)


def stopped(console: Console, saved: str) -> int:
    """Ctrl-C, or the end of input (Ctrl-D, or the last line of piped answers) before the last
    question: say in one line what was kept; exit code 130 for both, as the learner stopped
    the take either way (nothing is graded or counted as an attempt)."""
    console.print()   # the prompt's line is left open
    console.print(Text(saved, style="yellow"))
    return 130


def interactive_take(quiz: Quiz, progress: Progress, lang: str, console: Console,
                     restart: bool = False) -> int:
    """Run a take in the terminal. Exit code: 0 done, 130 stopped early (Ctrl-C, or the input
    ended: Ctrl-D or piped answers that run out), the answers so far kept for next time."""
    answers = {} if restart else saved_partial(progress, quiz, lang)
    if answers:
        console.print(Text(say("quiz.resume", lang, n=len(answers)), style="cyan"))
    console.rule(Text(pick(quiz.title, lang)))
    todo = [q for q in quiz.questions if q.id not in answers]
    try:
        ask_all(console, todo, lang, answers, quiz=quiz)
    except (KeyboardInterrupt, EOFError):
        save_partial(progress, quiz, answers)
        return stopped(console, say("quiz.saved", lang, n=len(answers)))
    report, entry = finish_take(progress, quiz, answers, lang)
    show_summary(console, quiz, report, lang, best=entry["best_score"], answered=answers,
                 learner_dir=progress.learner_dir)
    return 0


def show_summary(console: Console, quiz: Quiz, report: dict[str, Any], lang: str,
                 best: int | None = None, answered: dict[str, Any] | None = None,
                 learner_dir: str | os.PathLike | None = None) -> None:
    """The end screen: the score; each question answered wrongly with its title, what the
    learner answered (or why it could not be read), the expected answer and the explanation;
    the unanswered ones by id; the self-marked recall questions, counted apart from the score;
    and the command that brings them back for review (for the learner folder ``learner_dir``)."""
    line = say("quiz.score", lang, score=report["score"], total=report["total"])
    if best is not None:
        line += " · " + say("quiz.best", lang, best=best, total=report["total"])
    console.print(Text(line, style="bold"))
    wrong = [r["id"] for r in report["results"] if not r["correct"]]
    skipped = [qid for qid in wrong if answered is not None and qid not in answered]
    missed = [quiz.question(qid) for qid in wrong if qid not in skipped]
    if missed:
        console.print(Text(say("quiz.summary.missed", lang, n=len(missed)), style="red"))
        reasons = {r["id"]: r["reason"] for r in report["results"] if r.get("reason")}
        # Padding, not leading spaces: a wrapped line keeps its indent
        for q in missed:
            console.print(Padding(inline_code(f"{q.id}  {pick(q.title, lang)}", style="bold"),
                                  (0, 0, 0, 2)))
            lines = correction(q, (answered or {}).get(q.id), lang)
            if q.id in reasons:  # not graded: why, instead of the answer
                lines = [Text(f"{say('quiz.unreadable', lang)}: {reasons[q.id]}",
                              style="yellow")]
            for text in lines:
                console.print(Padding(text, (0, 0, 0, 4)))
            console.print(Padding(Markdown(expected(q, lang) + "\n\n" + pick(q.explanation, lang)),
                                  (0, 0, 1, 4)))
    if skipped:
        console.print(Text(say("quiz.summary.skipped", lang, n=len(skipped)) + " "
                           + ", ".join(skipped), style="yellow"))
    recall = report["recall"]
    if recall["answered"]:
        console.print(Text(say("quiz.summary.recall", lang, **recall), style="cyan"))
        for r in recall["results"]:
            if not r["recalled"]:
                console.print(Padding(Text(f"{r['id']}  {pick(quiz.question(r['id']).title, lang)}"),
                                      (0, 0, 0, 2)))
    if wrong or recall["answered"] > recall["recalled"]:
        review_command = Suggest(lang, learner_dir)("quiz", "review", quiz.id)
        # soft_wrap: a command cut by Rich's wrapping would not paste as one line
        console.print(Text(say("quiz.summary.review", lang, command=review_command)),
                      soft_wrap=True)


def interactive_review(quiz: Quiz, progress: Progress, lang: str, console: Console,
                       include_all: bool = False, limit: int | None = None) -> int:
    """Review due questions (missed first) in the terminal, updating Leitner boxes. Typing
    q, quit or salir at a prompt saves the questions reviewed so far and leaves (exit 0); the
    others stay due."""
    boxes = (progress.get("quiz", quiz.id) or {}).get("boxes", {})
    queue = review.review_queue(quiz, boxes, include_all=include_all)[:limit]
    if not queue:
        due = review.next_due(boxes)
        console.print(say("quiz.review.none", lang, due=due) if due
                      else say("quiz.review.none_at_all", lang))
        return 0
    console.print(Text(say("quiz.review.head", lang, n=len(queue)), style="cyan"))
    notes = {item["id"]: say("quiz.reason." + item["reason"], lang) for item in queue}
    results: dict[str, bool] = {}
    answers: dict[str, Any] = {}
    code = 0
    try:
        ask_all(console, [quiz.question(item["id"]) for item in queue], lang, answers, notes,
                on_answer=lambda q, _a, ok: results.__setitem__(q.id, ok), can_quit=True)
    except Quit:
        console.print(Text(say("quiz.review.left", lang, n=len(results),
                               rest=len(queue) - len(results)), style="cyan"))
    except (KeyboardInterrupt, EOFError):
        code = stopped(console, say("quiz.review.saved", lang, n=len(results)))
    if results:
        record_review(progress, quiz, results)
    graded = [qid for qid in results if quiz.question(qid).kind in AUTO_GRADED]
    if code == 0 and (graded or len(results) == len(queue)):
        console.print(Text(say("quiz.score", lang, score=sum(results[q] for q in graded),
                             total=len(graded)), style="bold"))
    return code
