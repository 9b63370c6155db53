"""Byte-level tokenizers: :class:`ByteTokenizer` and a trainable :class:`BPETokenizer`.

Both share the id layout of :mod:`minimodel.data._tokenizer_base` (bytes 0..255 first, then
special tokens, then merges), so every UTF-8 string round-trips and no id is ever
"unknown". ``vocab_size`` is always the length of the tokenizer's id table: that number,
not a config value typed by hand, is what a model's embedding must be built with
(see :func:`check_vocab_match`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from minimodel.data._bpe_train import learn_merges, merge_pair
from minimodel.data._pretokenize import (
    gpt2_pattern,
    token_bytes_to_str,
    token_str_to_bytes,
)
from minimodel.data._tokenizer_base import (
    MASK,
    PAD,
    Tokenizer,
    _utf8,
    check_file_vocab_size,
)

__all__ = [
    "Tokenizer", "ByteTokenizer", "BPETokenizer", "load_tokenizer", "check_vocab_match",
    "PAD", "MASK",
]

# Per-word encode cache bound: plenty for a book (the 1 MB corpus has ~30k distinct words)
# while keeping memory bounded when encoding an endless stream of novel strings.
_CACHE_LIMIT = 200_000


class ByteTokenizer(Tokenizer):
    """One token per UTF-8 byte (ids 0..255) plus optional special tokens (ids 256, 257, ...).

    >>> tok = ByteTokenizer(special_tokens=("[PAD]",))
    >>> tok.encode("hé[PAD]"), tok.vocab_size
    ([104, 195, 169, 256], 257)
    """

    type_name = "byte"

    def _encode_ordinary(self, text: str) -> list[int]:
        return list(_utf8(text))

    @classmethod
    def _from_dict(cls, data: dict[str, Any], where: str) -> ByteTokenizer:
        tok = cls(special_tokens=list(data["special_tokens"]))
        check_file_vocab_size(tok, data, where)
        return tok


class BPETokenizer(Tokenizer):
    """Byte-level byte-pair encoding, trained with :meth:`train`, GPT-2 compatible.

    Text is cut into words with GPT-2's pre-tokenisation pattern, each word's UTF-8 bytes
    start as byte tokens (id == byte value), and learned merges are applied lowest rank
    first, exactly like GPT-2 / Hugging Face ``tokenizers``.

    GPT-2 export: merges are stored as pairs of token strings in GPT-2's ``bytes_to_unicode``
    alphabet, and :meth:`to_gpt2_vocab` / :meth:`to_gpt2_merges` give the contents of
    ``vocab.json`` / ``merges.txt``. GPT-2's own files order the 256 base bytes differently
    (printable characters first, so "!" is id 0); we keep id == byte value and export an
    explicit ``vocab.json``, so a Hugging Face tokenizer built from the export produces the
    very same ids as this class.

    Args:
        merges: byte pairs in rank order, e.g. ``[(b" ", b"t"), (b"h", b"e")]``; each part
            must be a byte or the result of an earlier merge.
        special_tokens: names of special tokens, given ids 256, 257, ... in order.
    """

    type_name = "bpe"

    def __init__(
        self,
        merges: Sequence[tuple[bytes, bytes]] = (),
        special_tokens: Sequence[str] = (),
    ) -> None:
        super().__init__(special_tokens)
        # Regular tokens only: a special named "the" must not be confused with the word.
        self._bytes_to_id: dict[bytes, int] = {bytes([i]): i for i in range(256)}
        self._merges: list[tuple[bytes, bytes]] = []
        # (left id, right id) -> (rank, merged id); rank decides which pair merges first.
        self._ranks: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (left, right) in enumerate(merges):
            ids = []
            for part in (left, right):
                if part not in self._bytes_to_id:
                    raise ValueError(
                        f"merge #{rank} {(left, right)!r} uses {part!r}, which is neither a "
                        "byte nor produced by an earlier merge; merges must be in rank order"
                    )
                ids.append(self._bytes_to_id[part])
            pair = (ids[0], ids[1])
            if pair in self._ranks:
                raise ValueError(f"merge #{rank} {(left, right)!r} appears twice")
            merged = left + right
            new_id = self._bytes_to_id.get(merged)
            if new_id is None:  # a merge may re-create an existing string; reuse its id
                new_id = len(self._id_to_bytes)
                self._id_to_bytes.append(merged)
                self._bytes_to_id[merged] = new_id
            self._ranks[pair] = (rank, new_id)
            self._merges.append((left, right))
        self._cache: dict[str, list[int]] = {}

    # ----------------------------------------------------------------- training
    @classmethod
    def train(
        cls,
        text: str,
        vocab_size: int,
        special_tokens: Sequence[str] = (),
        progress: Callable[[int, int], None] | None = None,
    ) -> BPETokenizer:
        """Learn a BPE vocabulary of exactly ``vocab_size`` ids from ``text``.

        Args:
            text: training text. Occurrences of the special tokens are cut out first so no
                merge ever spans or imitates one.
            vocab_size: the TOTAL size: 256 byte tokens + ``len(special_tokens)`` + merges.
            special_tokens: e.g. ``("[PAD]", "[MASK]")`` for a masked language model.
            progress: optional callback ``progress(merges_done, merges_total)``.

        Raises:
            ValueError: ``vocab_size`` below the minimum (256 + number of specials), or more
                than the text can support (the message gives the largest reachable size).
        """
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
        probe = cls(special_tokens=special_tokens)  # validates the names
        special_tokens = list(special_tokens)
        minimum = probe.vocab_size
        if vocab_size < minimum:
            raise ValueError(
                f"vocab_size={vocab_size} is too small: the minimum is {minimum} (256 byte "
                f"tokens + {minimum - 256} special tokens); use vocab_size >= {minimum}"
            )
        chunks = probe._special_re.split(text) if probe._special_re else [text]
        pattern = gpt2_pattern()
        counts: Counter[str] = Counter()
        for chunk in chunks:
            counts.update(pattern.findall(chunk))
        word_counts: dict[bytes, int] = {}
        for word, n in counts.items():  # two str spellings can't share bytes; no clash
            word_counts[_utf8(word)] = n
        target_regular = vocab_size - (minimum - 256)
        merges, reached = learn_merges(word_counts, target_regular, progress)
        if reached < target_regular:
            raise ValueError(
                f"the training text supports at most vocab_size={reached + minimum - 256} "
                f"(it ran out of pairs to merge; asked for {vocab_size}); use more text or a "
                "smaller vocab_size (train --vocab-size)"
            )
        return cls(merges, special_tokens)

    # ----------------------------------------------------------------- encoding
    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges as byte pairs, in rank order (a copy)."""
        return list(self._merges)

    def _encode_word(self, word: str) -> list[int]:
        """BPE one pre-token: repeatedly merge the adjacent pair of lowest rank."""
        ids = list(_utf8(word))
        ranks = self._ranks
        while len(ids) > 1:
            best_rank, best_pair = None, None
            for pair in zip(ids, ids[1:]):
                hit = ranks.get(pair)
                if hit is not None and (best_rank is None or hit[0] < best_rank):
                    best_rank, best_pair = hit[0], pair
            if best_pair is None:
                break
            ids = merge_pair(ids, *best_pair, ranks[best_pair][1])
        return ids

    def _encode_ordinary(self, text: str) -> list[int]:
        out: list[int] = []
        cache = self._cache
        for word in gpt2_pattern().findall(text):
            ids = cache.get(word)
            if ids is None:
                ids = self._encode_word(word)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[word] = ids
            out += ids
        return out

    # ----------------------------------------------------------------- GPT-2 export
    def to_gpt2_vocab(self) -> dict[str, int]:
        """``vocab.json`` contents: token string in GPT-2's byte alphabet -> our id.

        Special tokens are listed under their own names. Raises ValueError if a special's
        name collides with the alphabet spelling of a regular token (the file could not
        tell them apart).
        """
        vocab: dict[str, int] = {}
        for token, i in self._bytes_to_id.items():
            vocab[token_bytes_to_str(token)] = i
        for name, i in self._special_tokens.items():
            if name in vocab:
                raise ValueError(
                    f"special token {name!r} has the same spelling as regular token "
                    f"{vocab[name]} in GPT-2's alphabet; rename the special token to export"
                )
            vocab[name] = i
        return dict(sorted(vocab.items(), key=lambda kv: kv[1]))

    def to_gpt2_merges(self) -> list[str]:
        """``merges.txt`` lines (without the ``#version`` header): ``"left right"``."""
        return [f"{token_bytes_to_str(a)} {token_bytes_to_str(b)}" for a, b in self._merges]

    # ----------------------------------------------------------------- files
    def _payload(self) -> dict[str, Any]:
        return {
            "pretokenizer": "gpt2",
            "merges": [[token_bytes_to_str(a), token_bytes_to_str(b)] for a, b in self._merges],
        }

    @classmethod
    def _from_dict(cls, data: dict[str, Any], where: str) -> BPETokenizer:
        if data.get("pretokenizer") != "gpt2":
            raise ValueError(f"{where}: unknown pretokenizer {data.get('pretokenizer')!r}")
        raw = data.get("merges")
        if not isinstance(raw, list):
            raise ValueError(f"{where}: field 'merges' is missing or not a list")
        merges: list[tuple[bytes, bytes]] = []
        for k, item in enumerate(raw):
            if (
                not isinstance(item, list)
                or len(item) != 2
                or not all(isinstance(s, str) and s for s in item)
            ):
                raise ValueError(f"{where}: merge #{k} should be two token strings, got {item!r}")
            try:
                merges.append((token_str_to_bytes(item[0]), token_str_to_bytes(item[1])))
            except ValueError as exc:
                raise ValueError(f"{where}: merge #{k}: {exc}") from None
        try:
            tok = cls(merges, list(data["special_tokens"]))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        check_file_vocab_size(tok, data, where)
        return tok


def load_tokenizer(path: str | os.PathLike) -> Tokenizer:
    """Load any tokenizer saved with ``.save(path)``, choosing the class from its ``type``."""
    return Tokenizer.load(path)


def check_vocab_match(
    model_vocab_size: int, tokenizer_vocab_size: int, where: str = "model"
) -> None:
    """Refuse a model/tokenizer pair whose vocabulary sizes differ.

    A mismatch is never harmless: ids past the embedding crash deep inside a lookup, and a
    larger embedding silently wastes rows whose logits still take probability mass.
    """
    if int(model_vocab_size) != int(tokenizer_vocab_size):
        raise ValueError(
            f"vocab size mismatch in {where}: the model has vocab_size={model_vocab_size} but "
            f"the tokenizer has vocab_size={tokenizer_vocab_size}; retrain/rebuild the model "
            f"with vocab_size={tokenizer_vocab_size}, or use the tokenizer it was trained with"
        )

