"""Honest solutions written the ways learners write them (NumPy or PyTorch, log-softmax or
softmax, einsum or matmul, float64 inside then cast back), for the many-seed float32 sweep of
the judge's tolerance (``test_float32_tolerance.py``). Each must pass every case on every seed.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

GELU_C = math.sqrt(2.0 / math.pi)


# ----------------------------------------------------------------------------- NumPy pieces
def _ln_var(x, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x**3)))


def _softmax_log(s):
    """exp(log_softmax): log-sum-exp with the row max."""
    m = s.max(-1, keepdims=True)
    return np.exp(s - m - np.log(np.exp(s - m).sum(-1, keepdims=True)))


def _softmax_shift(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _mha_einsum(x, w_q, w_k, w_v, w_o, num_heads, softmax):
    n, t, d = x.shape
    dh = d // num_heads
    q, k, v = ((x @ w).reshape(n, t, num_heads, dh) for w in (w_q, w_k, w_v))
    scores = np.einsum("nqhd,nkhd->nhqk", q, k) / np.sqrt(dh).astype(x.dtype)
    ctx = np.einsum("nhqk,nkhd->nqhd", softmax(scores), v).reshape(n, t, d)
    return ctx @ w_o


def _mlm_numpy(softmax):
    def forward(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, *rest):
        w_head, num_heads = (rest[0], rest[1]) if len(rest) == 2 else (w_emb.T, rest[0])
        t = input_ids.shape[1]
        x = w_emb[input_ids] + pos_embed[:t]
        for w_q, w_k, w_v, w_o, w1, w2 in blocks_weights:
            x = x + _mha_einsum(_ln_var(x), w_q, w_k, w_v, w_o, num_heads, softmax)
            x = x + _gelu(_ln_var(x) @ w1) @ w2
        return x[mask_indicator > 0.5] @ w_head
    return forward


# ----------------------------------------------------------------------------- PyTorch pieces
def _t(a):
    return torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a  # 0-d stays 0-d


def _mha_torch(x, w_q, w_k, w_v, w_o, num_heads):
    n, t, d = x.shape
    dh = d // num_heads
    q, k, v = ((x @ w).view(n, t, num_heads, dh).transpose(1, 2) for w in (w_q, w_k, w_v))
    att = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
    return (att @ v).transpose(1, 2).reshape(n, t, d) @ w_o


def _gelu_torch(x):
    return 0.5 * x * (1 + torch.tanh(GELU_C * (x + 0.044715 * x**3)))


def mlm_torch(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, *rest):
    args = [_t(a) for a in (input_ids, mask_indicator, w_emb, pos_embed, blocks_weights)]
    ids, mask, w_emb_t, pos, blocks = args
    w_head, num_heads = (_t(rest[0]), rest[1]) if len(rest) == 2 else (w_emb_t.T, rest[0])
    x = w_emb_t[ids] + pos[:ids.shape[1]]
    for w_q, w_k, w_v, w_o, w1, w2 in blocks:
        x = x + _mha_torch(F.layer_norm(x, x.shape[-1:]), w_q, w_k, w_v, w_o, num_heads)
        x = x + _gelu_torch(F.layer_norm(x, x.shape[-1:]) @ w1) @ w2
    return (x[mask > 0.5] @ w_head).numpy()


def in_float64(fn):
    """``fn`` computed in float64 and cast back to the inputs' float dtype (each output)."""
    def wide(a):
        return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a

    def wrapped(*args, **kwargs):   # the judge passes optional arguments by keyword too
        dtype = next(a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f")
        out = fn(*[wide(a) for a in args], **{k: wide(v) for k, v in kwargs.items()})
        if isinstance(out, tuple):
            return tuple(np.asarray(o).astype(dtype) for o in out)
        return np.asarray(out).astype(dtype)
    return wrapped


MLM = {"numpy log-softmax": _mlm_numpy(_softmax_log),
       "numpy softmax, max shift, einsum, np.var": _mlm_numpy(_softmax_shift),
       "torch.nn.functional": mlm_torch,
       "float64 inside": in_float64(_mlm_numpy(_softmax_shift))}


def _attention(softmax):
    def attention(x, w_q, w_k, w_v, w_o, num_heads):
        return _mha_einsum(x, w_q, w_k, w_v, w_o, num_heads, softmax)
    return attention


def attention_torch(x, w_q, w_k, w_v, w_o, num_heads):
    return _mha_torch(*[_t(a) for a in (x, w_q, w_k, w_v, w_o)], num_heads).numpy()


ATTENTION = {"numpy log-softmax": _attention(_softmax_log),
             "numpy softmax, max shift": _attention(_softmax_shift),
             "torch.nn.functional": attention_torch,
             "float64 inside": in_float64(_attention(_softmax_shift))}


def _layer_norm_numpy(x, weight=None, bias=None, eps=1e-5):
    y = _ln_var(x, eps)
    y = y * weight if weight is not None else y
    return y + bias if bias is not None else y


def _layer_norm_torch(x, weight=None, bias=None, eps=1e-5):
    return F.layer_norm(_t(x), x.shape[-1:], _t(weight), _t(bias), eps).numpy()


LAYER_NORM = {"numpy np.var": _layer_norm_numpy, "torch.nn.functional": _layer_norm_torch,
              "float64 inside": in_float64(_layer_norm_numpy)}

GELU = {"numpy": _gelu,
        "torch tanh GELU": lambda x: F.gelu(_t(np.asarray(x)), approximate="tanh").numpy(),
        "float64 inside": in_float64(_gelu)}


def _ce_numpy(logits, targets, ignore_index=-100):
    keep = targets != ignore_index
    z = logits[keep]
    m = z.max(-1, keepdims=True)
    logp = z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))
    return -logp[np.arange(len(z)), targets[keep]].mean()


def _ce_torch(logits, targets, ignore_index=-100):
    v = logits.shape[-1]
    return F.cross_entropy(_t(logits).reshape(-1, v), _t(targets).reshape(-1).long(),
                           ignore_index=ignore_index).numpy()


CROSS_ENTROPY = {"numpy log-softmax": _ce_numpy, "torch.nn.functional": _ce_torch,
                 "float64 inside": in_float64(_ce_numpy)}

TIED_HEAD = {"numpy einsum": lambda h, E: np.einsum("ntd,vd->ntv", h, E),
             "torch": lambda h, E: (_t(h) @ _t(E).T).numpy(),
             "float64 inside": in_float64(lambda h, E: h @ E.T)}

def _erank_numpy(A):
    s = np.linalg.svd(A, compute_uv=False)
    p = s / s.sum()
    return np.exp(-np.sum(p * np.log(np.where(p > 0, p, 1.0))))


def _erank_torch(A):
    s = torch.linalg.svdvals(_t(A))
    p = s / s.sum()
    return torch.exp(-torch.special.xlogy(p, p).sum()).numpy()


EFFECTIVE_RANK = {"numpy where(p > 0)": _erank_numpy, "torch svdvals + xlogy": _erank_torch,
                  "float64 inside": in_float64(_erank_numpy)}


def _cbow_numpy(context_ids, target_ids, w_in, w_out):
    b, c = context_ids.shape
    h = w_in[context_ids].mean(axis=1)                       # (B, d)
    z = h @ w_out.T                                          # (B, V)
    m = z.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(axis=1, keepdims=True))
    loss = (lse[:, 0] - z[np.arange(b), target_ids]).mean()
    probs = np.exp(z - lse)
    probs[np.arange(b), target_ids] -= 1
    dh = probs @ w_out / (b * c)                             # (B, d), one context slot's share
    grad = np.zeros_like(w_in)
    np.add.at(grad, context_ids, np.repeat(dh[:, None, :], c, axis=1))
    return loss, grad


def _cbow_torch(context_ids, target_ids, w_in, w_out):
    w = _t(w_in).clone().requires_grad_(True)
    h = w[_t(context_ids)].mean(dim=1)
    loss = F.cross_entropy(h @ _t(w_out).T, _t(target_ids).long())
    loss.backward()
    return loss.detach().numpy(), w.grad.numpy()


CBOW = {"numpy np.add.at": _cbow_numpy, "torch autograd": _cbow_torch,
        "float64 inside": in_float64(_cbow_numpy)}

VARIANTS = {"mlm-forward-pass": MLM, "mlm-with-tied-output-head": MLM,
            "multi-head-self-attention": ATTENTION, "layer-norm": LAYER_NORM,
            "gelu-tanh": GELU, "cross-entropy": CROSS_ENTROPY, "tied-head-logits": TIED_HEAD,
            "effective-rank": EFFECTIVE_RANK, "cbow-step": CBOW}


def sweep(ex_id: str, seeds) -> dict[str, dict[str, int]]:
    """``{variant: {kind: failing seeds}}`` for the variants of ``ex_id`` that fail anywhere
    (empty when every variant passes every case of every seed)."""
    from minimodel.lab.exercises import get_exercise
    from minimodel.lab.exercises.clauses import failing_kinds

    ex = get_exercise(ex_id)
    failures: dict[str, dict[str, int]] = {}
    for name, fn in VARIANTS[ex_id].items():
        for seed in seeds:
            for kind in failing_kinds(ex, fn, seed):
                counts = failures.setdefault(name, {})
                counts[kind] = counts.get(kind, 0) + 1
    return failures


if __name__ == "__main__":
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    for exercise_id in VARIANTS:
        result = sweep(exercise_id, range(n))
        print(f"{exercise_id}: {len(VARIANTS[exercise_id])} variants x {n} seeds, failures: "
              f"{result or 'none'}", flush=True)
