"""Reference masked-LM forward pass in plain NumPy, with an untied and a tied output head.

This is the ground truth of the judged exercises ``mlm-forward-pass`` and
``mlm-with-tied-output-head``: no autograd, no minimodel Tensor, only NumPy, so it can be read
top to bottom and compared against any other implementation.

Pipeline (pre-LN bidirectional encoder, ``d_ff = d_model``)::

    x = w_emb[input_ids] + pos_embed                       # (N, T, d)
    for each block:  x = x + MHA(LN(x));  x = x + FFN(LN(x))
    h = x[mask_indicator > 0.5]                            # (M, d)   gather first ...
    logits = h @ w_head      (untied)                      # (M, V)   ... then project
    logits = h @ w_emb.T     (tied, Press & Wolf 2017)     # (M, V)

``blocks_weights[i]`` packs ``[w_q, w_k, w_v, w_o, w_mlp1, w_mlp2]``, each (d, d), applied as
``x @ w``. LayerNorm has no affine parameters and uses the population variance with
``eps = 1e-5``; GELU is the tanh approximation; there is no final LayerNorm and no causal mask.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mlm_forward", "mlm_forward_tied", "layer_norm", "gelu_tanh", "self_attention"]

LN_EPS = 1e-5
_GELU_C = math.sqrt(2.0 / math.pi)


def layer_norm(x: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """LayerNorm over the last axis without affine parameters.

    ``y = (x - mean) / sqrt(var + eps)`` with the population variance (``ddof=0``), as in
    PyTorch's ``nn.LayerNorm``.
    """
    mean = x.mean(axis=-1, keepdims=True)                      # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)       # (..., 1) population variance
    return (x - mean) / np.sqrt(var + eps)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    # Python-float constants keep float32 inputs in float32 (NumPy 2 weak scalar promotion).
    return 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * x**3)))


def _softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; subtracting the row max makes ``exp`` unable to overflow."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def self_attention(h: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                   w_o: np.ndarray, num_heads: int) -> np.ndarray:
    """Bidirectional multi-head self-attention (no mask).

    For each head ``j`` with ``d_head = d / num_heads``::

        A_j = softmax(Q_j K_j^T / sqrt(d_head))      # (N, T, T), every position sees every other
        out = concat_j(A_j V_j) @ w_o                # (N, T, d)
    """
    n, t, d = h.shape
    d_head = d // num_heads

    def split(z: np.ndarray) -> np.ndarray:            # (N, T, d) -> (N, H, T, d_head)
        return z.reshape(n, t, num_heads, d_head).transpose(0, 2, 1, 3)

    q, k, v = split(h @ w_q), split(h @ w_k), split(h @ w_v)   # (N, H, T, d_head) each
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_head)  # (N, H, T, T)
    ctx = _softmax(scores) @ v                                 # (N, H, T, d_head)
    merged = ctx.transpose(0, 2, 1, 3).reshape(n, t, d)        # (N, T, d) heads side by side
    return merged @ w_o                                        # (N, T, d)


def _validate(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, num_heads,
              w_head=None) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """Check shapes/dtypes and return ``(ids, selected, float dtype)`` or raise a clear error."""
    arrays = {"input_ids": input_ids, "mask_indicator": mask_indicator, "w_emb": w_emb,
              "pos_embed": pos_embed, "blocks_weights": blocks_weights}
    if w_head is not None:
        arrays["w_head"] = w_head
    for name, value in arrays.items():
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{name} must be a numpy.ndarray, got {type(value).__name__}; "
                            f"wrap it with np.asarray(...)")
    ids = input_ids
    if ids.ndim != 2:
        raise ValueError(f"input_ids must be 2-D (N, T), got shape {ids.shape}")
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"input_ids must hold integers, got dtype {ids.dtype}")
    if mask_indicator.shape != ids.shape:
        raise ValueError(f"mask_indicator shape {mask_indicator.shape} must equal input_ids "
                         f"shape {ids.shape}")
    if w_emb.ndim != 2:
        raise ValueError(f"w_emb must be 2-D (V, d), got shape {w_emb.shape}")
    vocab, d = w_emb.shape
    n, t = ids.shape
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        raise ValueError(f"input_ids must lie in [0, V) with V={vocab} (w_emb has shape "
                         f"{w_emb.shape}); got ids in [{ids.min()}, {ids.max()}]")
    if pos_embed.ndim != 2 or pos_embed.shape[1] != d:
        raise ValueError(f"pos_embed must be (T, d) = (>= {t}, {d}), got shape {pos_embed.shape}")
    if pos_embed.shape[0] < t:
        raise ValueError(f"pos_embed has {pos_embed.shape[0]} positions but input_ids has "
                         f"T={t}; pos_embed must have at least T rows")
    if blocks_weights.ndim != 4 or blocks_weights.shape[1:] != (6, d, d):
        raise ValueError(f"blocks_weights must be (num_blocks, 6, d, d) = (L, 6, {d}, {d}) "
                         f"[w_q, w_k, w_v, w_o, w_mlp1, w_mlp2], got shape "
                         f"{blocks_weights.shape}")
    if isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)):
        raise TypeError(f"num_heads must be an int, got {type(num_heads).__name__}")
    if num_heads <= 0 or d % num_heads:
        raise ValueError(f"d_model={d} must be divisible by num_heads={num_heads} "
                         f"(each head gets d_model / num_heads features)")
    if w_head is not None and w_head.shape != (d, vocab):
        raise ValueError(f"w_head must be (d, V) = ({d}, {vocab}) to match w_emb {w_emb.shape}, "
                         f"got shape {w_head.shape}")
    weights = {k: v for k, v in arrays.items() if k not in ("input_ids", "mask_indicator")}
    for name, value in weights.items():
        if not np.issubdtype(value.dtype, np.floating):
            raise TypeError(f"{name} must be a float array, got dtype {value.dtype}")
    dtype = np.result_type(*weights.values())
    selected = np.asarray(mask_indicator) > 0.5                # (N, T) bool
    return ids, selected, dtype


def _encode(ids: np.ndarray, w_emb: np.ndarray, pos_embed: np.ndarray,
            blocks_weights: np.ndarray, num_heads: int) -> np.ndarray:
    """Embeddings plus the pre-LN encoder blocks; returns hidden states (N, T, d)."""
    t = ids.shape[1]
    x = w_emb[ids] + pos_embed[:t]                             # (N, T, d); pos broadcast over N
    for w_q, w_k, w_v, w_o, w_mlp1, w_mlp2 in blocks_weights:  # each (d, d)
        x = x + self_attention(layer_norm(x), w_q, w_k, w_v, w_o, num_heads)
        x = x + gelu_tanh(layer_norm(x) @ w_mlp1) @ w_mlp2     # FFN with d_ff = d
    return x                                                   # (N, T, d); no final LN


def mlm_forward(input_ids: np.ndarray, mask_indicator: np.ndarray, w_emb: np.ndarray,
                pos_embed: np.ndarray, blocks_weights: np.ndarray, w_head: np.ndarray,
                num_heads: int) -> np.ndarray:
    """Masked-LM logits with an untied output head.

    Args:
        input_ids: (N, T) integer token ids in ``[0, V)``.
        mask_indicator: (N, T); positions with a value ``> 0.5`` are predicted.
        w_emb: (V, d) token embedding matrix.
        pos_embed: (T, d) learned position embeddings (extra rows beyond T are ignored).
        blocks_weights: (L, 6, d, d) packed ``[w_q, w_k, w_v, w_o, w_mlp1, w_mlp2]``.
        w_head: (d, V) output projection, ``logits = h @ w_head``.
        num_heads: attention heads; must divide d.

    Returns:
        (M, V) logits of the M selected positions, in row-major (n, t) order. The computation
        runs in the float dtype of the weights (float32 stays float32, float64 stays float64).
    """
    ids, selected, dtype = _validate(input_ids, mask_indicator, w_emb, pos_embed,
                                     blocks_weights, num_heads, w_head)
    w_emb, pos_embed, blocks_weights, w_head = (a.astype(dtype, copy=False) for a in
                                                (w_emb, pos_embed, blocks_weights, w_head))
    x = _encode(ids, w_emb, pos_embed, blocks_weights, int(num_heads))   # (N, T, d)
    # Why gather first: the full (N, T, V) logits would be mostly thrown away (~85 % unused).
    return x[selected] @ w_head                                          # (M, d) @ (d, V)


def mlm_forward_tied(input_ids: np.ndarray, mask_indicator: np.ndarray, w_emb: np.ndarray,
                     pos_embed: np.ndarray, blocks_weights: np.ndarray,
                     num_heads: int) -> np.ndarray:
    """Masked-LM logits with the output head tied to the input embedding.

    Identical to :func:`mlm_forward` except that the head reuses the embedding matrix:
    ``logits = h @ w_emb.T`` (Press & Wolf 2017), so there is no ``w_head`` argument and the
    model saves ``V * d`` parameters. ``mlm_forward(..., w_head=w_emb.T, ...)`` gives the same
    result.

    Returns:
        (M, V) logits of the positions where ``mask_indicator > 0.5``, row-major order.
    """
    ids, selected, dtype = _validate(input_ids, mask_indicator, w_emb, pos_embed,
                                     blocks_weights, num_heads)
    w_emb, pos_embed, blocks_weights = (a.astype(dtype, copy=False) for a in
                                        (w_emb, pos_embed, blocks_weights))
    x = _encode(ids, w_emb, pos_embed, blocks_weights, int(num_heads))   # (N, T, d)
    return x[selected] @ w_emb.T                                         # (M, d) @ (d, V)
