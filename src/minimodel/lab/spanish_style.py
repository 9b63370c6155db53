"""One Spanish typography for the lessons, the lab and the site: what ``lab validate`` checks
beyond the glossary's words.

Spanish ML writing (and the RAE / Fundéu norm the lessons follow) writes

- a decimal comma, ``6,238`` — never ``6.238``, which a Spanish reader takes for six thousand
  two hundred and thirty-eight; a version number after a program's name (``NumPy 2.4``) is a
  name, not a quantity, and stays as it is; in maths, ``0{,}02``;
- a space before the percent sign, ``15 %``;
- angle quotes, ``«así»``, not straight ``"así"``;
- ``y`` between two authors, ``Press y Wolf``, not ``Press & Wolf``.

Each rule reads prose only: code between backticks, indented code lines and Python docstrings
of an exercise's stub (``stub_doc``: code the learner's editor shows) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A number with a decimal point between digits, not part of a longer dotted name (3.11.7).
DECIMAL_POINT = re.compile(r"(?<![\w.,])\d+\.\d+(?!\.?\d)")
# A program's name just before a number makes it a version (NumPy 2.4, CC0 1.0, T5 v1.1).
_VERSION_BEFORE = re.compile(
    r"(?i)\b(python|numpy|openblas|torch|pytorch|transformers|safetensors|cuda|cc0|mkdocs|"
    r"jupyterlab|scipy|gensim|tokenizers|chromium|debian|ubuntu|versión|version|v)\s*$")
_PERCENT = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)?%")
_STRAIGHT_QUOTES = re.compile(r'(?<![\w=\[{:])"([^"\n{}]*[^\W\d_][^"\n{}]*)"(?![\w:])')
_AMPERSAND_AUTHORS = re.compile(r"\b[A-ZÁÉÍÓÚ][\w-]+ & [A-ZÁÉÍÓÚ][\w-]+")
_CODE_SPAN = re.compile(r"`[^`]*`")
# Plain-text code (the exercises' texts have no backticks): a call with its arguments
# (np.exp(1000.0), nested calls included), a bracketed list or index ([[-0.1562, 0.1562]],
# x[mask > 0.5]) and the right side of a comparison or formula, to the end of its clause
# (mask > 0.5, GELU = 0.5 x (1 + tanh(...)); ...).
_CALL = re.compile(r"\b[A-Za-z_][\w.]*\([^()]*\)")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_BRACES = re.compile(r"\{[^{}]*\}")   # a JSON object or a {field}: code, not prose
_COMPARED = re.compile(r"(?:[<>]=?|==|=)\s*(?:[^;,.\n]|\.\d)*")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|https?://\S+")
# Markdown syntax that needs straight quotes: front matter (title: "...") and an admonition's
# title (!!! note "...").
_SYNTAX_LINE = re.compile(r"^(\w+: |[!?]{3})")
# Texts that are code for the learner (Python docstrings of a stub, the sample answers file of
# `quiz take --help`), not prose.
_CODE_KEYS = (".stub_doc.", ".help.quiz.answer_format.")


def _prose(text: str) -> str:
    """``text`` without code: spans between backticks, link targets, indented code lines,
    and the plain-text code above (calls, brackets and braces removed from the inside out)."""
    lines = [line for line in text.splitlines() if not line.startswith("    ")]
    prose = _LINK_TARGET.sub(" ", _CODE_SPAN.sub(" ", "\n".join(lines)))
    for pattern in (_CALL, _BRACKETS, _BRACES):
        while (shorter := pattern.sub(" ", prose)) != prose:
            prose = shorter
    return _COMPARED.sub(" ", prose)


def decimal_points(text: str) -> list[str]:
    """The numbers of ``text``'s prose written with a decimal point (versions excepted)."""
    prose = _prose(text)
    return [m.group(0) for m in DECIMAL_POINT.finditer(prose)
            if not _VERSION_BEFORE.search(prose[:m.start()])]


# A count grouped the English way (1,036,489) in what a Spanish lesson prints: a Spanish reader
# takes that comma for a decimal comma. (A leading 0 is a decimal: 0,014.)
_ENGLISH_GROUPED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")


def english_grouped_counts(printed: str) -> list[str]:
    """The counts of ``printed`` (a Spanish lesson's output) grouped with commas: ``544,256``."""
    return _ENGLISH_GROUPED.findall(printed)


def style_problems(texts: Iterable[tuple[str, str]]) -> list[str]:
    """One line per break of the typography above: where, what was written, what to write."""
    problems = []
    for where, text in texts:
        if any(key in where for key in _CODE_KEYS):
            continue
        for number in decimal_points(text):
            problems.append(f"{where}: Spanish text writes {number!r} with a decimal point; "
                            f"Spanish uses a decimal comma ({number.replace('.', ',')!r}; in "
                            "maths 0{,}5), or mark it as code with backticks")
        prose = _prose(text)
        for found in _PERCENT.finditer(prose):
            problems.append(f"{where}: Spanish text writes {found.group(0)!r} without a space; "
                            f"write {found.group(0)[:-1] + ' %'!r}")
        for line in prose.splitlines():
            if _SYNTAX_LINE.match(line.lstrip()):
                continue
            for found in _STRAIGHT_QUOTES.finditer(line):
                problems.append(f"{where}: Spanish text quotes {found.group(0)!r} with straight "
                                f"quotes; write «{found.group(1)}» (or backticks for code)")
        for found in _AMPERSAND_AUTHORS.finditer(prose):
            problems.append(f"{where}: Spanish text writes {found.group(0)!r}; Spanish joins "
                            f"two authors with 'y': {found.group(0).replace(' & ', ' y ')!r}")
    return problems
