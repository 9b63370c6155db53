"""``minimodel exercise``: judged coding exercises (list, show, start, hint, check, solution)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from minimodel.commands import _argtypes as argtypes
from minimodel.commands._exit import EPILOG as EXIT_CODES
from minimodel.commands._exit import FAILED, OK, guarded
from minimodel.commands._help import add_subcommand, help_text
from minimodel.messages import phrase, say

ORDER = 50
MAX_TIMEOUT = 3600.0  # seconds; the exercises' own limits are 20-60 s

# help.exercise.epilog in messages.yaml (examples, how check ends), then the exit codes
EPILOG = help_text("exercise.epilog") + EXIT_CODES + "\n"


# The lab is imported inside the handlers: `minimodel --help` stays fast.
def _exercise(args) -> Any:
    from minimodel.lab.exercises import get_exercise
    return get_exercise(args.id, args.lang)


def _progress(args):
    from minimodel.lab.progress import Progress
    return Progress(args.learner_dir)


def cmd_list(args) -> int:
    from minimodel.lab.exercises import list_exercises
    from minimodel.lab.revealed import is_revealed, shown_status
    items = list_exercises()
    done = _progress(args).all("exercise")
    for item in items:
        entry = done.get(item["id"])
        item["status"] = (entry or {}).get("status", "new")
        item["revealed"] = is_revealed("exercise", entry)  # passed after viewing the solution
    if args.json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return OK
    from rich.table import Table
    from rich.text import Text

    from minimodel._console import add_name_column
    from minimodel.lab.exercises.display import STATUS_STYLE, console
    from minimodel.lab.i18n import status_label
    table = Table(title=say("exercise.list_title", args.lang))
    add_name_column(table, say("exercise.id", args.lang), [item["id"] for item in items])
    for col in ("title", "status"):
        table.add_column(say(f"exercise.{col}", args.lang))
    for item in items:
        status = shown_status("exercise", done.get(item["id"]), "new")
        table.add_row(item["id"], Text(item["titles"].get(args.lang, item["title"])),
                      Text(status_label(status, args.lang),
                           style=STATUS_STYLE.get(status, "cyan")))
    console().print(table)
    return OK


def cmd_show(args) -> int:
    from minimodel.lab.exercises.display import print_statement
    print_statement(_exercise(args), args.lang)
    return OK


def cmd_start(args) -> int:
    from minimodel.lab.exercises import write_stub
    from minimodel.lab.exercises.display import print_statement
    from minimodel.lab.suggest import Suggest
    ex = _exercise(args)
    path = write_stub(ex, args.file, lang=args.lang, force=args.force,  # FileExistsError: 2
                      learner_dir=args.learner_dir)
    from minimodel.lab.exercise_progress import record_start
    record_start(_progress(args), ex.id, str(path))
    print_statement(ex, args.lang)
    check = Suggest(args.lang, args.learner_dir)("exercise", "check", ex.id, "--file", path)
    print(say("exercise.wrote", args.lang, path=path, command=check))
    return OK


def cmd_hint(args) -> int:
    ex = _exercise(args)
    from minimodel.lab.exercise_progress import climb_hint
    hints = ex.hint_list(args.lang)
    level = climb_hint(_progress(args), ex.id, len(hints))
    from rich.markup import escape

    from minimodel.lab.exercises.display import console
    out = console()
    out.print(f"[bold cyan]{say('exercise.hint', args.lang, k=level, n=len(hints))}[/]: "
              f"{escape(hints[level - 1])}")
    if level == len(hints):
        out.print(f"[dim]{say('exercise.last_hint', args.lang)}[/]")
    return OK


def timeout_seconds(text: str) -> float:
    """``--timeout``: a finite number of seconds, 0 < T <= MAX_TIMEOUT."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds, got "
                                         f"{text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise argparse.ArgumentTypeError(f"--timeout must be more than 0 and at most "
                                         f"{MAX_TIMEOUT:g} seconds, got {text}")
    return value


timeout_seconds.expects = phrase("cli.expects.seconds", maximum=f"{MAX_TIMEOUT:g}")


def cmd_check(args) -> int:
    from minimodel.lab.exercises import check_solution
    from minimodel.lab.exercises.display import print_result, rehearse
    from minimodel.lab.exercise_progress import record_check, viewed_solutions
    # Everything this command uses after the judge is imported now, before the solution runs
    # (without full isolation a solution could otherwise plant a file to be imported then):
    # showing a made-up result of every kind imports whatever showing one needs.
    rehearse(args.lang)

    from minimodel._console import Console
    from minimodel.lab.progress import Progress
    ex = _exercise(args)
    progress_store = Progress(args.learner_dir)
    viewed = viewed_solutions(progress_store)   # a copy of code shown there is revealed work
    if args.json or not sys.stderr.isatty():
        result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                lang=args.lang, learner_dir=args.learner_dir,
                                viewed=viewed)
    else:  # a live line on stderr: the judge may take up to its time limit
        with Console(stderr=True).status("") as status:
            def progress(done: int, total: int, elapsed: float, limit: float) -> None:
                status.update(say("exercise.judging", args.lang, file=args.file, done=done,
                                total=total, elapsed=elapsed, limit=limit))
            result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                    lang=args.lang, progress=progress,
                                    learner_dir=args.learner_dir,
                                    viewed=viewed)
    entry = record_check(_progress(args), ex.id, result, str(args.file))
    result["revealed"] = bool(entry.get("revealed"))   # recorded as passed after the solution
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        print_result(result, args.lang)
        if result["passed"] and result["revealed"]:
            print(say("exercise.passed_revealed_copy" if result["copy_viewed"]
                      else "exercise.passed_revealed", args.lang))
        elif result["passed"] and result["copy_viewed"] and entry.get("status") == "passed":
            # an own pass made before viewing is kept (minimodel.lab.revealed); this one is a copy
            print(say("exercise.copy_own_kept", args.lang))
    return OK if result["passed"] else FAILED


def cmd_solution(args) -> int:
    from minimodel.lab.exercises.display import console
    ex = _exercise(args)
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    if not args.yes and prev.get("status") != "passed":
        try:
            answer = input(say("exercise.confirm", args.lang, id=ex.id))
        except EOFError:
            answer = ""
            print()
        if answer.strip().lower() not in ("y", "yes", "s", "si", "sí"):
            print(say("exercise.need_yes", args.lang), file=sys.stderr)
            return FAILED
    source = ex.reference_path.read_text(encoding="utf-8")
    from minimodel.lab.exercise_progress import record_solution_viewed
    record_solution_viewed(progress, ex.id)
    if sys.stdout.isatty():
        from rich.syntax import Syntax
        console().print(Syntax(source, "python"))
    else:
        print(source, end="")
    return OK


def _common(p: argparse.ArgumentParser, learner: bool = True) -> None:
    p.add_argument("--lang", choices=["en", "es"], default="en", help=help_text("--lang"))
    if learner:
        p.add_argument("--learner-dir", metavar=help_text("metavar.DIR"), default=None,
                       help=help_text("exercise.--learner-dir"))


def register(subparsers) -> None:
    """Add ``minimodel exercise`` and its subcommands; their help texts are help.exercise.*
    in messages.yaml."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = subparsers.add_parser(
        "exercise", help=help_text("exercise.summary"),
        description=help_text("exercise.description"), epilog=EPILOG, formatter_class=fmt)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])
    sub = parser.add_subparsers(dest="exercise_command", metavar=help_text("metavar.ACTION"))

    def add(name: str):   # a subcommand with its texts help.exercise.<name>.*
        return add_subcommand(sub, "exercise", name, epilog=EPILOG)

    exercise_id = help_text("exercise.ID")
    p = add("list")
    p.add_argument("--json", action="store_true", help=help_text("exercise.list.--json"))
    _common(p)
    p.set_defaults(func=guarded(cmd_list))

    p = add("show")
    p.add_argument("id", help=help_text("exercise.show.ID"))
    _common(p, learner=False)
    p.set_defaults(func=guarded(cmd_show))

    p = add("start")
    p.add_argument("id", help=exercise_id)
    p.add_argument("--file", default=None, metavar=help_text("metavar.FILE"),
                   help=help_text("exercise.start.--file"))
    p.add_argument("--force", action="store_true", help=help_text("exercise.start.--force"))
    _common(p)
    p.set_defaults(func=guarded(cmd_start))

    p = add("hint")
    p.add_argument("id", help=exercise_id)
    _common(p)
    p.set_defaults(func=guarded(cmd_hint))

    p = add("check")
    p.add_argument("id", help=exercise_id)
    p.add_argument("--file", required=True, metavar=help_text("metavar.FILE"),
                   help=help_text("exercise.check.--file"))
    p.add_argument("--json", action="store_true", help=help_text("exercise.check.--json"))
    p.add_argument("--seed", type=argtypes.seed, default=None, metavar="N",
                   help=help_text("exercise.check.--seed"))
    p.add_argument("--timeout", type=timeout_seconds, default=None,
                   metavar=help_text("metavar.SECONDS"),
                   help=help_text("exercise.check.--timeout", maximum=f"{MAX_TIMEOUT:g}"))
    _common(p)
    p.set_defaults(func=guarded(cmd_check))

    p = add("solution")
    p.add_argument("id", help=exercise_id)
    p.add_argument("--yes", action="store_true", help=help_text("exercise.solution.--yes"))
    _common(p)
    p.set_defaults(func=guarded(cmd_solution))
