"""How typed answers are compared: the normal form of a short answer.

Kept apart from grading so the schema checks (which refuse accepted forms that normalise to
nothing) and the grader use one definition.
"""

from __future__ import annotations

import re
import unicodedata

ARTICLES = {"the", "a", "an", "el", "la", "los", "las", "un", "una", "unos", "unas", "lo"}


# The combining marks that are accents of a letter (ignored, as the accents of "rángo"): acute,
# grave, circumflex, tilde, diaeresis, ring, caron, cedilla. Any other combining mark over a
# letter or a digit (a strike-through U+0336, a slash U+0338, an underline U+0332) changes
# what was typed, so an answer holding one is asked again (:func:`stray_marks`).
ACCENTS = {"\u0300", "\u0301", "\u0302", "\u0303", "\u0308", "\u030a", "\u030c", "\u0327"}


def stray_marks(text: str) -> str:
    """The combining marks of ``text`` that are not accents (``"4\u0336"`` -> ``"\u0336"``)."""
    return "".join(ch for ch in unicodedata.normalize("NFD", text)
                   if unicodedata.combining(ch) and ch not in ACCENTS)


def normalise(text: str) -> str:
    """Casefold, strip accents (NFKD + drop combining marks) and collapse whitespace."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())


def canonical_phrase(text: str) -> str:
    """The form short answers are compared in: ``"The Effective-Rank."`` -> ``"effective rank"``.

    Accents, case, punctuation, hyphens and underscores are ignored and a leading article
    (English or Spanish) is dropped; the words and their order must match exactly.
    """
    words = re.sub(r"[\W_]+", " ", normalise(text)).split()
    if len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    return " ".join(words)
