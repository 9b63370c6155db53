"""Who the tutor is helping: the learner folder (as ``--learner-dir`` / ``$MINIMODEL_LEARNER_DIR``
/ ``~/.minimodel``) and the language the lab speaks to them."""

from __future__ import annotations

from dataclasses import dataclass

from minimodel.lab.i18n import DEFAULT_LANG, check_lang
from minimodel.lab.progress import Progress


@dataclass(frozen=True)
class Learner:
    """The learner folder (None: the lab's default) and the server's language."""

    learner_dir: str | None = None
    lang: str = DEFAULT_LANG

    def progress(self) -> Progress:
        return Progress(self.learner_dir)

    def pick_lang(self, lang: str | None, fallback: str | None = None) -> str:
        """``lang`` when given (checked), else ``fallback`` (a workspace's), else the server's."""
        return check_lang(lang or fallback or self.lang)
