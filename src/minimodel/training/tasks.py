"""What a run trains on: the tokenizer, the token streams and one batch sampler per model.

A *task* turns a corpus into training batches and evaluation batches for one model type:

* ``LMTask`` (GPT): windows x (B, T) and targets y = x shifted by one.
* ``MLMTask`` (MaskedLM): windows with 15 % of positions masked (BERT's 80/10/10 rule); the
  evaluation masks come from a fixed seed so every evaluation scores the same positions.
* ``CBOWTask``: (context (B, 2w), centre word (B,)) pairs of a word-level vocabulary.

Every task exposes the *unigram baseline* (see :func:`unigram_baseline`): the loss of a model
that ignores the context and predicts the training-set token frequencies. A model that has
learned anything from context must beat it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from minimodel._fileio import atomic_write_json
from minimodel.data import (MASK, PAD, BPETokenizer, ByteTokenizer, WordVocab, build_word_vocab,
                            cbow_examples, check_corpus_length, get_batch, iter_eval_batches,
                            load_tokenizer, mask_tokens, train_val_split)
from minimodel.data.cbow import words as split_words
from minimodel.labels import IGNORE_INDEX
from minimodel.messages import PhraseError, phrase
from minimodel.training.config import TrainConfig

TOKENIZER_FILE = "tokenizer.json"
Batch = tuple[np.ndarray, np.ndarray]


def unigram_baseline(train_ids: np.ndarray, target_ids: np.ndarray, vocab_size: int,
                     smoothing: float = 1.0) -> float:
    """Cross-entropy (nats/token) of ``target_ids`` under the training unigram distribution.

        p(v) = (count_train(v) + a) / (N_train + a V)         (add-a smoothing, a = 1)
        H    = -(1 / M) sum_{t in targets} ln p(t)

    Why smoothing: a token that never occurs in training would otherwise get p = 0 and an
    infinite loss; add-one keeps the baseline finite and barely moves it on a large corpus.
    """
    train_ids = np.asarray(train_ids, dtype=np.int64)
    target_ids = np.asarray(target_ids, dtype=np.int64)
    if target_ids.size == 0:
        raise ValueError("unigram_baseline needs at least one target token")
    if smoothing <= 0:
        raise ValueError(f"smoothing must be positive, got {smoothing}")
    for name, ids in (("train", train_ids), ("target", target_ids)):
        if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError(f"{name} ids must lie in [0, {vocab_size}), got min {ids.min()} "
                             f"max {ids.max()}")
    counts = np.bincount(train_ids, minlength=vocab_size).astype(np.float64)  # (V,)
    log_p = np.log(counts + smoothing) - math.log(train_ids.size + smoothing * vocab_size)
    return float(-log_p[target_ids].mean())


# ----------------------------------------------------------------------------- tokenizers
def _text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tokenizer_key(cfg: TrainConfig, train_text: str) -> dict[str, Any]:
    """What a cached tokenizer must match to be reused (kind, size, specials, training text)."""
    specials = [PAD, MASK] if cfg.model == "mlm" else []
    return {"kind": "word" if cfg.model == "cbow" else cfg.tokenizer,
            "vocab_size": cfg.vocab_size, "specials": specials,
            "min_count": cfg.min_count if cfg.model == "cbow" else None,
            "text_sha256": _text_sha256(train_text)}


def load_any_tokenizer(path: str | Path) -> Any:
    """A byte/BPE tokenizer (``minimodel.data.load_tokenizer``) or a CBOW ``WordVocab``.

    Adapter: ``load_tokenizer`` reads the byte/BPE file format only; a CBOW run saves its
    word vocabulary as ``{"type": "word-vocab", ...}`` in the same ``tokenizer.json`` slot.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"tokenizer file {path} does not exist; a run directory holds "
                         "model.safetensors and tokenizer.json side by side")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a JSON tokenizer file ({exc})") from None
    if isinstance(data, dict) and data.get("type") == "word-vocab":
        return WordVocab.from_dict(data)
    return load_tokenizer(path)


def save_any_tokenizer(tok: Any, path: Path) -> None:
    if isinstance(tok, WordVocab):
        atomic_write_json(path, tok.to_dict(), indent=None)
    else:
        tok.save(path)


def build_tokenizer(cfg: TrainConfig, train_text: str, out_dir: Path | None,
                    cached_key: dict[str, Any] | None, log=print) -> Any:
    """The run's tokenizer: reused from ``out_dir`` when its key matches, else built.

    Only the training part of the text is used to learn a BPE or a word vocabulary, so no
    validation statistics leak into the tokenizer.
    """
    key = tokenizer_key(cfg, train_text)
    path = out_dir / TOKENIZER_FILE if out_dir is not None else None
    if path is not None and path.is_file() and cached_key == key:
        tok = load_any_tokenizer(path)
        log(phrase("train.tokenizer_reused", path=path))
        return tok
    if cfg.model == "cbow":
        return build_word_vocab(train_text, min_count=cfg.min_count)
    specials = key["specials"]
    if cfg.tokenizer == "byte":
        return ByteTokenizer(special_tokens=specials)
    # The slow part before the first step (tens of seconds on a laptop): say it has started.
    log(phrase("train.learning_bpe", vocab_size=cfg.vocab_size, chars=len(train_text)))
    return BPETokenizer.train(train_text, cfg.vocab_size, special_tokens=specials)


def split_text(text: str, val_fraction: float) -> tuple[str, str]:
    """The first (1 - val_fraction) of the characters train the tokenizer (see build_tokenizer)."""
    cut = len(text) - int(len(text) * val_fraction)
    return text[:cut], text[cut:]


# ----------------------------------------------------------------------------- tasks
class LMTask:
    """Next-token prediction on a token stream (GPT)."""

    kind = "gpt"

    def __init__(self, ids: np.ndarray, cfg: TrainConfig, vocab_size: int, name: str) -> None:
        self.vocab_size = vocab_size
        self.block_size = cfg.block_size
        self.batch_size = cfg.batch_size
        self.train_ids, self.val_ids = train_val_split(ids, cfg.val_fraction)
        check_corpus_length(len(self.train_ids), cfg.block_size, name=name, split="training")
        check_corpus_length(len(self.val_ids), cfg.block_size, name=name, split="validation")
        self.tokens_per_step = cfg.batch_size * cfg.block_size

    def sample(self, rng: np.random.Generator) -> Batch:
        return get_batch(self.train_ids, self.batch_size, self.block_size, rng)  # (B, T) x2

    def eval_batches(self, max_batches: int | None) -> Iterator[Batch]:
        return iter_eval_batches(self.val_ids, self.batch_size, self.block_size, max_batches)

    def val_targets(self) -> np.ndarray:
        """Exactly the target tokens that a full evaluation scores."""
        return np.concatenate([y.reshape(-1) for _, y in self.eval_batches(None)])

    def baseline(self) -> float:
        return unigram_baseline(self.train_ids, self.val_targets(), self.vocab_size)


class MLMTask(LMTask):
    """Masked-token prediction: inputs with [MASK] and labels -100 except at targets."""

    kind = "mlm"
    EVAL_SEED_OFFSET = 99_991  # evaluation masks: a fixed stream independent of training

    def __init__(self, ids: np.ndarray, cfg: TrainConfig, tokenizer: Any, name: str) -> None:
        super().__init__(ids, cfg, tokenizer.vocab_size, name)
        if tokenizer.mask_id is None:
            raise ValueError("the MLM tokenizer has no [MASK] token; build it with "
                             "special_tokens=('[PAD]', '[MASK]')")
        self.mask_id = tokenizer.mask_id
        self.special_ids = tokenizer.special_ids
        self.mask_prob = cfg.mask_prob
        self.eval_seed = cfg.seed + self.EVAL_SEED_OFFSET
        self.tokens_per_step = cfg.batch_size * cfg.block_size

    def _mask(self, x: np.ndarray, rng: np.random.Generator) -> Batch:
        return mask_tokens(x, self.mask_id, self.vocab_size, rng, self.mask_prob,
                           self.special_ids)

    def sample(self, rng: np.random.Generator) -> Batch:
        x, _ = get_batch(self.train_ids, self.batch_size, self.block_size, rng)  # (B, T)
        return self._mask(x, rng)  # inputs (B, T), labels (B, T)

    def eval_batches(self, max_batches: int | None) -> Iterator[Batch]:
        rng = np.random.default_rng(self.eval_seed)  # same masks at every evaluation
        for x, _ in iter_eval_batches(self.val_ids, self.batch_size, self.block_size,
                                      max_batches):
            yield self._mask(x, rng)

    def val_targets(self) -> np.ndarray:
        labels = np.concatenate([lab.reshape(-1) for _, lab in self.eval_batches(None)])
        return labels[labels != IGNORE_INDEX]


def noise_table(ids: np.ndarray, vocab_size: int, unk_id: int) -> np.ndarray:
    """word2vec's unigram table: word ids repeated in proportion to count^(3/4), [UNK] left out.

    The power 3/4 gives rare words more chances than their frequency. Drawing a noise word is
    then one uniform index into the table, ``table[rng.integers(len(table))]`` — O(1), which
    matters because every training example draws K of them. The table has max(2^20, 100·V)
    entries, so every word of the vocabulary gets its share (the C tool uses 10^8).
    """
    weights = np.bincount(ids, minlength=vocab_size).astype(np.float64) ** 0.75  # (V,)
    weights[unk_id] = 0.0
    size = max(1 << 20, 100 * vocab_size)
    # Entry j holds the word whose cumulative share covers (j + 0.5) / size.
    cdf = np.cumsum(weights) / weights.sum()
    return np.searchsorted(cdf, (np.arange(size) + 0.5) / size, side="right").astype(np.int32)


class CBOWTask:
    """Predict a word from the mean of its 2w neighbours' vectors."""

    kind = "cbow"

    def __init__(self, train_text: str, val_text: str, cfg: TrainConfig, vocab: WordVocab,
                 name: str) -> None:
        self.vocab_size = vocab.vocab_size
        self.batch_size = cfg.batch_size
        self.eval_batch_size = max(cfg.batch_size, 1024)
        need = 2 * cfg.window + 1
        parts = {}
        for split, text in (("training", train_text), ("validation", val_text)):
            ids = vocab.encode_words(split_words(text))
            if len(ids) < need:
                raise PhraseError(phrase("train.too_few_words", name=name,
                                         part=phrase(f"train.split_{split}"), words=len(ids),
                                         window=cfg.window, need=need))
            parts[split] = (ids, *cbow_examples(ids, cfg.window))
        self.train_ids, self.train_ctx, self.train_tgt = parts["training"]
        self.val_ids, self.val_ctx, self.val_tgt = parts["validation"]
        self.tokens_per_step = cfg.batch_size
        self.negative = cfg.negative
        self.noise = noise_table(self.train_ids, self.vocab_size, vocab.unk_id)

    def sample(self, rng: np.random.Generator) -> Batch:
        """(contexts (B, 2w), targets (B,)), plus noise words (B, K) with --negative K."""
        rows = rng.integers(0, len(self.train_tgt), size=self.batch_size)  # (B,)
        if not self.negative:
            return self.train_ctx[rows], self.train_tgt[rows]  # (B, 2w), (B,)
        slots = rng.integers(0, len(self.noise), size=(self.batch_size, self.negative))
        return self.train_ctx[rows], self.train_tgt[rows], self.noise[slots]  # + (B, K)

    def eval_batches(self, max_batches: int | None) -> Iterator[Batch]:
        n = len(self.val_tgt)
        for k, lo in enumerate(range(0, n, self.eval_batch_size)):
            if max_batches is not None and k >= max_batches:
                return
            yield (self.val_ctx[lo:lo + self.eval_batch_size],
                   self.val_tgt[lo:lo + self.eval_batch_size])

    def val_targets(self) -> np.ndarray:
        return self.val_tgt

    def baseline(self) -> float:
        return unigram_baseline(self.train_ids, self.val_tgt, self.vocab_size)


def make_task(cfg: TrainConfig, text: str, tokenizer: Any, name: str) -> Any:
    """Encode the corpus with ``tokenizer`` and build the task of ``cfg.model``."""
    if cfg.model == "cbow":
        train_text, val_text = split_text(text, cfg.val_fraction)
        return CBOWTask(train_text, val_text, cfg, tokenizer, name)
    ids = np.asarray(tokenizer.encode(text, allowed_special=False), dtype=np.int64)
    if cfg.model == "mlm":
        return MLMTask(ids, cfg, tokenizer, name)
    return LMTask(ids, cfg, tokenizer.vocab_size, name)
