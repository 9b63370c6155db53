"""Done when: ``minimodel tutor``, driven by the SDK's own stdio client through a break, a quiz
and an exercise, in English and in Spanish, leaves the learner's progress exactly as the same
walk in the terminal does; the docs' transcript is what the server answered."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from minimodel.lab.breaks import load_break
from minimodel.lab.overview import status
from minimodel.lab.progress import Progress

from tutor_client import transcript, tutor_session
from walks import (cli_walk, pick_break, pick_exercise, pick_quiz, tutor_break, tutor_exercise,
                   tutor_quiz)

pytest.importorskip("mcp")

DOCS = Path(__file__).resolve().parents[2] / "docs"
START, END = "<!-- transcript:start -->", "<!-- transcript:end -->"
# Progress fields that differ between two walks for reasons outside the walk: times, the
# folder, the random seed of an exercise check, how long a run took.
NOT_COMPARED = {"updated", "updated_at", "at", "time", "workdir", "file", "last_seed", "seconds"}


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in NOT_COMPARED}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _progress(learner: Path, break_id: str, quiz_id: str, exercise_id: str) -> dict[str, Any]:
    progress = Progress(learner)
    return {"status": {k: v for k, v in status(str(learner)).items() if k != "learner_dir"},
            "break": _comparable(progress.get("break", break_id)),
            "quiz": _comparable(progress.get("quiz", quiz_id)),
            "exercise": _comparable(progress.get("exercise", exercise_id))}


def _docs_transcript(lang: str) -> str:
    page = DOCS / ("tutor.md" if lang == "en" else f"tutor.{lang}.md")
    text = page.read_text(encoding="utf-8")
    return text[text.index(START) + len(START):text.index(END)].strip()


def _write_docs_transcript(lang: str, produced: str) -> None:
    page = DOCS / ("tutor.md" if lang == "en" else f"tutor.{lang}.md")
    text = page.read_text(encoding="utf-8")
    head, tail = text.split(START)[0], text.split(END)[1]
    page.write_text(f"{head}{START}\n\n{produced}\n\n{END}{tail}", encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "es"])
def test_tutor_walk_equals_the_terminal_walk(lang, tmp_path):
    break_id, quiz, exercise_id = pick_break(), pick_quiz(), pick_exercise()
    learner = tmp_path / "tutor-learner"

    async def walk() -> tuple[list, list, list, list]:
        async with tutor_session(learner, lang) as tutor:
            brk = await tutor_break(tutor, break_id, lang)
            break_calls = list(tutor.calls)
            answers = await tutor_quiz(tutor, quiz, lang)
            exercise = await tutor_exercise(tutor, exercise_id)
            return brk, answers, exercise, break_calls

    brk, answers, exercise, break_calls = anyio.run(walk)

    # The break: predictions written, the symptom seen, two hints, a failed then a passed check.
    hints = load_break(break_id).texts("hints", lang)
    assert brk[1]["predictions_missing"] == []
    assert brk[2]["symptom"] is True and brk[2]["ok"] is True
    assert [brk[3]["text"], brk[4]["text"]] == hints[:2]
    assert brk[5]["fixed"] is False and brk[6]["fixed"] is True
    assert "why" not in brk[5] and brk[6]["why"] == load_break(break_id).text("explanation", lang)

    # The quiz: one wrong, one unclear (not graded) then right, and the take recorded.
    statuses = [a["status"] for a in answers]
    assert statuses.count("wrong") == 1 and statuses.count("unclear") == 1
    assert answers[-1]["finished"] is True
    assert answers[-1]["score"] == answers[-1]["total"] - 1
    unclear = next(a for a in answers if a["status"] == "unclear")
    assert unclear["reason"] and "explanation" not in unclear

    # The exercise: wrong, then passed, and the pass recorded.
    assert exercise[1]["passed"] is False and exercise[1]["status"] == "wrong"
    assert exercise[2]["passed"] is True and exercise[2]["practice"] is False

    # The same walk in the terminal leaves the same progress.
    terminal = tmp_path / "terminal-learner"
    cli_walk(terminal, lang, break_id, quiz, exercise_id)
    ours = _progress(learner, break_id, quiz.id, exercise_id)
    assert ours == _progress(terminal, break_id, quiz.id, exercise_id)
    assert ours["break"]["status"] == "fixed" and ours["exercise"]["status"] == "passed"
    assert ours["quiz"]["attempts"] == 1

    # The docs show this very session (paths written as ~/.minimodel).
    produced = transcript(break_calls, learner).strip()
    if os.environ.get("MINIMODEL_WRITE_TRANSCRIPT") == "1":
        _write_docs_transcript(lang, produced)
    assert _docs_transcript(lang) == produced, (
        f"docs/tutor{'' if lang == 'en' else '.' + lang}.md's transcript differs from this "
        "session; rewrite it with MINIMODEL_WRITE_TRANSCRIPT=1 python -m pytest "
        "tests/tutor/test_tutor_walk.py")
    assert re.search(r"/tmp/|pytest-", produced) is None
