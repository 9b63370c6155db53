"""``minimodel exercise``: judged coding exercises (list, show, start, hint, check, solution)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from minimodel.commands import _argtypes as argtypes
from minimodel.commands._exit import EPILOG as EXIT_CODES
from minimodel.commands._exit import FAILED, OK, guarded

ORDER = 50

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
    items = list_exercises()
    done = _progress(args).all("exercise")
    for item in items:
        item["status"] = done.get(item["id"], {}).get("status", "new")
    if args.json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return OK
    from rich.table import Table
    from rich.text import Text

    from minimodel.lab.exercises.display import STATUS_STYLE, console, t
    from minimodel.lab.i18n import status_label
    table = Table(title=t("list_title", args.lang))
    for col in ("id", "title", "status"):
        table.add_column(t(col, args.lang))
    for item in items:
        status = item["status"]
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
    from minimodel.lab.exercises.display import print_statement, t
    ex = _exercise(args)
    path = write_stub(ex, args.file, lang=args.lang, force=args.force)  # FileExistsError: 2
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    progress.record("exercise", ex.id, prev.get("status", "started"), file=str(path))
    print_statement(ex, args.lang)
    print(t("wrote", args.lang, path=path, id=ex.id))
    return OK


def cmd_hint(args) -> int:
    ex = _exercise(args)
    hints = ex.hint_list(args.lang)
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    level = min(int(prev.get("hint_level", 0)) + 1, len(hints))
    progress.record("exercise", ex.id, prev.get("status", "started"), hint_level=level)
    from rich.markup import escape

    from minimodel.lab.exercises.display import console, t
    out = console()
    out.print(f"[bold cyan]{t('hint', args.lang, k=level, n=len(hints))}[/]: "
              f"{escape(hints[level - 1])}")
    if level == len(hints):
        out.print(f"[dim]{t('last_hint', args.lang)}[/]")
    return OK


def cmd_check(args) -> int:
    from minimodel.lab.exercises import check_solution
    from minimodel.lab.exercises.display import print_result, t
    ex = _exercise(args)
    if args.json or not sys.stderr.isatty():
        result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                lang=args.lang)
    else:  # a live line on stderr: the judge may take up to its time limit
        from minimodel._console import Console
        with Console(stderr=True).status("") as status:
            def progress(done: int, total: int, elapsed: float, limit: float) -> None:
                status.update(t("judging", args.lang, file=args.file, done=done,
                                total=total, elapsed=elapsed, limit=limit))
            result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                    lang=args.lang, progress=progress)
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    ever_passed = result["passed"] or prev.get("status") == "passed"
    progress.record("exercise", ex.id, "passed" if ever_passed else "attempted",
                    last_status=result["status"], last_seed=result["seed"],
                    attempts=int(prev.get("attempts", 0)) + 1, file=str(args.file))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        print_result(result, args.lang)
    return OK if result["passed"] else FAILED


def cmd_solution(args) -> int:
    from minimodel.lab.exercises.display import console, t
    ex = _exercise(args)
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    if not args.yes and prev.get("status") != "passed":
        try:
            answer = input(t("confirm", args.lang, id=ex.id))
        except EOFError:
            answer = ""
            print()
        if answer.strip().lower() not in ("y", "yes", "s", "si", "sí"):
            print(t("need_yes", args.lang), file=sys.stderr)
            return FAILED
    source = ex.reference_path.read_text(encoding="utf-8")
    progress.record("exercise", ex.id, prev.get("status", "started"), solution_viewed=True)
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
                       description="Run your function in a sandboxed process (python -I, temp "
                                   "dir, scrubbed environment, CPU/memory/time limits) on the "
                                   "visible examples and on hidden cases drawn from a seed, and "
                                   "compare with the reference within the stated tolerance. "
                                   "Status: passed, wrong (values, shape or dtype), error, "
                                   "timeout or forbidden.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", required=True, help="your solution (.py)")
    p.add_argument("--json", action="store_true", help="machine-readable result (a stable JSON object)")
    p.add_argument("--seed", type=argtypes.seed, default=None, metavar="N",
                   help="seed of the hidden cases (to replay a check)")
    p.add_argument("--timeout", type=float, default=None, help="wall-clock limit in seconds")
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
