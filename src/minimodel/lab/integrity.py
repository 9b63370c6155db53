"""Is the lab's content what was shipped? A hash manifest, checked before a verdict.

The judge computes expected results from reference code, generates hidden cases with the
case generators and runs solutions with the child harness. If any of those files were changed
after installation (by hand, or by a solution in a sandbox-less run), verdicts could no longer
be trusted: so ``content/MANIFEST.json`` records the SHA-256 of each, and the judge refuses to
grade when one differs, naming the files and how to repair them.

The manifest is written by ``python scripts/update_lab_manifest.py`` (after editing content)
and checked by the test suite and ``minimodel lab validate``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from minimodel._fileio import atomic_write_json

LAB_DIR = Path(__file__).resolve().parent
PACKAGE_DIR = LAB_DIR.parent
MANIFEST = LAB_DIR / "content" / "MANIFEST.json"
# Beyond lab/content: the shared MLM reference, the child harness and the case generators.
EXTRA_FILES = ("models/mlm_reference.py", "lab/exercises/_child.py", "lab/exercises/_enforce.py",
               "lab/exercises/family.py", "lab/exercises/cases.py")


class ContentTampered(ValueError):
    """Lab content differs from the manifest."""


def _tracked() -> list[Path]:
    content = LAB_DIR / "content"
    # The lessons are read, never run by the judge or a break check: not part of what is verified.
    files = [p for p in content.rglob("*") if p.is_file() and p != MANIFEST
             and "lessons" not in p.relative_to(content).parts[:1]
             and "__pycache__" not in p.parts and not p.name.endswith(".pyc")]
    return sorted(files + [PACKAGE_DIR / rel for rel in EXTRA_FILES])


def _key(path: Path) -> str:
    return path.relative_to(PACKAGE_DIR).as_posix()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def current() -> dict[str, str]:
    """The hashes the files have now."""
    return {_key(p): digest(p) for p in _tracked()}


def write_manifest() -> Path:
    return atomic_write_json(MANIFEST, {"sha256": current()}, indent=1)


def _recorded() -> dict[str, str]:
    try:
        return json.loads(MANIFEST.read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ContentTampered(f"{MANIFEST} is missing or damaged ({exc}); in a clone, write it "
                              "again with `python scripts/update_lab_manifest.py`; otherwise "
                              "reinstall minimodel (pip install --force-reinstall --no-deps "
                              "minimodel)") from None


def problems(paths: list[Path] | None = None) -> list[str]:
    """Files (all, or ``paths``) whose hash differs from the manifest, added or missing."""
    recorded = _recorded()
    if paths is None:
        now = current()
        return sorted([k for k in now if recorded.get(k) != now[k]]
                      + [k for k in recorded if k not in now])
    return [_key(Path(path).resolve()) for path in paths if not Path(path).is_file()
            or recorded.get(_key(Path(path).resolve())) != digest(Path(path))]


def verify(paths: list[Path] | None = None) -> None:
    """Raise :class:`ContentTampered` naming the changed files and the repair."""
    bad = problems(paths)
    if bad:
        listed = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise ContentTampered(
            f"the lab's content was changed after installation ({listed}); verdicts would not "
            "be trustworthy, so nothing is graded. Editing the content on purpose (an author)? "
            "Record it: `python scripts/update_lab_manifest.py`. Otherwise reinstall minimodel "
            "(pip install --force-reinstall --no-deps minimodel); in a clone, `git status "
            "src/minimodel/lab` lists the changed files (restoring one drops its edits).")


def verified_bytes(path: Path) -> bytes:
    """The bytes of ``path``, read once and checked against the manifest: what the caller
    then compiles is exactly what was hashed (no window to swap the file in between)."""
    data = Path(path).read_bytes()
    if _recorded().get(_key(Path(path).resolve())) != hashlib.sha256(data).hexdigest():
        verify([Path(path)])  # raises, naming the file and the repair
        raise ContentTampered(f"{path} changed while it was being read; check again")
    return data
