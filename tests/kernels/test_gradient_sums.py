"""The sum rule's kernel (``autograd.sum_gradients``) against its definition, and the memory
the kernels keep: a tied matrix's two gradients summed in place, the head loss's dW summed
over chunks without a second (V, d) array, LayerNorm and attention keeping no copies."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import minimodel as mm
import minimodel.functional as F
from minimodel import autograd, dispatch
from minimodel.kernels import gradients
from minimodel.kernels import losses as loss_kernels
from minimodel.nn.embedding import lookup

kernel = dispatch.registered_kernels()["sum_gradients"]
definition = dispatch.composites()["sum_gradients"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mine", ["none", "total", "more", "both"])
def test_sum_equals_the_definition_and_changes_only_a_handed_over_array(dtype, mine):
    rng = np.random.default_rng(0)
    total, more = rng.normal(size=(5, 3)).astype(dtype), rng.normal(size=(5, 3)).astype(dtype)
    want = definition(total.copy(), more.copy())
    before = {"total": total.copy(), "more": more.copy()}
    for name, array in (("total", total), ("more", more)):
        if mine in (name, "both"):
            gradients.hand_over(array)
    got = kernel(total, more)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)  # bit for bit: addition is commutative
    if mine == "none":
        assert got is not total and got is not more
    else:
        assert got is (total if mine in ("total", "both") else more)
    for name, array in (("total", total), ("more", more)):
        if array is not got:
            np.testing.assert_array_equal(array, before[name])  # the other one is untouched


def test_no_sum_into_an_array_whose_dtype_is_too_narrow():
    total = gradients.hand_over(np.ones(4, np.float32))
    got = kernel(total, np.full(4, 1e-10))  # float64: the sum is float64, as the definition's
    assert got is not total and got.dtype == np.float64 and got[0] == 1 + 1e-10
    np.testing.assert_array_equal(total, np.ones(4, np.float32))


def test_a_mark_ends_with_its_array():
    array = gradients.hand_over(np.ones(3))
    assert gradients.is_handed_over(array)
    assert not gradients.is_handed_over(array.copy()) and not gradients.is_handed_over(array[:])
    address = id(array)
    del array
    assert address not in gradients._handed_over


def _tied_loss(V, d, N, seed=0):
    rng = np.random.default_rng(seed)
    E = mm.Tensor(rng.normal(size=(V, d)).astype(np.float32) * 0.1, requires_grad=True)
    ids, targets = rng.integers(0, V, N), rng.integers(0, V, N)
    return E, F.linear_cross_entropy(lookup(E, ids) * 2.0, E, targets)


def test_a_tied_matrix_gets_the_definitions_gradient_with_one_array_less():
    """E (V, d) used by a lookup and as the head: backward holds E's head gradient and the
    lookup's, not also their sum (the peak grows by one (V, d) array, not two)."""
    V, d, N = 4096, 64, 64
    table = V * d * 4  # bytes of one (V, d) float32 array
    with mm.kernels(False):
        E_ref, loss_ref = _tied_loss(V, d, N)
        loss_ref.backward()
    tracemalloc.start()
    try:
        with mm.kernels(True):  # whatever MINIMODEL_KERNELS says for this test run
            E, loss = _tied_loss(V, d, N)
            start, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            loss.backward()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(E.grad, E_ref.grad, rtol=2e-4, atol=2e-6)
    assert peak - start < 1.5 * table, (peak - start) / table


def test_a_gradient_that_is_passed_on_is_not_summed_into():
    """The head's matrix made by an operation (W = A + B): its gradient goes on to Add, which
    hands that one array to both A and B; A's second gradient must not land in B's."""
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=(6, 3)) for _ in range(3)]
    t = rng.integers(0, 6, 5)

    def grads():
        A, B, h = (mm.Tensor(a.copy(), requires_grad=True) for a in arrays)
        loss = F.linear_cross_entropy(h[:5], A + B, t) + (A * 3.0).sum()
        loss.backward()
        return A.grad, B.grad

    with mm.kernels(False):
        want = grads()
    with mm.kernels(True):
        have = grads()
    for got, ref in zip(have, want):
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def test_the_head_loss_keeps_no_second_vocabulary_sized_array(monkeypatch):
    """Several chunks: dW is summed over them block by block, so the forward pass peaks at dW
    plus one chunk of logits (and one block of the product), not dW plus a second (V, d)."""
    V, d, N = 8192, 64, 256
    rng = np.random.default_rng(2)
    h = mm.Tensor(rng.normal(size=(N, d)).astype(np.float32), requires_grad=True)
    W = mm.Tensor(rng.normal(size=(V, d)).astype(np.float32), requires_grad=True)
    t = rng.integers(0, V, N)
    monkeypatch.setattr(loss_kernels, "CHUNK_BYTES", 64 * V * 4)  # 4 chunks of 64 rows
    table, chunk = V * d * 4, 64 * V * 4
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with mm.kernels(True):
            loss = F.linear_cross_entropy(h, W, t)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    block = loss_kernels.PRODUCT_BLOCK_BYTES
    assert peak - start < table + chunk + block + table / 4, (peak - start) / table
    loss.backward()
    with mm.kernels(False):
        h2, W2 = (mm.Tensor(x.data.copy(), requires_grad=True) for x in (h, W))
        F.linear_cross_entropy(h2, W2, t).backward()
    np.testing.assert_allclose(W.grad, W2.grad, rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(h.grad, h2.grad, rtol=2e-4, atol=1e-6)


def _saved_arrays(t: mm.Tensor) -> list[np.ndarray]:
    return [a for a in t._node[1].saved_tensors if isinstance(a, np.ndarray)]


def test_layer_norm_and_attention_keep_no_copy_of_an_activation():
    """What they save for backward is their input or output (kept by the graph anyway), the
    attention weights, and small statistics: no (B, T, d) array of their own."""
    rng = np.random.default_rng(3)
    B, T, d, H = 2, 5, 8, 2
    x = mm.Tensor(rng.normal(size=(B, T, d)), requires_grad=True)
    qkv = mm.Tensor(rng.normal(size=(B, T, 3 * d)), requires_grad=True)
    with mm.kernels(True):
        y, out = F.layer_norm(x), F.self_attention(qkv, H, causal=True)
    for a in _saved_arrays(y):
        assert a.size < x.size or np.shares_memory(a, x.data), a.shape
    for a in _saved_arrays(out):
        shared = np.shares_memory(a, qkv.data) or np.shares_memory(a, out.data)
        assert shared or a.shape == (B, H, T, T), a.shape


def test_the_definition_is_what_autograd_runs_with_kernels_off():
    assert autograd.sum_gradients.composite is definition
    with mm.kernels(True):
        E_on, loss_on = _tied_loss(64, 4, 16)
        loss_on.backward()
    with mm.kernels(False):
        E_off, loss_off = _tied_loss(64, 4, 16)
        loss_off.backward()
    np.testing.assert_allclose(E_on.grad, E_off.grad, rtol=2e-4, atol=2e-6)
