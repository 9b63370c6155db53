"""Reading a typed short term: the term alone is graded, anything else around it is asked again.

A short answer is **right** when it is one accepted form (in either language) and nothing
else, compared after :func:`.text.canonical_phrase`: case, accents, hyphens (``Effective-Rank``;
a hyphen may also join, ``e-rank`` is ``erank``), a leading article (``the``, ``el``; in an
English answer ``un`` is a prefix, not an article) and one final full stop are ignored.

It is **wrong** when it is made of words only (letters, digits, spaces, hyphens) and no
accepted form is among them: ``rank``, ``stable rank``, ``rango``.

Anything else is **asked again**, never graded, as the numeric reader does with a note it cannot
read (:mod:`.numbers`):

* the term with other words (``not the effective rank``, ``effective rank of E``,
  ``un-effective rank``), naming those words;
* any symbol or punctuation but the final full stop (``effective rank (stable rank)``,
  ``effective rank ✗``, ``≠ effective rank``, ``!effective rank``, ``effective rank?``,
  ``rank?``, ``rango efectivo / effective rank``): a bracket, a mark or a question mark may
  say "not" or "maybe", and the grader does not guess which;
* a combining mark that is not an accent (a strike-through ``U+0336`` or a slash ``U+0338``
  over a letter): it changes what was typed.
"""

from __future__ import annotations

import re

from minimodel.lab.quiz.numbers import Unreadable
from minimodel.lab.quiz.text import ARTICLES, normalise, stray_marks
from minimodel.messages import say

# What a term is written with: letters, digits, "_" (\w), spaces and hyphens of any kind.
_TERM_TEXT = re.compile(r"[\w\s\-\u2010\u2011]*")


def _words(text: str, lang: str) -> list[str]:
    """The words of an answer made of term characters, without a leading article (``un`` only
    in Spanish: in English it is the negating prefix of ``un effective rank``)."""
    words = re.sub(r"[\W_]+", " ", text).split()
    alone = text.split()[:1] == words[:1]  # "un-rango": a prefix joined by a hyphen
    if len(words) > 1 and alone and words[0] in ARTICLES and (words[0] != "un" or lang == "es"):
        words = words[1:]
    return words


def _variants(phrase: str) -> set[str]:
    """The phrase, and with hyphens (now spaces) joining its one-letter prefixes: ``e rank`` ->
    ``erank``."""
    return {phrase, re.sub(r"\b(\w) (?=\w)", r"\1", phrase)}


# With at most this many words beside the term, the question is asked again naming the term
# and the words ("not the effective rank"); with more, it is asked again without naming the
# term: a whole glossary pasted as one answer would otherwise be told, unrecorded, which of its
# terms is the accepted one.
MAX_OTHER_WORDS = 6


def read_short(raw: str, forms: dict[str, list[str]], lang: str) -> bool:
    """Right or wrong under the rules above; Unreadable when the answer is not the term alone
    nor words without it."""
    marks = stray_marks(raw)
    if marks:
        raise Unreadable(say("quiz.reask.marks", lang, answer=raw,
                             marks=" ".join(f"U+{ord(m):04X}" for m in dict.fromkeys(marks))))
    text = normalise(raw).strip()
    text = text[:-1] if text.endswith(".") else text
    if text in {normalise(f) for lang_forms in forms.values() for f in lang_forms}:
        return True  # typed as written, an accepted form that holds a symbol included
    if not _TERM_TEXT.fullmatch(text):
        symbols = "".join(dict.fromkeys(ch for ch in text if not _TERM_TEXT.fullmatch(ch)))
        raise Unreadable(say("quiz.reask.term_symbols", lang, symbols=symbols[:12]))
    accepted = {" ".join(_words(normalise(f), lang)) for lang_forms in forms.values()
                for f in lang_forms}
    words = _words(text, lang)
    if _variants(" ".join(words)) & accepted:
        return True
    padded = " " + " ".join(re.sub(r"[\W_]+", " ", text).split()) + " "
    for form in sorted(accepted, key=len, reverse=True):
        if f" {form} " in padded:
            rest = " ".join(padded.replace(f" {form} ", " ", 1).split())
            if len(rest.split()) > MAX_OTHER_WORDS:
                raise Unreadable(say("quiz.reask.term_among_words", lang, count=len(rest.split())))
            raise Unreadable(say("quiz.reask.term_and_words", lang, answer=raw, term=form,
                                 words=rest))
    return False
