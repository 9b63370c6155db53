"""What transformers said about an architecture, kept on disk so a later run need not ask again.

Asking transformers (:mod:`.architecture`) means importing torch and the model's modeling code,
which costs far more than the checks themselves. Its answer depends only on the installed
versions and on the config, so it is kept in the user cache, one small JSON file per
(transformers version, torch version, config)::

    ~/.cache/minimodel/doctor/<sha256 of the versions and the canonical config.json>.json
        {"format": 1, "architecture": {...} or null (transformers cannot build it),
         "keys": {stored key: [model key, part index, read by the model?], ...}}

The stored keys' renames are added as new files with the same config are examined. A new
transformers or torch version gives another file name, so an old answer is never used; a file
that cannot be read is asked again and rewritten (written atomically), and deleting the whole
folder is always safe. ``XDG_CACHE_HOME`` moves it, as for other tools.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_json

FORMAT = 1  # bumped when what is stored changes: older files are then ignored


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minimodel" / "doctor"


def entry_path(version: str, config: dict[str, Any]) -> Path:
    """The file of one (transformers version, torch version, config)."""
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "-"
    text = json.dumps([FORMAT, version, torch_version, config], sort_keys=True, default=str)
    return cache_folder() / f"{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}.json"


def load(path: Path) -> dict[str, Any] | None:
    """The stored answer, or None when there is none or it cannot be read."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(entry, dict) and entry.get("format") == FORMAT and \
        isinstance(entry.get("keys"), dict) and "architecture" in entry
    return entry if ok else None


def store(path: Path, architecture: dict[str, Any] | None, keys: dict[str, list]) -> None:
    """Write the answer; a cache that cannot be written (read-only home) is simply skipped."""
    try:
        atomic_write_json(path, {"format": FORMAT, "architecture": architecture, "keys": keys},
                          indent=None)
    except OSError:
        pass
