"""``minimodel lab``: progress across quizzes, breaks and exercises, and content validation.

What is counted and checked lives in :mod:`minimodel.lab.overview`; this module parses the
options and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from minimodel.commands._exit import FAILED, OK, guarded
from minimodel.commands._lab_notebook import register_notebook
from minimodel.lab.i18n import DEFAULT_LANG, LAB_STATUS_UI, LANGS, translate

ORDER = 80


def _t(key: str, lang: str, **values: Any) -> str:
    return translate(LAB_STATUS_UI, key, lang, **values)


def cmd_status(args: argparse.Namespace) -> int:
    from minimodel.lab.overview import status

    summary = status(args.learner_dir, args.lang)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return OK
    from minimodel._console import Console
    from rich.table import Table
    from rich.text import Text

    from minimodel.lab.i18n import status_label

    lang = args.lang
    console = Console()
    console.print(Text(_t("learner_dir", lang, path=summary["learner_dir"]), style="dim"))
    for name in ("quizzes", "breaks", "exercises"):
        section = summary[name]
        label = _t(name, lang)
        if not section["available"]:
            console.print(Text(_t("unavailable", lang, name=label, error=section["error"]),
                               style="yellow"))
            continue
        table = Table(title=_t("done", lang, name=label, done=section["done"],
                               total=section["total"]))
        for column in ("id", "title", "best score" if name == "quizzes" else "status"):
            table.add_column(_t(column, lang))
        for item in section["items"]:
            last = (f"{item['best_score'] if item['best_score'] is not None else '-'}"
                    f"/{item['total']}") if name == "quizzes" else status_label(item["status"],
                                                                               lang)
            table.add_row(Text(item["id"]), Text(item["title"]), Text(str(last)))
        console.print(table)
    return OK


def cmd_validate(args: argparse.Namespace) -> int:
    import time

    from minimodel.lab.overview import VALIDATE_STEPS, validate

    start = time.monotonic()

    def progress(name: str) -> None:  # stderr: the JSON on stdout stays clean
        print(f"[{time.monotonic() - start:4.0f} s] {name}: {VALIDATE_STEPS[name]} ...",
              file=sys.stderr, flush=True)

    sections = validate(on_section=progress)
    ok = not any(sections.values())
    if args.json:
        print(json.dumps({"ok": ok, "sections": sections}, ensure_ascii=False, indent=2))
    else:
        for name, problems in sections.items():
            print(f"{name}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
            for problem in problems:
                print(f"  - {problem}")
    return OK if ok else FAILED


def register(subparsers) -> None:
    """Add ``minimodel lab status`` and ``minimodel lab validate``."""
    lab = subparsers.add_parser(
        "lab", help="your progress through the lab; check the lab content",
        description="The learning lab: quizzes (minimodel quiz), breaks (minimodel break) and "
                    "judged exercises (minimodel exercise).",
        epilog="examples:\n  minimodel lab status\n  minimodel lab status --json "
               "--learner-dir ~/my-lab\n  minimodel lab validate",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lab.set_defaults(func=lambda _args: (lab.print_help(), 0)[1])
    sub = lab.add_subparsers(dest="lab_command", metavar="SUBCOMMAND")

    p = sub.add_parser(
        "status", help="progress across quizzes, breaks and exercises",
        description="Show best quiz scores and the status of every break and exercise, with "
                    "done/total counts. A section whose module cannot be imported is shown as "
                    "unavailable with the reason.",
        epilog="examples:\n  minimodel lab status\n  minimodel lab status --lang es\n"
               "  minimodel lab status --json --learner-dir /tmp/learner\n"
               '      -> {"learner_dir", "quizzes": {"available", "error", "done", "total", '
               '"items"}, "breaks": {...}, "exercises": {...}}',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help="language of titles")
    p.add_argument("--learner-dir", metavar="DIR", default=None,
                   help="learner folder (default: $MINIMODEL_LEARNER_DIR or ~/.minimodel)")
    p.set_defaults(func=guarded(cmd_status))

    p = sub.add_parser(
        "validate", help="check quizzes, exercises and breaks content",
        description="Run the content checks of every lab section (quiz, exercises, breaks) and "
                    "list the problems per section. Exit 1 when there is any problem, "
                    "including a section that cannot be imported.",
        epilog="examples:\n  minimodel lab validate\n  minimodel lab validate --json\n"
               '      -> {"ok": bool, "sections": {"quiz": [...], "exercises": [...], '
               '"breaks": [...]}}',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the problems as JSON")
    p.set_defaults(func=guarded(cmd_validate))

    register_notebook(sub)   # minimodel lab notebook (commands/_lab_notebook.py)
