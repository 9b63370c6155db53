"""Corpus loading and language-model batching.

The bundled corpus is eight Shakespeare plays (~1 MB of ASCII, see DATA_SOURCES.md), small
enough to train a model on a laptop CPU in minutes and big enough to over-fit visibly.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from minimodel.data import public_domain

__all__ = [
    "BUNDLED_CORPUS", "BUNDLED_CORPUS_SHA256", "bundled_corpus_bytes", "load_corpus",
    "check_corpus_length", "train_val_split", "get_batch", "iter_eval_batches",
]

BUNDLED_CORPUS = "shakespeare8.txt"
BUNDLED_CORPUS_SHA256 = "292d7fa3ace2f58f9dd5b393d04a69cf1d80ad7786ee6f1d24df82241d93887a"

IdArray = Sequence[int] | np.ndarray


def bundled_corpus_bytes() -> bytes:
    """Raw bytes of the corpus shipped inside the package (works from a wheel or zip too)."""
    return (resources.files("minimodel.data") / "corpus" / BUNDLED_CORPUS).read_bytes()


def _decode_checked(raw: bytes, name: str) -> str:
    """Decode ``raw`` as UTF-8 text, refusing empty and binary content with a clear reason."""
    if not raw.strip():
        what = "empty" if not raw else "only whitespace"
        raise ValueError(
            f"corpus file {name} is {what} ({len(raw)} bytes); give a UTF-8 text file with "
            "some text in it"
        )
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise ValueError(
            f"corpus file {name} looks binary: NUL byte at offset {nul} (line {line}); "
            "give a UTF-8 text file (not a checkpoint, archive or UTF-16 file)"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"corpus file {name} is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start} (line {line}) {exc.reason}; re-save it as UTF-8 "
            "(e.g. iconv -f latin1 -t utf-8)"
        ) from None


def load_corpus(path: str | os.PathLike | None = None) -> str:
    """Read a training corpus as text.

    Args:
        path: a UTF-8 text file, ``None`` for the bundled Shakespeare corpus, or the name
            ``"public-domain"`` for the ten-times larger corpus of
            :mod:`minimodel.data.public_domain` (installed separately with npm), when no file
            of that name exists.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: the file is empty, binary (contains NUL bytes) or not valid UTF-8; the
            message names the file and the offset of the first bad byte.
    """
    if path is None:
        return _decode_checked(bundled_corpus_bytes(), f"<bundled {BUNDLED_CORPUS}>")
    p = Path(path)
    if public_domain.is_requested(path):
        return public_domain.load_public_domain_text()
    if p.is_dir():
        raise ValueError(f"corpus path {p} is a directory; give a text file")
    return _decode_checked(p.read_bytes(), str(p))


def corpus_sha256(text: str) -> str:
    """sha256 of the UTF-8 encoding of ``text`` (compare with BUNDLED_CORPUS_SHA256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_corpus_length(
    n_tokens: int, block_size: int, name: str = "corpus", split: str | None = None
) -> None:
    """Refuse a token stream too short to cut one (input, target) window from.

    A window needs ``block_size + 1`` tokens: ``block_size`` inputs plus the one extra token
    the last target is shifted onto.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"block_size must be an int, got {block_size!r}")
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    if n_tokens < block_size + 1:
        part = f" ({split} split)" if split else ""
        raise ValueError(
            f"{name}{part} has only {n_tokens} tokens, but block_size={block_size} needs at "
            f"least {block_size + 1}; use a longer corpus, a smaller block_size"
            + (", or a larger validation fraction" if split == "validation" else "")
        )


def _as_ids(ids: IdArray) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D sequence of token ids, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"token ids must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def train_val_split(ids: IdArray, val_fraction: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Split a token stream into (train, validation): the LAST ``val_fraction`` is validation.

    Why contiguous rather than random windows: neighbouring windows overlap and share
    context, so a random split would leak training text into validation and flatter the
    loss. A contiguous tail (different scenes, here mostly a different play) measures
    generalisation honestly, and needs no seed. ``n_val = floor(len(ids) * val_fraction)``.
    """
    arr = _as_ids(ids)
    if not 0.0 <= float(val_fraction) < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    n_val = int(len(arr) * float(val_fraction))
    cut = len(arr) - n_val
    return arr[:cut], arr[cut:]


def get_batch(
    ids: IdArray,
    batch_size: int,
    block_size: int,
    rng: np.random.Generator | int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample ``batch_size`` random windows: ``x`` (B, T) int64 and ``y = x shifted by one``.

    ``y[b, t] == ids[s_b + t + 1]`` where ``x[b, t] == ids[s_b + t]``: position ``t`` is
    trained to predict the token that follows it. Starts ``s_b`` are uniform over every
    valid offset, drawn from ``rng`` (a Generator, or a seed for reproducibility).
    """
    arr = _as_ids(ids)
    check_corpus_length(len(arr), block_size)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    starts = rng.integers(0, len(arr) - block_size, size=batch_size)  # (B,)
    offsets = starts[:, None] + np.arange(block_size)  # (B, T)
    return arr[offsets], arr[offsets + 1]


def iter_eval_batches(
    ids: IdArray, batch_size: int, block_size: int, max_batches: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Deterministic, non-overlapping evaluation windows covering the stream from the start.

    Window ``k`` starts at ``k * block_size``; only whole windows are used (the last
    ``< block_size + 1`` tokens are dropped), the final batch may hold fewer than
    ``batch_size`` rows. Every target token is scored once, so the mean loss over all batches
    is the corpus loss.
    """
    arr = _as_ids(ids)
    check_corpus_length(len(arr), block_size, name="evaluation data")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    n_windows = (len(arr) - 1) // block_size
    starts = np.arange(n_windows) * block_size  # (W,)
    for k, lo in enumerate(range(0, n_windows, batch_size)):
        if max_batches is not None and k >= max_batches:
            return
        offsets = starts[lo : lo + batch_size, None] + np.arange(block_size)  # (b, T)
        yield arr[offsets], arr[offsets + 1]
