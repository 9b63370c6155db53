"""Break workspaces: a scratch copy of minimodel with one bug in it.

Layout of a workspace ``DIR``::

    DIR/minimodel/          copy of the installed package source (no __pycache__, no
                            lab/content), with the break's bug patch applied
    DIR/NOTES.md            the learner's predictions (template from the break's questions)
    DIR/.break.json         {"break", "lang", "manifest": {path: sha256}, "hints_shown",
                            "fix_shown", ...}; the manifest is the just-started state;
                            ``fix_shown``: ``break diff`` showed the fix for this workspace
                            (whatever learner folder it was recorded in)
    DIR/.break/start.zip    the just-started files ("workspace/...") and the first NOTES.md

Nothing in the workspace names the file the bug was planted in: finding it is the exercise. The
installed package is only ever *read*. ``reset`` restores ``DIR/minimodel`` byte for byte from
``start.zip`` and verifies it against the manifest; ``fix_diff`` undoes the break's bug patch on
the just-started text and gives the difflib diff from the broken text to the library's, which
``patch -p1 -d DIR`` applies.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import minimodel
from minimodel._fileio import atomic_write_bytes, atomic_write_json, atomic_write_text
from minimodel.lab.breaks.catalog import Break, load_break
from minimodel.lab.breaks.notes import render_notes
from minimodel.lab.patching import apply_patch_to_texts, make_diff, parse_patch

STATE_FILE = ".break.json"
STATE_DIR = ".break"
START_ZIP = "start.zip"
NOTES_FILE = "NOTES.md"
PACKAGE = "minimodel"
FORMAT = 1
SKIP_DIR_NAMES = {"__pycache__", ".pytest_cache", ".mypy_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo")
SKIP_RELATIVE = frozenset({"lab/content"})  # relative to the package folder


class WorkspaceError(ValueError):
    """A workspace that cannot be created or used (the message says what to do)."""


class AlreadyStarted(WorkspaceError):
    """``start`` on a workspace already started for the same break, without ``force``: it
    may hold the learner's edits, so nothing is touched (``workspace`` is the open one)."""

    def __init__(self, workspace: "Workspace") -> None:
        super().__init__(f"{workspace.root} is already a workspace of the break "
                         f"{workspace.break_id!r}; pass force=True to rebuild its copy")
        self.workspace = workspace


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def installed_package_dir() -> Path:
    """The folder of the minimodel package this process imported."""
    return Path(minimodel.__file__).resolve().parent


def _files(base: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """Every file under ``base`` but caches and the ``skip`` folders (relative to ``base``)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIR_NAMES
                       and (here / d).relative_to(base).as_posix() not in skip]
        found += [here / name for name in filenames if not name.endswith(SKIP_SUFFIXES)]
    return found


def package_files(package_dir: Path | None = None) -> dict[str, bytes]:
    """Every file a workspace copies: ``"minimodel/..."`` -> bytes, in sorted order."""
    root = (package_dir or installed_package_dir()).resolve()
    return dict(sorted((f"{PACKAGE}/{path.relative_to(root).as_posix()}", path.read_bytes())
                       for path in _files(root, SKIP_RELATIVE)))


def _refuse_installed(workdir: Path, package_dir: Path) -> None:
    """Never let a workspace overlap the installed package (we delete/replace DIR/minimodel)."""
    if workdir.is_relative_to(package_dir) or package_dir.is_relative_to(workdir / PACKAGE):
        raise WorkspaceError(
            f"refusing to use {workdir} as a workspace: it overlaps the installed minimodel "
            f"package at {package_dir}; choose a scratch folder such as /tmp/my-break")


@dataclass
class Workspace:
    """An existing workspace folder and its ``.break.json`` state."""

    root: Path
    state: dict[str, Any] = field(default_factory=dict)
    restarted: bool = False  # set by start(): this break's workspace was already there

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, workdir: str | os.PathLike) -> "Workspace":
        root = Path(workdir).expanduser().resolve()
        state_path = root / STATE_FILE
        if not state_path.is_file():
            raise WorkspaceError(f"{root} is not a break workspace (no {STATE_FILE}); create one "
                                 "with `minimodel break start ID --workdir DIR`")
        try:
            state = json.loads(state_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise WorkspaceError(f"{state_path} is not valid JSON ({exc}); start the break "
                                 "again with --force") from exc
        if not isinstance(state, dict) or "break" not in state or "manifest" not in state:
            raise WorkspaceError(f"{state_path} does not describe a break workspace; start the "
                                 "break again with --force")
        return cls(root, state)

    @property
    def break_id(self) -> str:
        return str(self.state["break"])

    @property
    def lang(self) -> str:
        return str(self.state.get("lang", "en"))

    @property
    def manifest(self) -> dict[str, str]:
        return dict(self.state["manifest"])

    @property
    def notes_path(self) -> Path:
        return self.root / NOTES_FILE

    def save_state(self) -> None:
        atomic_write_json(self.root / STATE_FILE, self.state)

    def _zip(self) -> zipfile.ZipFile:
        path = self.root / STATE_DIR / START_ZIP
        if not path.is_file():
            raise WorkspaceError(f"{path} is missing, so the start state is lost; start the "
                                 "break again with --force")
        return zipfile.ZipFile(path)

    # ------------------------------------------------------------------ inspection
    def current_hashes(self) -> dict[str, str]:
        """sha256 of every file now under DIR/minimodel (``__pycache__`` ignored)."""
        return dict(sorted((path.relative_to(self.root).as_posix(), sha256_bytes(path.read_bytes()))
                           for path in _files(self.root / PACKAGE)))

    def changes(self) -> dict[str, list[str]]:
        """Files ``modified``, ``added`` and ``removed`` since the break started."""
        now, start = self.current_hashes(), self.manifest
        return {"modified": [p for p in start if p in now and now[p] != start[p]],
                "added": [p for p in now if p not in start],
                "removed": [p for p in start if p not in now]}

    def start_text(self, rel: str) -> str | None:
        """The text of ``rel`` (``"minimodel/..."``) as the break started, None if it had none."""
        with self._zip() as zf:
            try:
                return zf.read(f"workspace/{rel}").decode("utf-8", errors="replace")
            except KeyError:
                return None

    def matches_manifest(self) -> bool:
        return self.current_hashes() == self.manifest

    # ------------------------------------------------------------------ fix diff and reset
    def patched_files(self) -> list[str]:
        """The files the break's bug patch changed (read from the patch, not from the folder)."""
        return sorted({fp.target(1) for fp in parse_patch(load_break(self.break_id).patch_text)})

    def _broken_and_fixed(self) -> tuple[dict[str, str], dict[str, str]]:
        """The patched files as the break started (``{rel: text}``) and as the fix leaves them."""
        with self._zip() as zf:
            broken = {rel: zf.read(f"workspace/{rel}").decode("utf-8")
                      for rel in self.patched_files()}
        fixed = apply_patch_to_texts(load_break(self.break_id).patch_text, broken, strip=1,
                                     reverse=True)
        return broken, fixed

    def fix_diff(self) -> str:
        """The fix: broken text (at start) -> library text, for every patched file."""
        broken, fixed = self._broken_and_fixed()
        return "".join(make_diff(rel, broken[rel], fixed[rel]) for rel in sorted(broken))

    def reset(self, notes: bool = False) -> dict[str, list[str]]:
        """Put DIR/minimodel back to its just-started state, byte for byte.

        Returns ``{"restored": [...], "removed": [...]}``. Learner files outside
        ``DIR/minimodel`` are kept; ``NOTES.md`` too, unless ``notes=True``.
        """
        restored, removed = [], []
        manifest = self.manifest
        with self._zip() as zf:
            for rel, digest in manifest.items():
                path = self.root / rel
                if path.is_file() and sha256_bytes(path.read_bytes()) == digest:
                    continue
                if path.is_dir():
                    shutil.rmtree(path)
                atomic_write_bytes(path, zf.read(f"workspace/{rel}"))
                restored.append(rel)
            if notes and "NOTES.md" in zf.namelist():
                atomic_write_bytes(self.notes_path, zf.read("NOTES.md"))
                restored.append(NOTES_FILE)
        base = self.root / PACKAGE
        keep_dirs = {str(Path(rel).parent) for rel in manifest}
        for dirpath, dirnames, filenames in os.walk(base, topdown=False):
            for name in filenames:
                path = Path(dirpath) / name
                rel = path.relative_to(self.root).as_posix()
                if rel not in manifest:
                    path.unlink()
                    removed.append(rel)
            rel_dir = Path(dirpath).relative_to(self.root)
            if str(rel_dir) not in keep_dirs and not any(Path(dirpath).iterdir()):
                Path(dirpath).rmdir()
        if not self.matches_manifest():
            raise WorkspaceError(f"reset of {self.root} did not reproduce the start manifest; "
                                 "start the break again with --force")
        return {"restored": restored, "removed": sorted(removed)}

    # ------------------------------------------------------------------ the fix shown
    @property
    def fix_shown(self) -> bool:
        """Has ``break diff`` shown the fix of this workspace's break? Kept in the workspace as
        well as in the learner folder, so a check of this workspace from any learner folder
        knows it (:mod:`minimodel.lab.revealed`); a restart (``--force``) keeps it."""
        return bool(self.state.get("fix_shown", False))

    def mark_fix_shown(self) -> None:
        self.state["fix_shown"] = True
        self.save_state()

    # ------------------------------------------------------------------ hints
    @property
    def hints_shown(self) -> int:
        return int(self.state.get("hints_shown", 0))

    def next_hint(self, total: int) -> int:
        """Climb one rung (stays on the last) and return its number."""
        number = min(self.hints_shown + 1, total)
        self.state["hints_shown"] = max(self.hints_shown, number)
        self.save_state()
        return number


def build_files(brk: Break, package_dir: Path | None = None) -> dict[str, bytes]:
    """The workspace files, with the bug applied."""
    files = package_files(package_dir)
    texts = {rel: data.decode("utf-8") for rel, data in files.items() if rel.endswith(".py")}
    for rel, text in apply_patch_to_texts(brk.patch_text, texts, strip=1).items():
        files[rel] = text.encode("utf-8")
    return files


def start(brk: Break, workdir: str | os.PathLike, lang: str = "en", force: bool = False,
          package_dir: Path | None = None,
          learner_dir: str | os.PathLike | None = None) -> Workspace:
    """Create (or re-create) the workspace of ``brk`` in ``workdir``.

    A non-empty folder is refused unless ``force`` is given: a workspace of this break raises
    :class:`AlreadyStarted` (its copy may hold the learner's edits; ``reset`` is the way to put
    the bug back), any other folder :class:`WorkspaceError`. With ``force``, a workspace of this
    break has its minimodel copy rebuilt and keeps NOTES.md and the hints climbed. The
    installed package is read, never written.
    """
    package_dir = (package_dir or installed_package_dir()).resolve()
    root = Path(workdir).expanduser().resolve()
    _refuse_installed(root, package_dir)
    if root.exists() and not root.is_dir():
        raise WorkspaceError(f"{root} exists and is not a folder")
    previous: Workspace | None = None
    if root.is_dir() and any(root.iterdir()):
        try:
            previous = Workspace.open(root)
        except WorkspaceError:
            pass
        if previous is not None and previous.break_id == brk.id and not force:
            raise AlreadyStarted(previous)
        if previous is None or previous.break_id != brk.id:
            if not force:
                what = (f"a workspace of the break {previous.break_id!r}" if previous
                        else "not empty and not a break workspace")
                raise WorkspaceError(f"{root} is {what}; choose an empty folder or pass --force "
                                     f"to replace {root / PACKAGE}, {NOTES_FILE} and "
                                     f"{STATE_FILE} there")
            previous = None

    files = build_files(brk, package_dir)  # fails before anything is written
    root.mkdir(parents=True, exist_ok=True)
    # Remove the state first: a crash half-way then leaves "not a workspace", never a wrong one.
    (root / STATE_FILE).unlink(missing_ok=True)
    target = root / PACKAGE
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    notes_text = render_notes(brk, lang, str(root), learner_dir)
    if previous is None or not (root / NOTES_FILE).is_file():  # a restart keeps the notes
        atomic_write_text(root / NOTES_FILE, notes_text)

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, data in files.items():
            zf.writestr(f"workspace/{rel}", data)
        zf.writestr("NOTES.md", notes_text.encode("utf-8"))
    atomic_write_bytes(root / STATE_DIR / START_ZIP, buffer.getvalue())

    state = {
        "format": FORMAT,
        "break": brk.id,
        "lang": lang,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "minimodel_version": getattr(minimodel, "__version__", "?"),
        "source": str(package_dir),
        "hints_shown": previous.hints_shown if previous is not None else 0,
        "fix_shown": previous.fix_shown if previous is not None else False,
        "manifest": {rel: sha256_bytes(data) for rel, data in files.items()},
    }
    ws = Workspace(root, state, restarted=previous is not None)
    ws.save_state()
    return ws
