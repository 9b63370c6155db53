"""The ``minimodel`` command.

Every subcommand lives in its own module under :mod:`minimodel.commands`. A module there
defines ``ORDER`` (its place in ``--help``) and ``register(subparsers)``, which adds one or more
subparsers and sets ``func`` on each; ``func(args)`` returns the process exit code, one of
:mod:`minimodel.commands._exit` (0 ok, 1 what was checked failed, 2 usage or user error,
130 interrupted). Modules whose name starts with ``_`` are helpers, not commands.

Why discovery instead of a hand-written table: each part of minimodel (training, the lab,
interop, benchmarks) owns its command file, and adding one never edits this file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from minimodel import __version__
from minimodel._console import stdout_to_devnull
from minimodel.commands._exit import EPILOG, INTERRUPTED, OK
from minimodel.commands._parser import Parser

DESCRIPTION = """\
minimodel: a from-scratch NumPy deep-learning library and a terminal lab for learning how
language models use embeddings and weight tying (logits = h @ E.T).

Start here:
  minimodel train                 train a tied GPT on the bundled Shakespeare corpus
  minimodel compare               tied vs untied with the same budget and seed
  minimodel quiz list             quizzes; `minimodel break list`, `minimodel exercise list`
  minimodel lab status            your progress through the lab

Run `minimodel COMMAND --help` for the options of each command.
"""


def _command_modules():
    """Import every module in minimodel.commands, sorted by its ORDER."""
    import minimodel.commands as commands_pkg

    modules = []
    for info in pkgutil.iter_modules(commands_pkg.__path__):
        if info.name.startswith("_"):
            continue
        modules.append(importlib.import_module(f"minimodel.commands.{info.name}"))
    return sorted(modules, key=lambda m: (getattr(m, "ORDER", 100), m.__name__))


def _remember_parsers(parser: argparse.ArgumentParser) -> None:
    """Store each (sub)command's own parser in the namespace it parses, as ``_parser``.

    Why: argparse hands the words a subcommand does not know back up to the top parser, which
    then shows the top-level usage (``minimodel [-h] [--version] COMMAND``) for a bad flag
    given to ``minimodel lab notebook``. With its parser at hand, :func:`main` shows the usage
    of the command the flag was given to. The innermost parser's default wins, as argparse
    copies a subcommand's namespace over its parent's.
    """
    parser.set_defaults(_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _remember_parsers(sub)


def build_parser() -> argparse.ArgumentParser:
    # Parser: a bad value in one line of the reader's language (commands/_parser.py)
    parser = Parser(
        prog="minimodel",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"minimodel {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.register(subparsers)
    _remember_parsers(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C while the commands are being imported (the first second or two) stops as
    # quietly as during the command itself: no traceback.
    try:
        parser = build_parser()
        args, unknown = parser.parse_known_args(argv)
        if unknown:   # said by the parser of the command they were given to (exit 2)
            args._parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        if not getattr(args, "func", None):
            parser.print_help()
            return OK
        return int(args.func(args) or OK)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error of ours
        # (minimodel._console explains).
        stdout_to_devnull()
        return OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
