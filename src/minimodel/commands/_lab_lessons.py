"""``minimodel lab check-lessons``: run every lesson's code and compare what it prints with the
page (the site build's check, without building the site).

Registered by :mod:`minimodel.commands.lab` into its subcommands (one line there).
"""

from __future__ import annotations

import argparse

from minimodel.commands._exit import EPILOG, guarded
from minimodel.commands._help import help_text
from minimodel.lab.i18n import LANGS

def cmd_check_lessons(args: argparse.Namespace) -> int:
    from minimodel.lab.lessons import report_lessons

    return report_lessons(args.lessons, args.lang or list(LANGS), args.strict)


def register_check_lessons(sub) -> None:
    """Add ``check-lessons`` to the ``lab`` subcommands ``sub``."""
    p = sub.add_parser(
        "check-lessons", help=help_text("lab.check-lessons.summary"),
        description=help_text("lab.check-lessons.description"),
        epilog=help_text("lab.check-lessons.examples") + "\n" + EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("lessons", nargs="*", metavar=help_text("metavar.LESSON"),
                   help=help_text("lab.check-lessons.LESSON"))
    p.add_argument("--strict", action="store_true", help=help_text("lab.check-lessons.--strict"))
    p.add_argument("--lang", choices=LANGS, action="append",
                   help=help_text("lab.check-lessons.--lang"))
    p.set_defaults(func=guarded(cmd_check_lessons))
