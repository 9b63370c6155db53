"""Reading a typed short term: the accepted term, and which words around it are allowed.

Compared after :func:`.text.canonical_phrase` (case, accents, punctuation, a leading article
ignored); a hyphen may also join (``e-rank`` is ``erank``). An answer is **right** when, after
dropping what only adds detail, it is one accepted form (in either language):

* a parenthetical without a negation: ``effective rank (Roy & Vetterli)``, ``erank(E)``;
* an explanation after ``i.e.``/``that is``/``namely``/``es decir``/``o sea`` without a negation:
  ``effective rank, i.e. exp of the spectral entropy``;
* an "of <the matrix>" tail naming only the matrix: ``of E``, ``of the embedding (matrix)``,
  ``de E``, ``de la matriz de embeddings``;
* a leading ``it is``/``called``/``es``/``se llama``;
* aliases separated by ``/``, ``,``, ``or``/``o``, each an accepted form:
  ``rango efectivo / effective rank``.

A negating prefix before the term (``un-effective rank``, ``non-effective rank``,
``effective rank (un)``, and in English a leading ``un effective rank``, where ``un`` is no
article) is a negation: the answer is asked again, never right.

It is **wrong** when no accepted form appears in it (``rank``, ``stable rank``, ``rango``). An
answer that contains an accepted form next to other words (``not the effective rank``,
``effective rank or stable rank``) is neither: it is asked again, naming those words.
"""

from __future__ import annotations

import re

from minimodel.lab.quiz.numbers import Unreadable
from minimodel.lab.quiz.text import canonical_phrase, normalise
from minimodel.messages import say

NEGATIONS = {"not", "no", "never", "nor", "isn", "isnt", "ni", "nunca"}
MATRIX_WORDS = {"the", "e", "w", "embedding", "embeddings", "matrix", "matriz", "token", "tokens",
                "el", "la", "de", "del", "its", "su", "this", "esta", "este", "input", "output",
                "entrada", "salida", "it"}
LEADING_FILLER = ("it is", "it s", "its", "this is", "called", "es", "se llama", "is called")
_PARENTHETICAL = re.compile(r"\(([^()]*)\)")
_EXPLANATION = re.compile(r"[,;:]?\s*\b(?:i\.?\s?e\.?|that is|namely|es decir|o sea)\b(.*)$")
_ALTERNATIVES = re.compile(r"[/,;]| or | o ")
PREFIXES = ("un", "non", "in")  # negating prefixes typed as a word of their own
_JOINED_PREFIX = re.compile(rf"\b(?:{'|'.join(PREFIXES)})\s*-")         # "un-effective"
_PREFIX_ALONE = re.compile(rf"\(\s*(?:{'|'.join(PREFIXES)})\s*-?\s*\)")  # "(un)"


def _has_negation(text: str) -> bool:
    return bool(NEGATIONS & set(canonical_phrase(text).split()))


def _negating_prefix(raw: str, lang: str) -> str | None:
    """The negating prefix typed beside the term, or None. ``un`` at the start is the Spanish
    article in a Spanish answer (``un rango efectivo``) and a prefix in an English one."""
    text = normalise(raw)
    found = _JOINED_PREFIX.search(text) or _PREFIX_ALONE.search(text)
    if found:
        return found.group(0)
    first = re.sub(r"[\W_]+", " ", text).split()[:1]
    if first and first[0] in PREFIXES and (first[0] != "un" or lang != "es"):
        return first[0]
    return None


def _drop_detail(text: str) -> str:
    """Remove parentheticals and explanations (without negations), then the matrix tail and
    the leading filler; the result is in canonical form."""
    text = normalise(text)
    text = _PARENTHETICAL.sub(lambda m: " " if not _has_negation(m.group(1)) else m.group(0), text)
    match = _EXPLANATION.search(text)
    if match and not _has_negation(match.group(1)):
        text = text[:match.start()]
    words = canonical_phrase(text).split()
    for i, word in enumerate(words):
        if word in ("of", "de", "del") and i > 0 and set(words[i + 1:]) <= MATRIX_WORDS:
            words = words[:i]
            break
    phrase = " ".join(words)
    for filler in LEADING_FILLER:
        if phrase.startswith(filler + " "):
            phrase = canonical_phrase(phrase[len(filler):])
    return phrase


def _variants(phrase: str) -> set[str]:
    """The phrase, and with hyphens (now spaces) joining its one-letter prefixes: ``e rank`` ->
    ``erank``."""
    return {phrase, re.sub(r"\b(\w) (?=\w)", r"\1", phrase)}


# With at most this many words beside the term, the question is asked again naming the term
# and the words ("effective rank, i.e. not the rank"); with more, it is asked again without
# naming the term: a whole glossary pasted as one answer would otherwise be told, unrecorded,
# which of its terms is the accepted one.
MAX_OTHER_WORDS = 6


def read_short(raw: str, forms: dict[str, list[str]], lang: str) -> bool:
    """Right or wrong under the rules above; Unreadable when the term is there with other words."""
    accepted = {canonical_phrase(f) for lang_forms in forms.values() for f in lang_forms}
    prefix = _negating_prefix(raw, lang)
    if prefix:
        words = f" {canonical_phrase(raw)} "
        for form in sorted(accepted, key=len, reverse=True):
            if f" {form} " in words:
                raise Unreadable(say("quiz.reask.term_and_words", lang, answer=raw, term=form,
                                     words=prefix))
        return False
    if _variants(_drop_detail(raw)) & accepted:
        return True
    parts = [_drop_detail(p) for p in _ALTERNATIVES.split(f" {normalise(raw)} ")]
    parts = [p for p in parts if p]
    if parts and all(_variants(p) & accepted for p in parts):
        return True
    words = f" {canonical_phrase(raw)} "
    for form in sorted(accepted, key=len, reverse=True):
        if f" {form} " in words:
            rest = " ".join(words.replace(f" {form} ", " ", 1).split())
            if len(rest.split()) > MAX_OTHER_WORDS:
                raise Unreadable(say("quiz.reask.term_among_words", lang, count=len(rest.split())))
            raise Unreadable(say("quiz.reask.term_and_words", lang, answer=raw, term=form,
                                 words=rest))
    return False
