"""Word vectors in the word2vec formats (Mikolov et al. 2013), text and binary.

These are the files gensim's ``KeyedVectors.load_word2vec_format`` reads (and the original C
tool, fastText, spaCy's ``init vectors``...), so CBOW vectors trained here can be explored with
the tools of the word-vector ecosystem::

    from gensim.models import KeyedVectors
    kv = KeyedVectors.load_word2vec_format("vectors.txt")              # text
    kv = KeyedVectors.load_word2vec_format("vectors.bin", binary=True)  # binary
    kv.most_similar("king")

Format. The first line is ``"<number of words> <dimension>\\n"``. Then, per word:

* text: the word, a space, the ``d`` values written as decimal numbers separated by spaces,
  a newline;
* binary: the word in UTF-8, a space, the ``d`` values as little-endian float32 (4·d bytes),
  a newline (as the C tool writes it; readers skip it).

A word is delimited by the space after it, so a word may contain neither whitespace nor be
empty; such a word is refused rather than written into a file that would shift every later row.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from minimodel._fileio import atomic_write_bytes, require_file

FORMATS = ("word2vec", "word2vec-bin")


def _check(vectors: Any, words: Sequence[str]) -> np.ndarray:
    matrix = np.asarray(getattr(vectors, "data", vectors))
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(f"word vectors must be a non-empty 2-D (V, d) matrix, got shape "
                         f"{matrix.shape}")
    if len(words) != matrix.shape[0]:
        raise ValueError(f"{len(words)} words for {matrix.shape[0]} vectors; give one word per "
                         "row of the matrix")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("the vectors contain NaN or Inf; word2vec readers cannot use them")
    for i, word in enumerate(words):
        if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
            raise ValueError(f"word {i} ({word!r}) is empty or contains whitespace; the "
                             "word2vec formats end a word at the first space")
    if len(set(words)) != len(words):
        raise ValueError("the words must be unique (a word2vec file maps each word to one "
                         "vector)")
    return matrix


def word2vec_bytes(vectors: Any, words: Sequence[str], binary: bool = False) -> bytes:
    """The content of a word2vec file (text or binary) for ``vectors`` (V, d) and ``words``."""
    matrix = _check(vectors, words)
    out = io.BytesIO()
    out.write(f"{matrix.shape[0]} {matrix.shape[1]}\n".encode("utf-8"))
    if binary:
        rows = matrix.astype("<f4")
        for word, row in zip(words, rows):
            out.write(word.encode("utf-8") + b" " + row.tobytes() + b"\n")
    else:
        for word, row in zip(words, matrix.astype(np.float64)):
            # repr-exact float32 values: 9 significant digits round-trip a float32
            out.write((word + " " + " ".join(f"{v:.9g}" for v in row) + "\n").encode("utf-8"))
    return out.getvalue()


def export_word2vec(vectors: Any, words: Sequence[str], path: str | os.PathLike,
                    binary: bool = False) -> Path:
    """Write a word2vec file atomically; returns its path."""
    return atomic_write_bytes(path, word2vec_bytes(vectors, words, binary))


def load_word2vec(path: str | os.PathLike, binary: bool | None = None
                  ) -> tuple[list[str], np.ndarray]:
    """Read a word2vec file (text or binary; ``None`` guesses from the content).

    Returns:
        ``(words, vectors)`` with vectors float32 (V, d).

    Raises:
        ValueError: naming the file and the row, when the content does not follow the format.
    """
    path = require_file(path, "word2vec file")
    data = path.read_bytes()
    head, sep, body = data.partition(b"\n")
    try:
        n, d = (int(x) for x in head.split())
    except ValueError:
        raise ValueError(f"{path}: the first line must be '<words> <dimension>', got "
                         f"{head[:60]!r}") from None
    if binary is None:
        try:
            body.decode("utf-8")
            binary = False
        except UnicodeDecodeError:
            binary = True
    words: list[str] = []
    matrix = np.empty((n, d), dtype=np.float32)
    if binary:
        pos = 0
        for i in range(n):
            while body[pos:pos + 1] == b"\n":
                pos += 1
            space = body.find(b" ", pos)
            end = space + 1 + 4 * d
            if space < 0 or end > len(body):
                raise ValueError(f"{path}: row {i + 1} of {n} is cut short (truncated file?)")
            words.append(body[pos:space].decode("utf-8"))
            matrix[i] = np.frombuffer(body[space + 1:end], dtype="<f4")
            pos = end
    else:
        lines = body.decode("utf-8").splitlines()
        if len(lines) < n:
            raise ValueError(f"{path}: the header announces {n} words but there are "
                             f"{len(lines)} rows")
        for i, line in enumerate(lines[:n]):
            parts = line.rstrip().split(" ")
            if len(parts) != d + 1:
                raise ValueError(f"{path}: row {i + 1} has {len(parts) - 1} values, expected {d}")
            words.append(parts[0])
            matrix[i] = np.asarray(parts[1:], dtype=np.float64)
    return words, matrix
