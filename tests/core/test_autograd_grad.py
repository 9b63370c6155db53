"""autograd.grad: gradients returned, not stored (the public form of torch.autograd.grad)."""

import numpy as np
import pytest

import minimodel as mm
from minimodel import autograd, nn


def test_grad_returns_the_gradients_and_leaves_dot_grad_alone():
    x = mm.Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    w = mm.Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    x.grad = np.array([10.0, 10.0, 10.0])
    loss = (x * x * w).sum()                         # dL/dx = 2xw, dL/dw = x²
    dx, dw = autograd.grad(loss, [x, w])
    np.testing.assert_allclose(dx, [1.0, -4.0, 12.0])
    np.testing.assert_allclose(dw, [1.0, 4.0, 9.0])
    np.testing.assert_array_equal(x.grad, [10.0, 10.0, 10.0])
    assert w.grad is None


def test_grad_of_an_unused_input_is_zeros_and_a_tie_is_summed():
    emb = nn.Embedding(5, 3)
    head = nn.TiedHead(emb)
    unused = mm.Tensor(np.ones((2, 2)), requires_grad=True)
    ids = np.array([[0, 2]])
    logits = head(emb(ids))                           # E used twice: lookup and head
    (dE, dU) = autograd.grad(logits.sum(), [emb.weight, unused])
    np.testing.assert_array_equal(dU, np.zeros((2, 2)))
    E = emb.weight.data.astype(np.float64)
    h = E[ids[0]]                                     # (2, 3)
    head_path = np.ones((2, 5)).T @ h                 # dlogits.T @ h
    lookup_path = np.zeros_like(E)
    np.add.at(lookup_path, ids[0], np.ones((2, 5)) @ E)
    np.testing.assert_allclose(dE, head_path + lookup_path, rtol=1e-5, atol=1e-6)
    assert emb.weight.grad is None


def test_grad_refuses_a_non_leaf_input():
    x = mm.Tensor(np.ones(3), requires_grad=True)
    y = x * 2
    with pytest.raises(ValueError, match="leaf"):
        autograd.grad((y * y).sum(), [y])


def test_grad_without_materialized_zeros_gives_none_for_an_unused_input():
    x = mm.Tensor(np.array([1.0, 2.0]), requires_grad=True)
    unused = mm.Tensor(np.ones(2), requires_grad=True)
    dx, du = autograd.grad((3.0 * x).sum(), [x, unused], materialize_grads=False)
    np.testing.assert_array_equal(dx, [3.0, 3.0])
    assert du is None


def test_grad_hands_each_input_its_own_array_and_never_the_callers():
    """a + b returns one gradient array for both sides, and the seed is the caller's: every
    returned array is a separate copy that may be changed in place."""
    a = mm.Tensor(np.zeros(3), requires_grad=True)
    b = mm.Tensor(np.zeros(3), requires_grad=True)
    seed = np.array([1.0, 2.0, 3.0])
    da, db = autograd.grad(a + b, [a, b], seed)
    assert not np.shares_memory(da, db) and not np.shares_memory(da, seed)
    da += 100.0
    np.testing.assert_array_equal(db, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(seed, [1.0, 2.0, 3.0])
