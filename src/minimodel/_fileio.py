"""Atomic file writes: a reader (or a crash) never sees a half-written file.

Why: checkpoints, progress files and rendered content are written while a learner may press
Ctrl-C. We write to a temporary file in the same directory, flush it to disk, then
``os.replace`` it over the target, which is atomic on POSIX and Windows.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates files readable by the owner only; give the usual 0666 & ~umask.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, path)
    except BaseException:
        # Leave no temporary file behind, even on KeyboardInterrupt.
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8 by default)."""
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | os.PathLike, obj: Any, indent: int | None = 2) -> Path:
    """Serialise ``obj`` as JSON and write it atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")
