"""``minimodel quiz``: list, take, review, export, render and validate the bilingual quizzes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from minimodel.commands._argtypes import at_least
from minimodel.commands._exit import FAILED, OK, guarded, user_error
from minimodel.commands._help import add_subcommand, help_text
from minimodel.lab.i18n import DEFAULT_LANG, LANGS, pick
from minimodel.messages import say

ORDER = 50

# The answers file's format, ending `quiz take --help`: the table (help.quiz.answer_format in
# messages.yaml: a sample of the file, code), then the notes under it.
ANSWER_FORMAT = help_text("quiz.answer_format") + "\n" + help_text("quiz.answer_notes")


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _console():
    from minimodel._console import Console

    return Console()


def _progress(args: argparse.Namespace):
    from minimodel.lab.progress import Progress

    return Progress(args.learner_dir)


# --- handlers ------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from minimodel.lab.quiz import list_quizzes, load_quiz

    quizzes = [load_quiz(quiz_id) for quiz_id in list_quizzes()]  # the lessons', then files
    rows = [{"id": q.id, "title": pick(q.title, args.lang), "questions": len(q.questions)}
            for q in quizzes]
    if args.json:
        _print_json(rows)
        return OK
    from rich.table import Table
    from rich.text import Text

    from minimodel._console import add_name_column

    table = Table(title=say("quiz.list.heading", args.lang))
    add_name_column(table, say("quiz.list.id", args.lang), [row["id"] for row in rows])
    for column in ("title", "questions"):
        table.add_column(say(f"quiz.list.{column}", args.lang))
    for row in rows:  # Text: titles are content, never Rich markup
        table.add_row(row["id"], Text(row["title"]), str(row["questions"]))
    _console().print(table)
    return OK


def cmd_export(args: argparse.Namespace) -> int:
    from minimodel.lab.quiz import load_quiz
    from minimodel.lab.quiz.render import render_quiz

    quiz = load_quiz(args.quiz_id, lang=args.lang or DEFAULT_LANG)
    if args.json:
        _print_json(quiz.export())
    else:
        print(render_quiz(quiz, args.lang), end="")
    return OK


def _results_table(report: dict[str, Any], lang: str):
    """One row per answered question: right/wrong, or the learner's own recall mark."""
    from rich.table import Table
    from rich.text import Text

    table = Table()
    table.add_column(say("quiz.question", lang))
    table.add_column(say("quiz.correct", lang))
    rows = [(r["id"], r["correct"], "", r.get("reason")) for r in report["results"]]
    rows += [(r["id"], r["recalled"], " (" + say("quiz.recall.mark", lang) + ")", None)
             for r in report.get("recall", {}).get("results", [])]
    for qid, ok, note, unreadable in rows:
        if unreadable:  # not graded: why, instead of a mark
            table.add_row(qid, Text(f"{say('quiz.unreadable', lang)}: {unreadable}",
                                    style="yellow"))
        else:
            table.add_row(qid, Text(say("quiz.yes" if ok else "quiz.no", lang) + note,
                                    style="green" if ok else "red"))
    return table


def cmd_take(args: argparse.Namespace) -> int:
    from minimodel.lab.quiz import load_quiz, read_answers
    from minimodel.lab.quiz.loader import lesson_quiz
    from minimodel.lab.quiz.session import interactive_take

    if (args.quiz_id is None) == (args.lesson is None):
        return user_error(say("quiz.name_one", args.lang))
    # --lesson is a lesson, never a quiz file: an unknown one is answered with the lessons
    quiz = (lesson_quiz(args.lesson, lang=args.lang) if args.lesson is not None
            else load_quiz(args.quiz_id, lang=args.lang))
    progress = _progress(args)
    if args.answers is None:
        if args.json:
            return user_error(say("quiz.json_needs_answers", args.lang))
        return interactive_take(quiz, progress, args.lang, _console(), restart=args.restart)
    answers = read_answers(args.answers, lang=args.lang)
    report = grade_answers(quiz, answers, progress, args.lang, show=not args.json)
    if args.json:
        _print_json(report)
    # an answer asked again is not a usage error: the take is not recorded (1, as a failed check)
    return OK if report["recorded"] else FAILED


def grade_answers(quiz, answers: dict[str, Any], progress, lang: str, show: bool
                  ) -> dict[str, Any]:
    """Grade ``answers`` for ``quiz``, record the take, and (``show``) print the results table
    and summary; returns the report (``grade``'s, plus ``recorded``). Also used by ``lab next
    --answers``.

    An answer that cannot be read one way is asked again, never graded: while the file holds
    one, nothing is recorded (``recorded`` is false) and the reasons are shown, so the learner
    fixes those lines and runs the command again, as the interactive take would ask again.
    """
    from minimodel.lab.quiz import grade
    from minimodel.lab.quiz.session import record_take, show_summary

    report = grade(quiz, answers, lang)
    unclear = [r for r in report["results"] if r["status"] == "unreadable"]
    report["recorded"] = not unclear
    if report["recorded"]:
        record_take(progress, quiz, report)
    if show:
        from rich.text import Text

        console = _console()
        console.rule(Text(pick(quiz.title, lang)))  # a rule: a table title wraps badly
        console.print(_results_table(report, lang))
        show_summary(console, quiz, report, lang, answered=answers,
                     learner_dir=progress.learner_dir)
        if unclear:
            console.print(Text(say("quiz.not_recorded", lang, n=len(unclear)), style="yellow"))
    return report


def cmd_review(args: argparse.Namespace) -> int:
    from minimodel.lab.quiz import AUTO_GRADED, check_answers, is_correct, load_quiz, read_answers
    from minimodel.lab.quiz import review
    from minimodel.lab.quiz.session import interactive_review, record_review

    quiz = load_quiz(args.quiz_id, lang=args.lang)
    progress = _progress(args)

    def queue() -> list[dict[str, Any]]:
        boxes = (progress.get("quiz", quiz.id) or {}).get("boxes", {})
        return review.review_queue(quiz, boxes, include_all=args.all)[:args.limit]

    if args.answers is None and not args.json:
        return interactive_review(quiz, progress, args.lang, _console(),
                                  include_all=args.all, limit=args.limit)
    out: dict[str, Any] = {"quiz": quiz.id}
    if args.answers is not None:
        unreadable: dict[str, str] = {}  # not graded, not wrong: the reason is reported
        checked = check_answers(quiz, read_answers(args.answers, lang=args.lang),
                                lang=args.lang, unreadable=unreadable)
        results = {qid: is_correct(quiz.question(qid), a, args.lang) for qid, a in checked.items()}
        if results:
            record_review(progress, quiz, results)
        graded = {qid: ok for qid, ok in results.items() if quiz.question(qid).kind in AUTO_GRADED}
        out.update(score=sum(graded.values()), total=len(graded),
                   results=[{"id": qid, "correct": ok} for qid, ok in graded.items()],
                   recall=[{"id": qid, "recalled": ok} for qid, ok in results.items()
                           if qid not in graded],
                   unreadable=[{"id": qid, "reason": why} for qid, why in unreadable.items()])
    out["queue"] = queue()
    if args.json:
        _print_json(out)
    else:
        console = _console()
        console.print(say("quiz.score", args.lang, score=out["score"], total=out["total"]))
        for item in out.get("unreadable", []):
            console.print(f"  {item['id']}  {say('quiz.unreadable', args.lang)}: {item['reason']}",
                          markup=False)
        console.print(say("quiz.review.head", args.lang, n=len(out["queue"])))
        for item in out["queue"]:
            console.print(f"  {item['id']}  {say('quiz.box', args.lang)} {item['box']}  "
                          f"{say('quiz.reason.' + item['reason'], args.lang)}")
    return OK


def cmd_render(args: argparse.Namespace) -> int:
    from minimodel.lab.quiz import render

    out_dir = Path(args.out) if args.out else render.docs_dir()
    langs = (args.lang,) if args.lang else LANGS
    if args.check:
        problems = render.drift(out_dir, langs=langs)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("run `minimodel quiz render` to regenerate the mirrors", file=sys.stderr)
            return FAILED
        print(f"quiz mirrors in {out_dir} are up to date")
        return OK
    written = render.write_mirrors(out_dir, langs=langs)
    for path in written:
        print(f"wrote {path}")
    if not written:
        print(f"quiz mirrors in {out_dir} were already up to date")
    return OK


def cmd_validate(args: argparse.Namespace) -> int:
    from minimodel.lab.quiz import validate_all

    problems = validate_all()
    if args.json:
        _print_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            print(problem)
        print(f"{len(problems)} problem(s)" if problems else "all quizzes are valid")
    return FAILED if problems else OK


# --- parser --------------------------------------------------------------------------------


def _sub(subparsers, name: str, handler: Callable[[argparse.Namespace], int],
         description: str | None = None) -> argparse.ArgumentParser:
    """``quiz NAME`` with its help texts, its handler guarded."""
    parser = add_subcommand(subparsers, "quiz", name, description=description)
    parser.set_defaults(func=guarded(handler))
    return parser


def _lang(parser: argparse.ArgumentParser, default: str | None = DEFAULT_LANG) -> None:
    parser.add_argument("--lang", choices=LANGS, default=default,
                        help=help_text("quiz.--lang" if default else "quiz.--lang.all"))


def _learner(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--learner-dir", metavar=help_text("metavar.DIR"), default=None,
                        help=help_text("--learner-dir"))


def register(subparsers) -> None:
    """Add ``minimodel quiz`` and its subcommands."""
    quiz = subparsers.add_parser("quiz", help=help_text("quiz.summary"),
                                 description=help_text("quiz.description"),
                                 epilog=help_text("quiz.epilog"),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    quiz.set_defaults(func=lambda _args: (quiz.print_help(), 0)[1])
    sub = quiz.add_subparsers(dest="quiz_command", metavar=help_text("metavar.SUBCOMMAND"))
    quiz_id, file = help_text("metavar.QUIZ_ID"), help_text("metavar.FILE")

    p = _sub(sub, "list", cmd_list)
    p.add_argument("--json", action="store_true", help=help_text("quiz.list.--json"))
    _lang(p)

    p = _sub(sub, "export", cmd_export)
    p.add_argument("quiz_id", metavar=quiz_id)
    p.add_argument("--json", action="store_true", help=help_text("quiz.export.--json"))
    _lang(p)

    p = _sub(sub, "take", cmd_take, help_text("quiz.take.description") + "\n\n" + ANSWER_FORMAT)
    p.add_argument("quiz_id", metavar=quiz_id, nargs="?", help=help_text("quiz.take.QUIZ_ID"))
    p.add_argument("--lesson", metavar=help_text("metavar.LESSON"),
                   help=help_text("quiz.take.--lesson"))
    p.add_argument("--answers", metavar=file, help=help_text("quiz.--answers"))
    p.add_argument("--json", action="store_true", help=help_text("quiz.take.--json"))
    p.add_argument("--restart", action="store_true", help=help_text("quiz.take.--restart"))
    _lang(p)
    _learner(p)

    p = _sub(sub, "review", cmd_review)
    p.add_argument("quiz_id", metavar=quiz_id)
    p.add_argument("--answers", metavar=file, help=help_text("quiz.--answers"))
    p.add_argument("--json", action="store_true", help=help_text("quiz.review.--json"))
    p.add_argument("--all", action="store_true", help=help_text("quiz.review.--all"))
    p.add_argument("--limit", type=at_least(1), default=None, metavar="N",
                   help=help_text("quiz.review.--limit"))
    _lang(p)
    _learner(p)

    p = _sub(sub, "render", cmd_render)
    p.add_argument("--out", metavar=help_text("metavar.DIR"), help=help_text("quiz.render.--out"))
    p.add_argument("--check", action="store_true", help=help_text("quiz.render.--check"))
    _lang(p, default=None)

    p = _sub(sub, "validate", cmd_validate)
    p.add_argument("--json", action="store_true", help=help_text("quiz.validate.--json"))
