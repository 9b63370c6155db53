"""Regenerate a break's bug.patch from the library source and a list of (old, new) edits.

    python scripts/make_break_patch.py BREAK_ID FILE OLD NEW [FILE OLD NEW ...]

FILE is relative to src/ (e.g. minimodel/nn/embedding.py); OLD must occur exactly once in it
(after the earlier edits of the same file, which are applied in order).
The patch is written to src/minimodel/lab/content/breaks/BREAK_ID/bug.patch. Used when the
library moves code a break touches; `minimodel lab validate` then proves the break still works.
"""

from __future__ import annotations

import sys
from pathlib import Path

from minimodel.lab.breaks.patching import make_diff

SRC = Path(__file__).resolve().parent.parent / "src"


def main(argv: list[str]) -> int:
    if len(argv) < 4 or (len(argv) - 1) % 3:
        print(__doc__, file=sys.stderr)
        return 2
    break_id, edits = argv[0], argv[1:]
    originals: dict[str, str] = {}
    edited: dict[str, str] = {}
    for i in range(0, len(edits), 3):
        rel, old, new = edits[i:i + 3]
        if rel not in originals:
            originals[rel] = edited[rel] = (SRC / rel).read_text(encoding="utf-8")
        if edited[rel].count(old) != 1:
            print(f"error: {old!r} occurs {edited[rel].count(old)} times in {rel}",
                  file=sys.stderr)
            return 2
        edited[rel] = edited[rel].replace(old, new)
    diffs = [make_diff(rel, originals[rel], edited[rel]) for rel in originals]
    out = SRC / "minimodel" / "lab" / "content" / "breaks" / break_id / "bug.patch"
    out.write_text("".join(diffs), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
