"""Headings are plain text: no ``$...$`` maths in a lesson's or a site page's heading.

Why: the site's table of contents (and the heading's anchor) is built from the heading's
raw text, before KaTeX renders anything, so ``## Padding $V$ to a multiple of 64`` shows
in the sidebar as ``Padding \\(V\\) to a multiple of 64``. A heading says the idea in words
or Unicode (``V · d``, ``√(2/π)``); the maths goes in the paragraph under it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from minimodel.lab.lessons import LESSONS_DIR
from minimodel.lab.terminology import DOCS_DIR

_FENCED = re.compile(r"^(```+|~~~+).*?^\1[ \t]*$", re.M | re.S)   # code: '# $x' is a comment
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<text>.*\S)[ \t]*$", re.M)


def _blank_code(text: str) -> str:
    """``text`` with each fenced block's lines emptied (line numbers kept)."""
    return _FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def math_heading_problems(folders: Iterable[Path] = (LESSONS_DIR, DOCS_DIR)) -> list[str]:
    """One line per Markdown heading (outside code blocks) with a ``$`` in it, in the
    ``*.md`` files of ``folders`` (a folder that does not exist, as ``docs/`` in an
    installed package, is skipped), naming the file, the line and the fix."""
    problems = []
    for folder in folders:
        for path in sorted(Path(folder).glob("*.md")):
            text = _blank_code(path.read_text(encoding="utf-8"))
            for match in _HEADING.finditer(text):
                if "$" in match.group("text"):
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(
                        f"{folder.name}/{path.name}:{line}: the heading "
                        f"'{match.group('text')}' has maths ($), which the site's table of "
                        "contents shows as raw LaTeX; write it in words or Unicode "
                        "('V · d', '√(2/π)') and keep the maths in the text under it")
    return problems
