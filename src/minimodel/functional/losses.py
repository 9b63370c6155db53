"""Cross-entropy, the loss of an output head (tied or untied) in one call, and word2vec's
negative-sampling loss."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minimodel.dispatch import replaceable
from minimodel.functional.activations import log_sigmoid, log_softmax
from minimodel.functional.linear import linear
from minimodel.labels import IGNORE_INDEX  # -100: "no target here"
from minimodel.tensor import Tensor, as_tensor



def check_token_ids(ids: Any, vocab_size: int, where: str = "Embedding",
                    ignore_index: int | None = None) -> np.ndarray:
    """``ids`` as an integer array, refusing floats and ids outside [0, vocab_size): the token
    ids of a lookup, or a loss's targets (which may also be ``ignore_index``)."""
    arr = ids.data if isinstance(ids, Tensor) else np.asarray(ids)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{where} takes integer token ids, got dtype {arr.dtype}; "
                        "convert with ids.astype(np.int64)")
    live = arr if ignore_index is None else arr[arr != ignore_index]
    if live.size and (live.min() < 0 or live.max() >= vocab_size):
        bad = int(live.max()) if live.max() >= vocab_size else int(live.min())
        ignored = "" if ignore_index is None else f", or {ignore_index} to ignore a position"
        raise ValueError(f"{where}: token id {bad} is outside the vocabulary of size "
                         f"{vocab_size} (valid ids 0..{vocab_size - 1}"
                         f"{ignored}); does the tokenizer's vocab_size match the model's?")
    return arr


def check_targets(input_shape: tuple[int, ...], targets: Any, vocab: int, ignore_index: int,
                  where: str) -> np.ndarray:
    """Targets as an int array of shape ``input_shape[:-1]``, ids in [0, vocab) or ignore_index."""
    shape = np.shape(targets.data if isinstance(targets, Tensor) else targets)
    if shape != tuple(input_shape[:-1]):
        raise ValueError(f"{where}: inputs of shape {tuple(input_shape)} need targets of shape "
                         f"{tuple(input_shape[:-1])}, got {shape}")
    return check_token_ids(targets, vocab, f"{where} targets", ignore_index)


def flat_class_inputs(logits: Any, targets: Any, ignore_index: int
                      ) -> tuple[Tensor, np.ndarray]:
    """Checked ``(logits (N, V), targets (N,))`` from logits (..., V) and targets (...)."""
    logits = as_tensor(logits)
    if logits.ndim < 1:
        raise ValueError("cross_entropy needs logits with a class axis, got a scalar")
    vocab = logits.shape[-1]
    t = check_targets(logits.shape, targets, vocab, ignore_index, "cross_entropy")
    return logits.reshape(-1, vocab), t.reshape(-1)


def check_head_inputs(h: Any, weight: Tensor, targets: Any, ignore_index: int
                      ) -> tuple[Tensor, np.ndarray]:
    """Checked ``(h (N, d), targets (N,))`` for an output matrix ``weight`` (V, d)."""
    h = as_tensor(h)
    if weight.ndim != 2 or h.ndim == 0 or h.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear_cross_entropy: h of shape {h.shape} needs a weight of shape "
                         f"(V, {h.shape[-1] if h.ndim else '?'}), got {weight.shape}")
    t = check_targets(h.shape, targets, weight.shape[0], ignore_index, "linear_cross_entropy")
    return h.reshape(-1, h.shape[-1]), t.reshape(-1)


@replaceable
def cross_entropy(logits: Tensor, targets: Any, ignore_index: int = IGNORE_INDEX) -> Tensor:
    r"""Mean cross-entropy over the positions whose target is not ``ignore_index``.

        loss = (1 / |valid|) * sum_{n valid} [ log sum_v exp(logits_{n,v}) - logits_{n, t_n} ]
             = -(1 / |valid|) * sum_{n valid} log_softmax(logits_n)_{t_n}

    Gradient: dlogits_n = (softmax(logits_n) - onehot(t_n)) / |valid|, zero for ignored rows.

    Args:
        logits: (..., V) unnormalised scores.
        targets: (...) integer class ids in [0, V), or ``ignore_index`` to skip a position.
        ignore_index: the label of positions without a target (-100, as in PyTorch).

    Returns:
        A scalar tensor. If every position is ignored the loss is 0 (PyTorch returns nan).
    """
    logits, t = flat_class_inputs(logits, targets, ignore_index)  # (N, V), (N,)
    valid = t != ignore_index  # (N,) the positions that count
    logp = log_softmax(logits, axis=-1)  # (N, V)
    picked = logp[np.arange(t.shape[0]), np.where(valid, t, 0)]  # (N,) log p(target)
    weights = Tensor._wrap(valid.astype(logits.dtype))  # 1 where counted, 0 where ignored
    return -(picked * weights).sum() / max(int(valid.sum()), 1)


@replaceable
def linear_cross_entropy(h: Tensor, weight: Tensor, targets: Any,
                         ignore_index: int = IGNORE_INDEX) -> Tensor:
    r"""The loss of an output head: ``cross_entropy(h @ weight.T, targets)``.

    h (..., d) hidden states, weight (V, d) the head's matrix — for a tied head the embedding
    matrix E itself — and targets (...). The logits (N, V) are the largest array of a language
    model (N * V * 4 bytes: 393 MiB at N = 2048, V = 50257); the kernel that replaces this
    composite computes the same loss and gradients in row chunks and never holds them.
    """
    h, t = check_head_inputs(h, weight, targets, ignore_index)  # (N, d), (N,)
    return cross_entropy(linear(h, weight), t, ignore_index)  # logits (N, V)


def negative_sampling_loss(h: Tensor, rows: Tensor) -> Tensor:
    r"""word2vec's negative-sampling loss (Mikolov et al. 2013), averaged over examples.

    h (N, d) are the hidden vectors (CBOW: the mean of the context vectors); rows (N, 1+K, d)
    are output vectors: for each example first the true word's, then K noise words' drawn from
    the unigram distribution to the power 3/4. Instead of a softmax over all V words, each
    example becomes 1 + K binary decisions, "is this the word?":

        loss = mean_n [ -log sigma(h_n . o_target) - sum_k log sigma(-h_n . o_noise_k) ]

    Cost per example: (1 + K) dot products of length d instead of V; the gradient reaches only
    those 1 + K output rows. Gradient of one score s with sign c (+1 true, -1 noise):
    d/ds [-log sigma(c s)] = -c sigma(-c s).
    """
    h = as_tensor(h)
    if h.ndim != 2 or rows.ndim != 3 or rows.shape[0] != h.shape[0] or rows.shape[2] != h.shape[1]:
        raise ValueError(f"negative_sampling_loss: h (N, d) and rows (N, 1+K, d) must agree, got "
                         f"{h.shape} and {rows.shape}")
    scores = (rows @ h.reshape(h.shape[0], h.shape[1], 1)).reshape(rows.shape[:2])  # (N, 1+K)
    signs = np.full(rows.shape[1], -1.0, dtype=scores.dtype)
    signs[0] = 1.0  # the true word is pushed up, the noise words down
    return -log_sigmoid(scores * signs).sum(axis=1).mean()


@replaceable
def batch_loss(loss_of: Callable[[Any, Any], Tensor], inputs: Any, targets: Any) -> Tensor:
    r"""A model's mean loss over a batch: ``loss_of(inputs, targets)``, nothing more.

    ``loss_of`` is a model's loss (say ``GPT.loss_of_rows``): the mean of a per-target loss
    over the batch's labelled targets (those that are not ``IGNORE_INDEX``), where the rows of
    ``inputs`` and ``targets`` are independent examples. The definition is the call itself; it
    has a name so that a kernel may compute the same mean in parts. Cut the rows into parts k,
    with n_k labelled targets and mean loss L_k each:

        L = (1/n) sum_i l_i = sum_k (n_k / n) L_k,      n = sum_k n_k
        dL/dp = sum_k (n_k / n) dL_k/dp                  (for every parameter p)

    Example: 3 labelled targets with losses 1, 2, 3 -> L = 2; parts {1, 2} and {3}:
    (2/3) * 1.5 + (1/3) * 3 = 2. The parts share nothing until those sums, so they can run at
    the same time (``kernels/batch_split.py``: one part per core).
    """
    return loss_of(inputs, targets)

