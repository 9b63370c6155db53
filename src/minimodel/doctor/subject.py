"""The model under examination: its files, the roles of its tensors, its tokenizer, and E and W
read once (as float32) for all the checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minimodel.doctor.architecture import Architecture
from minimodel.doctor.background import Question
from minimodel.doctor.names import (
    Roles,
    TieClaim,
    architecture_claim,
    find_roles,
    roles_from_architecture,
    tie_claims,
)
from minimodel.doctor.tensors import ModelFiles, open_model
from minimodel.doctor.vocabulary import Vocabulary, find_tokenizer, read_vocabulary
from minimodel.runtime import blas_libraries


@dataclass
class Subject:
    files: ModelFiles
    roles: Roles
    claims: list[TieClaim]
    E: np.ndarray                  # (V, d) the embedding
    W: np.ndarray | None           # (V', d) the stored head, None when absent
    vocab: Vocabulary | None
    vocab_note: str | None         # why there is no vocabulary, when there is none
    arch: Architecture | None = None  # what the installed transformers says (None: the table)
    vocab_error: str | None = None  # the tokenizer beside the model could not be read: why
    # a stored table the built-in table calls the embedding but transformers does not load
    # (its stored name, the name transformers turns it into, the model's embedding, the class)
    unread: dict[str, str] | None = None
    arch_failure: dict[str, Any] | None = None  # why transformers' child gave no answer

    @property
    def tied_claim(self) -> bool | None:
        """What the first written flag (else the loader's default) says, None if nothing."""
        return self.claims[0].tied if self.claims else None


def examine(path: str | Path, tokenizer: str | Path | None = None, overlap: bool = True,
            while_waiting: Callable[[Subject], object] | None = None) -> Subject:
    """Open the model at ``path`` and its tokenizer (``tokenizer`` or the one beside it).

    When transformers must be asked (a config the cache does not know), it is asked in a child
    process started as soon as the config is read (``overlap``; else in this process, serially).
    Meanwhile the tokenizer is read, and E and W as the built-in table guesses them; the
    guessed subject is given to ``while_waiting`` (the report rehearses its expensive checks on
    it, see :mod:`.memo`). Each list of tensor names is read once, so when transformers names
    the same tensors the final subject holds the very same arrays."""
    question = Question(overlap)
    try:
        files = open_model(path, on_config=question.start)
        if files.kind == "safetensors":  # a bare file: its config is read after its header
            question.start(files.config, None)
        vocab, note, error = _vocabulary(files, tokenizer)
        tables: dict[tuple[str, ...], np.ndarray] = {}  # tensor names -> the matrix, read once
        if question.waiting and while_waiting is not None:
            guess = _guessed_subject(files, vocab, note, error, tables)
            if guess is not None:
                # One BLAS thread while the child imports: OpenBLAS's second thread would
                # spin between products on the core the child needs (BENCHMARKS.md)
                with blas_libraries().limit(limits=1):
                    while_waiting(guess)
        arch = question.answer(list(files.tensors))  # None: no config asked about, or no answer
    finally:
        question.stop()  # Ctrl-C or an error: no child outlives the examination
    source = "minimodel config" if files.kind == "minimodel" else "config.json"
    roles = roles_from_architecture(files.tensors, arch) if arch is not None else None
    unread = _unread_embedding(files, arch) if arch is not None else None
    if roles is None:  # no transformers, or a file transformers would not load as this class
        arch = None
        roles = find_roles(files.tensors, files.config)
    claims = tie_claims(files.config, source)
    if arch is not None and not roles.headless:
        # transformers' own reading first; the written flags stay, to spot disagreements
        first = architecture_claim(arch, source)
        read = f"{source}: {arch.tie_flag}"  # the flag transformers reads is in ``first``
        claims = [first] + [c for c in claims if not c.default and c.where != read]
    E = _read_rows(files, roles.embedding_parts or [roles.embedding], tables)
    W = _read_rows(files, roles.head_parts or [roles.head], tables) if roles.head else None
    return Subject(files, roles, claims, E, W, vocab, note, arch, error, unread,
                   question.failure)


def _vocabulary(files: ModelFiles, tokenizer: str | Path | None
                ) -> tuple[Vocabulary | None, str | None, str | None]:
    """(the vocabulary, why there is none, why the one beside the model could not be read)."""
    if tokenizer is not None:
        return read_vocabulary(tokenizer), None, None
    found, note = find_tokenizer(files.folder)
    if found is None:  # the note goes into the findings' values as text (kept in --json)
        return None, None if note is None else str(note), None
    try:
        return read_vocabulary(found), note, None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # a broken tokenizer beside a healthy model is a finding, not an abort
        return None, note, str(exc) if isinstance(exc, ValueError) else \
            f"{found} is not a tokenizer file the doctor can read ({exc!r})"


def _guessed_subject(files: ModelFiles, vocab: Vocabulary | None, note: str | None,
                     error: str | None, tables: dict) -> Subject | None:
    """The subject as the built-in table sees it; None when it cannot be built (no 2-D tensor,
    a tensor that cannot be read): the real examination, on transformers' roles, reports what
    is wrong with the tensors it reads, and only those."""
    try:
        roles = find_roles(files.tensors, files.config)
        E = _read_rows(files, roles.embedding_parts or [roles.embedding], tables)
        W = _read_rows(files, roles.head_parts or [roles.head], tables) if roles.head else None
    except Exception:  # noqa: BLE001 - a guess that fails is no error of the model's
        return None
    return Subject(files, roles, tie_claims(files.config, "config.json"), E, W, vocab, note,
                   vocab_error=error)


def _unread_embedding(files: ModelFiles, arch: Architecture) -> dict[str, str] | None:
    """The stored embedding (as the built-in table finds it) when transformers would not load
    it: its key renames to no tensor of the model (an unexpected key at from_pretrained)."""
    try:
        stored = find_roles(files.tensors, files.config).embedding
    except ValueError:  # no 2-D tensor at all: the checks report that themselves
        return None
    if arch.reads(stored) or not arch.embedding:
        return None
    return {"stored": stored, "renamed": arch.rename(stored), "expected": arch.embedding,
            "model": arch.class_name, "version": arch.version}


def _read_rows(files: ModelFiles, names: list[str], read: dict) -> np.ndarray:
    """A matrix stored as one table, or as several stacked along the rows (V_1 + V_2 + ..., d);
    kept in ``read`` by its names, so asking again gives the same array."""
    if tuple(names) not in read:
        tables = [_as_float(files.read(name)) for name in names]
        read[tuple(names)] = tables[0] if len(tables) == 1 else np.concatenate(tables, axis=0)
    return read[tuple(names)]


def _as_float(a: Any) -> np.ndarray:
    """float32 (float64 stays float64): the checks compare and multiply in floating point."""
    a = np.asarray(a)
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)
