"""Starter files for ``minimodel exercise start``: signature, docstring, NotImplementedError."""

from __future__ import annotations

import textwrap
from pathlib import Path

from minimodel._fileio import atomic_write_text
from minimodel.lab.exercises.registry import Exercise
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

def default_stub_path(ex: Exercise) -> Path:
    """``./embedding_lookup.py`` for ``embedding-lookup``."""
    return Path(ex.id.replace("-", "_") + ".py")


def stub_text(ex: Exercise, lang: str = "en", file: str | None = None,
              learner_dir: str | Path | None = None) -> str:
    """The starter file: module docstring (with the command that checks it, for the learner
    folder ``learner_dir``), imports, the signature and a documented stub body."""
    file = file or str(default_stub_path(ex))
    frameworks = say("exercise.stub.numpy" if "torch" in ex.forbidden else "exercise.stub.both",
                     lang)
    check = Suggest(lang, learner_dir)("exercise", "check", ex.id, "--file", file)
    header = say("exercise.stub.header", lang, id=ex.id, title=ex.text("title", lang),
                 command=check, frameworks=frameworks)
    doc = textwrap.indent(ex.text("stub_doc", lang).strip(), "    ")
    todo = say("exercise.stub.todo", lang)
    return (f'"""{header}\n"""\n\nimport numpy as np\n\n\n'
            f'def {ex.signature()}:\n    """\n{doc}\n    """\n'
            f'    raise NotImplementedError("{todo}")\n')


def write_stub(ex: Exercise, path: str | Path | None = None, lang: str = "en",
               force: bool = False, learner_dir: str | Path | None = None) -> Path:
    """Write the starter file atomically; FileExistsError if it exists and not ``force``."""
    path = Path(path) if path is not None else default_stub_path(ex)
    if path.is_dir():  # --force must never mean "replace a folder"
        raise IsADirectoryError(say("exercise.stub_is_folder", lang, path=path,
                                     example=path / default_stub_path(ex).name))
    if path.exists() and not force:
        raise FileExistsError(say("exercise.stub_exists", lang, path=path))
    atomic_write_text(path, stub_text(ex, lang, str(path), learner_dir))
    return path
