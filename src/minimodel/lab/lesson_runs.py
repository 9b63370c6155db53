"""``lab validate``'s lesson section: run the code of the lessons that changed, strictly.

Running every lesson in both languages takes minutes, so validate runs only the lesson files
that changed since they last passed. A file is **changed** when its SHA-256 is not recorded as
passing in ``LEARNER_DIR/cache/lessons-passed.json`` (written here, after a strict pass) and
it differs from what the branch started from: its upstream (``git diff @{upstream}``, so a
lesson you committed yourself still counts) or, without one, the last commit; or it is
untracked. The lessons as shipped are the ones the project's checks (the site build, which
runs every lesson strictly) already ran. Outside a git checkout every unrecorded file counts
as changed. ``lab validate --all-lessons`` runs every file, whatever the record says (after a
change to the library itself, whose effect on every lesson's output no hash here can see).

A run is strict: an error, a changed text and numeric drift beyond a block's declared
tolerance are all problems (:func:`minimodel.lab.lessons.lesson_problems`).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from minimodel._fileio import atomic_write_json
from minimodel.lab.lessons import LESSONS_DIR, lesson_files, lesson_problems
from minimodel.lab.progress import default_learner_dir


def record_path(learner_dir: Path | None = None) -> Path:
    """Where the last passing hash of each lesson file is kept (never inside the package)."""
    return (learner_dir or default_learner_dir()) / "cache" / "lessons-passed.json"


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_record(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}               # no record yet, or a damaged one: everything is re-run
    return data if isinstance(data, dict) else {}


def _git_names(lessons_dir: Path, *argv: str) -> set[str] | None:
    try:
        done = subprocess.run(["git", *argv], cwd=lessons_dir, capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {Path(line).name for line in done.stdout.splitlines()} if done.returncode == 0 \
        else None


def uncommitted(lessons_dir: Path = LESSONS_DIR) -> set[str] | None:
    """Names of the lesson files that differ from what the branch was based on (its upstream,
    ``@{upstream}``, when it has one: your own commits count as changes; else the last
    commit) or are untracked; ``None`` outside a git checkout (then nothing counts as already
    checked)."""
    diff = ["diff", "--name-only", "--relative"]
    edited = _git_names(lessons_dir, *diff, "@{upstream}", "--", ".")
    if edited is None:
        edited = _git_names(lessons_dir, *diff, "HEAD", "--", ".")
    new = _git_names(lessons_dir, "ls-files", "--others", "--exclude-standard", "--", ".")
    return None if edited is None or new is None else edited | new


def changed_files(files: list[Path], record: dict[str, str],
                  uncommitted_names: set[str] | None) -> list[Path]:
    """The files of ``files`` to run: not recorded as passing with their current hash, and
    differing from the last commit (every unrecorded one when ``uncommitted_names`` is None)."""
    return [path for path in files if record.get(path.name) != file_hash(path)
            and (uncommitted_names is None or path.name in uncommitted_names)]


def lesson_run_problems(every: bool = False, lessons_dir: Path = LESSONS_DIR,
                        learner_dir: Path | None = None,
                        on_file: Callable[[Path, int, int], None] | None = None) -> list[str]:
    """Problems of the changed lesson files (all with ``every``), run strictly; each file
    that passes is recorded so the next validate skips it. ``on_file(path, i, n)`` is called
    before each run (progress: a lesson takes ~5-10 s)."""
    files = [page for slug_file in lesson_files(lessons_dir)
             for page in (slug_file, slug_file.with_name(f"{slug_file.name[:-3]}.es.md"))
             if page.is_file()]
    store = record_path(learner_dir)
    record = _read_record(store)
    todo = files if every else changed_files(files, record, uncommitted(lessons_dir))
    problems: list[str] = []
    for i, path in enumerate(todo, 1):
        if on_file:
            on_file(path, i, len(todo))
        digest = file_hash(path)          # of what ran, even if the file is edited meanwhile
        found = lesson_problems(path)
        problems += found
        if not found:
            record[path.name] = digest
            atomic_write_json(store, record)
    return problems
