"""The quiz's messages are ``quiz.*`` of the one catalogue (:mod:`minimodel.messages`);
``t("score", ...)`` is ``say("quiz.score", ...)`` for the modules that still use it."""

from __future__ import annotations

from minimodel.messages import say


def t(key: str, lang: str, **values: object) -> str:
    """Quiz message ``key`` (without the ``quiz.`` prefix) in ``lang``."""
    return say(f"quiz.{key}", lang, **values)
