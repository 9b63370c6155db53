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
from minimodel.messages import phrase, say

ORDER = 50
MAX_TIMEOUT = 3600.0  # seconds; the exercises' own limits are 20-60 s

EPILOG = """\
examples:
  minimodel exercise list
  minimodel exercise show mlm-with-tied-output-head --lang es
  minimodel exercise start gelu-tanh --file gelu.py
  minimodel exercise hint gelu-tanh                 # next hint of the ladder
  minimodel exercise check gelu-tanh --file gelu.py
  minimodel exercise check gelu-tanh --file gelu.py --seed 123 --json
  minimodel exercise solution gelu-tanh --yes

check exits 0 when every case passes and 1 otherwise. Solutions run in a separate, isolated
Python process with CPU, memory and time limits.
""" + EXIT_CODES + "\n"


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
    from minimodel.lab.exercise_progress import record_check
    # Everything this command uses after the judge is imported now, before the solution runs
    # (without full isolation a solution could otherwise plant a file to be imported then):
    # showing a made-up result of every kind imports whatever showing one needs.
    rehearse(args.lang)

    from minimodel._console import Console
    from minimodel.lab.progress import Progress
    ex = _exercise(args)
    progress_store = Progress(args.learner_dir)
    if args.json or not sys.stderr.isatty():
        result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                lang=args.lang, learner_dir=args.learner_dir)
    else:  # a live line on stderr: the judge may take up to its time limit
        with Console(stderr=True).status("") as status:
            def progress(done: int, total: int, elapsed: float, limit: float) -> None:
                status.update(say("exercise.judging", args.lang, file=args.file, done=done,
                                total=total, elapsed=elapsed, limit=limit))
            result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                    lang=args.lang, progress=progress,
                                    learner_dir=args.learner_dir)
    entry = record_check(_progress(args), ex.id, result, str(args.file))
    result["revealed"] = bool(entry.get("revealed"))   # recorded as passed after the solution
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        print_result(result, args.lang)
        if result["passed"] and result["revealed"]:
            print(say("exercise.passed_revealed", args.lang))
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
    p.add_argument("--lang", choices=["en", "es"], default="en", help="language (default en)")
    if learner:
        p.add_argument("--learner-dir", metavar="DIR", default=None,
                       help="progress folder (default $MINIMODEL_LEARNER_DIR or ~/.minimodel)")


def register(subparsers) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = subparsers.add_parser(
        "exercise", help="judged coding exercises: embeddings, attention, tied heads",
        description="Write a function, then let the judge run it against a reference on "
                    "visible examples and hidden randomised cases.",
        epilog=EPILOG, formatter_class=fmt)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])
    sub = parser.add_subparsers(dest="exercise_command", metavar="ACTION")

    p = sub.add_parser("list", help="list the exercises and your status",
                       description="List the exercises with your status (from the learner "
                                   "folder).", epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("--json", action="store_true", help='print [{"id", "title", ...}]')
    _common(p)
    p.set_defaults(func=guarded(cmd_list))

    p = sub.add_parser("show", help="print an exercise's statement",
                       description="Print the statement and signature of an exercise.",
                       epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("id", help="exercise id (see `minimodel exercise list`)")
    _common(p, learner=False)
    p.set_defaults(func=guarded(cmd_show))

    p = sub.add_parser("start", help="write a starter file (signature, docstring, stub)",
                       description="Print the statement and write a starter file with the "
                                   "signature, a docstring with the shapes and a stub that "
                                   "raises NotImplementedError.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", default=None, help="where to write it (default ./<id>.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    _common(p)
    p.set_defaults(func=guarded(cmd_start))

    p = sub.add_parser("hint", help="show the next hint (the level is remembered)",
                       description="Show the next hint of the exercise's ladder; the level "
                                   "reached is kept in your learner folder.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    _common(p)
    p.set_defaults(func=guarded(cmd_hint))

    p = sub.add_parser("check", help="judge your solution file",
                       description="Run your function in a sandboxed process (bubblewrap "
                                   "namespaces and read-only mounts where available, scrubbed "
                                   "environment, CPU/memory/time limits) on the visible "
                                   "examples and on hidden cases drawn from a seed, and compare "
                                   "with the reference within the stated tolerance. A failed "
                                   "hidden case names the rule of the statement it tests and "
                                   "the size of the error. Status: passed, wrong (values, shape "
                                   "or dtype), error, timeout or forbidden.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", required=True, help="your solution (.py)")
    p.add_argument("--json", action="store_true", help="machine-readable result (the keys are listed in docs/judge.md)")
    p.add_argument("--seed", type=argtypes.seed, default=None, metavar="N",
                   help="seed of the hidden cases, to replay a check while debugging (a "
                        "practice run: a pass with a chosen seed is not recorded)")
    p.add_argument("--timeout", type=timeout_seconds, default=None, metavar="SECONDS",
                   help="wall-clock limit for your function, more than 0 and at most "
                        f"{MAX_TIMEOUT:g} (default: the exercise's own, 20 s for most; "
                        "importing torch is not counted)")
    _common(p)
    p.set_defaults(func=guarded(cmd_check))

    p = sub.add_parser("solution", help="print the reference solution",
                       description="Print the reference solution (asks first unless you "
                                   "passed the exercise or give --yes).",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _common(p)
    p.set_defaults(func=guarded(cmd_solution))
