"""``minimodel tutor``: the lab as a Model Context Protocol server, for an AI assistant."""

from __future__ import annotations

import argparse
import importlib.util

from minimodel.commands._exit import EPILOG as EXIT_CODES
from minimodel.commands._exit import OK, guarded
from minimodel.lab.i18n import DEFAULT_LANG, LANGS

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
an IDE's mcp.json, ...):

  {"mcpServers": {"minimodel": {"command": "minimodel", "args": ["tutor"]}}}

with "args": ["tutor", "--lang", "es"] for Spanish, or ["tutor", "--learner-dir", "DIR"]
for another learner folder. To try it by hand: npx @modelcontextprotocol/inspector minimodel
tutor. It needs the mcp SDK: pip install "minimodel[tutor]". The server stops when the
client closes its stdin (or on Ctrl-C)."""

EPILOG = """\
examples:
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
    p.set_defaults(func=guarded(run))


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("mcp") is None:
        raise ValueError('minimodel tutor needs the mcp SDK: pip install "minimodel[tutor]" '
                         '(or pip install "mcp>=2")')
    from minimodel.tutor.learner import Learner
    from minimodel.tutor.server import serve

    serve(Learner(args.learner_dir, args.lang))
    return OK
