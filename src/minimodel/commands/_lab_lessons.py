"""``minimodel lab check-lessons``: run every lesson's code and compare what it prints with the
page (the site build's check, without building the site).

Registered by :mod:`minimodel.commands.lab` into its subcommands (one line there).
"""

from __future__ import annotations

import argparse

from minimodel.commands._exit import EPILOG, guarded
from minimodel.lab.i18n import LANGS

EXAMPLES = """examples:
  minimodel lab check-lessons                      # every lesson, English and Spanish
  minimodel lab check-lessons causal-mask 19       # two lessons, by slug or number
  minimodel lab check-lessons --lang es --strict   # Spanish only; numeric drift fails too
  OPENBLAS_CORETYPE=Haswell minimodel lab check-lessons --strict   # another CPU's kernels
"""


def cmd_check_lessons(args: argparse.Namespace) -> int:
    from minimodel.lab.lessons import report_lessons

    return report_lessons(args.lessons, args.lang or list(LANGS), args.strict)


def register_check_lessons(sub) -> None:
    """Add ``check-lessons`` to the ``lab`` subcommands ``sub``."""
    p = sub.add_parser(
        "check-lessons", help="run the lessons' code and compare it with the pages",
        description="Run each lesson's code blocks (one Python process per lesson, two at a "
                    "time) and compare what they print with the lesson's output blocks. An "
                    "error, changed text, or a changed shape or count is a problem (exit 1); "
                    "numbers that drift beyond a block's declared tolerance (another CPU's "
                    "BLAS kernels) are a warning, and a problem with --strict.",
        epilog=EXAMPLES + "\n" + EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("lessons", nargs="*", metavar="LESSON",
                   help="lessons by number or slug (default: all)")
    p.add_argument("--strict", action="store_true",
                   help="numeric drift beyond a declared tolerance fails too (CI, developers)")
    p.add_argument("--lang", choices=LANGS, action="append",
                   help="only this language (repeatable; default: both)")
    p.set_defaults(func=guarded(cmd_check_lessons))
