"""BERT-style masking for masked-language-model (MLM) training.

Devlin et al. 2019 ("BERT", section 3.1): choose 15 % of the positions as prediction
targets; of those, replace 80 % with ``[MASK]``, 10 % with a random token and leave 10 %
unchanged. Why not always ``[MASK]``: ``[MASK]`` never occurs at fine-tuning or inference
time, so the model must also learn to produce good representations for ordinary tokens,
which it can only do if a target is sometimes an ordinary (possibly wrong) token.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from minimodel.labels import IGNORE_INDEX  # "no target here", as in PyTorch / HF

__all__ = ["IGNORE_INDEX", "mask_tokens"]


def mask_tokens(
    ids: Sequence[int] | np.ndarray,
    mask_id: int,
    vocab_size: int,
    rng: np.random.Generator | int | None,
    mask_prob: float = 0.15,
    special_ids: Iterable[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Corrupt ``ids`` for MLM and return ``(inputs, labels)``.

    Args:
        ids: token ids, shape (T,) or (N, T).
        mask_id: id of ``[MASK]``; it is treated as special (never chosen, never a random
            replacement).
        vocab_size: the model's vocabulary size; every id must be below it.
        rng: a ``np.random.Generator`` or a seed.
        mask_prob: chance that a non-special position becomes a target. Every row that has
            a non-special position gets at least one target (a row without targets would
            contribute nothing to the loss).
        special_ids: ids never chosen and never used as random replacements (``[PAD]``,
            ``[CLS]``, ... — pass ``tokenizer.special_ids``).

    Returns:
        ``inputs``: ``ids`` with each target replaced by ``mask_id`` with probability 0.8, by
        a uniformly random non-special token with probability 0.1, or kept as it was.
        ``labels``: the original id at each target, the "no target" label at the other
        positions.
        Both int64 with the shape of ``ids``.
    """
    arr = np.asarray(ids)
    if arr.ndim not in (1, 2):
        raise ValueError(f"ids must have shape (T,) or (N, T), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
    if not 0.0 < float(mask_prob) <= 1.0:
        raise ValueError(f"mask_prob must be in (0, 1], got {mask_prob}")
    vocab_size = int(vocab_size)
    if not 0 <= int(mask_id) < vocab_size:
        raise ValueError(
            f"mask_id={mask_id} is outside the vocabulary (vocab_size={vocab_size}); pass "
            "tokenizer.mask_id and tokenizer.vocab_size from the same tokenizer"
        )
    x = arr.reshape(1, -1) if arr.ndim == 1 else arr  # (N, T)
    x = x.astype(np.int64)
    if x.size and (x.min() < 0 or x.max() >= vocab_size):
        bad = int(x.max()) if x.max() >= vocab_size else int(x.min())
        raise ValueError(
            f"token id {bad} is outside the vocabulary (vocab_size={vocab_size}); the ids and "
            "vocab_size come from different tokenizers/models"
        )
    special = np.array(sorted({int(mask_id), *(int(s) for s in special_ids)}), dtype=np.int64)
    if special.min() < 0 or special.max() >= vocab_size:
        raise ValueError(f"special_ids {special.tolist()} must lie in [0, {vocab_size})")
    replacements = np.setdiff1d(np.arange(vocab_size, dtype=np.int64), special)
    if replacements.size == 0:
        raise ValueError("every id is special; there is no token to use as a random replacement")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    candidate = ~np.isin(x, special)  # (N, T) positions that may become targets
    chosen = (rng.random(x.shape) < mask_prob) & candidate  # (N, T)
    # Rows with no target but with candidates: promote one random candidate.
    scores = np.where(candidate, rng.random(x.shape), -1.0)  # (N, T)
    needs_one = ~chosen.any(axis=1) & candidate.any(axis=1)  # (N,)
    rows = np.nonzero(needs_one)[0]
    chosen[rows, scores[rows].argmax(axis=1)] = True

    labels = np.where(chosen, x, IGNORE_INDEX)  # (N, T)
    inputs = x.copy()
    action = rng.random(x.shape)  # one uniform draw per position decides 80/10/10
    to_mask = chosen & (action < 0.8)
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    inputs[to_mask] = mask_id
    inputs[to_random] = replacements[rng.integers(0, replacements.size, size=int(to_random.sum()))]
    return inputs.reshape(arr.shape), labels.reshape(arr.shape)
