"""``minimodel tutor``: the lab as a Model Context Protocol server, for an AI assistant."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

from minimodel.commands._exit import EPILOG as EXIT_CODES
from minimodel.commands._exit import OK, guarded
from minimodel.lab.i18n import DEFAULT_LANG, LANGS
from minimodel.lab.progress import ENV_VAR

ORDER = 85

DESCRIPTION = """\
Serve minimodel's lab to an AI assistant over the Model Context Protocol (MCP), on stdin and
stdout. The assistant's client starts this command itself; you do not run it in a terminal.

The assistant gets tools for the path (where you are, what is next, a lesson's text and code),
the quizzes (one question at a time, graded as `quiz take` grades), the breaks (start, your
predictions into NOTES.md, run, one hint per call, check; the fix only after you give up), the
exercises (statement, hints, a check by the same judge), the doctor and the explorer; prompts
/break, /next, /quiz and /exercise that tell it how to tutor (ask before telling, predictions
first, one hint at a time, never a solution); and the lessons and the glossary to cite.
Your progress is the same as in the terminal (--learner-dir). No tool returns a reference
solution, a hidden case, an expected value or a break's cause or fix.

Connect a client: add to its MCP configuration (Claude Desktop's claude_desktop_config.json,
an IDE's mcp.json, ...) what `minimodel tutor --print-config` prints, e.g.

  {"mcpServers": {"minimodel": {"command": "/home/you/venv/bin/minimodel", "args": ["tutor"]}}}

The full path matters: a client started outside your virtualenv (a desktop app) does not
have the virtualenv's bin/ on its PATH and would not find a bare "minimodel".
--print-config --lang es writes "args": ["tutor", "--lang", "es"]; with --learner-dir DIR,
the folder too; with $MINIMODEL_LEARNER_DIR set instead, "env" carries it to the client. To try it by hand: npx @modelcontextprotocol/inspector minimodel
tutor. It needs the mcp SDK: pip install "minimodel[tutor]". The server stops when the
client closes its stdin (or on Ctrl-C)."""

EPILOG = """\
examples:
  minimodel tutor --print-config                  (the client configuration, full path)
  minimodel tutor                                 (started by an MCP client)
  minimodel tutor --lang es --learner-dir ~/.minimodel
  claude mcp add minimodel -- minimodel tutor     (a command-line client)

see docs/tutor.md for the tools, what the tutor can and cannot see, and a session transcript.
""" + "\n" + EXIT_CODES


def register(subparsers) -> None:
    p = subparsers.add_parser("tutor", help="the lab as an MCP server for an AI tutor (stdio)",
                              description=DESCRIPTION, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                   help="the learner's language (default en); a tool call may name another, "
                        "and a break keeps its workspace's, as `minimodel break` does")
    p.add_argument("--learner-dir", metavar="DIR", default=None,
                   help="learner folder with your progress "
                        "(default: $MINIMODEL_LEARNER_DIR or ~/.minimodel)")
    p.add_argument("--print-config", action="store_true",
                   help="print the MCP client configuration for this installation (the full "
                        "path of this minimodel command, with --lang and --learner-dir) and "
                        "exit")
    p.set_defaults(func=guarded(run))


def client_config(lang: str, learner_dir: str | None) -> dict:
    """The ``mcpServers`` entry that starts this very installation's tutor.

    The command is the ``minimodel`` script beside the running interpreter (the virtualenv's
    ``bin/``), as an absolute path: a desktop client does not inherit the venv's PATH. Nor
    does it inherit the shell's ``$MINIMODEL_LEARNER_DIR``: when that names the learner
    folder (no ``--learner-dir``), the entry carries it in ``"env"``, or the tutor would read
    and record progress in ``~/.minimodel``.
    """
    script = Path(sys.executable).parent / ("minimodel.exe" if os.name == "nt" else "minimodel")
    command = str(script) if script.is_file() else (shutil.which("minimodel") or "minimodel")
    args = ["tutor"]
    if lang != DEFAULT_LANG:
        args += ["--lang", lang]
    if learner_dir:
        args += ["--learner-dir", str(Path(learner_dir).expanduser().resolve())]
    server: dict = {"command": command, "args": args}
    from_env = os.environ.get(ENV_VAR)
    if not learner_dir and from_env:
        server["env"] = {ENV_VAR: str(Path(from_env).expanduser().resolve())}
    return {"mcpServers": {"minimodel": server}}


def run(args: argparse.Namespace) -> int:
    if args.print_config:
        print(json.dumps(client_config(args.lang, args.learner_dir), indent=2))
        return OK
    if importlib.util.find_spec("mcp") is None:
        raise ValueError('minimodel tutor needs the mcp SDK: pip install "minimodel[tutor]" '
                         '(or pip install "mcp>=2")')
    from minimodel.tutor.learner import Learner
    from minimodel.tutor.server import serve

    serve(Learner(args.learner_dir, args.lang))
    return OK
