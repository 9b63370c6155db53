"""Learner progress, kept as plain JSON files in a learner folder.

Layout::

    LEARNER_DIR/progress/quiz.json       {item_id: {"status": ..., "updated": ..., ...}}
    LEARNER_DIR/progress/break.json
    LEARNER_DIR/progress/exercise.json

The folder defaults to ``~/.minimodel`` and is overridden by the ``MINIMODEL_LEARNER_DIR``
environment variable or an explicit path (the CLI's ``--learner-dir``). Every write is atomic,
so Ctrl-C never leaves a half-written progress file.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_json

KINDS = ("quiz", "break", "exercise")
ENV_VAR = "MINIMODEL_LEARNER_DIR"


def default_learner_dir() -> Path:
    """``$MINIMODEL_LEARNER_DIR`` if set, else ``~/.minimodel``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".minimodel"


class Progress:
    """Read and update the progress files of one learner folder."""

    def __init__(self, learner_dir: str | os.PathLike | None = None) -> None:
        self.learner_dir = Path(learner_dir).expanduser() if learner_dir else default_learner_dir()

    @classmethod
    def open(cls, learner_dir: str | os.PathLike | None = None) -> "Progress":
        return cls(learner_dir)

    def _file(self, kind: str) -> Path:
        if kind not in KINDS:
            raise ValueError(f"unknown progress kind {kind!r}; expected one of {', '.join(KINDS)}")
        return self.learner_dir / "progress" / f"{kind}.json"

    def all(self, kind: str) -> dict[str, dict[str, Any]]:
        """Every recorded item of ``kind`` (an empty dict when nothing is recorded yet)."""
        path = self._file(kind)
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"progress file {path} is not valid JSON ({exc}); "
                             "fix or delete it to start that section afresh") from exc
        return data if isinstance(data, dict) else {}

    def get(self, kind: str, item_id: str) -> dict[str, Any] | None:
        return self.all(kind).get(item_id)

    def record(self, kind: str, item_id: str, status: str, **detail: Any) -> dict[str, Any]:
        """Merge ``status`` and ``detail`` into the entry of ``item_id`` and save atomically."""
        data = self.all(kind)
        entry = dict(data.get(item_id, {}))
        entry.update(detail)
        entry["status"] = status
        entry["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        data[item_id] = entry
        atomic_write_json(self._file(kind), data)
        return entry
