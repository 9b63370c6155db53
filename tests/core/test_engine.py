"""Behaviour of the autograd engine itself: graph walking, accumulation, ownership of .grad
arrays, freeing, no_grad and dtype rules."""

from __future__ import annotations

import numpy as np
import pytest

from minimodel.nn.embedding import lookup
import minimodel as mm
import minimodel.functional as F
from minimodel import Tensor, nn, ops


# --------------------------------------------------------------------------- graph walking
def test_chain_of_ten_thousand_ops_backpropagates():
    """A 10 000-op chain needs an iterative sort (recursion would overflow); values are exact."""
    x = Tensor(np.array([0.5, -2.0]), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y + x  # y = 10001 x after the loop
    y.backward(np.array([1.0, 3.0]))
    np.testing.assert_array_equal(x.grad, [10_001.0, 30_003.0])


def test_deep_multiplicative_chain_gradient():
    """d/dx of x * c^n through 10 000 Mul nodes is c^n."""
    x = Tensor(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad == pytest.approx(1.0001 ** 10_000, rel=1e-9)


def test_reused_leaf_accumulates_all_uses():
    """y = x*x + x: dy/dx = 2x + 1 (three uses of x summed)."""
    x = Tensor(np.array([1.0, -3.0, 0.5]), requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, -5.0, 2.0])


def test_reused_interior_node_gets_full_gradient_before_passing_it_on():
    """z = 2x; y = z*z + z: dy/dx = (2z + 1) * 2. Needs reverse topological order."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    z = x * 2.0
    (z * z + z).sum().backward()
    np.testing.assert_allclose(x.grad, (2 * 2 * np.array([1.0, 2.0]) + 1) * 2)


def test_diamond_graph_gradient():
    """a -> (b, c) -> d: both paths contribute: d = exp(a) * tanh(a)."""
    a = Tensor(np.array([0.3, -0.7]), requires_grad=True)
    b, c = a.exp(), a.tanh()
    (b * c).sum().backward()
    av = np.array([0.3, -0.7])
    np.testing.assert_allclose(a.grad, np.exp(av) * np.tanh(av) + np.exp(av) * (1 - np.tanh(av) ** 2))


def test_gradients_accumulate_across_backward_calls():
    """Two backward() calls on two fresh graphs add into .grad (+=), like PyTorch."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad, [3.0 + 2.0, 3.0 + 4.0])


def test_leaf_grads_are_never_aliased():
    """a + b hands the same g to both leaves; each leaf must own a separate array."""
    a = Tensor(np.zeros(3), requires_grad=True)
    b = Tensor(np.zeros(3), requires_grad=True)
    (a + b).backward(np.array([1.0, 2.0, 3.0]))
    assert not np.shares_memory(a.grad, b.grad)
    a.grad *= 10.0
    a.grad[0] = -1.0
    np.testing.assert_array_equal(b.grad, [1.0, 2.0, 3.0])
    # the second backward accumulates in place into each leaf's own array
    (a + b).backward(np.ones(3))
    np.testing.assert_array_equal(b.grad, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(a.grad, [0.0, 21.0, 31.0])


def test_leaf_grad_is_not_the_callers_array_or_a_view():
    """backward(g) copies g; a leaf whose gradient is a view (reshape, sum) gets its own array."""
    g = np.ones((2, 3))
    x = Tensor(np.zeros((2, 3)), requires_grad=True)
    (x * 1.0).backward(g)
    g[0, 0] = 99.0
    assert x.grad[0, 0] == 1.0
    y = Tensor(np.zeros(6), requires_grad=True)
    z = Tensor(np.zeros((2, 3)), requires_grad=True)
    (y.reshape(2, 3) + z).sum().backward()
    assert y.grad.flags.writeable and z.grad.flags.writeable
    assert not np.shares_memory(y.grad, z.grad)
    y.grad += 1.0  # must not raise (a broadcast view would be read-only)
    np.testing.assert_array_equal(z.grad, np.ones((2, 3)))


def test_backward_with_explicit_grad_on_non_scalar_output():
    """out.backward(G) computes the vector-Jacobian product G^T J."""
    x = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    G = np.array([[1.0, 0.0], [0.5, 2.0]])
    (x * x).backward(G)
    np.testing.assert_allclose(x.grad, 2 * x.data * G)


def test_backward_without_grad_on_non_scalar_raises_value_error():
    """A non-scalar output needs grad=; the error names the shape."""
    y = Tensor(np.ones((2, 3)), requires_grad=True) * 2.0
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        y.backward()


def test_backward_with_wrong_grad_shape_raises_value_error():
    """grad= must have the output's shape; both shapes are named."""
    y = Tensor(np.ones((2, 3)), requires_grad=True) * 2.0
    with pytest.raises(ValueError, match=r"\(3, 2\).*\(2, 3\)"):
        y.backward(np.ones((3, 2)))


def test_second_backward_through_freed_graph_raises():
    """Calling backward twice on one graph raises RuntimeError instead of wrong gradients."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="freed"):
        y.backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_backward_through_a_freed_intermediate_raises():
    """Reusing an intermediate after its graph was consumed must raise, not silently treat the
    intermediate as a leaf (which would give x no gradient from the second loss)."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    z = x * x
    z.sum().backward()
    with pytest.raises(RuntimeError, match="freed"):
        (z * 2.0).sum().backward()


def test_backward_on_tensor_without_grad_raises():
    """backward() on a constant is a RuntimeError that says how to fix it."""
    with pytest.raises(RuntimeError, match="requires_grad"):
        Tensor(np.array(1.0)).backward()


def test_graph_is_freed_after_backward():
    """Interior nodes drop their saved inputs, so memory is released."""
    x = Tensor(np.ones(3), requires_grad=True)
    h = x.exp()
    y = h.sum()
    assert h._node is not None and y._node is not None
    y.backward()
    assert h._node is None and y._node is None


def test_no_grad_records_nothing_and_restores_state():
    """Inside no_grad outputs do not require grad and hold no graph; the flag is restored,
    even after an exception."""
    x = Tensor(np.ones(3), requires_grad=True)
    with mm.no_grad():
        assert not mm.is_grad_enabled()
        y = (x * 2.0).exp().sum()
        assert y.requires_grad is False and y._node is None
    assert mm.is_grad_enabled()
    with pytest.raises(ZeroDivisionError):
        with mm.no_grad():
            1 / 0
    assert mm.is_grad_enabled()
    z = (x * 2.0).sum()
    assert z.requires_grad and z._node is not None


def test_detach_cuts_the_graph_and_shares_memory():
    """detach() returns the same values without history; no gradient flows through it."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * 3.0
    d = h.detach()
    assert d.requires_grad is False and d._node is None and np.shares_memory(d.data, h.data)
    (x * d).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 6.0])


def test_constant_operand_gets_no_gradient():
    """Only inputs with requires_grad receive .grad."""
    x = Tensor(np.ones(2), requires_grad=True)
    c = Tensor(np.array([2.0, 3.0]))
    (x * c).sum().backward()
    assert c.grad is None
    np.testing.assert_array_equal(x.grad, [2.0, 3.0])


def test_interior_nodes_do_not_keep_grad():
    """Only leaves store .grad (interior gradients are transient)."""
    x = Tensor(np.ones(2), requires_grad=True)
    h = x * 2.0
    h.sum().backward()
    assert h.grad is None and x.grad is not None


# --------------------------------------------------------------------------- dtypes
def _every_op(x, y, w, ids):
    """One output per primitive and composite (x, y: (2, 3); w: (4, 3) table)."""
    pos = x * x + 1.0
    return {
        "add": x + y, "sub": x - y, "mul": x * y, "div": x / (y * y + 1.0), "neg": -x,
        "pow": pos ** 1.5, "exp": x.exp(), "log": pos.log(), "tanh": x.tanh(),
        "sqrt": pos.sqrt(), "sum": x.sum(axis=0), "mean": x.mean(), "max": x.max(axis=1),
        "matmul": x @ y.T, "reshape": x.reshape(3, 2), "transpose": x.T, "getitem": x[:, [0, 0]],
        "embedding": lookup(w, ids), "where": F.where(x.data > 0, x, y),
        "concatenate": F.concatenate([x, y], axis=1), "stack": F.stack([x, y]),
        "split": F.split(x, 3, axis=1)[1], "scalar_rsub": 1.0 - x, "scalar_rdiv": 2.0 / pos,
        "softmax": F.softmax(x), "log_softmax": F.log_softmax(x),
        "cross_entropy": F.cross_entropy(x, np.array([0, 2])),
        "layer_norm": F.layer_norm(x), "layer_norm_affine": F.layer_norm(x, 1e-5, w[0], w[1]),
        "gelu": F.gelu(x),
        "attention": F.scaled_dot_product_attention(x, y, x, causal=True),
    }


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_dtype_is_preserved_through_every_op_and_gradient(dtype):
    """float64 stays float64 (and float32 stays float32, Python scalars included) in values
    and in every leaf gradient."""
    rng = np.random.default_rng(0)
    names = list(_every_op(*[Tensor(rng.standard_normal(s).astype(dtype)) for s in
                             [(2, 3), (2, 3), (4, 3)]], np.array([[1, 3]])))
    for name in names:
        x, y, w = (Tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
                   for s in [(2, 3), (2, 3), (4, 3)])
        out = _every_op(x, y, w, np.array([[1, 3]]))[name]
        assert out.dtype == dtype, f"{name}: output dtype {out.dtype}"
        out.backward(np.ones(out.shape, dtype=dtype))
        got = [t.grad for t in (x, y, w) if t.grad is not None]
        assert got, f"{name}: no gradient reached any input"
        for g in got:
            assert g.dtype == dtype, f"{name}: gradient dtype {g.dtype}"


def test_modules_keep_float32_by_default():
    """Layers initialise float32 parameters and produce float32 outputs from float32 inputs."""
    block = nn.Block(8, 2)
    emb = nn.Embedding(5, 8)
    x = emb(np.array([[1, 2, 3]]))
    y = block(x)
    assert x.dtype == y.dtype == np.float32
    assert all(p.dtype == np.float32 for p in block.parameters())


def test_python_float_inputs_become_float32():
    """Python floats and lists of floats become float32; ints int64; float64 arrays stay."""
    assert Tensor(1.5).dtype == np.float32
    assert Tensor([[1.0, 2.0]]).dtype == np.float32
    assert Tensor([1, 2]).dtype == np.int64
    assert Tensor(np.array([1.0])).dtype == np.float64
    assert Tensor(np.float64(2.0)).dtype == np.float64
    x64 = Tensor(np.ones(2))
    assert (x64 * 2.5).dtype == np.float64 and (3.0 - x64).dtype == np.float64
    x32 = Tensor(np.ones(2, dtype=np.float32))
    assert (x32 * 2.5).dtype == np.float32 and (x32 ** 2).dtype == np.float32


def test_integer_tensors_cannot_require_grad():
    """requires_grad=True on ints is a TypeError; so is an integer Parameter."""
    with pytest.raises(TypeError, match="int64"):
        Tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(TypeError):
        nn.Parameter(np.arange(3))


def test_parameter_grad_may_be_assigned_an_array():
    """Parameter.grad accepts an ndarray of the right shape (cast to the parameter dtype)."""
    p = nn.Parameter(np.zeros((2, 2), dtype=np.float32))
    p.grad = np.ones((2, 2))
    assert p.grad.dtype == np.float32
    np.testing.assert_array_equal(p.grad, np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"\(3,\)"):
        p.grad = np.ones(3)
    with pytest.raises(TypeError):
        p.grad = [[1.0, 1.0], [1.0, 1.0]]
    p.grad = None
    assert p.grad is None


def test_tensor_basics():
    """shape, ndim, item(), T, repr and len behave as documented."""
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.shape == (2, 3) and x.ndim == 2 and len(x) == 2
    assert x.T.shape == (3, 2)
    assert x.sum().item() == 15.0
    assert "requires_grad=True" in repr(x) and "float64" in repr(x)
    with pytest.raises(ValueError):
        x.item()
    with pytest.raises(TypeError):
        x ** Tensor(2.0)
