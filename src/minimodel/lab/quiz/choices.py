"""Reading one choice number as people type it at the prompt: ``2``, ``2.``, ``(2)``, ``two``,
``dos``.

Only for the number of a choice (single, multiple choice, put in order), typed interactively:
a numeric answer is read by :mod:`minimodel.lab.quiz.numbers`, whose rules are stricter for a
reason (``4 (rows)`` is a unit there, ``four`` is not a number to grade). A choice number is
small and whole, so a word for it is unambiguous; anything else (``1.5``, ``(1``, ``2.)``,
``eleven``) is still refused and asked again.
"""

from __future__ import annotations

import re

# The words for the choice numbers 1-10, English and Spanish (a quiz has at most a handful of
# choices; ten covers every one with room to spare).
NUMBER_WORDS = {
    **{word: n for n, word in enumerate(
        "one two three four five six seven eight nine ten".split(), start=1)},
    **{word: n for n, word in enumerate(
        "uno dos tres cuatro cinco seis siete ocho nueve diez".split(), start=1)},
    "una": 1,   # "la una": the choice is "una opción"
}

# "(2)" or "2." around the number (or word) itself
_WRAPPED = re.compile(r"\((?P<in_parens>[^().]+)\)|(?P<before_dot>[^().]+)\.")


def choice_number(token: str) -> int:
    """The number a learner typed for one choice, as shown on screen (from 1): ``"3"``,
    ``"3."``, ``"(3)"``, ``"three"``, ``"Tres"`` -> 3. ValueError for anything else.

    A bare token is read by ``int`` as before; inside parentheses or before a dot only digits
    or a number word are read (``"(+3)"`` is refused: nobody writes a choice that way).
    """
    wrapped = _WRAPPED.fullmatch(token)
    inner = (wrapped["in_parens"] or wrapped["before_dot"]) if wrapped else token
    word = inner.lower()
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    if wrapped and not (inner.isascii() and inner.isdigit()):
        raise ValueError(token)
    return int(inner)   # ValueError on junk
