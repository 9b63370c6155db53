"""Drive ``python -m minimodel tutor`` with the MCP SDK's own client over stdio, recording every
call (the docs' transcript is written from the record)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import ClientSession, StdioServerParameters, stdio_client

SRC = Path(__file__).resolve().parents[2] / "src"


class ToolFailed(Exception):
    """A tool answered with an error (its sentence is the message)."""


def server_parameters(learner_dir: Path, lang: str) -> StdioServerParameters:
    """``python -m minimodel tutor`` on this checkout's code, for this learner folder."""
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
           "MINIMODEL_LEARNER_DIR": str(learner_dir)}
    for name in ("MINIMODEL_KERNELS", "TMPDIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "minimodel", "tutor", "--lang", lang,
                                       "--learner-dir", str(learner_dir)], env=env)


class Tutor:
    """One client session; ``calls`` keeps (tool, arguments, result or error text)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.calls: list[tuple[str, dict[str, Any], Any]] = []

    async def call(self, name: str, **arguments: Any) -> Any:
        result = await self.session.call_tool(name, arguments)
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            self.calls.append((name, arguments, {"error": text}))
            raise ToolFailed(text)
        data = result.structured_content
        if data is None:
            data = json.loads(text)
        elif set(data) == {"result"}:  # a list is wrapped by the SDK
            data = data["result"]
        self.calls.append((name, arguments, data))
        return data


@contextlib.asynccontextmanager
async def tutor_session(learner_dir: Path, lang: str) -> AsyncIterator[Tutor]:
    with open(os.devnull, "w") as quiet:  # the server's own log lines (stderr)
        async with stdio_client(server_parameters(learner_dir, lang), errlog=quiet) as streams:
            async with ClientSession(*streams) as session:
                await session.initialize()
                yield Tutor(session)


# --- the transcript ------------------------------------------------------------------------

# What changes from run to run and says nothing about the session: timings and the seed of a
# check's random sizes (the transcript's checks use a fixed one).
VOLATILE = ("seconds", "duration_s")


def _plain(value: Any, learner_dir: Path) -> Any:
    """``value`` with the learner folder written as ``~/.minimodel`` (paths differ per run)."""
    if isinstance(value, str):
        return re.sub(re.escape(str(learner_dir)), "~/.minimodel", value)
    if isinstance(value, list):
        return [_plain(v, learner_dir) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, learner_dir) for k, v in value.items() if k not in VOLATILE}
    return value


HIDDEN = {"break_hint": ("text",), "break_check": ("why", "references")}  # left out of the page


def transcript(calls: list[tuple[str, dict[str, Any], Any]], learner_dir: Path) -> str:
    """The calls as Markdown: each tool call and what the server answered, as JSON. A hint's
    text and a break's explanation and references are written "…": the docs are read before
    the break, and would otherwise tell its cause (the test compares everything else)."""
    parts = []
    for name, arguments, result in calls:
        args = json.dumps(_plain(arguments, learner_dir), ensure_ascii=False)
        shown = _plain(result, learner_dir)
        if isinstance(shown, dict):
            shown = {k: "…" if k in HIDDEN.get(name, ()) and v else v for k, v in shown.items()}
        answer = json.dumps(shown, ensure_ascii=False, indent=2)
        parts.append(f"**→ `{name}`** `{args}`\n\n```json\n{answer}\n```\n")
    return "\n".join(parts)
