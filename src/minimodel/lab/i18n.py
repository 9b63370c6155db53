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


# Progress statuses as stored in the learner folder (and in --json output, which keeps these
# English values) -> what a person reads in a table. "new" (exercises) and "not started"
# (breaks, quizzes) mean the same thing and read the same.
STATUS_LABELS: dict[str, dict[str, str]] = {
    "not started": {"en": "not started", "es": "sin empezar"},
    "new": {"en": "not started", "es": "sin empezar"},
    "started": {"en": "started", "es": "empezado"},
    "in-progress": {"en": "in progress", "es": "en curso"},
    "observed": {"en": "symptom seen", "es": "síntoma visto"},
    "attempted": {"en": "attempted", "es": "intentado"},
    "fixed": {"en": "fixed", "es": "arreglado"},
    "passed": {"en": "passed", "es": "superado"},
    "wrong": {"en": "wrong", "es": "incorrecto"},
}


def status_label(status: str, lang: str) -> str:
    """The ``lang`` label of a progress status; unknown statuses are shown as they are."""
    return pick(STATUS_LABELS[status], lang) if status in STATUS_LABELS else status
