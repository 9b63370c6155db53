"""``minimodel break``: predict, run, observe and fix a bug planted in a copy of minimodel.

(The module name ends in ``_`` because ``break`` is a Python keyword; the command is ``break``.)
This module declares the subcommands and their options; what each one does is in
:mod:`minimodel.commands._break_handlers`, and the engine in :mod:`minimodel.lab.breaks`.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from minimodel.commands import _argtypes as argtypes
from minimodel.commands import _break_handlers as handlers
from minimodel.commands._exit import guarded
from minimodel.lab.i18n import LANGS

ORDER = 55

DESCRIPTION = """\
Breaks: a bug about embeddings and weight tying is planted in a scratch copy of minimodel.
You predict what it will do, run an experiment that shows the symptom, climb a ladder of
hints if needed, fix the copy, and let behavioural checks decide whether it is fixed.
The installed package is never modified.

Flow: list -> start ID --workdir DIR -> (write predictions in DIR/NOTES.md) -> run -> hint ->
fix DIR/minimodel -> check.  `diff` shows the fix, `reset` restores the start state."""

EPILOG = """\
examples:
  minimodel break list
  minimodel break start loss-crash-after-merge --workdir /tmp/b1 --lang es
  minimodel break run   --workdir /tmp/b1
  minimodel break hint  --workdir /tmp/b1
  minimodel break check --workdir /tmp/b1 --json
  minimodel break diff  --workdir /tmp/b1 | patch -p1 -d /tmp/b1
  minimodel break reset --workdir /tmp/b1

exit codes: 0 ok (check: fixed); 1 check not fixed / experiment failed; 2 usage or user
error (unknown id, not a workspace, run before the predictions are written); 130 interrupted"""


def _sub(subparsers, name: str, help_text: str, description: str, examples: list[str],
         handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name, help=help_text, description=description,
        epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(func=guarded(handler))
    parser.add_argument("--lang", choices=LANGS, default=None,
                        help="language of the texts (default: the workspace's, else en)")
    parser.add_argument("--learner-dir", metavar="DIR", default=None,
                        help="learner folder with your progress "
                             "(default: $MINIMODEL_LEARNER_DIR or ~/.minimodel)")
    return parser


def _workdir(parser: argparse.ArgumentParser, required: bool = False) -> None:
    kwargs: dict[str, Any] = {"required": True} if required else {"default": "."}
    parser.add_argument("--workdir", metavar="DIR", help="the break workspace"
                        + ("" if required else " (default: the current folder)"), **kwargs)


def register(subparsers) -> None:
    """Add ``minimodel break`` and its subcommands."""
    top = subparsers.add_parser("break", help="predict, run and fix planted bugs (weight tying)",
                                description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    top.set_defaults(func=lambda _args: (top.print_help(), 0)[1])
    sub = top.add_subparsers(dest="break_command", metavar="SUBCOMMAND")

    p = _sub(sub, "list", "list the breaks and your status",
             "List the breaks in curriculum order with your status from the learner folder.\n"
             'With --json: [{"id", "title", "summary", "hints", "predictions", "status", '
             '"hints_used"}].',
             ["minimodel break list", "minimodel break list --json --lang es"], handlers.cmd_list)
    p.add_argument("--json", action="store_true", help="print the list as JSON")

    p = _sub(sub, "start", "create a workspace with the bug planted",
             "Copy the installed minimodel source to DIR/minimodel (without __pycache__ and\n"
             "lab/content), apply the break's bug patch there, and write DIR/NOTES.md (your\n"
             "predictions) and DIR/.break.json (state and the sha256 manifest of the start\n"
             "state). The installed package is only read. A non-empty DIR is refused unless\n"
             "--force is given. If DIR is already this break's workspace, nothing is touched\n"
             "(it may hold your edits): the commands to go on are shown; `break reset` puts the\n"
             "bug back, --force rebuilds the copy (keeping NOTES.md).",
             ["minimodel break start loss-crash-after-merge --workdir /tmp/b1",
              "minimodel break start tied-model-too-large --workdir ~/breaks/copy --lang es",
              "minimodel break start tied-model-too-large --workdir /tmp/old --force"], handlers.cmd_start)
    p.add_argument("break_id", metavar="ID", help="break id (see `minimodel break list`)")
    _workdir(p, required=True)
    p.add_argument("--force", action="store_true",
                   help="use a non-empty DIR anyway: replaces DIR/minimodel and .break.json "
                        "there, and NOTES.md unless DIR was this break's workspace")
    p.add_argument("--json", action="store_true", help='print {"break", "workdir", ...}')

    p = _sub(sub, "run", "run the experiment that shows the symptom (predict first)",
             "Run the break's experiment in a child process where `import minimodel` is the\n"
             "workspace copy DIR/minimodel, and show its output. Refuses (exit 2)\n"
             "until every 'Prediction N' section of DIR/NOTES.md has some text.",
             ["minimodel break run --workdir /tmp/b1",
              "minimodel break run --workdir /tmp/b1 --skip-predictions --lang es"],
              handlers.cmd_run)
    _workdir(p)
    p.add_argument("--skip-predictions", action="store_true",
                   help="run even if NOTES.md has empty predictions (for scripts)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit (default: the break's, usually 120 s)")

    p = _sub(sub, "hint", "show the next hint of the ladder",
             "Climb one rung of the break's hint ladder (3-4 hints) and print it as 'hint N of\n"
             "M'. The rung is kept in DIR/.break.json and your progress; after the last hint,\n"
             "the last one is repeated.",
             ["minimodel break hint --workdir /tmp/b1", "minimodel break hint --json"],
             handlers.cmd_hint)
    _workdir(p)
    p.add_argument("--json", action="store_true", help='print {"break", "hint", "total", "text"}')

    p = _sub(sub, "check", "test the invariants behind the bug: fixed or not",
             "Test the invariants behind the bug against DIR/minimodel in a child process, on\n"
             "fresh random sizes and in every code path the bug can live in (training with\n"
             "targets, evaluation, generation...), not just the story's example: a fix that only\n"
             "hides the symptom fails. The checks come from the installed minimodel, never from\n"
             "your copy. They test behaviour, not text, so any correct fix passes. Records the\n"
             "result in your progress. Exit 0 when fixed, 1 otherwise.\n"
             'With --json: {"fixed": bool, "break", "workdir", "details": [{"id", "ok",\n'
             '"description", "message"}], "exit_code", "seed", "seconds"}.',
             ["minimodel break check --workdir /tmp/b1",
              "minimodel break check --workdir /tmp/b1 --seed 1234   # replay a failure",
              "minimodel break check --workdir /tmp/b1 --json"], handlers.cmd_check)
    _workdir(p)
    p.add_argument("--seed", type=argtypes.seed, default=None, metavar="N",
                   help="draw the random sizes with seed N (shown after a failure) to replay it")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit (default: the break's)")

    p = _sub(sub, "diff", "print the fix as a unified diff",
             "Print our fix as a unified diff from the workspace's broken files (as they were at\n"
             "start) to the original library text, with a/minimodel/... b/minimodel/... paths,\n"
             "so `patch -p1 -d DIR` applies it. Notes on stderr if you edited those files.",
             ["minimodel break diff --workdir /tmp/b1",
              "minimodel break diff --workdir /tmp/b1 | patch -p1 -d /tmp/b1"], handlers.cmd_diff)
    _workdir(p)

    p = _sub(sub, "reset", "restore the workspace to its start state",
             "Rewrite DIR/minimodel byte for byte as it was right after `start` (removing files\n"
             "you added there) and verify it against the sha256 manifest. NOTES.md and other\n"
             "files outside DIR/minimodel are kept; --notes also resets NOTES.md.",
             ["minimodel break reset --workdir /tmp/b1",
              "minimodel break reset --workdir /tmp/b1 --notes"], handlers.cmd_reset)
    _workdir(p)
    p.add_argument("--notes", action="store_true",
                   help="also restore NOTES.md (erases your predictions)")
    p.add_argument("--json", action="store_true", help='print {"restored", "removed", ...}')
