"""ROUND 1 prototypes (NOT library code), measured against the engine at d92bfb2 / a6b5322.
Equivalent code was merged upstream in f467fb0 (ops.Linear, fused.SelfAttention, in-place
GELU / LayerNorm, chunked CrossEntropy), so installing these today swaps like for like;
except `leafcopy` and `adamw`, which were not adopted (adamw's g + b(m - g) form cancels in
float32 — upstream's comment in optim.AdamW.step is right; it also gave no speed-up).

``install(names)`` monkeypatches minimodel *in this process only* so the end-to-end step can be
timed with a subset of the proposals applied; ``PROPOSALS`` lists them. Each prototype has the
same Function shape as minimodel.fused (forward/backward on NumPy arrays).
"""
from __future__ import annotations

import math

import numpy as np

import minimodel.autograd as ag
import minimodel.fused as fused
import minimodel.functional as F
import minimodel.tensor as tn
from minimodel import ops
from minimodel.autograd import Function
from minimodel.nn import attention as nn_attention
from minimodel.nn import layers as nn_layers

_C = math.sqrt(2.0 / math.pi)
_A = 0.044715


# --------------------------------------------------------------------------- P1 Linear
class LinearFn(Function):
    """y = x @ W.T + b as ONE 2-D GEMM over the flattened leading axes, bias added in place.

    Backward: dx = g2 @ W, dW = g2.T @ x2 (already (out, in) and C-contiguous, so the leaf
    takes it without a copy), db = g2.sum(0).
    """

    @staticmethod
    def forward(ctx, x, w, *bias):
        k = x.shape[-1]
        x2 = x.reshape(-1, k)
        y = x2 @ w.T  # (N, out)
        if bias:
            y += bias[0]
        ctx.save_for_backward(x2, w)
        ctx.x_shape = x.shape
        return y.reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, g):
        x2, w = ctx.saved_tensors
        g2 = g.reshape(-1, w.shape[0])
        need = ctx.needs_input_grad
        dx = (g2 @ w).reshape(ctx.x_shape) if need[0] else None
        dw = g2.T @ x2 if need[1] else None
        out = (dx, dw)
        if len(need) == 3:
            out += (g2.sum(axis=0) if need[2] else None,)
        return out


def _linear_forward(self, x):
    nn_layers._check_last_dim(x, self.in_features, "Linear")
    if self.bias is None:
        return LinearFn.apply(x, self.weight)
    return LinearFn.apply(x, self.weight, self.bias)


class TiedHeadFn(Function):
    """logits = h @ E.T as one 2-D GEMM; dE = g2.T @ h2 owned (no leaf copy)."""

    forward = LinearFn.forward
    backward = LinearFn.backward


def _tied_head_forward(self, h):
    nn_layers._check_last_dim(h, self.d_model, "TiedHead")
    return LinearFn.apply(h, self.weight)


# --------------------------------------------------------------------------- P2 attention
_MASKS: dict = {}


def _neg_mask(t: int, dtype) -> np.ndarray:
    key = (t, np.dtype(dtype))
    if key not in _MASKS:
        _MASKS[key] = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, 0).astype(dtype)
    return _MASKS[key]


class CausalAttentionFn(Function):
    """(B, T, 3d) c_attn output -> (B, T, d) causal multi-head attention, one node.

    Replaces GetItem x3 (+ their zero-filled backward and the engine's sums), Reshape/Transpose,
    the scale Mul, the Where mask and the Softmax node. dq, dk, dv are written straight into
    one (B, T, 3, H, dh) gradient buffer.
    """

    @staticmethod
    def forward(ctx, qkv, n_heads):
        B, T, C3 = qkv.shape
        d = C3 // 3
        dh = d // n_heads
        q, k, v = qkv.reshape(B, T, 3, n_heads, dh).transpose(2, 0, 3, 1, 4)  # 3 x (B,H,T,dh)
        scale = 1.0 / math.sqrt(dh)
        att = np.matmul(q, k.swapaxes(-1, -2))  # (B, H, T, T)
        att *= scale
        att += _neg_mask(T, att.dtype)
        att -= att.max(axis=-1, keepdims=True)
        np.exp(att, out=att)
        att /= att.sum(axis=-1, keepdims=True)
        y = np.matmul(att, v)  # (B, H, T, dh)
        ctx.save_for_backward(q, k, v, att)
        ctx.scale = scale
        return y.transpose(0, 2, 1, 3).reshape(B, T, d)

    @staticmethod
    def backward(ctx, g):
        q, k, v, att = ctx.saved_tensors
        B, H, T, dh = q.shape
        gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh) view
        dqkv = np.empty((B, T, 3, H, dh), dtype=g.dtype)
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)
        np.matmul(att.swapaxes(-1, -2), gy, out=dv)
        datt = np.matmul(gy, v.swapaxes(-1, -2))  # (B, H, T, T)
        tmp = datt * att
        datt -= tmp.sum(axis=-1, keepdims=True)
        datt *= att
        datt *= ctx.scale
        np.matmul(datt, k, out=dq)
        np.matmul(datt.swapaxes(-1, -2), q, out=dk)
        return (dqkv.reshape(B, T, 3 * H * dh),)


_ORIG_MHA_FORWARD = nn_attention.MultiHeadAttention.forward


def _mha_forward(self, x, cache=None):
    if cache is not None or not self.causal or x.ndim != 3:
        return _ORIG_MHA_FORWARD(self, x, cache)
    y = CausalAttentionFn.apply(self.c_attn(x), n_heads=self.n_heads)  # (B, T, d)
    return self.resid_dropout(self.c_proj(y))


# --------------------------------------------------------------------------- P3 GELU
class GELUFn(Function):
    """Same maths as fused.GELU with in-place temporaries (2 allocations fwd, 2 bwd)."""

    @staticmethod
    def forward(ctx, x):
        t = x * x
        t *= _A
        t += 1.0
        t *= x
        t *= _C
        np.tanh(t, out=t)  # t = tanh(C (x + A x^3))
        y = t + 1.0
        y *= x
        y *= 0.5
        ctx.save_for_backward(x, t)
        return y

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        # dy/dx = 0.5 (1 + t) + 0.5 C x (1 - t^2) (1 + 3 A x^2)
        a = x * x
        a *= 3.0 * _A
        a += 1.0
        a *= x
        a *= 0.5 * _C
        b = t * t
        np.subtract(1.0, b, out=b)
        a *= b
        np.multiply(t, 0.5, out=b)
        a += b
        a += 0.5
        a *= g
        return (a,)


# --------------------------------------------------------------------------- P4 LayerNorm
class LayerNormFn(Function):
    """fused.LayerNorm with fewer temporaries: 2 allocations fwd, 2 bwd (was 5 and 7)."""

    @staticmethod
    def forward(ctx, x, *affine, eps=1e-5):
        d = x.shape[-1]
        x_hat = x - x.mean(axis=-1, keepdims=True)
        tmp = x_hat * x_hat
        var = tmp.sum(axis=-1, keepdims=True)
        var *= 1.0 / d
        var += eps
        rstd = 1.0 / np.sqrt(var)
        x_hat *= rstd
        ctx.save_for_backward(x_hat, rstd, *affine)
        if not affine:
            return x_hat.copy()
        np.multiply(x_hat, affine[0], out=tmp)
        tmp += affine[1]
        return tmp

    @staticmethod
    def backward(ctx, g):
        x_hat, rstd, *affine = ctx.saved_tensors
        d = x_hat.shape[-1]
        dx = g * affine[0] if affine else g.copy()
        tmp = dx * x_hat
        m2 = tmp.sum(axis=-1, keepdims=True)
        m2 *= 1.0 / d
        m1 = dx.sum(axis=-1, keepdims=True)
        m1 *= 1.0 / d
        dx -= m1
        np.multiply(x_hat, m2, out=tmp)
        dx -= tmp
        dx *= rstd
        if not affine:
            return (dx,)
        g2 = g.reshape(-1, d)
        np.multiply(g, x_hat, out=tmp)
        dweight = tmp.reshape(-1, d).sum(axis=0)
        dbias = g2.sum(axis=0)
        return (dx, dweight if ctx.needs_input_grad[1] else None,
                dbias if ctx.needs_input_grad[2] else None)


# --------------------------------------------------------------------------- P5 cross-entropy
class CrossEntropyFn(Function):
    """fused.CrossEntropy working row-chunk by row-chunk (each chunk stays in cache for the
    max / subtract / exp / sum / divide passes) into one probs buffer."""

    CHUNK = 64

    @staticmethod
    def forward(ctx, logits, targets, ignore_index=-100):
        n, V = logits.shape
        valid = targets != ignore_index
        safe = np.where(valid, targets, 0)
        probs = np.empty_like(logits)
        nll = np.empty(n, dtype=logits.dtype)
        step = CrossEntropyFn.CHUNK
        for s in range(0, n, step):
            lc, pc = logits[s:s + step], probs[s:s + step]
            np.subtract(lc, lc.max(axis=1, keepdims=True), out=pc)
            tl = pc[np.arange(pc.shape[0]), safe[s:s + step]]
            np.exp(pc, out=pc)
            sums = pc.sum(axis=1)
            nll[s:s + step] = np.log(sums) - tl
            pc /= sums[:, None]
        count = int(valid.sum())
        loss = (nll * valid).sum() / max(count, 1)
        ctx.save_for_backward(probs, safe, valid)
        ctx.count = count
        return np.asarray(loss, dtype=logits.dtype)

    backward = fused.CrossEntropy.backward


# --------------------------------------------------------------------------- P6 engine
def _accumulate_grad(self, g, fresh):
    """Accept F-contiguous/owned-by-a-temporary gradients without copying (transpose views)."""
    if g.dtype != self.dtype:
        g, fresh = g.astype(self.dtype), True
    if self._grad is None:
        base = g if g.base is None else g.base
        own = (fresh and g.flags.writeable and (g.flags.c_contiguous or g.flags.f_contiguous)
               and base.size == g.size)
        self._grad = g if own else g.copy()
    else:
        self._grad += g


# --------------------------------------------------------------------------- P7 AdamW
def adamw_step(self):
    """Fewer passes: decay folded into the update, (1 - b) scalings folded into the m/v update."""
    import math as _m
    for group in self.param_groups:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            state = self.state.get(p)
            if state is None:
                state = self.state[p] = {"step": 0, "exp_avg": np.zeros_like(p.data),
                                         "exp_avg_sq": np.zeros_like(p.data)}
            state["step"] += 1
            t = state["step"]
            m, v = state["exp_avg"], state["exp_avg_sq"]
            buf = state.get("_scratch")
            if buf is None:
                buf = state["_scratch"] = np.empty_like(p.data)
            if wd:
                p.data *= 1.0 - lr * wd
            m -= g; m *= b1; m += g                  # b1 m + (1 - b1) g  ==  g + b1 (m - g)
            np.multiply(g, g, out=buf)
            v -= buf; v *= b2; v += buf              # b2 v + (1 - b2) g^2
            np.sqrt(v, out=buf)
            buf += eps * _m.sqrt(1.0 - b2 ** t)      # sqrt(v) + eps sqrt(bias2)
            np.divide(m, buf, out=buf)
            buf *= lr * _m.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)
            p.data -= buf


# --------------------------------------------------------------------------- install
PROPOSALS = {
    "linear": lambda: setattr(nn_layers.Linear, "forward", _linear_forward),
    "head": lambda: setattr(nn_layers.TiedHead, "forward", _tied_head_forward),
    "attention": lambda: setattr(nn_attention.MultiHeadAttention, "forward", _mha_forward),
    "gelu": lambda: setattr(fused, "GELU", GELUFn),
    "layernorm": lambda: setattr(fused, "LayerNorm", LayerNormFn),
    "ce": lambda: setattr(fused, "CrossEntropy", CrossEntropyFn),
    "leafcopy": lambda: setattr(tn.Tensor, "_accumulate_grad", _accumulate_grad),
    "adamw": lambda: setattr(__import__("minimodel.optim", fromlist=["AdamW"]).AdamW, "step",
                             adamw_step),
}


def install(names) -> None:
    for n in names:
        PROPOSALS[n]()
