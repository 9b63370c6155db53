"""Unified diffs: parse, apply (like ``patch -p1``) and make (with :mod:`difflib`).

Used by the breaks (the bug patch, the fix diff) and the exercises (known-wrong solutions
stored as small diffs). Our own applier, not GNU ``patch``: a break must start on machines
without it, and a hunk that does not fit must fail *before* the workspace is touched. It is
strict about content (context and removed lines match exactly) and lenient about position (a
hunk may sit a few lines from where the diff says). Only modifications of existing text files:
no creation, deletion or renames.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_NEWLINE = "\\ No newline at end of file"


class PatchError(ValueError):
    """A diff that cannot be parsed or does not apply to the given text."""


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_len: int
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" "|"-"|"+", line text)

    @property
    def old_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " -"]

    @property
    def new_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " +"]

    def reversed(self) -> Hunk:
        """The hunk that undoes this one (``-`` and ``+`` swapped)."""
        swap = {" ": " ", "-": "+", "+": "-"}
        return Hunk(self.old_start, self.new_len, self.old_len,
                    [(swap[tag], text) for tag, text in self.lines])


@dataclass
class FilePatch:
    old_path: str
    new_path: str
    hunks: list[Hunk] = field(default_factory=list)

    def target(self, strip: int = 1) -> str:
        """The path the patch applies to, with ``strip`` leading components removed."""
        path = self.new_path if self.new_path != "/dev/null" else self.old_path
        parts = path.split("/")
        if len(parts) <= strip:
            raise PatchError(f"cannot strip {strip} component(s) from the path {path!r}")
        return "/".join(parts[strip:])


def _header_path(line: str) -> str:
    return line[4:].rstrip("\n").split("\t")[0].strip()


def parse_patch(text: str) -> list[FilePatch]:
    """Parse every file section of a unified diff (``--- a/x`` / ``+++ b/x`` / ``@@`` hunks)."""
    lines = text.splitlines(keepends=True)
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("--- "):
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise PatchError(f"line {i + 1}: '--- ' header without a following '+++ ' header")
        fp = FilePatch(_header_path(line), _header_path(lines[i + 1]))
        if "/dev/null" in (fp.old_path, fp.new_path):
            raise PatchError(f"{fp.old_path} -> {fp.new_path}: creating or deleting files is "
                             "not supported")
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            match = _HUNK.match(lines[i])
            if not match:
                raise PatchError(f"line {i + 1}: malformed hunk header {lines[i].rstrip()!r}")
            a, b, _, d = match.groups()
            hunk = Hunk(int(a), int(b) if b is not None else 1, int(d) if d is not None else 1)
            i += 1
            old_seen = new_seen = 0
            while old_seen < hunk.old_len or new_seen < hunk.new_len:
                if i >= len(lines):
                    raise PatchError(f"{fp.new_path}: hunk at line {hunk.old_start} is truncated")
                body = lines[i]
                tag, content = (body[0], body[1:]) if body not in ("\n", "\r\n") else (" ", body)
                if tag not in " -+":
                    if body.startswith("\\"):
                        i += 1
                        continue
                    raise PatchError(f"{fp.new_path}: unexpected line {i + 1} in a hunk: "
                                     f"{body.rstrip()!r}")
                hunk.lines.append((tag, content))
                old_seen += tag in " -"
                new_seen += tag in " +"
                i += 1
                if i < len(lines) and lines[i].startswith("\\"):  # "\ No newline at end of file"
                    last_tag, last = hunk.lines[-1]
                    hunk.lines[-1] = (last_tag, last.rstrip("\n"))
                    i += 1
            fp.hunks.append(hunk)
        if not fp.hunks:
            raise PatchError(f"{fp.new_path}: file section without hunks")
        files.append(fp)
    if not files:
        raise PatchError("no file sections found (expected '--- a/...' and '+++ b/...' lines)")
    return files


def _find(source: list[str], needle: list[str], expected: int, lower: int) -> int | None:
    """Index where ``needle`` occurs in ``source`` at or after ``lower``, nearest ``expected``."""
    n = len(needle)
    last = len(source) - n
    if last < lower:
        return None
    expected = min(max(expected, lower), last)
    for distance in range(0, max(expected - lower, last - expected) + 1):
        for pos in ((expected,) if distance == 0 else (expected - distance, expected + distance)):
            if lower <= pos <= last and source[pos:pos + n] == needle:
                return pos
    return None


def apply_file_patch(text: str, patch: FilePatch) -> str:
    """Apply the hunks of one file section to ``text``; :class:`PatchError` if one does not fit."""
    source = text.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0  # next unconsumed line of ``source``
    delta = 0  # how far the hunks actually sit from where the diff says
    for number, hunk in enumerate(patch.hunks, 1):
        old = hunk.old_lines
        said = hunk.old_start - 1 if hunk.old_len else hunk.old_start  # 0-based, as the diff says
        pos = _find(source, old, said + delta, cursor)
        if pos is None:
            first = next((line for line in old if line.strip()), "").strip()
            raise PatchError(
                f"{patch.target()}: hunk {number} of {len(patch.hunks)} (around line "
                f"{hunk.old_start}) does not match the file; the lines it expects, starting with "
                f"{first!r}, have changed")
        delta = pos - said
        out.extend(source[cursor:pos])
        out.extend(hunk.new_lines)
        cursor = pos + len(old)
    out.extend(source[cursor:])
    return "".join(out)


def apply_patch_to_texts(patch_text: str, texts: dict[str, str], strip: int = 1,
                         reverse: bool = False) -> dict[str, str]:
    """Apply a multi-file diff to ``texts`` (path -> text); returns the new texts of the
    patched paths only. Nothing is modified in place, so a failure leaves no half-applied state.
    ``reverse=True`` undoes the diff instead (``patch -R``).
    """
    result: dict[str, str] = {}
    for fp in parse_patch(patch_text):
        path = fp.target(strip)
        current = result.get(path, texts.get(path))
        if current is None:
            raise PatchError(f"the patch changes {path}, which does not exist")
        if reverse:
            fp = FilePatch(fp.new_path, fp.old_path, [hunk.reversed() for hunk in fp.hunks])
        result[path] = apply_file_patch(current, fp)
    return result


def make_diff(path: str, old_text: str, new_text: str, context: int = 3) -> str:
    """A unified diff from ``old_text`` to ``new_text`` with ``a/path`` and ``b/path`` headers,
    so ``patch -p1`` applies it from the folder that contains ``path``. Empty if equal."""
    old = old_text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=context):
        if line.startswith(("---", "+++")):
            line = line.rstrip("\n") + "\n"
        if not line.endswith("\n"):  # last line of a file without a final newline
            line += "\n" + NO_NEWLINE + "\n"
        out.append(line)
    return "".join(out)
