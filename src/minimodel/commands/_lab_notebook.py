"""``minimodel lab notebook``: a lesson as a Jupyter notebook, opened in JupyterLab.

Registered by :mod:`minimodel.commands.lab` into its subcommands (one line there); kept in its
own module so the notebook machinery stays in one place.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from minimodel.commands._exit import FAILED, OK, guarded
from minimodel.commands._help import help_text
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

DEFAULT_OUT = Path("minimodel-notebooks")
NOTEBOOK_EXTRA = 'pip install -e ".[notebook]"'

# help.lab.notebook.epilog in messages.yaml, then the extra to install
EPILOG = help_text("lab.notebook.epilog") + NOTEBOOK_EXTRA + "\n"


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def cmd_notebook(args: argparse.Namespace) -> int:
    if not _has("jupytext") or not _has("nbformat"):
        raise ValueError(say("notebook.command.needs", args.lang, extra=NOTEBOOK_EXTRA))
    from minimodel.lab.lessons import find_lesson, load_lessons
    from minimodel.site.notebooks import notebook_name, write_notebook  # jupytext: optional

    if args.lesson == "all":
        return _all_notebooks(args)
    lesson = find_lesson(args.lesson, lang=args.lang)
    path, written = write_notebook(lesson, args.lang, Path(args.out), force=args.force)
    open_with = jupyterlab_command(path)
    can_open = _has("jupyterlab")
    opened = bool(can_open and not args.no_open and not args.json)
    if args.json:
        print(json.dumps({"lesson": lesson.stem, "lang": args.lang, "path": str(path),
                          "written": written, "opened": False,
                          "open_with": " ".join(open_with) if can_open else None}))
        return OK
    lang = args.lang
    print(say("notebook.command.wrote" if written else "notebook.command.kept", lang, path=str(path)))
    if any(not (path.parent / notebook_name(other, lang)).exists() for other in load_lessons()):
        # a lesson a link may lead to is not written: the command that writes them all here
        out = ["--out", args.out] if Path(args.out) != DEFAULT_OUT else []
        print(say("notebook.command.links", lang,
                  command=Suggest(lang)("lab", "notebook", "all", *out)))
    if not opened:
        command = " ".join(["jupyter lab", *open_with[3:]]) if can_open else \
            say("notebook.command.install", lang, extra=NOTEBOOK_EXTRA, path=str(path))
        print(say("notebook.command.open_it", lang, command=command))
        return OK
    return open_jupyterlab(open_with, lang)


def _all_notebooks(args: argparse.Namespace) -> int:
    """``lab notebook all``: every lesson's notebook in one folder (a learner's own kept), so
    the links between lessons land on notebooks; JupyterLab opens the folder."""
    from minimodel.lab.lessons import load_lessons
    from minimodel.site.notebooks import write_notebook

    folder = Path(args.out)
    made = [(lesson.stem, *write_notebook(lesson, args.lang, folder, force=args.force))
            for lesson in load_lessons() if lesson.path(args.lang).is_file()]
    written = sum(1 for _, _, new in made if new)
    open_with = jupyterlab_command(folder)
    can_open = _has("jupyterlab")
    if args.json:
        print(json.dumps({"lang": args.lang, "folder": str(folder), "notebooks": [
            {"lesson": stem, "path": str(path), "written": new} for stem, path, new in made],
            "opened": False, "open_with": " ".join(open_with) if can_open else None}))
        return OK
    print(say("notebook.command.all", args.lang, written=written, kept=len(made) - written,
              folder=folder))
    if not can_open or args.no_open:
        command = " ".join(["jupyter lab", *open_with[3:]]) if can_open else \
            say("notebook.command.install", args.lang, extra=NOTEBOOK_EXTRA, path=str(folder))
        print(say("notebook.command.open_it", args.lang, command=command))
        return OK
    return open_jupyterlab(open_with, args.lang)


def jupyterlab_command(target: Path) -> list[str]:
    """The command that opens ``target`` in JupyterLab. As root (a container, a cloud
    notebook) JupyterLab refuses to start unless told ``--allow-root``: we say so and pass it."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return [sys.executable, "-m", "jupyterlab", *(["--allow-root"] if root else []), str(target)]


def open_jupyterlab(command: list[str], lang: str) -> int:
    """Run JupyterLab; when it fails to start, say what to try instead of exiting silently."""
    if "--allow-root" in command:
        print(say("notebook.command.as_root", lang))
    print(say("notebook.command.opening", lang), flush=True)
    code = subprocess.call(command)
    if code not in (0, 130, -2):   # 130 / -SIGINT: the learner stopped it with Ctrl-C
        print(say("notebook.command.failed", lang, code=code,
                  command=" ".join(["jupyter lab", *command[3:]])), file=sys.stderr)
        return FAILED
    return OK


def register_notebook(sub) -> None:
    """Add ``notebook`` to the ``lab`` subcommands ``sub``."""
    p = sub.add_parser(
        "notebook", help=help_text("lab.notebook.summary"),
        description=help_text("lab.notebook.description"),
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("lesson", metavar=help_text("metavar.lesson"),
                   help=help_text("lab.notebook.LESSON"))
    p.add_argument("--lang", choices=["en", "es"], default="en", help=help_text("--lang"))
    p.add_argument("--out", default=str(DEFAULT_OUT), metavar=help_text("metavar.DIR"),
                   help=help_text("lab.notebook.--out", folder=str(DEFAULT_OUT)))
    p.add_argument("--force", action="store_true", help=help_text("lab.notebook.--force"))
    p.add_argument("--no-open", action="store_true", help=help_text("lab.notebook.--no-open"))
    p.add_argument("--json", action="store_true", help=help_text("lab.notebook.--json"))
    p.set_defaults(func=guarded(cmd_notebook))
