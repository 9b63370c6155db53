"""The one message catalogue: every sentence a learner reads (lab, site, doctor, train).

The texts live in ``messages.yaml`` beside this module, grouped by area::

    quiz:
      score: {en: "Score: {score}/{total}", es: "Puntuación: {score}/{total}"}

and are read with ``say("quiz.score", "es", score=3, total=5)`` -> ``"Puntuación: 3/5"``.

Why here, at the bottom of the import layers: the lab, the site and the doctor all read it, and
the doctor may not import the lab. The catalogue is checked once when first read (both
languages, the same ``{fields}`` in each), and ``say`` fails loudly on an unknown key, an
unknown language or a field the template needs and the call does not give: a missing sentence
is a bug to see in the tests, never an English fallback a Spanish reader stumbles on. (Values
the template does not name are allowed: one set of values serves variants such as
``lab.step.lesson`` and ``lab.step.quiz``.)
"""

from __future__ import annotations

import numbers
import string
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

LANGS = ("en", "es")
DEFAULT_LANG = "en"
CATALOGUE_PATH = Path(__file__).with_name("messages.yaml")


def check_lang(lang: str) -> str:
    """Return ``lang`` if supported, else raise a ValueError that lists the choices."""
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; choose one of {', '.join(LANGS)}")
    return lang


def pick(text: dict | str, lang: str) -> str:
    """The ``lang`` version of a content text ``{"en": ..., "es": ...}`` (plain strings pass;
    a missing or empty translation falls back to English: content is checked by its own
    validator, interface messages by :func:`say`)."""
    if isinstance(text, str):
        return text
    check_lang(lang)
    return text.get(lang) or text[DEFAULT_LANG]


def fields(template: str) -> set[str]:
    """The ``{field}`` names of a format template: ``"{n:02d} of {total}"`` -> {n, total}."""
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(template) if name}


def check_catalogue(data: object) -> dict[str, dict[str, str]]:
    """``{area: {key: {lang: text}}}`` -> ``{"area.key": {lang: text}}``; ValueError naming
    every entry without a language, or whose languages ask for different fields."""
    flat: dict[str, dict[str, str]] = {}
    problems = []
    for area, entries in (data or {}).items():
        for key, texts in (entries or {}).items():
            name = f"{area}.{key}"
            flat[name] = texts
            missing = [lang for lang in LANGS if not isinstance(texts.get(lang), str)]
            if missing:
                problems.append(f"{name} has no {'/'.join(missing)} text")
            elif len({frozenset(fields(texts[lang])) for lang in LANGS}) > 1:
                problems.append(f"{name}: the languages use different fields "
                                + ", ".join(f"{lang} {sorted(fields(texts[lang]))}"
                                            for lang in LANGS))
    if problems:
        raise ValueError(f"{CATALOGUE_PATH.name}: " + "; ".join(problems))
    return flat


@cache
def catalogue() -> dict[str, dict[str, str]]:
    """Every message, by its full key (read and checked once)."""
    # libyaml's parser when PyYAML was built with it: the same data, read several times faster
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return check_catalogue(yaml.load(CATALOGUE_PATH.read_text(encoding="utf-8"), Loader=loader))


def template(key: str, lang: str) -> str:
    """The raw ``lang`` template of message ``key`` (KeyError naming the key when unknown)."""
    check_lang(lang)
    texts = catalogue().get(key)
    if texts is None:
        raise KeyError(f"no message {key!r} in {CATALOGUE_PATH.name}; add it (in every "
                       "language) or fix the key")
    return texts[lang]


# How each language separates groups of three digits (``format``'s ``,`` spec). Spanish writes
# a no-break space, as the RAE does and as the lessons' prose writes 124 439 808: a comma there
# would read as a decimal comma.
THOUSANDS_SEPARATOR = {"en": ",", "es": "\u00a0"}


def grouped(value: object, spec: str, lang: str) -> str:
    """``format(value, spec)`` with ``lang``'s thousands separator, the one place counts are
    grouped for a reader: ``grouped(1036489, ",", "es")`` -> ``"1 036 489"`` (a no-break
    space), ``"1,036,489"`` in English. A Spanish number of four digits is not grouped
    (``7664``, as the RAE writes it). Only the grouping changes: the decimal point of
    ``",.1f"`` stays a point (code output and terminal lines keep Python's decimals).
    """
    text = format(value, spec)
    separator = THOUSANDS_SEPARATOR[check_lang(lang)]
    if "," not in spec or separator == ",":
        return text
    whole = text.split(".")[0].lstrip("-+ ")
    if lang == "es" and len(whole.replace(",", "")) <= 4:
        return text.replace(",", "", 1)
    return text.replace(",", separator)


def decimal(value: float, spec: str, lang: str) -> str:
    """``value`` as a sentence in ``lang`` writes it: :func:`grouped`, and in Spanish a decimal
    comma (``decimal(5.82914, ".4f", "es")`` -> ``"5,8291"``; English keeps ``"5.8291"``)."""
    text = grouped(value, spec, lang)
    return text.replace(".", ",") if check_lang(lang) == "es" else text


@dataclass(frozen=True)
class Prose:
    """A number said in a message's sentence, not a code value: ``say`` writes it with
    :func:`decimal` (``phrase("train.erank", erank=Prose(55.93))`` -> ``55,9`` in Spanish).
    Plain numbers keep Python's decimal point (flags, tolerances, terminal tables). A tuple
    is a list of numbers: ``0.1, 0`` in English, ``0,1; 0`` in Spanish (a comma there would
    read as a decimal one), ``-`` when empty."""

    value: float | tuple[float, ...]


class _Formatter(string.Formatter):
    """``str.format`` whose thousands groups (``{n:,}``) are the reader's language's, and whose
    :class:`Prose` numbers are written with the reader's decimal mark."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, Prose) and isinstance(value.value, tuple):
            joint = "; " if self.lang == "es" else ", "
            return joint.join(decimal(v, format_spec, self.lang) for v in value.value) or "-"
        if isinstance(value, Prose):
            return decimal(value.value, format_spec, self.lang)
        if "," in format_spec and isinstance(value, numbers.Number):
            return grouped(value, format_spec, self.lang)
        return super().format_field(value, format_spec)


def say(key: str, lang: str, **values: object) -> str:
    """Message ``key`` in ``lang`` with its ``{fields}`` filled in from ``values``.

    Raises:
        KeyError: ``key`` is not in the catalogue.
        ValueError: ``lang`` is not one of LANGS, or a field of the template is not in
            ``values``.
    """
    text = template(key, lang)
    missing = fields(text) - set(values)
    if missing:
        raise ValueError(f"message {key!r} needs the field(s) {', '.join(sorted(missing))}; "
                         f"got {', '.join(sorted(values)) or 'none'}")
    return _Formatter(lang).format(text, **values)


@dataclass(frozen=True)
class Phrase:
    """A message not said yet: its key and values, said later in the reader's language.

    Code far from the command line (the training loop, a run folder's checks) does not know
    the reader's language; it hands a Phrase to whoever prints (a reporter, the CLI's error
    line), which says it with :meth:`in_lang`. A value that is itself a Phrase is said in the
    same language: ``phrase("a", why=phrase("b"))`` (an error that says itself, too; a list
    of them is joined by "; "). ``str()`` is the English text.
    """

    key: str
    values: dict[str, Any] = field(default_factory=dict)

    def in_lang(self, lang: str) -> str:
        return say(self.key, lang, **{name: _said(value, lang)
                                      for name, value in self.values.items()})

    def __str__(self) -> str:
        return self.in_lang(DEFAULT_LANG)


def _said(value: object, lang: str) -> object:
    """A Phrase value as it is printed: a nested Phrase (or an error holding one) said in
    ``lang``; a list said item by item, joined by "; "; a number kept a number, for the
    template's format (``{loss:.4f}``)."""
    if isinstance(value, list):
        return "; ".join(str(_said(item, lang)) for item in value)
    said = getattr(value, "in_lang", None)
    return said(lang) if callable(said) else value


def phrase(key: str, **values: object) -> Phrase:
    """``phrase("train.saved_in", out=...)``: message ``key`` to be said later (see Phrase)."""
    return Phrase(key, values)


def in_lang(text: object, lang: str) -> str:
    """``text`` for a reader of ``lang``: a Phrase (or an error holding one) said in ``lang``,
    anything else as ``str()``."""
    said = getattr(text, "in_lang", None)
    return said(lang) if callable(said) else str(text)


class SaysItself(Exception):
    """An error whose message is a Phrase: English as a plain exception (``str``), in the
    reader's language where the CLI prints it (``in_lang``, see ``commands/_exit.py``)."""

    def __init__(self, message: Phrase) -> None:
        self.phrase = message
        super().__init__(message.in_lang(DEFAULT_LANG))

    def in_lang(self, lang: str) -> str:
        return self.phrase.in_lang(lang)


class PhraseError(SaysItself, ValueError):
    """A user error (a bad value, a folder in the wrong state) said in the reader's language."""


class MissingFileError(SaysItself, FileNotFoundError):
    """A file a command needs is not there, said in the reader's language."""
