"""Learner progress, kept as plain JSON files in a learner folder.

Layout::

    LEARNER_DIR/progress/quiz.json       {item_id: {"status": ..., "updated": ..., ...}}
    LEARNER_DIR/progress/break.json
    LEARNER_DIR/progress/exercise.json

The folder defaults to ``~/.minimodel`` and is overridden by the ``MINIMODEL_LEARNER_DIR``
environment variable or an explicit path (the CLI's ``--learner-dir``).

Two promises: nothing is lost and nothing is silently reset.

* Every write is atomic (a temporary file renamed over the old one), so Ctrl-C or a full disk
  never leaves a half-written file; and every read-modify-write holds an exclusive lock on
  ``progress/<kind>.lock``, so two commands finishing at once (two terminals checking
  exercises) both keep their record instead of the last writer erasing the first.
* A file that is not what it should be (not JSON, not UTF-8, a list instead of a mapping, an
  entry that is not a mapping, a folder where the file should be) is an error naming the file
  and the fix; it is never replaced by an empty record.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_json, describe_os_error
from minimodel.messages import say

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

KINDS = ("quiz", "break", "exercise", "path")
# Lessons (and the quizzes named after them) were once named by their number
# ("05-lm-head-and-logits"); now the number is computed from the path and the id is the slug.
# Records kept under an old name are read under the slug, so no learner loses progress.
_NUMBERED = re.compile(r"(?P<kind>lesson:|quiz:)?\d\d-(?P<slug>[a-z][a-z0-9-]*)")
ENV_VAR = "MINIMODEL_LEARNER_DIR"


class LearnerFolderError(ValueError):
    """A file stands where the learner folder (or its ``progress`` folder) should be. It is
    English as a plain exception; the CLI says it in the command's language (``in_lang``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(self.in_lang("en"))

    def in_lang(self, lang: str) -> str:
        return say("lab.learner_folder_is_file", lang, path=self.path)


def _renamed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the records of numbered lesson names under their slug (a record already
    under the slug wins); saved that way at the next write."""
    out = {key: record for key, record in data.items() if not _NUMBERED.fullmatch(key)}
    for key, record in data.items():
        old = _NUMBERED.fullmatch(key)
        if old:
            out.setdefault(f"{old['kind'] or ''}{old['slug']}", record)
    return out


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

    def _folder(self) -> Path:
        """The ``progress`` folder, created on first use; a file in the way is an error."""
        folder = self.learner_dir / "progress"
        for part in (self.learner_dir, folder):
            if part.exists() and not part.is_dir():
                raise LearnerFolderError(part)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"cannot create the progress folder {folder}: "
                             f"{describe_os_error(exc)}; choose another folder with "
                             "--learner-dir") from None
        return folder

    @contextlib.contextmanager
    def _locked(self, kind: str, timeout: float = 30.0) -> Iterator[None]:
        """Hold ``progress/<kind>.lock`` exclusively (waiting up to ``timeout`` seconds)."""
        lock_path = self._folder() / f"{kind}.lock"
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ValueError(f"cannot open the progress lock {lock_path}: "
                             f"{describe_os_error(exc)}") from None
        try:
            deadline = time.monotonic() + timeout
            while fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ValueError(f"progress file {self._file(kind)} stayed locked for "
                                         f"{timeout:.0f} s by another minimodel command; wait "
                                         f"for it to finish (lock: {lock_path})") from None
                    time.sleep(0.02)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def all(self, kind: str) -> dict[str, dict[str, Any]]:
        """Every recorded item of ``kind`` (an empty dict when nothing is recorded yet).

        Raises:
            ValueError naming the file when it cannot be read or has the wrong structure.
        """
        path = self._file(kind)
        fix = f"fix it, or move it away to start the {kind} progress afresh"
        if self.learner_dir.exists() and not self.learner_dir.is_dir():
            raise LearnerFolderError(self.learner_dir)
        if not path.exists():
            return {}
        if path.is_dir():
            raise ValueError(f"progress file {path} is a folder; {fix}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"progress file {path} is not UTF-8 text; {fix}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"progress file {path} is not valid JSON ({exc}); {fix}") from None
        except OSError as exc:
            raise ValueError(f"cannot read progress file {path}: {describe_os_error(exc)}") \
                from None
        if not isinstance(data, dict):
            raise ValueError(f"progress file {path} holds a {type(data).__name__}, but a mapping "
                             f"of item id -> record was expected; {fix}")
        bad = [str(k) for k, v in data.items() if not isinstance(v, dict)]
        if bad:
            raise ValueError(f"progress file {path}: the records of {', '.join(bad[:5])} are "
                             f"not mappings (expected {{\"status\": ...}}); {fix}")
        return _renamed(data) if kind in ("quiz", "path") else data

    def get(self, kind: str, item_id: str) -> dict[str, Any] | None:
        return self.all(kind).get(item_id)

    def record(self, kind: str, item_id: str, status: str, **detail: Any) -> dict[str, Any]:
        """Merge ``status`` and ``detail`` into the entry of ``item_id`` and save atomically,
        holding the kind's lock from the read to the write."""
        path = self._file(kind)
        with self._locked(kind):
            data = self.all(kind)
            entry = dict(data.get(item_id, {}))
            entry.update(detail)
            entry["status"] = status
            entry["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            data[item_id] = entry
            try:
                atomic_write_json(path, data)
            except OSError as exc:
                raise ValueError(f"cannot save progress to {path}: {describe_os_error(exc)}; "
                                 "the previous progress is unchanged") from None
        return entry
