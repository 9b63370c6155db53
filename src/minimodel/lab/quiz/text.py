"""How typed answers are compared: the normal form of a short answer.

Kept apart from grading so the schema checks (which refuse accepted forms that normalise to
nothing) and the grader use one definition.
"""

from __future__ import annotations

import re
import unicodedata

_ARTICLES = {"the", "a", "an", "el", "la", "los", "las", "un", "una", "unos", "unas", "lo"}


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
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)
