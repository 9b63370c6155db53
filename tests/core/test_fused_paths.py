"""Each fused or chunked fast path equals the plain composite path (values and gradients)."""

import numpy as np
import pytest

import minimodel as mm
import minimodel.functional as F
from minimodel import fused, ops


def _grads(fn, *arrays):
    tensors = [mm.Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    weights = np.random.default_rng(7).normal(size=out.shape)
    (out * mm.Tensor(weights)).sum().backward()
    return out.data, [t.grad for t in tensors]


def _composite_attention(qkv, n_heads, causal):
    B, T, d3 = qkv.shape
    q, k, v = ops.split(qkv, 3, axis=-1)
    heads = [t.reshape(B, T, n_heads, d3 // 3 // n_heads).transpose(0, 2, 1, 3) for t in (q, k, v)]
    y = F.scaled_dot_product_attention(*heads, causal=causal)
    return y.transpose(0, 2, 1, 3).reshape(B, T, d3 // 3)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("n_heads", [1, 3])
def test_fused_self_attention_equals_composite(causal, n_heads):
    qkv = np.random.default_rng(n_heads).normal(size=(2, 5, 3 * 6))
    fast, fast_g = _grads(lambda x: fused.SelfAttention.apply(x, n_heads=n_heads, causal=causal), qkv)
    slow, slow_g = _grads(lambda x: _composite_attention(x, n_heads, causal), qkv)
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    np.testing.assert_allclose(fast_g[0], slow_g[0], atol=1e-12)


def test_fused_self_attention_is_causal():
    qkv = np.random.default_rng(0).normal(size=(1, 4, 6))
    changed = qkv.copy()
    changed[0, 3] += 1.0  # only the last position changes
    a = fused.SelfAttention.apply(mm.Tensor(qkv), n_heads=2, causal=True).data
    b = fused.SelfAttention.apply(mm.Tensor(changed), n_heads=2, causal=True).data
    np.testing.assert_array_equal(a[0, :3], b[0, :3])


def test_linear_primitive_equals_matmul_transpose_add():
    rng = np.random.default_rng(1)
    x, w, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 4)), rng.normal(size=5)
    fast, fast_g = _grads(lambda x, w, b: F.linear(x, w, b), x, w, b)
    slow, slow_g = _grads(lambda x, w, b: x @ w.T + b, x, w, b)
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    for f, s in zip(fast_g, slow_g):
        np.testing.assert_allclose(f, s, atol=1e-12)
    with pytest.raises(ValueError, match="last axis of size 4"):
        F.linear(mm.Tensor(np.ones((2, 3))), mm.Tensor(w))


def test_fused_gelu_layernorm_crossentropy_equal_their_formulas():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 70, 6))
    c = np.sqrt(2 / np.pi)
    fast, fast_g = _grads(F.gelu, x)
    slow, slow_g = _grads(lambda t: 0.5 * t * (1 + (c * (t + 0.044715 * t ** 3)).tanh()), x)
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    np.testing.assert_allclose(fast_g[0], slow_g[0], atol=1e-12)
    w, b = rng.normal(size=6), rng.normal(size=6)

    def plain_ln(t, w, b):
        mu = t.mean(axis=-1, keepdims=True)
        var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
        return (t - mu) / (var + 1e-5).sqrt() * w + b
    fast, fast_g = _grads(lambda t, w, b: F.layer_norm(t, 1e-5, w, b), x, w, b)
    slow, slow_g = _grads(plain_ln, x, w, b)
    np.testing.assert_allclose(fast, slow, atol=1e-10)
    for f, s in zip(fast_g, slow_g):
        np.testing.assert_allclose(f, s, atol=1e-10)
    # cross-entropy over more rows than one 64-row chunk
    logits, targets = rng.normal(size=(150, 9)), rng.integers(0, 9, 150)
    targets[::7] = -100
    fast, fast_g = _grads(lambda z: F.cross_entropy(z, targets), logits)
    keep = targets != -100
    slow, slow_g = _grads(lambda z: -(F.log_softmax(z)[np.flatnonzero(keep), targets[keep]]).mean(),
                          logits)
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    np.testing.assert_allclose(fast_g[0], slow_g[0], atol=1e-12)
