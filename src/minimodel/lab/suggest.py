"""The commands the lab prints for the learner to type next, built in one place.

A printed command is pasted as it is, so it must reach the same learner folder and speak the
same language as the command that printed it: ``minimodel quiz take why-tie`` printed by a run
with ``--learner-dir /tmp/me`` would record the take in ``~/.minimodel`` instead. Every
suggested command is therefore built by :class:`Suggest`, which adds

* ``--learner-dir DIR`` when the folder in use is not the one the command finds by itself
  (``$MINIMODEL_LEARNER_DIR``, else ``~/.minimodel``) and the command takes the flag;
* ``--lang es`` when the learner reads Spanish and the command takes ``--lang``;

and quotes each word for a POSIX shell (:func:`shlex.join`), so a folder with a space in its
name pastes as one argument::

    Suggest("es", "/tmp/my dir")("quiz", "take", "why-tie")
    -> "minimodel quiz take why-tie --learner-dir '/tmp/my dir' --lang es"

Which commands take which flag is listed here (the lab may not import the command line);
``tests/lab/test_suggest.py`` checks the lists against the real parsers.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab.progress import default_learner_dir
from minimodel.messages import DEFAULT_LANG

# "group subcommand" (or a lone command) -> takes --learner-dir / --lang.
LEARNER_DIR_COMMANDS = frozenset({
    "exercise list", "exercise start", "exercise hint", "exercise check", "exercise solution",
    "quiz take", "quiz review",
    "break list", "break start", "break run", "break hint", "break check", "break diff",
    "break reset",
    "lab next", "lab done", "lab status",
    "tutor",
})
LANG_COMMANDS = LEARNER_DIR_COMMANDS | {
    "doctor", "explore", "exercise show", "quiz list", "quiz export", "quiz render",
    "lab rehash", "lab notebook", "lab new", "lab sync", "lab check-lessons", "train",
}


def _same_folder(a: Path, b: Path) -> bool:
    return os.path.abspath(a.expanduser()) == os.path.abspath(b.expanduser())


@dataclass(frozen=True)
class Suggest:
    """Builds ``minimodel ...`` command lines for a learner reading ``lang`` whose work is in
    ``learner_dir`` (None: the default folder)."""

    lang: str = DEFAULT_LANG
    learner_dir: str | os.PathLike | None = None

    def __call__(self, *words: object) -> str:
        """``("break", "check", "--workdir", root)`` -> the full command, flags added."""
        words_ = [str(word) for word in words]
        name = " ".join(words_[:2]) if " ".join(words_[:2]) in LANG_COMMANDS else words_[0]
        extra = []
        if name in LEARNER_DIR_COMMANDS and self.learner_dir is not None and \
                not _same_folder(Path(self.learner_dir), default_learner_dir()):
            extra += ["--learner-dir", os.path.abspath(Path(self.learner_dir).expanduser())]
        if name in LANG_COMMANDS and self.lang != DEFAULT_LANG:
            extra += ["--lang", self.lang]
        return shlex.join(["minimodel", *words_, *extra])


def break_commands(suggest: Suggest, root: str | os.PathLike) -> dict[str, str]:
    """The commands of a break's workspace ``root`` the break messages name, by the field
    they fill: ``{run}``, ``{hint}``, ``{check}``, ``{diff}``, ``{reset}``."""
    return {verb: suggest("break", verb, "--workdir", os.path.abspath(root))
            for verb in ("run", "hint", "check", "diff", "reset")}
