"""``minimodel tutor`` as a process: its --help teaches how to connect a client; closed stdin or
Ctrl-C end it cleanly; prompts and resources in both languages; errors as sentences."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from minimodel.lab.breaks import list_breaks, load_break
from minimodel.lab.lessons import load_lessons

from tutor_client import SRC, ToolFailed, tutor_session

pytest.importorskip("mcp")

ENV = {**os.environ, "PYTHONPATH": str(SRC)}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}}


def test_help_explains_how_to_connect_a_client():
    out = subprocess.run([sys.executable, "-m", "minimodel", "tutor", "--help"],
                         capture_output=True, text=True, env=ENV, timeout=120)
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert '"args": ["tutor"]' in text and "minimodel tutor --print-config" in text
    for words in ("--learner-dir", "--lang", "closes its stdin", 'pip install "minimodel[tutor]"',
                  "No tool returns a reference solution", "full path", "virtualenv"):
        assert words in text


def _server(tmp_path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "minimodel", "tutor", "--learner-dir",
                             str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)


def test_closed_stdin_ends_the_server_cleanly(tmp_path):
    server = _server(tmp_path)
    out, err = server.communicate(json.dumps(INIT) + "\n", timeout=120)
    assert server.returncode == 0, err
    assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"] == "minimodel"
    assert "Traceback" not in err


def test_ctrl_c_ends_the_server_cleanly(tmp_path):
    server = _server(tmp_path)
    server.stdin.write(json.dumps(INIT) + "\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1   # serving: then Ctrl-C
    server.send_signal(signal.SIGINT)
    _, err = server.communicate(timeout=120)
    assert server.returncode == 130 and "Traceback" not in err


@pytest.mark.parametrize("lang", ["en", "es"])
def test_prompts_resources_and_errors(lang, tmp_path):
    async def walk() -> None:
        async with tutor_session(tmp_path / "learner", lang) as tutor:
            session = tutor.session
            prompts = {p.name for p in (await session.list_prompts()).prompts}
            assert {"break", "next", "quiz", "exercise"} <= prompts
            for name in ("break", "next", "quiz", "exercise"):
                got = await session.get_prompt(name, {"lang": lang})
                text = got.messages[0].content.text
                assert ("Answer in English." if lang == "en" else "Responde en español.") in text
                if name != "next":
                    assert ("never" if lang == "en" else "nunca") in text.lower()
            named = await session.get_prompt("break", {"item": list_breaks()[0]["id"]})
            assert list_breaks()[0]["id"] in named.messages[0].content.text

            uris = {str(r.uri) for r in (await session.list_resources()).resources}
            first = load_lessons()[0]
            uri = f"minimodel://lessons/{lang}/{first.stem}"
            assert uri in uris and "minimodel://glossary" in uris
            lesson = (await session.read_resource(uri)).contents[0].text
            assert lesson.lstrip().startswith("#") and not lesson.startswith("---")
            glossary = (await session.read_resource("minimodel://glossary")).contents[0].text
            assert "| weight tying | atadura de pesos |" in glossary

            with pytest.raises(ToolFailed) as refused:   # a sentence with the fix, no traceback
                await tutor.call("break_run", break_id=list_breaks()[0]["id"])
            assert "break_start" in str(refused.value) and "Traceback" not in str(refused.value)
            with pytest.raises(ToolFailed) as unknown:
                await tutor.call("break_start", break_id="no-such-break")
            assert "no-such-break" in str(unknown.value) and list_breaks()[0]["id"] in str(
                unknown.value)

            first_break = list_breaks()[0]["id"]   # an invisible prediction is no prediction
            started = await tutor.call("break_start", break_id=first_break)
            # starting again continues the workspace: the learner's edits stay
            edited = Path(started["workdir"]) / "minimodel" / "mine.py"
            edited.write_text("x = 1\n", encoding="utf-8")
            again = await tutor.call("break_start", break_id=first_break)
            assert again["continued"] is True and edited.read_text(encoding="utf-8") == "x = 1\n"
            questions = len(load_break(first_break).texts("predict", lang))
            with pytest.raises(ToolFailed) as invisible:
                await tutor.call("break_predict", break_id=first_break,
                                 predictions=["\u200b"] * questions)
            assert "Traceback" not in str(invisible.value)
            with pytest.raises(ToolFailed) as still_missing:
                await tutor.call("break_run", break_id=first_break)
            assert "Traceback" not in str(still_missing.value)

    anyio.run(walk)
