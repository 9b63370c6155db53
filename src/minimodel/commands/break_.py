"""``minimodel break``: predict, run, observe and fix a bug planted in a copy of minimodel.

(The module name ends in ``_`` because ``break`` is a Python keyword; the command is ``break``.)
This module declares the subcommands and their options (their help texts: help.break.* in
messages.yaml); what each one does is in :mod:`minimodel.commands._break_handlers`, and the
engine in :mod:`minimodel.lab.breaks`.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from minimodel.commands import _argtypes as argtypes
from minimodel.commands import _break_handlers as handlers
from minimodel.commands._exit import guarded
from minimodel.commands._help import add_subcommand, help_text
from minimodel.lab.i18n import LANGS

ORDER = 55


def _sub(subparsers, name: str, handler: Callable[[argparse.Namespace], int]
         ) -> argparse.ArgumentParser:
    """``break NAME`` with its help texts and the options every break command takes."""
    parser = add_subcommand(subparsers, "break", name)
    parser.set_defaults(func=guarded(handler))
    parser.add_argument("--lang", choices=LANGS, default=None, help=help_text("break.--lang"))
    parser.add_argument("--learner-dir", metavar=help_text("metavar.DIR"), default=None,
                        help=help_text("--learner-dir"))
    return parser


def _workdir(parser: argparse.ArgumentParser, required: bool = False) -> None:
    kwargs: dict[str, Any] = {"required": True} if required else {"default": "."}
    parser.add_argument("--workdir", metavar=help_text("metavar.DIR"),
                        help=help_text("break.--workdir" if required else "break.--workdir.here"),
                        **kwargs)


def register(subparsers) -> None:
    """Add ``minimodel break`` and its subcommands."""
    top = subparsers.add_parser("break", help=help_text("break.summary"),
                                description=help_text("break.description"),
                                epilog=help_text("break.epilog"),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    top.set_defaults(func=lambda _args: (top.print_help(), 0)[1])
    sub = top.add_subparsers(dest="break_command", metavar=help_text("metavar.SUBCOMMAND"))
    seconds = help_text("metavar.SECONDS")

    p = _sub(sub, "list", handlers.cmd_list)
    p.add_argument("--json", action="store_true", help=help_text("break.list.--json"))

    p = _sub(sub, "start", handlers.cmd_start)
    p.add_argument("break_id", metavar="ID", help=help_text("break.start.ID"))
    _workdir(p, required=True)
    p.add_argument("--force", action="store_true", help=help_text("break.start.--force"))
    p.add_argument("--json", action="store_true", help=help_text("break.start.--json"))

    p = _sub(sub, "run", handlers.cmd_run)
    _workdir(p)
    p.add_argument("--skip-predictions", action="store_true",
                   help=help_text("break.run.--skip-predictions"))
    p.add_argument("--timeout", type=float, default=None, metavar=seconds,
                   help=help_text("break.run.--timeout"))

    p = _sub(sub, "hint", handlers.cmd_hint)
    _workdir(p)
    p.add_argument("--json", action="store_true", help=help_text("break.hint.--json"))

    p = _sub(sub, "check", handlers.cmd_check)
    _workdir(p)
    p.add_argument("--seed", type=argtypes.seed, default=None, metavar="N",
                   help=help_text("break.check.--seed"))
    p.add_argument("--json", action="store_true", help=help_text("break.check.--json"))
    p.add_argument("--timeout", type=float, default=None, metavar=seconds,
                   help=help_text("break.check.--timeout"))

    p = _sub(sub, "diff", handlers.cmd_diff)
    _workdir(p)

    p = _sub(sub, "reset", handlers.cmd_reset)
    _workdir(p)
    p.add_argument("--notes", action="store_true", help=help_text("break.reset.--notes"))
    p.add_argument("--json", action="store_true", help=help_text("break.reset.--json"))
