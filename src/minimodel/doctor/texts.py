"""The doctor's sentences: (found, why it matters, the fix) per finding, in English and Spanish.

The texts are ``doctor.<finding>.found|why|fix`` of the message catalogue
(:mod:`minimodel.messages`); ``{name}`` placeholders are filled from :attr:`Finding.values`.
"""

from __future__ import annotations

from typing import Any

from minimodel.messages import LANGS, in_lang, say

__all__ = ["LANGS", "Phrase", "words"]


class Phrase(str):
    """A value that is a phrase of the catalogue (``doctor.phrase.<value>``), said in the
    report's language when the text is filled in; the empty phrase stays empty."""


def words(key: str, values: dict[str, Any], lang: str) -> tuple[str, str, str]:
    """(found, why, fix) of finding ``key`` in ``lang`` with ``values`` filled in (a value that
    is a sentence of the catalogue, a :class:`minimodel.messages.Phrase`, said in ``lang``)."""
    filled = {name: (say(f"doctor.phrase.{value}", lang) if value else "")
              if isinstance(value, Phrase) else in_lang(value, lang) if hasattr(value, "in_lang")
              else value for name, value in values.items()}
    found, why, fix = (say(f"doctor.{key}.{part}", lang, **filled)
                       for part in ("found", "why", "fix"))
    return found, why, fix
