"""Finite-difference gradient checks (float64) for the composites in ``minimodel.functional``,
and a check that each fused kernel equals the same formula written with primitives.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minimodel.functional as F
from core_gradcheck import check_grads
from minimodel import Tensor, ops

FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
seeds = st.integers(0, 2**31 - 1)


def make(rng, shape, lo=-2.0, hi=2.0, transposed=False):
    shape = tuple(shape)
    if transposed and len(shape) >= 2:
        return rng.uniform(lo, hi, size=shape[::-1]).T
    return rng.uniform(lo, hi, size=shape)


# --------------------------------------------------------------------------- softmax family
@FAST
@given(data=st.data(), seed=seeds, transposed=st.booleans())
def test_softmax_and_log_softmax_gradients(data, seed, transposed):
    """softmax / log_softmax over any axis, on contiguous and transposed inputs."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x = make(rng, shape, -3, 3, transposed)
    check_grads(lambda t: F.softmax(t, axis=axis), x)
    check_grads(lambda t: F.log_softmax(t, axis=axis), x)


def test_softmax_is_shift_invariant_and_sums_to_one():
    """softmax(x + c) == softmax(x), rows sum to 1, and large logits do not overflow."""
    x = np.array([[1000.0, 1001.0, 999.0], [-5.0, 0.0, 5.0]])
    y = F.softmax(Tensor(x)).data
    np.testing.assert_allclose(y.sum(axis=-1), [1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(y[0], F.softmax(Tensor(x[0] - 1000.0)).data, rtol=1e-12)
    e = np.exp(x[1] - x[1].max())
    np.testing.assert_allclose(y[1], e / e.sum(), rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(Tensor(x)).data, np.log(y), rtol=1e-12)


@FAST
@given(batch=hnp.array_shapes(min_dims=1, max_dims=2, max_side=4), vocab=st.integers(1, 5),
       seed=seeds, p_ignore=st.sampled_from([0.0, 0.3, 0.7]))
def test_cross_entropy_gradient_with_ignore_index(batch, vocab, seed, p_ignore):
    """cross_entropy over (..., V) logits; positions labelled -100 do not count."""
    rng = np.random.default_rng(seed)
    logits = make(rng, batch + (vocab,), -3, 3)
    targets = rng.integers(0, vocab, size=batch)
    targets[rng.random(batch) < p_ignore] = -100
    targets.reshape(-1)[0] = rng.integers(0, vocab)  # at least one live position
    (g,) = check_grads(lambda t: F.cross_entropy(t, targets), logits, wrt=[0])
    assert np.all(g[targets == -100] == 0)


def test_cross_entropy_value_matches_hand_computation():
    """mean over live rows of logsumexp(row) - row[target]; ignored rows excluded from the count."""
    logits = np.array([[2.0, 0.5, -1.0], [0.0, 0.0, 0.0], [1.0, 3.0, 0.2]])
    targets = np.array([0, -100, 1])
    loss = F.cross_entropy(Tensor(logits), targets).item()
    lse = np.log(np.exp(logits).sum(axis=1))
    expected = ((lse[0] - 2.0) + (lse[2] - 3.0)) / 2
    assert loss == pytest.approx(expected, rel=1e-12)


def test_cross_entropy_custom_ignore_index():
    """ignore_index is honoured when it is not -100."""
    logits = np.array([[2.0, 0.5], [0.1, 0.3]])
    loss = F.cross_entropy(Tensor(logits), np.array([0, 7]), ignore_index=7).item()
    assert loss == pytest.approx(np.log(np.exp(2.0) + np.exp(0.5)) - 2.0, rel=1e-12)


def test_cross_entropy_all_ignored_is_zero_with_zero_gradient():
    """With every position ignored the loss is 0 (documented) and the gradient is all zeros."""
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    loss = F.cross_entropy(x, np.array([-100, -100]))
    assert loss.item() == 0.0
    loss.backward()
    np.testing.assert_array_equal(x.grad, np.zeros((2, 3)))


# --------------------------------------------------------------------------- layer norm, gelu
@FAST
@given(batch=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), d=st.integers(2, 6),
       seed=seeds, affine=st.booleans(), transposed=st.booleans())
def test_layer_norm_gradient_with_and_without_affine(batch, d, seed, affine, transposed):
    """layer_norm over the last axis; with affine, weight and bias gradients too."""
    rng = np.random.default_rng(seed)
    x = make(rng, batch + (d,), transposed=transposed)
    if affine:
        w, b = make(rng, (d,)), make(rng, (d,))
        check_grads(lambda t, tw, tb: F.layer_norm(t, 1e-5, tw, tb), x, w, b)
    else:
        check_grads(lambda t: F.layer_norm(t), x)


def test_layer_norm_output_has_zero_mean_unit_variance():
    """Without affine each row has mean 0 and population variance var/(var+eps)."""
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=(4, 16))
    y = F.layer_norm(Tensor(x), eps=1e-5).data
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    var = x.var(axis=-1)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + 1e-5), rtol=1e-10)


@FAST
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), seed=seeds,
       transposed=st.booleans())
def test_gelu_gradient(shape, seed, transposed):
    """GELU (tanh approximation) on values spanning both tails."""
    rng = np.random.default_rng(seed)
    check_grads(F.gelu, make(rng, shape, -4, 4, transposed))


def test_gelu_known_values():
    """gelu(0) = 0, gelu(x) ~ x for large x, ~0 for very negative x, and the tanh formula."""
    x = np.array([0.0, 1.0, -1.0, 10.0, -10.0])
    c = math.sqrt(2 / math.pi)
    expected = 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3)))
    got = F.gelu(Tensor(x)).data
    # atol: at x = -10 the formula rounds 1 + tanh(-43.6) to 0, while the kernel's
    # x / (1 + exp(-2u)) keeps the true value, -10 * sigmoid(-87.3) = -1.2e-37.
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-36)
    assert got[0] == 0.0 and got[3] == pytest.approx(10.0) and abs(got[4]) < 1e-12
    assert got[1] == pytest.approx(0.8411919906, rel=1e-8)


# --------------------------------------------------------------------------- attention
@st.composite
def attention_case(draw):
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=2,
                                                   max_side=2))
    causal = draw(st.booleans())
    t_q = draw(st.integers(1, 3))
    t_k = draw(st.integers(t_q, 4)) if causal else draw(st.integers(1, 4))
    d_head = draw(st.integers(1, 3))
    sq, sk, sv = batch.input_shapes
    return sq + (t_q, d_head), sk + (t_k, d_head), sv + (t_k, d_head), causal


@FAST
@given(case=attention_case(), seed=seeds)
def test_scaled_dot_product_attention_gradient(case, seed):
    """softmax(q k^T / sqrt(d)) v, causal or not, with batch axes broadcast between q, k, v."""
    sq, sk, sv, causal = case
    rng = np.random.default_rng(seed)
    q, k, v = make(rng, sq), make(rng, sk), make(rng, sv)
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, causal=causal), q, k, v)


def test_causal_attention_ignores_future_keys():
    """Changing the last key/value leaves every earlier query's output unchanged."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 5, 3)) for _ in range(3))
    out = F.scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), causal=True).data
    k2, v2 = k.copy(), v.copy()
    k2[:, -1] += 5.0
    v2[:, -1] -= 3.0
    out2 = F.scaled_dot_product_attention(Tensor(q), Tensor(k2), Tensor(v2), causal=True).data
    np.testing.assert_allclose(out[:, :-1], out2[:, :-1], rtol=1e-12)
    assert not np.allclose(out[:, -1], out2[:, -1])
    np.testing.assert_allclose(out[:, 0], v[:, 0], rtol=1e-12)  # first query sees only key 0


def test_attention_with_transposed_inputs():
    """q, k, v given as non-contiguous views (as produced by the head split) check out too."""
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 3, 4)).transpose(1, 0, 2)  # (3, 2, 4) view
    k = rng.standard_normal((2, 3, 4)).transpose(1, 0, 2)
    v = rng.standard_normal((4, 2, 3)).T  # (3, 2, 4) view
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, causal=True), q, k, v)


# --------------------------------------------------------------------------- fused == primitives
def _softmax_ref(x, axis):
    e = (x - Tensor(x.data.max(axis=axis, keepdims=True))).exp()
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax_ref(x, axis):
    s = x - Tensor(x.data.max(axis=axis, keepdims=True))
    return s - s.exp().sum(axis=axis, keepdims=True).log()


def _cross_entropy_ref(logits, targets):
    flat = _log_softmax_ref(logits.reshape(-1, logits.shape[-1]), -1)
    t = targets.reshape(-1)
    live = np.nonzero(t != -100)[0]
    return -flat[live, t[live]].sum() / float(len(live))


def _layer_norm_ref(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    c = x - mu
    var = (c * c).mean(axis=-1, keepdims=True)
    return c / (var + eps).sqrt() * w + b


def _gelu_ref(x):
    return 0.5 * x * (1.0 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)).tanh())


def _value_and_grads(fn, arrays, r):
    ts = [Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    out.backward(r)
    return out.data, [t.grad for t in ts]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "cross_entropy", "layer_norm", "gelu"])
def test_fused_kernel_equals_primitive_composite(name):
    """Each fused Function gives the same values and gradients as its primitive formula."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 5))
    targets = rng.integers(0, 5, size=(3, 4))
    targets[0, 1] = targets[2, 3] = -100
    w, b = rng.standard_normal(5), rng.standard_normal(5)
    cases = {
        "softmax": ((lambda t: F.softmax(t, axis=1)), (lambda t: _softmax_ref(t, 1)), [x]),
        "log_softmax": ((lambda t: F.log_softmax(t)), (lambda t: _log_softmax_ref(t, -1)), [x]),
        "cross_entropy": ((lambda t: F.cross_entropy(t, targets)),
                          (lambda t: _cross_entropy_ref(t, targets)), [x]),
        "layer_norm": ((lambda t, tw, tb: F.layer_norm(t, 1e-5, tw, tb)), _layer_norm_ref,
                       [x, w, b]),
        "gelu": (F.gelu, _gelu_ref, [x]),
    }
    fused, ref, arrays = cases[name]
    r = rng.standard_normal(fused(*[Tensor(a) for a in arrays]).shape)
    v1, g1 = _value_and_grads(fused, arrays, r)
    v2, g2 = _value_and_grads(ref, arrays, r)
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-13)
    for a, c in zip(g1, g2):
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)


def test_masked_fill_and_where_values():
    """masked_fill puts the value where the mask is true and leaves the rest."""
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    mask = np.array([[True, False, False], [False, False, True]])
    y = F.masked_fill(x, mask, -1.0)
    np.testing.assert_array_equal(y.data, [[-1.0, 1.0, 2.0], [3.0, 4.0, -1.0]])
    y.backward(np.ones((2, 3)))
    np.testing.assert_array_equal(x.grad, ~mask)


# --------------------------------------------------------------------------- word2vec's loss
@FAST
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), seed=seeds)
def test_log_sigmoid_gradient(shape, seed):
    rng = np.random.default_rng(seed)
    check_grads(F.log_sigmoid, make(rng, shape, -6, 6))


def test_log_sigmoid_is_finite_at_the_extremes():
    x = Tensor(np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0]), requires_grad=True)
    y = F.log_sigmoid(x)
    y.sum().backward()
    expected = -np.logaddexp(0.0, -x.data)  # log sigma(x) = -log(1 + e^-x)
    np.testing.assert_allclose(y.data, expected, rtol=1e-12, atol=1e-15)  # no log1p primitive
    np.testing.assert_allclose(x.grad, np.exp(-np.logaddexp(0.0, x.data)), rtol=1e-12)  # sigma(-x)


@FAST
@given(n=st.integers(1, 4), k=st.integers(1, 4), d=st.integers(1, 5), seed=seeds)
def test_negative_sampling_loss_gradient(n, k, d, seed):
    rng = np.random.default_rng(seed)
    check_grads(F.negative_sampling_loss, make(rng, (n, d)), make(rng, (n, 1 + k, d)))


def test_negative_sampling_loss_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    h, rows = rng.standard_normal((5, 8)), rng.standard_normal((5, 4, 8))
    th, trows = (torch.tensor(a, requires_grad=True) for a in (h, rows))
    scores = (trows @ th.unsqueeze(-1)).squeeze(-1)
    sign = torch.tensor([1.0, -1.0, -1.0, -1.0], dtype=scores.dtype)
    expected = -torch.nn.functional.logsigmoid(scores * sign).sum(1).mean()
    expected.backward()
    mh, mrows = Tensor(h, requires_grad=True), Tensor(rows, requires_grad=True)
    loss = F.negative_sampling_loss(mh, mrows)
    loss.backward()
    np.testing.assert_allclose(float(loss.data), expected.item(), rtol=1e-12)
    np.testing.assert_allclose(mh.grad, th.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mrows.grad, trows.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="must agree"):
        F.negative_sampling_loss(mh, Tensor(rows[:, :, :3]))
