"""Fused composites: one Function (one forward, one hand-derived backward) per formula.

Each of these *could* be written from the primitives in :mod:`minimodel.ops` (the tests check
that it gives the same values and gradients as that composite). Fusing pays because the
composite would allocate a temporary array per primitive and keep several of them alive for
backward; on an (N, V) logits matrix that is the difference between one pass over memory and
six.
"""

from __future__ import annotations

import math

import numpy as np

from minimodel.autograd import Function

_GELU_C = math.sqrt(2.0 / math.pi)  # a Python float keeps float32 arrays float32 (NEP 50)
_GELU_A = 0.044715


class Softmax(Function):
    r"""softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), with m = max_j x_j for stability.

    Backward: dx = y * (g - sum_j g_j y_j).
    """

    @staticmethod
    def forward(ctx, x, axis=-1):
        y = x - x.max(axis=axis, keepdims=True)
        np.exp(y, out=y)
        y /= y.sum(axis=axis, keepdims=True)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return (y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)),)


class LogSoftmax(Function):
    r"""log_softmax(x)_i = x_i - m - log sum_j exp(x_j - m).

    Backward: dx = g - softmax(x) * sum_j g_j.
    """

    @staticmethod
    def forward(ctx, x, axis=-1):
        shifted = x - x.max(axis=axis, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        ctx.save_for_backward(out)
        ctx.axis = axis
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return (g - np.exp(out) * g.sum(axis=ctx.axis, keepdims=True),)


class CrossEntropy(Function):
    r"""Mean negative log-likelihood of ``targets`` under softmax(``logits``).

    logits (N, V), targets (N,) ints; rows whose target is ``ignore_index`` do not count:

        loss = (1 / |valid|) * sum_{n valid} [ logsumexp(logits_n) - logits_{n, t_n} ]
        dlogits_n = (softmax(logits_n) - onehot(t_n)) / |valid|      (zero for ignored rows)

    Only one (N, V) array is kept for backward: the probabilities, updated in place.
    """

    CHUNK_ROWS = 64  # rows per pass: a (64, V) slice stays in cache for max/exp/sum/divide

    @staticmethod
    def forward(ctx, logits, targets, ignore_index=-100):
        n = logits.shape[0]
        valid = targets != ignore_index  # (N,)
        safe_targets = np.where(valid, targets, 0)
        probs = np.empty_like(logits)  # (N, V), the one buffer kept for backward
        nll = np.empty(n, dtype=logits.dtype)  # (N,)
        step = CrossEntropy.CHUNK_ROWS
        for start in range(0, n, step):
            rows, out = logits[start:start + step], probs[start:start + step]
            np.subtract(rows, rows.max(axis=1, keepdims=True), out=out)  # shifted logits
            target_logit = out[np.arange(out.shape[0]), safe_targets[start:start + step]]
            np.exp(out, out=out)
            sums = out.sum(axis=1)
            nll[start:start + step] = np.log(sums) - target_logit
            out /= sums[:, None]  # softmax
        count = int(valid.sum())
        # With nothing to predict the loss is defined as 0 (PyTorch gives nan); no gradient.
        loss = (nll * valid).sum() / max(count, 1)
        ctx.save_for_backward(probs, safe_targets, valid)
        ctx.count = count
        return np.asarray(loss, dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        probs, targets, valid = ctx.saved_tensors
        grad = probs  # reuse the saved buffer: the graph is freed after backward anyway
        grad[np.arange(grad.shape[0]), targets] -= 1
        scale = (g / max(ctx.count, 1)).astype(grad.dtype)
        grad *= (valid * scale)[:, None].astype(grad.dtype)
        return grad, None


class LayerNorm(Function):
    r"""y = (x - mean) / sqrt(var + eps) * weight + bias over the last axis.

    var is the population variance (divide by d, not d - 1). With x_hat the normalised input
    and r = 1 / sqrt(var + eps), the backward pass is

        dx_hat = g * weight
        dx     = r * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))
        dweight = sum over rows of g * x_hat,   dbias = sum over rows of g
    """

    @staticmethod
    def forward(ctx, x, *affine, eps=1e-5):
        d = x.shape[-1]
        x_hat = x - x.mean(axis=-1, keepdims=True)  # (..., d), centred
        tmp = x_hat * x_hat
        var = tmp.sum(axis=-1, keepdims=True)
        var *= 1.0 / d  # population variance
        var += eps
        rstd = 1.0 / np.sqrt(var)  # (..., 1)
        x_hat *= rstd
        ctx.save_for_backward(x_hat, rstd, *affine)
        if not affine:
            return x_hat.copy()
        np.multiply(x_hat, affine[0], out=tmp)  # reuse the buffer: y = x_hat * weight + bias
        tmp += affine[1]
        return tmp

    @staticmethod
    def backward(ctx, g):
        x_hat, rstd, *affine = ctx.saved_tensors
        d = x_hat.shape[-1]
        dx = g * affine[0] if affine else g.copy()  # dx_hat
        tmp = dx * x_hat
        mean_dxhat_xhat = tmp.sum(axis=-1, keepdims=True)
        mean_dxhat_xhat *= 1.0 / d
        mean_dxhat = dx.sum(axis=-1, keepdims=True)
        mean_dxhat *= 1.0 / d
        dx -= mean_dxhat
        np.multiply(x_hat, mean_dxhat_xhat, out=tmp)
        dx -= tmp
        dx *= rstd
        if not affine:
            return (dx,)
        np.multiply(g, x_hat, out=tmp)
        dweight = tmp.reshape(-1, d).sum(axis=0)
        dbias = g.reshape(-1, d).sum(axis=0)
        return (dx, dweight if ctx.needs_input_grad[1] else None,
                dbias if ctx.needs_input_grad[2] else None)


class GELU(Function):
    r"""GELU, tanh approximation: y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).

    dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), with t = tanh(u).
    """

    @staticmethod
    def forward(ctx, x):
        # In-place temporaries: two (..., n) buffers instead of one per arithmetic step.
        # (A 0-d input is viewed as 1-d: NumPy turns 0-d results into scalars, which out=
        # cannot write into.)
        ctx.shape = x.shape
        x = x.reshape(-1) if x.ndim == 0 else x
        t = x * x
        t *= _GELU_A
        t += 1.0
        t *= x
        t *= _GELU_C
        np.tanh(t, out=t)  # t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
        y = t + 1.0
        y *= x
        y *= 0.5
        ctx.save_for_backward(x, t)
        return y.reshape(ctx.shape)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        a = x * x
        a *= 3.0 * _GELU_A
        a += 1.0
        a *= x
        a *= 0.5 * _GELU_C  # 0.5 x sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        b = t * t
        np.subtract(1.0, b, out=b)  # 1 - t^2
        a *= b
        np.multiply(t, 0.5, out=b)
        a += b
        a += 0.5  # + 0.5 (1 + t)
        a *= g.reshape(a.shape)
        return (a.reshape(ctx.shape),)


class LinearCrossEntropy(Function):
    r"""cross_entropy(h @ W.T, targets) without ever holding the (N, V) logits.

    h (N, d), W (V, d) (an output head, tied or not), targets (N,). The rows are processed in
    chunks of ``chunk_rows``; each chunk's logits (chunk, V) live only inside the loop. Because
    the loss is a scalar, its gradient is known up to the factor g = dL/dloss already during the
    forward pass, so each chunk also adds its share of the gradients

        dlogits_c = (softmax(logits_c) - onehot(t_c)) / |valid|
        dh_c = dlogits_c @ W,        dW += dlogits_c.T @ h_c

    and backward only multiplies the stored dh (N, d) and dW (V, d) by g. Peak memory is one
    chunk of logits instead of about three (N, V) arrays, at the same number of matmuls.
    """

    @staticmethod
    def forward(ctx, h, weight, targets, ignore_index=-100, chunk_rows=256):
        from minimodel.autograd import is_grad_enabled

        n = h.shape[0]
        valid = targets != ignore_index  # (N,)
        safe_targets = np.where(valid, targets, 0)
        count = max(int(valid.sum()), 1)
        want_dh = is_grad_enabled() and ctx.needs_input_grad[0]
        want_dw = is_grad_enabled() and ctx.needs_input_grad[1]
        dh = np.empty_like(h) if want_dh else None  # (N, d)
        dw = np.zeros_like(weight) if want_dw else None  # (V, d)
        dw_chunk = np.empty_like(weight) if want_dw else None  # reused for every chunk
        total = 0.0
        for start in range(0, n, chunk_rows):
            stop = min(start + chunk_rows, n)
            h_c, t_c, v_c = h[start:stop], safe_targets[start:stop], valid[start:stop]
            rows = np.arange(stop - start)
            logits = h_c @ weight.T  # (c, V), the only chunk-sized buffer
            logits -= logits.max(axis=1, keepdims=True)
            target_logit = logits[rows, t_c]  # (c,)
            np.exp(logits, out=logits)
            sums = logits.sum(axis=1)  # (c,)
            total += float(((np.log(sums) - target_logit) * v_c).sum())
            if want_dh or want_dw:
                logits /= sums[:, None]  # softmax
                logits[rows, t_c] -= 1.0
                logits *= (v_c / h.dtype.type(count)).astype(h.dtype)[:, None]  # dlogits_c
                if want_dh:
                    np.matmul(logits, weight, out=dh[start:stop])  # (c, d)
                if want_dw:
                    np.matmul(logits.T, h_c, out=dw_chunk)  # (V, d)
                    dw += dw_chunk
        ctx.save_for_backward(dh, dw)
        return np.asarray(total / count, dtype=h.dtype)

    @staticmethod
    def backward(ctx, g):
        dh, dw = ctx.saved_tensors
        # Scale in place: these buffers are ours and the graph is freed after backward, so a
        # second (V, d) copy would only raise the peak memory. g is 1 for a plain loss.
        if float(g) != 1.0:
            for grad in (dh, dw):
                if grad is not None:
                    grad *= g.astype(grad.dtype)
        return dh, dw, None


_NEG_MASKS: dict[tuple[int, np.dtype], np.ndarray] = {}


def _additive_causal_mask(t: int, dtype: np.dtype) -> np.ndarray:
    """(T, T) array: 0 on and below the diagonal, -inf above (future keys); cached."""
    key = (t, np.dtype(dtype))
    if key not in _NEG_MASKS:
        _NEG_MASKS[key] = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, 0).astype(dtype)
    return _NEG_MASKS[key]


class SelfAttention(Function):
    r"""Multi-head self-attention from the packed projection: (B, T, 3d) -> (B, T, d).

    With q, k, v the three thirds of ``qkv`` split into H heads of size dh = d / H,

        A = softmax(q k^T / sqrt(dh) [+ causal mask]),   y = A v

    Backward (per head), with dA the gradient of A:

        dv = A^T dy,   dA = dy v^T,   dS = A * (dA - sum_j dA_j A_j) / sqrt(dh),
        dq = dS k,     dk = dS^T q

    One node replaces the split, the head reshapes, the scale, the mask and the softmax of the
    composite ``F.scaled_dot_product_attention`` (which the tests compare it with), and dq, dk,
    dv are written straight into one (B, T, 3, H, dh) buffer.
    """

    @staticmethod
    def forward(ctx, qkv, n_heads, causal=False):
        B, T, d3 = qkv.shape
        d = d3 // 3
        dh = d // n_heads
        q, k, v = qkv.reshape(B, T, 3, n_heads, dh).transpose(2, 0, 3, 1, 4)  # 3 x (B, H, T, dh)
        scale = 1.0 / math.sqrt(dh)
        att = np.matmul(q, k.swapaxes(-1, -2))  # (B, H, T, T)
        att *= scale
        if causal:
            att += _additive_causal_mask(T, att.dtype)
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
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)  # views into dqkv
        np.matmul(att.swapaxes(-1, -2), gy, out=dv)
        datt = np.matmul(gy, v.swapaxes(-1, -2))  # (B, H, T, T)
        datt -= (datt * att).sum(axis=-1, keepdims=True)
        datt *= att
        datt *= ctx.scale
        np.matmul(datt, k, out=dq)
        np.matmul(datt.swapaxes(-1, -2), q, out=dk)
        return (dqkv.reshape(B, T, 3 * H * dh),)
