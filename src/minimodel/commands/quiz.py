"""``minimodel quiz``: list, take, review, export, render and validate the bilingual quizzes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from minimodel.commands._argtypes import at_least
from minimodel.commands._exit import FAILED, OK, USAGE, guarded, user_error
from minimodel.lab.i18n import DEFAULT_LANG, LANGS, pick
from minimodel.messages import say

ORDER = 50

DESCRIPTION = """\
Bilingual (English/Spanish) quizzes on embeddings and weight tying.

The canonical questions are YAML files shipped with minimodel; your answers and Leitner boxes
for spaced review are kept in your learner folder (--learner-dir, default $MINIMODEL_LEARNER_DIR
or ~/.minimodel)."""

EPILOG = """\
examples:
  minimodel quiz list
  minimodel quiz take phase-13-embeddings --lang es
  minimodel quiz take phase-13-embeddings --answers answers.json --json
  minimodel quiz review phase-13-embeddings
  minimodel quiz export phase-13-embeddings --json
  minimodel quiz render --check
"""

ANSWER_FORMAT = """\
answers file (JSON or YAML), question id -> answer, choice indices 0-based:
  single   "q-13-01": 1                  multi    "q-13-05": [0, 1, 3]
  order    "q-13-27": [2, 0, 4, 1, 3]    (every choice index once, first to last)
  numeric  "q-13-15": 6.238  or "6.238" ("6,238" with --lang es) or "4 rows" or "cuatro"
  short    "q-13-19": "effective rank"  (a term; case, accents, hyphens ignored; EN or ES)
  recall   "q-13-28": true   (self-marked against the rubric; not part of the score)
The "answer" fields of `quiz export --json` are accepted as they are.
Unknown ids or malformed answers stop with exit code 2; a missing answer counts as wrong.
In the interactive form, choices are numbered from 1 on screen."""


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
        return user_error("name one quiz: QUIZ_ID (see `minimodel quiz list`) or --lesson NN")
    # --lesson is a lesson, never a quiz file: an unknown one is answered with the lessons
    quiz = (lesson_quiz(args.lesson, lang=args.lang) if args.lesson is not None
            else load_quiz(args.quiz_id, lang=args.lang))
    progress = _progress(args)
    if args.answers is None:
        if args.json:
            return user_error("--json needs --answers FILE (the interactive form prints for people)")
        return interactive_take(quiz, progress, args.lang, _console(), restart=args.restart)
    answers = read_answers(args.answers, lang=args.lang)
    report = grade_answers(quiz, answers, progress, args.lang, show=not args.json)
    if args.json:
        _print_json(report)
    return OK if report["recorded"] else USAGE


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


def _sub(subparsers, name: str, help_text: str, description: str, epilog: str,
         handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_text, description=description, epilog=epilog,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(func=guarded(handler))
    return parser


def _lang(parser: argparse.ArgumentParser, default: str | None = DEFAULT_LANG) -> None:
    parser.add_argument("--lang", choices=LANGS, default=default,
                        help=f"language of the text (default: {default or 'all'})")


def _learner(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--learner-dir", metavar="DIR", default=None,
                        help="learner folder with your progress "
                             "(default: $MINIMODEL_LEARNER_DIR or ~/.minimodel)")


def register(subparsers) -> None:
    """Add ``minimodel quiz`` and its subcommands."""
    quiz = subparsers.add_parser("quiz", help="take and review the bilingual quizzes",
                                 description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    quiz.set_defaults(func=lambda _args: (quiz.print_help(), 0)[1])
    sub = quiz.add_subparsers(dest="quiz_command", metavar="SUBCOMMAND")

    p = _sub(sub, "list", "list the quizzes", "List the available quizzes.",
             "examples:\n  minimodel quiz list\n  minimodel quiz list --json --lang es", cmd_list)
    p.add_argument("--json", action="store_true", help='print [{"id", "title", "questions"}]')
    _lang(p)

    p = _sub(sub, "export", "print a quiz (JSON contract or Markdown)",
             "Print a quiz. With --json: the stable machine-readable form\n"
             '{"id", "questions": [{"id", "kind", "prompt": {"en","es"}, "choices": [{"en","es"}],'
             '\n "answer", "explanation": {"en","es"}, "rubric" (recall only)}]}; answer is a 0-based\n'
             "index (single), a list of indices (multi; order: in the right order),\n"
             "{value, tolerance, unit?} (numeric), accepted forms {en: [...], es: [...]} (short)\n"
             "or a model answer {en, es} (recall, self-marked against its rubric).\n"
             "Without --json: the Markdown mirror in --lang.",
             "examples:\n  minimodel quiz export phase-13-embeddings --json\n"
             "  minimodel quiz export phase-13-embeddings --lang es", cmd_export)
    p.add_argument("quiz_id", metavar="QUIZ_ID")
    p.add_argument("--json", action="store_true", help="print the JSON contract")
    _lang(p)

    p = _sub(sub, "take", "answer a quiz, interactively or from a file",
             "Take a quiz. Interactively: one question at a time with feedback and the\n"
             "explanation; Ctrl-C saves your answers so far and the next run resumes.\n"
             "A choice is its number: 2, 2. or (2), or the word (two, dos).\n"
             "With --answers FILE: grade a whole answers file at once.\n\n" + ANSWER_FORMAT,
             "examples:\n  minimodel quiz take phase-13-embeddings\n"
             "  minimodel quiz take --lesson 05          (one lesson's questions; also: "
             "quiz take lm-head-and-logits)\n"
             "  minimodel quiz take phase-13-embeddings --lang es --restart\n"
             "  minimodel quiz take phase-13-embeddings --answers answers.json --json\n"
             '      -> {"score": 26, "total": 27, "results": [{"id": "q-13-01", "correct": true}, ...],\n'
             '          "recall": {"answered": 2, "recalled": 1, "total": 2, "results": [...]}}',
             cmd_take)
    p.add_argument("quiz_id", metavar="QUIZ_ID", nargs="?",
                   help="a quiz file's id or a lesson (its number on the path or its slug)")
    p.add_argument("--lesson", metavar="LESSON",
                   help="take this lesson's questions, by number or slug (= QUIZ_ID LESSON)")
    p.add_argument("--answers", metavar="FILE", help="grade this answers file (JSON or YAML)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (needs --answers)")
    p.add_argument("--restart", action="store_true",
                   help="ignore answers saved by an interrupted run and start over")
    _lang(p)
    _learner(p)

    p = _sub(sub, "review", "spaced review: missed questions come back first",
             "Review with Leitner boxes: a wrong answer sends a question back to box 1 (due\n"
             "today), a right one moves it up a box (due again after 1, 3, 7, 14 days).\n"
             "Missed questions come first, then new ones, then those whose time is up.\n"
             "Interactively, type q (or quit, salir) at any answer to save what you reviewed\n"
             "and leave; the other questions stay due.\n"
             "With --json alone: print the review queue. With --answers FILE: grade those\n"
             "answers (same format as take; unanswered questions are left alone).",
             "examples:\n  minimodel quiz review phase-13-embeddings\n"
             "  minimodel quiz review phase-13-embeddings --json\n"
             "  minimodel quiz review phase-13-embeddings --answers review.json --json",
             cmd_review)
    p.add_argument("quiz_id", metavar="QUIZ_ID")
    p.add_argument("--answers", metavar="FILE", help="grade this answers file (JSON or YAML)")
    p.add_argument("--json", action="store_true", help="print queue / results as JSON")
    p.add_argument("--all", action="store_true", help="include questions that are not due yet")
    p.add_argument("--limit", type=at_least(1), default=None, metavar="N",
                   help="review at most N questions")
    _lang(p)
    _learner(p)

    p = _sub(sub, "render", "write the Markdown mirrors (docs/quizzes)",
             "Render every quiz to <quiz-id>.<lang>.md in docs/quizzes of the source checkout\n"
             "(or --out DIR). --check writes nothing and exits 1 when a mirror is missing or\n"
             "differs from the YAML.",
             "examples:\n  minimodel quiz render\n  minimodel quiz render --check\n"
             "  minimodel quiz render --out /tmp/quizzes --lang es", cmd_render)
    p.add_argument("--out", metavar="DIR", help="output folder (default: docs/quizzes)")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 on drift")
    _lang(p, default=None)

    p = _sub(sub, "validate", "check the quiz files",
             "Check every quiz file: YAML syntax, JSON schema, answer indices, unique ids,\n"
             "non-blank English and Spanish texts (their freshness: `minimodel lab validate`).\n"
             "Exit 1 when there is any problem.",
             "examples:\n  minimodel quiz validate\n  minimodel quiz validate --json", cmd_validate)
    p.add_argument("--json", action="store_true", help='print {"ok", "problems"}')
