"""Bilingual text: every learner-facing string in the lab exists in English and Spanish."""

from __future__ import annotations

LANGS = ("en", "es")
DEFAULT_LANG = "en"


def check_lang(lang: str) -> str:
    """Return ``lang`` if supported, else raise a ValueError that lists the choices."""
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; choose one of {', '.join(LANGS)}")
    return lang


def pick(text: dict | str, lang: str) -> str:
    """Pick the ``lang`` version of a ``{"en": ..., "es": ...}`` mapping (plain strings pass)."""
    if isinstance(text, str):
        return text
    check_lang(lang)
    if lang in text and text[lang]:
        return text[lang]
    return text[DEFAULT_LANG]
