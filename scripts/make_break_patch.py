"""Write a break's bug patch, or one of its fake fixes, from a list of (old, new) edits.

    python scripts/make_break_patch.py BREAK_ID FILE OLD NEW [FILE OLD NEW ...]
    python scripts/make_break_patch.py BREAK_ID --fake NAME FILE OLD NEW [...]

FILE is relative to src/ (e.g. minimodel/nn/embedding.py); OLD must occur exactly once in it
(after the earlier edits of the same file, which are applied in order).

Without ``--fake`` the edits apply to the library source and the diff is written to
``BREAK_ID/bug.patch``. With ``--fake NAME`` they apply to the library *with the bug patch
applied* (what the learner's workspace holds) and the diff is written to
``BREAK_ID/fakes/NAME.patch``: a symptom-hiding "fix" that `minimodel lab validate` proves the
break's invariants reject. From Python, call :func:`write_patch`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from minimodel.lab.patching import apply_patch_to_texts, make_diff, parse_patch

SRC = Path(__file__).resolve().parent.parent / "src"
BREAKS = SRC / "minimodel" / "lab" / "content" / "breaks"


def write_patch(break_id: str, edits: list[tuple[str, str, str]], fake: str | None = None) -> Path:
    """Apply ``edits`` = [(file, old, new), ...] and write the diff; returns its path."""
    folder = BREAKS / break_id
    originals: dict[str, str] = {}
    edited: dict[str, str] = {}
    broken: dict[str, str] = {}  # the files the bug changes, as the learner gets them
    if fake:
        bug = (folder / "bug.patch").read_text(encoding="utf-8")
        touched = {fp.target(1) for fp in parse_patch(bug)}
        broken = apply_patch_to_texts(
            bug, {rel: (SRC / rel).read_text(encoding="utf-8") for rel in touched})
    for rel, old, new in edits:
        if rel not in originals:
            text = broken.get(rel) or (SRC / rel).read_text(encoding="utf-8")
            originals[rel] = edited[rel] = text
        if edited[rel].count(old) != 1:
            raise ValueError(f"{old!r} occurs {edited[rel].count(old)} times in {rel}")
        edited[rel] = edited[rel].replace(old, new)
    diffs = "".join(make_diff(rel, originals[rel], edited[rel]) for rel in originals)
    if not diffs:
        raise ValueError("the edits change nothing")
    out = folder / "fakes" / f"{fake}.patch" if fake else folder / "bug.patch"
    out.parent.mkdir(exist_ok=True)
    out.write_text(diffs, encoding="utf-8")
    return out


def main(argv: list[str]) -> int:
    fake = None
    if len(argv) > 2 and argv[1] == "--fake":
        fake, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 4 or (len(argv) - 1) % 3:
        print(__doc__, file=sys.stderr)
        return 2
    edits = [tuple(argv[i:i + 3]) for i in range(1, len(argv), 3)]
    try:
        out = write_patch(argv[0], edits, fake)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
