"""``minimodel lab new`` and ``minimodel lab sync``: adding content without touching code.

Registered by :mod:`minimodel.commands.lab` into its subcommands; the work is in
:mod:`minimodel.lab.authoring` (the authoring page: ``docs/authoring.md``).
"""

from __future__ import annotations

import argparse
import json

from minimodel.commands._exit import OK, guarded
from minimodel.lab.i18n import DEFAULT_LANG, LANGS
from minimodel.messages import say

KINDS = ("lesson", "question", "break", "exercise")

NEW_EPILOG = """\
examples:
  minimodel lab new lesson example-softmax-temperature --after softmax-cross-entropy
  minimodel lab new question q-example-softmax-temperature-1 --lesson example-softmax-temperature
  minimodel lab new break example-flat-rows-blow-up --lesson layer-norm
  minimodel lab new exercise example-softmax-with-temperature --lesson example-softmax-temperature
  minimodel lab new lesson x --json    -> {"kind", "name", "files": [...]}

Every text is written as TODO in English and Spanish: `minimodel lab validate` names each one
until it is written. Then `minimodel lab sync`. The format of each kind: docs/authoring.md.
"""

SYNC_EPILOG = """\
examples:
  minimodel lab sync
  minimodel lab sync --json
      -> {"stamped": {item: [texts]}, "mirrors_written": [...], "mirrors_deleted": [...],
          "manifest": path, "counts": {"lessons", "questions", "breaks", "exercises"}}

Writes the quiz mirrors (docs/quizzes/), stamps the Spanish texts that have no
es_source_hash yet (never a stale one: after updating a Spanish text whose English changed,
`minimodel lab rehash ITEM --key NAME`), and the integrity manifest (content/MANIFEST.json).
"""


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
    p = sub.add_parser("new", help="scaffold a lesson, question, break or exercise (authors)",
                       description="Write a new item's files in English and Spanish with every "
                                   "required field, and link it: a lesson into path.yaml, an "
                                   "item into its lesson's front matter.",
                       epilog=NEW_EPILOG, formatter_class=fmt)
    p.add_argument("kind", choices=KINDS)
    p.add_argument("name", help="the new slug or id (lowercase, '-'; a question: q-<lesson>-<n>)")
    p.add_argument("--after", metavar="LESSON", help="lesson: insert after this lesson "
                   "(number or slug; default: last)")
    p.add_argument("--lesson", metavar="LESSON", help="question, break, exercise: the lesson "
                   "that lists it (number or slug)")
    p.add_argument("--json", action="store_true", help="print the files written as JSON")
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help="language (default en)")
    p.set_defaults(func=guarded(cmd_new))

    p = sub.add_parser("sync", help="regenerate quiz mirrors, new Spanish stamps, manifest "
                                    "(authors)",
                       description="The bookkeeping after editing content, in one command.",
                       epilog=SYNC_EPILOG, formatter_class=fmt)
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help="language (default en)")
    p.set_defaults(func=guarded(cmd_sync))
