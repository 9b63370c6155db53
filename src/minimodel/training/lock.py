"""One process per run directory: a lock file that names its owner.

Two ``minimodel train`` processes writing one directory would interleave checkpoints and
metrics. The lock is an advisory ``flock`` on ``DIR/.lock``: the operating system releases it
when the owner exits, however it exits, so a killed run never leaves a stale lock behind. The
file also holds the owner's pid, host, command and start time, so the second process can say
who is there.

Where ``fcntl`` does not exist (Windows) the lock is a file created exclusively; a leftover
from a dead process is detected by its pid and taken over.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from minimodel.messages import Phrase, PhraseError, phrase

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_FILE = ".lock"


class RunLocked(PhraseError):
    """Another process owns the run directory."""


def _owner_text(info: dict[str, Any], path: Path) -> Phrase:
    if not info:
        return phrase("train.lock_owner_unknown", path=path)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("started", 0)))
    return phrase("train.lock_owner", pid=info.get("pid"), host=info.get("host"),
                  started=started, command=info.get("command", "?"))


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class RunLock:
    """``with RunLock(out_dir):`` — refuses with :class:`RunLocked` if another process holds it."""

    def __init__(self, out_dir: Path) -> None:
        self.path = Path(out_dir) / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> "RunLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
              "command": " ".join(os.path.basename(a) if i == 0 else a
                                  for i, a in enumerate(sys.argv))[:200]}
        while fcntl is not None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunLocked(phrase("train.locked", out=self.path.parent,
                                       owner=_owner_text(_read(self.path), self.path))) from None
            if not _same_file(fd, self.path):  # the owner unlinked it as we opened it: retry
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(me).encode("utf-8"))
            self._fd = fd
            return self
        while True:  # pragma: no cover - Windows
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                owner = _read(self.path)
                if owner.get("host") == me["host"] and not _alive(owner.get("pid")):
                    self.path.unlink(missing_ok=True)  # left by a dead process
                    continue
                raise RunLocked(phrase("train.locked", out=self.path.parent,
                                       owner=_owner_text(owner, self.path))) from None
            os.write(fd, json.dumps(me).encode("utf-8"))
            self._fd = fd
            return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is None:
            return
        if fcntl is None:  # pragma: no cover - Windows
            os.close(self._fd)
            self.path.unlink(missing_ok=True)
        else:
            # Unlink while still holding the lock, so a waiting process never locks a file
            # that is about to disappear; then release by closing.
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
        self._fd = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _alive(pid: Any) -> bool:  # pragma: no cover - Windows
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True
