"""Word-level data for CBOW (continuous bag of words, Mikolov et al. 2013).

CBOW predicts a word from the average embedding of the words around it. It works on whole
words rather than BPE pieces so that the learned vectors can be compared directly with
word-similarity benchmarks (:mod:`minimodel.data.wordsim`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["UNK", "WordVocab", "build_word_vocab", "words", "cbow_examples", "iter_cbow_batches"]

UNK = "[UNK]"
# Letters, optionally joined by apostrophes ("o'er", "ne'er"); digits and "_" are not words.
_WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` (punctuation and numbers dropped)."""
    return _WORD_RE.findall(text.lower())


class WordVocab:
    """A word <-> id table; id 0 is ``[UNK]`` for every word outside the vocabulary.

    Build it with :func:`build_word_vocab`. Words are ordered by frequency (most frequent
    first), ties alphabetically, so the same text always gives the same ids.
    """

    unk_id = 0

    def __init__(self, words: Sequence[str]) -> None:
        items = list(words)
        if UNK in items:
            raise ValueError(f"{UNK!r} is reserved for id 0; do not list it")
        self.itos: list[str] = [UNK, *items]
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("words in a WordVocab must be unique")

    @property
    def vocab_size(self) -> int:
        """Number of ids including ``[UNK]``; a CBOW embedding needs exactly this many rows."""
        return len(self.itos)

    def __len__(self) -> int:
        return self.vocab_size

    def __contains__(self, word: object) -> bool:
        return word in self.stoi

    def id_of(self, word: str) -> int:
        """Id of ``word`` (lower-cased), or ``unk_id``."""
        return self.stoi.get(word.lower(), self.unk_id)

    def encode_words(self, text_or_words: str | Sequence[str]) -> np.ndarray:
        """Ids of the words of a text (or of a list of words), as int64 (n,)."""
        seq = words(text_or_words) if isinstance(text_or_words, str) else text_or_words
        get, unk = self.stoi.get, self.unk_id
        return np.fromiter((get(w.lower(), unk) for w in seq), dtype=np.int64, count=len(seq))

    def decode(self, ids: Sequence[int] | np.ndarray) -> list[str]:
        return [self.itos[int(i)] for i in ids]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; the inverse is :meth:`from_dict`."""
        return {"type": "word-vocab", "words": self.itos[1:]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WordVocab:
        if not isinstance(data, dict) or data.get("type") != "word-vocab":
            raise ValueError("not a WordVocab description (expected {'type': 'word-vocab', ...})")
        return cls(data["words"])

    def __repr__(self) -> str:
        return f"WordVocab(vocab_size={self.vocab_size})"


def build_word_vocab(
    text: str, min_count: int = 1, max_size: int | None = None
) -> WordVocab:
    """Vocabulary of the lower-cased words of ``text``.

    Args:
        min_count: drop words seen fewer times (they become ``[UNK]``); rare words get too
            few updates to learn a useful vector and slow training down.
        max_size: cap on ``vocab_size`` INCLUDING ``[UNK]`` (keeps the most frequent words).
    """
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, got {min_count}")
    if max_size is not None and max_size < 2:
        raise ValueError(f"max_size must be at least 2 ([UNK] + one word), got {max_size}")
    counts = Counter(words(text))
    kept = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    if max_size is not None:
        kept = kept[: max_size - 1]
    if not kept:
        raise ValueError(
            f"no word occurs at least min_count={min_count} times "
            f"({len(counts)} distinct words in the text); lower min_count (train --min-count) or use more text"
        )
    return WordVocab(kept)


def cbow_examples(ids: Sequence[int] | np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (context, target) pair of a word-id stream.

    For each position ``i`` with ``window`` words on both sides, the context is
    ``ids[i-window:i] + ids[i+1:i+window+1]`` and the target ``ids[i]``.

    Returns:
        ``contexts`` int64 (N, 2*window) and ``targets`` int64 (N,), ``N = len(ids) - 2*window``.
    """
    arr = np.asarray(ids, dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"ids must be 1-D, got shape {arr.shape}")
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    if len(arr) < 2 * window + 1:
        raise ValueError(
            f"{len(arr)} words are too few for window={window}: need at least {2 * window + 1}"
        )
    spans = np.lib.stride_tricks.sliding_window_view(arr, 2 * window + 1)  # (N, 2w+1)
    targets = spans[:, window].copy()  # (N,)
    contexts = np.concatenate([spans[:, :window], spans[:, window + 1 :]], axis=1)  # (N, 2w)
    return contexts, targets


def iter_cbow_batches(
    contexts: np.ndarray,
    targets: np.ndarray,
    batch_size: int,
    rng: np.random.Generator | int | None = None,
    shuffle: bool = True,
    drop_last: bool = False,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """One epoch of ``(contexts (B, 2w), targets (B,))`` batches, shuffled with ``rng``."""
    if len(contexts) != len(targets):
        raise ValueError(
            f"contexts has {len(contexts)} rows but targets has {len(targets)}; "
            "build both with cbow_examples"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    n = len(targets)
    if shuffle:
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        order = rng.permutation(n)
    else:
        order = np.arange(n)
    for lo in range(0, n, batch_size):
        idx = order[lo : lo + batch_size]
        if drop_last and len(idx) < batch_size:
            return
        yield contexts[idx], targets[idx]
