"""``minimodel lab new`` and ``minimodel lab sync``: adding content without touching code.

Registered by :mod:`minimodel.commands.lab` into its subcommands; the work is in
:mod:`minimodel.lab.authoring` (the authoring page: ``docs/authoring.md``). The help texts are
``help.lab.new.*`` and ``help.lab.sync.*`` in messages.yaml.
"""

from __future__ import annotations

import argparse
import json

from minimodel.commands._exit import OK, guarded
from minimodel.commands._help import help_text
from minimodel.lab.i18n import DEFAULT_LANG, LANGS
from minimodel.messages import say

KINDS = ("lesson", "question", "break", "exercise")

def cmd_new(args: argparse.Namespace) -> int:
    from minimodel.lab import authoring

    if args.kind == "lesson":
        files = authoring.new_lesson(args.name, args.after)
    else:
        if not args.lesson:
            raise ValueError(say("lab.new.needs_lesson", args.lang, kind=args.kind))
        make = {"question": authoring.new_question, "break": authoring.new_break,
                "exercise": authoring.new_exercise}[args.kind]
        files = make(args.name, args.lesson)
    if args.json:
        print(json.dumps({"kind": args.kind, "name": args.name, "files": [str(f) for f in files]}))
    else:
        print(say("lab.new.wrote", args.lang, kind=args.kind, name=args.name,
                  files="\n".join(f"  {f}" for f in files)))
    return OK


def cmd_sync(args: argparse.Namespace) -> int:
    from minimodel.lab.authoring import sync

    report = sync()
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(say("lab.sync.done", args.lang, stamped=sum(map(len, report["stamped"].values())),
                  mirrors=len(report["mirrors_written"]) + len(report["mirrors_deleted"]),
                  manifest=report["manifest"], **report["counts"]))
    return OK


def register_authoring(sub) -> None:
    """Add ``new`` and ``sync`` to the ``lab`` subcommands ``sub``."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("new", help=help_text("lab.new.summary"),
                       description=help_text("lab.new.description"),
                       epilog=help_text("lab.new.epilog"), formatter_class=fmt)
    p.add_argument("kind", choices=KINDS)
    p.add_argument("name", metavar=help_text("metavar.name"), help=help_text("lab.new.NAME"))
    p.add_argument("--after", metavar=help_text("metavar.LESSON"),
                   help=help_text("lab.new.--after"))
    p.add_argument("--lesson", metavar=help_text("metavar.LESSON"),
                   help=help_text("lab.new.--lesson"))
    p.add_argument("--json", action="store_true", help=help_text("lab.new.--json"))
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help=help_text("--lang"))
    p.set_defaults(func=guarded(cmd_new))

    p = sub.add_parser("sync", help=help_text("lab.sync.summary"),
                       description=help_text("lab.sync.description"),
                       epilog=help_text("lab.sync.epilog"), formatter_class=fmt)
    p.add_argument("--json", action="store_true", help=help_text("lab.sync.--json"))
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help=help_text("--lang"))
    p.set_defaults(func=guarded(cmd_sync))
