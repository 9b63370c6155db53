"""The lab's bilingual helpers over the one message catalogue (:mod:`minimodel.messages`).

``LANGS``, ``check_lang``, ``pick`` and ``say`` are re-exported so the lab keeps one import;
the helpers below put into words values the lab stores in English (progress statuses, the
judge's case statuses and labels, its isolation reason): the JSON output keeps the English,
the text output shows them in ``--lang``.
"""

from __future__ import annotations

import re

from minimodel.messages import DEFAULT_LANG, LANGS, catalogue, check_lang, pick, say

__all__ = ["DEFAULT_LANG", "LANGS", "case_label", "case_name",
           "case_status_label", "check_lang", "isolation_reason_label", "pick", "say",
           "status_label"]


def _known(area: str, value: str, lang: str) -> str:
    """``value`` in ``lang`` when ``area.value`` is in the catalogue, else as it is."""
    key = f"{area}.{value}"
    return say(key, lang) if key in catalogue() else value


def status_label(status: str, lang: str) -> str:
    """A progress status ("in-progress", "new"...) in ``lang``; unknown ones pass through."""
    return _known("status", status, lang)


def case_status_label(status: str, lang: str) -> str:
    """A judge case status ("wrong", "not run"...) in ``lang``; unknown ones pass through."""
    return _known("case_status", status, lang)


def case_label(label: str, lang: str) -> str:
    """A generated case label ("float32, mask at 0.5") in ``lang``, part by part: the
    catalogue's, or the label an exercise declares for its own kind (``cases.labels``)."""
    from minimodel.lab.exercises.declared import LABELS

    return ", ".join(LABELS[part].get(lang, part) if part in LABELS
                     else _known("case_label", part, lang) for part in label.split(", "))


def case_name(name: str, lang: str) -> str:
    """``visible 2`` / ``hidden 3`` in ``lang`` ("visible case 2": not the statement's
    example)."""
    kind, _, number = name.partition(" ")
    if kind in ("visible", "hidden"):
        return f"{say(f'exercise.{kind}', lang)} {number}"
    return name


def _template_pattern(template: str) -> "re.Pattern[str]":
    parts = re.split(r"\{(\w+)\}", template)  # text, name, text, name, ..., text
    return re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)"
                              for i, part in enumerate(parts)) + r"\Z", re.DOTALL)


def isolation_reason_label(reason: str, lang: str) -> str:
    """The judge's English isolation reason in ``lang``: read back into the ``isolation.*``
    templates (a reason that fits none, and each filled-in value that does not, stay as they
    are)."""
    if lang == DEFAULT_LANG:
        return reason
    for key, texts in catalogue().items():
        found = key.startswith("isolation.") and _template_pattern(texts["en"]).match(reason)
        if found:
            values = {name: isolation_reason_label(value, lang)
                      for name, value in found.groupdict().items()}
            return say(key, lang, **values)
    return reason
