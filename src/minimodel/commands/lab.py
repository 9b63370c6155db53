"""``minimodel lab``: the learning path (next, done, status) and the content validator.

The path and what "done" means live in :mod:`minimodel.lab.path`; the totals and the checks
in :mod:`minimodel.lab.overview`. ``lab next`` starts a step by running the same command a
learner would type (``quiz take``, ``break start``, ``exercise start``), so there is one way
to do each thing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from typing import Any

from minimodel.commands._exit import FAILED, OK, guarded
from minimodel.commands._help import add_subcommand, help_text
from minimodel.commands._lab_authoring import register_authoring
from minimodel.commands._lab_lessons import register_check_lessons
from minimodel.commands._lab_notebook import register_notebook
from minimodel.commands._parser import Parser
from minimodel.lab.i18n import DEFAULT_LANG, LANGS, status_label
from minimodel.lab.revealed import shown
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

ORDER = 80


def _step_label(step: dict[str, Any], lang: str, questions: int = 0) -> str:
    return say(f"lab.step.{step['kind']}", lang, id=step["id"], n=questions)


def _step_state(step: dict[str, Any], lang: str) -> str:
    if step["kind"] == "quiz" and step["attempts"]:
        return say("lab.quiz_state", lang, attempts=step["attempts"], right=step["right"],
                  total=step["total"])
    status = "skipped" if step["skipped"] else shown(step["status"], step.get("revealed", False))
    return status_label(status, lang)


def cmd_status(args: argparse.Namespace) -> int:
    from minimodel.lab.overview import status

    lang = args.lang
    summary = status(args.learner_dir, lang)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return OK
    from rich.table import Table
    from rich.text import Text

    from minimodel._console import Console

    console = Console()
    console.print(Text(say("lab.learner_dir", lang, path=summary["learner_dir"]), style="dim"))
    # A lesson's title is a line of its own (the full width, never wrapped into the steps'
    # column); its steps are a table whose two columns have the same widths for every lesson.
    steps = [step for lesson in summary["path"] for step in lesson["steps"]]
    state_width = max((len(_step_state(step, lang)) for step in steps), default=0)
    label_width = max((len(_step_label(step, lang, step.get("questions", 0))) + 2
                       for step in steps), default=0)
    label_width = max(20, min(label_width, console.width - state_width - 2))
    for lesson in summary["path"]:
        console.print(Text(say("lab.lesson_head", lang, number=lesson["number"],
                               title=lesson["title"]), style="bold"))
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column(width=label_width)
        table.add_column(width=state_width)
        for step in lesson["steps"]:
            style = "green" if step["done"] else "yellow" if step["skipped"] else ""
            table.add_row(Text("  " + _step_label(step, lang, step.get("questions", 0))),
                          Text(_step_state(step, lang), style=style))
        console.print(table)
    for kind, total in summary["totals"].items():
        console.print(Text(say(f"lab.total.{kind}", lang, **total)))
        if total.get("revealed"):
            console.print(Text(say(f"lab.total_revealed.{kind}", lang, **total), style="yellow"))
    for quiz in summary["other_quizzes"]:
        if quiz["attempts"]:
            console.print(Text(say("lab.other_quiz", lang, **quiz), style="dim"))
    console.print(Text(say("lab.done_means", lang), style="dim"))
    nxt = summary["next"]
    suggest = Suggest(lang, args.learner_dir)
    console.print(say("lab.next_is", lang, what=_next_label(summary, lang),
                      command=suggest("lab", "next")) if nxt
                  else say("lab.path_done", lang, command=suggest("quiz", "review")),
                  soft_wrap=True)   # a command cut by Rich's wrapping would not paste
    return OK


def _next_label(summary: dict[str, Any], lang: str) -> str:
    """The next step named with its lesson ("embedding-lookup · its questions (1)"): on
    its own line, "read the lesson" or "its questions" does not say which."""
    nxt = summary["next"]
    for lesson in summary["path"]:
        for step in lesson["steps"]:
            if (step["kind"], step["id"]) == (nxt["kind"], nxt["id"]):
                label = _step_label(step, lang, step.get("questions", 0))
                return f"{lesson['lesson']} · {label}"
    return _step_label(nxt, lang)


def _cli(argv: list[str], capture: bool) -> tuple[int, str]:
    """Run ``minimodel quiz|break|exercise ...`` (the command a learner would type) through
    the same parsers; returns the exit code and, if ``capture``, what it printed."""
    from minimodel.commands import break_, exercise, quiz

    parser = Parser(prog="minimodel")
    subparsers = parser.add_subparsers()
    for module in (quiz, break_, exercise):
        module.register(subparsers)
    args = parser.parse_args(argv)
    out = io.StringIO()
    with contextlib.redirect_stdout(out) if capture else contextlib.nullcontext():
        code = int(args.func(args) or OK)
    return code, out.getvalue()


def _grade_step_answers(step, progress, args: argparse.Namespace) -> dict[str, Any]:
    """Grade an answers file against this step's questions. One file may answer every
    lesson's questions: answers to other lessons' questions are left out (and counted); an
    id that no quiz has is refused (a typo, not another lesson's question)."""
    from minimodel.commands.quiz import grade_answers
    from minimodel.lab.quiz import load_quiz, read_answers
    from minimodel.lab.quiz.loader import all_questions

    lang = args.lang
    quiz = load_quiz(step.id, lang=lang)
    answers = read_answers(args.answers, lang=lang)
    known = all_questions()
    nowhere = [str(qid) for qid in answers if qid not in known]
    if nowhere:
        raise ValueError(say("lab.answers_unknown", lang, ids=", ".join(nowhere),
                             path=args.answers, command=Suggest(lang)("quiz", "list")))
    mine = {qid: answer for qid, answer in answers.items() if qid in quiz.ids}
    ignored = len(answers) - len(mine)
    if ignored and not args.json:
        print(say("lab.answers_ignored", lang, n=ignored, stem=step.id, used=len(mine)))
    report = grade_answers(quiz, mine, progress, lang, show=not args.json)
    return {"result": report, "ignored": ignored}


def _start(step, progress, args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    """Start one step; returns the exit code and what ``--json`` reports about it."""
    from minimodel.lab import path as learning_path

    lang, learner = args.lang, ["--learner-dir", str(progress.learner_dir), "--lang", args.lang]
    suggest = Suggest(lang, progress.learner_dir)
    lesson = step.lesson
    if step.kind == "lesson":
        learning_path.mark(progress, step, "opened")
        place = learning_path.reading_place(lesson, lang)
        notebook = suggest("lab", "notebook", f"{lesson.number:02d}")
        if not args.json:
            print(say("lab.read_lesson", lang, number=lesson.number, place=place,
                      title=lesson.titles.get(lang, lesson.titles["en"]), notebook=notebook,
                      next=suggest("lab", "next"),
                      done=suggest("lab", "done", f"{lesson.number:02d}")))
        return OK, {"read": str(place), "notebook": notebook}
    if step.kind == "quiz":
        if args.answers:
            graded = _grade_step_answers(step, progress, args)
            return (OK if graded["result"]["recorded"] else FAILED), graded
        if sys.stdin.isatty() and not args.json:
            return _cli(["quiz", "take", step.id, *learner], False)[0], {}
        take = suggest("quiz", "take", step.id)
        if not args.json:
            print(say("lab.quiz_needs_answers", lang, stem=step.id, command=take))
        return OK, {"command": take}
    place = learning_path.work_place(progress, step)
    if step.kind == "break":
        from minimodel.lab.breaks import Workspace, WorkspaceError

        try:
            opened = Workspace.open(place).break_id == step.id
        except WorkspaceError:
            opened = False
        if opened:
            if not args.json:
                print(say("lab.break_open", lang, id=step.id, root=place,
                          command=suggest("break", "run", "--workdir", place)))
            return OK, {"workdir": str(place), "started": True, "already_open": True}
        json_flag = ["--json"] if args.json else []
        code, _ = _cli(["break", "start", step.id, "--workdir", str(place), "--force",
                        *json_flag, *learner], args.json)
        return code, {"workdir": str(place), "started": code == OK, "already_open": False}
    if place.exists():
        if not args.json:
            print(say("lab.exercise_open", lang, id=step.id, path=place,
                      command=suggest("exercise", "check", step.id, "--file", place)))
        return OK, {"file": str(place), "started": True, "already_open": True}
    place.parent.mkdir(parents=True, exist_ok=True)
    code, _ = _cli(["exercise", "start", step.id, "--file", str(place), *learner], args.json)
    return code, {"file": str(place), "started": code == OK, "already_open": False}


def cmd_next(args: argparse.Namespace) -> int:
    from minimodel.lab import path as learning_path
    from minimodel.lab.progress import Progress

    progress = Progress(args.learner_dir)
    lang, report = args.lang, {"moved_on": None, "skipped": None, "step": None}
    suggest = Suggest(lang, progress.learner_dir)
    if args.answers:   # a missing or unreadable file is said now, whatever the next step is
        from minimodel.lab.quiz import read_answers

        read_answers(args.answers, lang=lang)
    step, moved_on, skipped = learning_path.advance(progress, skip=args.skip)
    if moved_on is not None:
        report["moved_on"] = moved_on.id
        if not args.json:
            print(say("lab.moved_on", lang, stem=moved_on.id))
    if skipped is not None:
        report["skipped"] = skipped.key
        if not args.json:
            what = _step_label({"kind": skipped.kind, "id": skipped.id}, lang,
                               len(skipped.lesson.quiz))
            print(say("lab.skipped", lang, what=what, command=suggest("lab", "status")))
    if step is None:
        revealed = learning_path.revealed_steps(progress)
        report["revealed"] = [s.key for s in revealed]   # done after viewing the answer
        if args.json:
            print(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            print(say("lab.path_done", lang, command=suggest("quiz", "review")))
            if revealed:
                print(learning_path.revealed_summary(revealed, lang))
        return OK
    if learning_path.is_skipped(progress, step):
        # Past the last step never skipped: not the end while skipped steps are open.
        still_open = learning_path.open_steps(progress)
        report["open"] = [s.key for s in still_open]   # in the order lab next offers them
        if not args.json:
            # Shown in path order (as `lab status` lists them); the one offered now, the
            # least-skipped, is named apart.
            place = {s.key: i for i, s in enumerate(learning_path.steps())}
            still_open = sorted(still_open, key=lambda s: place[s.key])

            def label(s) -> str:
                return (f"{s.lesson.number:02d} {s.lesson.slug} · "
                        f"{_step_label({'kind': s.kind, 'id': s.id}, lang, len(s.lesson.quiz))}")
            print(say("lab.path_end_open", lang, n=len(still_open),
                      steps="\n".join(f"  {label(s)}" for s in still_open),
                      first=label(step), command=suggest("lab", "next", "--skip")))
    code, started = _start(step, progress, args)
    report["step"] = {"kind": step.kind, "id": step.id, "lesson": step.lesson.stem, **started}
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    return code


def cmd_done(args: argparse.Namespace) -> int:
    from minimodel.lab import path as learning_path
    from minimodel.lab.progress import Progress

    progress = Progress(args.learner_dir)
    step = learning_path.mark_read(progress, args.lesson, args.lang)
    if args.json:
        print(json.dumps({"lesson": step.id, "status": "read"}))
    else:
        print(say("lab.moved_on", args.lang, stem=step.id))
    return OK


def cmd_validate(args: argparse.Namespace) -> int:
    import time

    from minimodel.lab.overview import VALIDATE_STEPS, WARNINGS, validate

    start = time.monotonic()

    def progress(name: str) -> None:  # stderr: the JSON on stdout stays clean
        print(f"[{time.monotonic() - start:4.0f} s] {name}: {VALIDATE_STEPS[name]} ...",
              file=sys.stderr, flush=True)

    def lesson(path, i: int, n: int) -> None:
        print(f"[{time.monotonic() - start:4.0f} s]   lesson {i}/{n}: {path.name}",
              file=sys.stderr, flush=True)

    sections = validate(on_section=progress, only=args.section, all_lessons=args.all_lessons,
                        on_lesson=lesson)
    ok = not any(sections.values())
    warnings = {name: list(WARNINGS.get(name, [])) for name in sections if WARNINGS.get(name)}
    if args.json:
        print(json.dumps({"ok": ok, "sections": sections, "warnings": warnings},
                         ensure_ascii=False, indent=2))
    else:
        for name, problems in sections.items():
            print(f"{name}: {'ok' if not problems else f'{len(problems)} problem(s)'}"
                  + (f", {len(warnings[name])} warning(s)" if name in warnings else ""))
            for problem in problems:
                print(f"  - {problem}")
            for warning in warnings.get(name, []):
                print(f"  ~ warning: {warning}")
    return OK if ok else FAILED


def cmd_rehash(args: argparse.Namespace) -> int:
    from minimodel.lab.freshness import rehash
    from minimodel.lab.items import load_items

    stamped = rehash(load_items(), args.item_id, keys=args.key, lang=args.lang)
    if args.json:
        print(json.dumps({"item": args.item_id, "stamped": stamped}))
    else:
        print(say("lab.rehash.done", args.lang, n=len(stamped), id=args.item_id,
                  names=", ".join(stamped) or "-"))
    return OK


def _learner(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help=help_text("--lang"))
    p.add_argument("--learner-dir", metavar=help_text("metavar.DIR"), default=None,
                   help=help_text("lab.--learner-dir"))


def register(subparsers) -> None:
    """Add ``minimodel lab next|done|status|validate|rehash|notebook|new|sync``; every help
    text is ``help.lab.*`` in messages.yaml (commands/_help.py)."""
    from minimodel.lab.overview import SECTIONS

    fmt = argparse.RawDescriptionHelpFormatter
    lab = subparsers.add_parser(
        "lab", help=help_text("lab.summary"), description=help_text("lab.description"),
        epilog=help_text("lab.epilog"), formatter_class=fmt)
    lab.set_defaults(func=lambda _args: (lab.print_help(), 0)[1])
    sub = lab.add_subparsers(dest="lab_command", metavar=help_text("metavar.SUBCOMMAND"))

    def add(name: str):   # a subcommand with its texts help.lab.<name>.*
        return add_subcommand(sub, "lab", name)

    p = add("next")
    p.add_argument("--skip", action="store_true", help=help_text("lab.next.--skip"))
    p.add_argument("--answers", metavar=help_text("metavar.FILE"),
                   help=help_text("lab.next.--answers"))
    p.add_argument("--json", action="store_true", help=help_text("lab.next.--json"))
    _learner(p)
    p.set_defaults(func=guarded(cmd_next))

    p = add("done")
    p.add_argument("lesson", metavar=help_text("metavar.LESSON"))
    p.add_argument("--json", action="store_true", help=help_text("lab.done.--json"))
    _learner(p)
    p.set_defaults(func=guarded(cmd_done))

    p = add("status")
    p.add_argument("--json", action="store_true", help=help_text("lab.status.--json"))
    _learner(p)
    p.set_defaults(func=guarded(cmd_status))

    p = add("validate")
    p.add_argument("--section", action="append", choices=list(SECTIONS), default=None,
                   help=help_text("lab.validate.--section"))
    p.add_argument("--all-lessons", action="store_true",
                   help=help_text("lab.validate.--all-lessons"))
    p.add_argument("--json", action="store_true", help=help_text("lab.validate.--json"))
    p.set_defaults(func=guarded(cmd_validate))

    p = add("rehash")
    p.add_argument("item_id", metavar=help_text("metavar.ITEM"), help=help_text("lab.rehash.ITEM"))
    p.add_argument("--key", action="append", default=None, metavar=help_text("metavar.NAME"),
                   help=help_text("lab.rehash.--key"))
    p.add_argument("--json", action="store_true", help=help_text("lab.rehash.--json"))
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                   help=help_text("lab.rehash.--lang"))
    p.set_defaults(func=guarded(cmd_rehash))

    register_notebook(sub)   # minimodel lab notebook (commands/_lab_notebook.py)
    register_authoring(sub)  # minimodel lab new|sync (commands/_lab_authoring.py)
    register_check_lessons(sub)   # minimodel lab check-lessons (commands/_lab_lessons.py)
