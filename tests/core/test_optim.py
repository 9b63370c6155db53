"""Optimizers without PyTorch: hand-computed updates, groups, zero_grad, clipping, schedule.

(Parity with torch.optim lives in test_torch_parity.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from minimodel import nn, optim


def test_sgd_momentum_weight_decay_by_hand():
    """Two SGD steps with momentum and L2 decay follow the documented recurrence exactly."""
    p = nn.Parameter(np.array([1.0, -2.0]))
    opt = optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5)
    g1, g2 = np.array([0.2, 0.4]), np.array([-1.0, 0.5])
    p.grad = g1.copy()
    opt.step()
    d1 = g1 + 0.5 * np.array([1.0, -2.0])
    x1 = np.array([1.0, -2.0]) - 0.1 * d1
    np.testing.assert_allclose(p.data, x1, rtol=1e-15)
    p.grad = g2.copy()
    opt.step()
    buf = 0.9 * d1 + (g2 + 0.5 * x1)
    np.testing.assert_allclose(p.data, x1 - 0.1 * buf, rtol=1e-15)


def test_adamw_first_step_moves_each_coordinate_by_about_lr():
    """Adam's first step is lr * sign(g) (bias correction), plus decoupled decay lr*wd*p."""
    p = nn.Parameter(np.array([1.0, -1.0, 3.0]))
    opt = optim.AdamW([p], lr=0.01, weight_decay=0.1, eps=1e-12)
    p.grad = np.array([5.0, -0.001, 2.0])
    opt.step()
    expected = np.array([1.0, -1.0, 3.0]) * (1 - 0.001) - 0.01 * np.sign([5.0, -0.001, 2.0])
    np.testing.assert_allclose(p.data, expected, rtol=1e-9)


def test_parameters_without_grad_are_skipped():
    """A parameter whose grad is None is not updated (and gets no optimizer state)."""
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(2))
    opt = optim.AdamW([a, b], lr=0.1, weight_decay=0.5)
    a.grad = np.ones(2)
    opt.step()
    np.testing.assert_array_equal(b.data, np.ones(2))
    assert b not in opt.state and a in opt.state
    assert not np.allclose(a.data, np.ones(2))


def test_param_groups_have_their_own_hyper_parameters():
    """Decay grouping (ndim >= 2 decayed, the rest not): only the matrix shrinks."""
    w, bias = nn.Parameter(np.ones((2, 2))), nn.Parameter(np.ones(2))
    opt = optim.SGD([{"params": [w], "weight_decay": 1.0}, {"params": [bias]}], lr=0.1)
    w.grad, bias.grad = np.zeros((2, 2)), np.zeros(2)
    opt.step()
    np.testing.assert_allclose(w.data, np.full((2, 2), 0.9))
    np.testing.assert_array_equal(bias.data, np.ones(2))
    assert opt.param_groups[1]["weight_decay"] == 0.0


def test_optimizer_zero_grad_sets_none():
    """opt.zero_grad() drops the grads of its parameters."""
    p = nn.Parameter(np.ones(3))
    p.grad = np.ones(3)
    opt = optim.SGD([p], lr=0.1)
    opt.zero_grad()
    assert p.grad is None


def test_optimizer_load_state_dict_rejects_mismatched_structure():
    """Loading state from an optimizer over different parameters is a ValueError."""
    a = nn.Parameter(np.ones(2))
    src = optim.AdamW([a, nn.Parameter(np.ones(3))])
    with pytest.raises(ValueError, match=r"\[2\].*\[1\]"):
        optim.AdamW([a]).load_state_dict(src.state_dict())
    a.grad = np.ones(2)
    src.step()
    other = optim.AdamW([nn.Parameter(np.ones(5)), nn.Parameter(np.ones(3))])
    with pytest.raises(ValueError, match=r"\(2,\).*\(5,\)"):
        other.load_state_dict(src.state_dict())


def test_clip_grad_norm_scales_only_when_above_max():
    """Returns the pre-clip norm; scales to max_norm when above, leaves grads alone below."""
    a, b = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(1))
    a.grad, b.grad = np.array([3.0, 0.0]), np.array([4.0])
    assert optim.clip_grad_norm([a, b], max_norm=10.0) == pytest.approx(5.0)
    np.testing.assert_array_equal(a.grad, [3.0, 0.0])
    assert optim.clip_grad_norm([a, b], max_norm=1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad, [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.grad, [0.8], rtol=1e-6)


def test_cosine_with_warmup_schedule_values():
    """Linear warm-up, cosine midpoint at half max, floor at min_lr after the end."""
    f = optim.cosine_with_warmup
    assert f(0, 1.0, 10, 110) == pytest.approx(0.1)
    assert f(9, 1.0, 10, 110) == pytest.approx(1.0)
    assert f(10, 1.0, 10, 110) == pytest.approx(1.0)
    assert f(60, 1.0, 10, 110, min_lr=0.0) == pytest.approx(0.5)
    assert f(200, 1.0, 10, 110, min_lr=0.05) == 0.05
    assert f(35, 2.0, 10, 110, min_lr=0.0) == pytest.approx(1.0 + math.cos(math.pi * 0.25))


@pytest.mark.parametrize("make_opt", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
    lambda ps: optim.AdamW(ps, lr=0.1),
], ids=["sgd_momentum", "sgd_momentum_wd", "adamw"])
def test_step_never_modifies_the_gradient_array(make_opt):
    """step() reads .grad but never writes it (no state buffer may alias the gradient)."""
    p = nn.Parameter(np.array([1.0, -2.0, 0.5]))
    g = np.array([0.3, -0.1, 2.0])
    p.grad = g.copy()
    opt = make_opt([p])
    for _ in range(3):  # the same grad array is reused on every step
        opt.step()
        np.testing.assert_array_equal(p.grad, g)


def test_sgd_momentum_with_reused_gradient_by_hand():
    """Without weight decay: x1 = x0 - lr g, x2 = x1 - lr (m g + g) (buffer is a copy of g)."""
    p = nn.Parameter(np.array([1.0, -2.0]))
    g = np.array([0.5, 1.0])
    p.grad = g.copy()
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    opt.step()
    np.testing.assert_allclose(p.data, np.array([1.0, -2.0]) - 0.1 * g - 0.1 * (0.9 * g + g),
                               rtol=1e-15)


def _reference_adamw(p, g, m, v, t, lr, b1, b2, eps, wd):
    """PyTorch's AdamW formula on whole arrays, written out plainly (float64 maths)."""
    p = p * (1 - lr * wd)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    p = p - lr / (1 - b1**t) * m / (np.sqrt(v) / math.sqrt(1 - b2**t) + eps)
    return p, m, v


def test_adamw_definition_is_pytorchs_formula():
    rng = np.random.default_rng(0)
    p, m, v = rng.standard_normal(50), rng.standard_normal(50) * 0.1, rng.random(50) * 0.01
    g = rng.standard_normal(50)
    want = _reference_adamw(p, g, m, v, 4, 0.01, 0.9, 0.999, 1e-8, 0.1)
    got = [p.copy(), m.copy(), v.copy()]
    optim.adamw.composite([got[0]], [g], [got[1]], [got[2]], [4], lr=0.01, beta1=0.9,
                          beta2=0.999, eps=1e-8, weight_decay=0.1)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
