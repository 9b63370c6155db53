"""Finite-difference gradient checks (float64) for every primitive in ``minimodel.ops``.

Each test draws small shapes with Hypothesis, builds inputs from a drawn seed, and checks the
autograd gradient of ``sum(out * R)`` (R random) against central differences. Inputs are drawn
broadcast against each other and, where it matters, as transposed (non-contiguous) views.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from core_gradcheck import check_grads
import minimodel.functional as F
from minimodel import ops
from minimodel.nn.embedding import lookup

FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
seeds = st.integers(0, 2**31 - 1)
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
pair_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)


def make(rng: np.random.Generator, shape, lo=-2.0, hi=2.0, transposed=False) -> np.ndarray:
    """float64 uniform data; ``transposed`` returns a non-contiguous view with the same shape."""
    shape = tuple(shape)
    if transposed and len(shape) >= 2:
        return rng.uniform(lo, hi, size=shape[::-1]).T
    return rng.uniform(lo, hi, size=shape)


def away_from_zero(rng, shape, transposed=False) -> np.ndarray:
    """Values in +-[0.5, 2]: safe denominators."""
    mag = make(rng, shape, 0.5, 2.0, transposed)
    return mag * rng.choice([-1.0, 1.0], size=mag.shape)


# --------------------------------------------------------------------------- the checker itself
def test_gradcheck_rejects_a_wrong_backward_rule():
    """The checker must fail on a deliberately wrong rule (d/dx x^2 returned as x)."""
    from minimodel.autograd import Function

    class BadSquare(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            return (g * ctx.saved_tensors[0],)  # missing the factor 2

    x = np.random.default_rng(0).uniform(0.5, 1.0, size=(2, 3))
    with pytest.raises(AssertionError, match="finite differences"):
        check_grads(lambda t: BadSquare.apply(t), x)
    check_grads(lambda t: t * t, x)  # and passes on the correct composite


# --------------------------------------------------------------------------- elementwise binary
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@FAST
@given(shapes=pair_shapes, seed=seeds, transposed=st.booleans())
def test_binary_op_gradients_with_broadcasting(name, shapes, seed, transposed):
    """Add/Sub/Mul/Div: both gradients match, after summing over broadcast axes."""
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = make(rng, sa, transposed=transposed)
    b = away_from_zero(rng, sb) if name == "div" else make(rng, sb)
    check_grads(BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op_gradient_for_3d_with_1d_broadcast(name):
    """The canonical bias case: (3, 1, 4) op (4,) -> (3, 1, 4); b's gradient sums over 3 rows."""
    rng = np.random.default_rng(0)
    a = make(rng, (3, 1, 4))
    b = away_from_zero(rng, (4,))
    ga, gb = check_grads(BINARY[name], a, b)
    assert ga.shape == (3, 1, 4) and gb.shape == (4,)


def test_binary_op_with_python_scalars_on_either_side():
    """2 - x, 3 / x, x * 0.5 (scalar constants) differentiate through x only."""
    rng = np.random.default_rng(1)
    x = away_from_zero(rng, (2, 3))
    check_grads(lambda t: 2.0 - t, x)
    check_grads(lambda t: 3.0 / t, x)
    check_grads(lambda t: t * 0.5 + 1.0, x)


# --------------------------------------------------------------------------- elementwise unary
@FAST
@given(shape=small_shapes, seed=seeds, transposed=st.booleans())
def test_neg_exp_tanh_gradients(shape, seed, transposed):
    """Neg, Exp, Tanh on arbitrary values (transposed views included)."""
    rng = np.random.default_rng(seed)
    x = make(rng, shape, transposed=transposed)
    check_grads(lambda t: -t, x)
    check_grads(lambda t: t.exp(), x)
    check_grads(lambda t: t.tanh(), x)


@FAST
@given(shape=small_shapes, seed=seeds, transposed=st.booleans())
def test_log_sqrt_gradients(shape, seed, transposed):
    """Log and Sqrt on positive inputs (kept away from 0, where they are singular)."""
    rng = np.random.default_rng(seed)
    x = make(rng, shape, 0.3, 3.0, transposed)
    check_grads(lambda t: t.log(), x)
    check_grads(lambda t: t.sqrt(), x)


@FAST
@given(shape=small_shapes, seed=seeds,
       p=st.sampled_from([-2.0, -1.5, -1.0, 0.5, 1.0, 2.0, 2.7, 3.0]))
def test_pow_gradient(shape, seed, p):
    """x ** p = p x^(p-1) for several real exponents on positive bases."""
    rng = np.random.default_rng(seed)
    x = make(rng, shape, 0.4, 2.0)
    check_grads(lambda t: t ** p, x)


# --------------------------------------------------------------------------- reductions
@st.composite
def shape_and_axis(draw, min_dims=1):
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4))
    ndim = len(shape)
    axis = draw(st.one_of(
        st.none(),
        st.integers(-ndim, ndim - 1),
        hnp.valid_tuple_axes(ndim, min_size=1),
    ))
    return shape, axis


@FAST
@given(sa=shape_and_axis(), keepdims=st.booleans(), seed=seeds, transposed=st.booleans())
def test_sum_and_mean_gradients(sa, keepdims, seed, transposed):
    """Sum/Mean over None, one (possibly negative) axis or a tuple of axes, with keepdims."""
    shape, axis = sa
    rng = np.random.default_rng(seed)
    x = make(rng, shape, transposed=transposed)
    gs = check_grads(lambda t: t.sum(axis=axis, keepdims=keepdims), x)
    gm = check_grads(lambda t: t.mean(axis=axis, keepdims=keepdims), x)
    assert gs[0].shape == gm[0].shape == x.shape


def distinct_values(rng, shape, transposed=False):
    """Values that differ pairwise by >= 0.1, so max has no ties within finite-difference eps."""
    n = int(np.prod(shape))
    vals = (rng.permutation(n) - n / 2) * 0.1 + rng.uniform(0, 0.01, size=n)
    vals = vals.reshape(tuple(shape)[::-1] if transposed else shape)
    return vals.T if transposed else vals


@FAST
@given(sa=shape_and_axis(), keepdims=st.booleans(), seed=seeds, transposed=st.booleans())
def test_max_gradient_without_ties(sa, keepdims, seed, transposed):
    """Max sends the gradient to the arg-max entries only."""
    shape, axis = sa
    rng = np.random.default_rng(seed)
    x = distinct_values(rng, shape, transposed)
    (g,) = check_grads(lambda t: t.max(axis=axis, keepdims=keepdims), x)
    # exactly one non-zero per reduced group (R is random, so never exactly 0)
    n_groups = int(np.prod(np.asarray(x).max(axis=axis, keepdims=True).shape))
    assert int(np.count_nonzero(g)) == n_groups


def test_max_gradient_splits_ties_evenly():
    """On a tie the gradient is shared equally (torch.amax semantics), so it still sums to g."""
    from minimodel import Tensor

    x = Tensor(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]), requires_grad=True)
    x.max(axis=1).backward(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(x.grad, [[0.0, 0.5, 0.5], [2.0, 0.0, 0.0]])


# --------------------------------------------------------------------------- matmul
@st.composite
def matmul_case(draw):
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2,
                                                   max_side=3))
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    a_1d, b_1d = draw(st.booleans()), draw(st.booleans())
    sa = (k,) if a_1d else batch.input_shapes[0] + (n, k)
    sb = (k,) if b_1d else batch.input_shapes[1] + (k, m)
    return sa, sb, draw(st.booleans())


@FAST
@given(case=matmul_case(), seed=seeds)
def test_matmul_gradient_batched_broadcast_and_1d(case, seed):
    """a @ b for batched, broadcast-batched, 1-D and transposed operands (NumPy semantics)."""
    sa, sb, transposed = case
    rng = np.random.default_rng(seed)
    a = make(rng, sa)
    if transposed and len(sb) >= 2:  # b as a swapaxes view, like W.T in Linear
        b = np.swapaxes(make(rng, sb[:-2] + (sb[-1], sb[-2])), -1, -2)
    else:
        b = make(rng, sb)
    check_grads(lambda x, y: x @ y, a, b)


@pytest.mark.parametrize("sa,sb", [
    ((2, 3, 4), (4, 5)),        # (B, T, k) @ (k, n): the fast one-GEMM path for the weight
    ((4,), (4,)),               # dot product -> scalar
    ((3, 4), (4,)),             # matrix @ vector
    ((4,), (2, 4, 3)),          # vector @ batch of matrices
    ((3, 1, 2, 4), (5, 4, 2)),  # batch axes broadcast both ways
])
def test_matmul_gradient_named_cases(sa, sb):
    """Shapes that exercise each branch of MatMul.backward explicitly."""
    rng = np.random.default_rng(2)
    check_grads(lambda x, y: x @ y, make(rng, sa), make(rng, sb))


# --------------------------------------------------------------------------- shape ops
@FAST
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), seed=seeds,
       transposed=st.booleans(), choice=st.integers(0, 4))
def test_reshape_gradient(shape, seed, transposed, choice):
    """Reshape (incl. -1 and from a non-contiguous view) routes gradients back unchanged."""
    rng = np.random.default_rng(seed)
    x = make(rng, shape, transposed=transposed)
    size = x.size
    target = [(size,), (-1,), tuple(shape)[::-1], (1, size), (size, 1)][choice]
    (g,) = check_grads(lambda t: t.reshape(*target), x)
    assert g.shape == x.shape


@FAST
@given(data=st.data(), seed=seeds)
def test_transpose_gradient_with_any_permutation(data, seed):
    """Transpose by any permutation, written with positive or negative axes, and .T."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=3))
    ndim = len(shape)
    perm = data.draw(st.permutations(range(ndim)))
    negative = data.draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    axes = tuple(p - ndim if neg else p for p, neg in zip(perm, negative))
    rng = np.random.default_rng(seed)
    x = make(rng, shape)
    check_grads(lambda t: t.transpose(axes), x)
    check_grads(lambda t: t.T, x)


def test_transpose_with_negative_axes_on_cube_routes_gradient_correctly():
    """Regression: transpose(1, -1, 0) of a (3, 3, 3) cube; a wrong inverse permutation has
    the right shape here, so only the values reveal it."""
    rng = np.random.default_rng(3)
    check_grads(lambda t: t.transpose(1, -1, 0), make(rng, (3, 3, 3)))


@FAST
@given(data=st.data(), seed=seeds)
def test_getitem_basic_index_gradient(data, seed):
    """Basic indexing (ints, slices with steps, Ellipsis, None) scatters g into zeros."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    rng = np.random.default_rng(seed)
    x = make(rng, shape)
    check_grads(lambda t: t[index], x)


@FAST
@given(seed=seeds, rows=st.integers(1, 4), cols=st.integers(1, 4), k=st.integers(1, 8))
def test_getitem_integer_array_with_repeated_indices(seed, rows, cols, k):
    """x[ids] and x[:, ids] with repeated (and negative) ids: repeated rows add up."""
    rng = np.random.default_rng(seed)
    x = make(rng, (rows, cols))
    ids_r = rng.integers(-rows, rows, size=k)
    ids_c = rng.integers(0, cols, size=(2, k))
    (g,) = check_grads(lambda t: t[ids_r], x)
    check_grads(lambda t: t[:, ids_c], x)
    check_grads(lambda t: t[ids_r, ids_c[0]], x)
    # the gradient of a row used c times is the sum of c projection rows, so counts matter
    assert g.shape == x.shape


def test_getitem_repeated_index_accumulates_not_overwrites():
    """x[[0, 0, 0]].sum() gives dx[0] = 3 (a buffered ``grad[idx] = g`` would give 1)."""
    from minimodel import Tensor

    x = Tensor(np.arange(4.0), requires_grad=True)
    x[np.array([0, 0, 0, 2])].sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 1.0, 0.0])


def test_getitem_boolean_mask_gradient():
    """x[mask] for a boolean mask routes g to the selected positions only."""
    rng = np.random.default_rng(4)
    x = make(rng, (3, 4))
    mask = rng.random((3, 4)) > 0.5
    (g,) = check_grads(lambda t: t[mask], x)
    assert np.all(g[~mask] == 0)


@FAST
@given(seed=seeds, vocab=st.integers(1, 6), d=st.integers(1, 4),
       ids_shape=hnp.array_shapes(min_dims=1, max_dims=2, max_side=5))
def test_embedding_gather_gradient_with_repeated_ids(seed, vocab, d, ids_shape):
    """W[ids]: dW is the scatter-add of g's rows; repeated ids sum, absent rows stay 0."""
    rng = np.random.default_rng(seed)
    w = make(rng, (vocab, d))
    ids = rng.integers(0, vocab, size=ids_shape)
    (g,) = check_grads(lambda t: lookup(t, ids), w)
    absent = np.setdiff1d(np.arange(vocab), ids)
    assert np.all(g[absent] == 0)


def test_embedding_gradient_equals_explicit_scatter_add():
    """dW[v] = sum of g rows whose id is v, computed by hand with a Python loop."""
    from minimodel import Tensor

    rng = np.random.default_rng(5)
    w = Tensor(rng.standard_normal((5, 3)), requires_grad=True)
    ids = np.array([[1, 1, 4], [1, 0, 4]])
    g = rng.standard_normal((2, 3, 3))
    lookup(w, ids).backward(g)
    expected = np.zeros((5, 3))
    for pos, v in np.ndenumerate(ids):
        expected[v] += g[pos]
    np.testing.assert_allclose(w.grad, expected, rtol=1e-12)


@FAST
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3,
                                                 max_side=4), seed=seeds)
def test_where_gradient_with_broadcast_condition(shapes, seed):
    """where(c, a, b): a gets g where c, b gets g elsewhere; c, a, b broadcast together."""
    sc, sa, sb = shapes.input_shapes
    rng = np.random.default_rng(seed)
    cond = rng.random(sc) > 0.5
    check_grads(lambda a, b: F.where(cond, a, b), make(rng, sa), make(rng, sb))


@FAST
@given(seed=seeds, sizes=st.lists(st.integers(1, 3), min_size=1, max_size=4),
       other=st.tuples(st.integers(1, 3), st.integers(1, 3)), axis=st.integers(-3, 2),
       transposed=st.booleans())
def test_concatenate_gradient(seed, sizes, other, axis, transposed):
    """concatenate along any axis: g is split back into the pieces."""
    rng = np.random.default_rng(seed)
    ax = axis % 3
    arrays = []
    for size in sizes:
        shape = list(other)
        shape.insert(ax, size)
        arrays.append(make(rng, shape, transposed=transposed))
    check_grads(lambda *ts: F.concatenate(list(ts), axis=axis), *arrays)


@FAST
@given(seed=seeds, n=st.integers(1, 4), shape=hnp.array_shapes(min_dims=0, max_dims=2,
                                                                 max_side=3), axis=st.integers(-3, 2))
def test_stack_gradient(seed, n, shape, axis):
    """stack along a new axis: each input gets its slice of g."""
    ndim = len(shape) + 1
    axis = axis % ndim
    rng = np.random.default_rng(seed)
    arrays = [make(rng, shape) for _ in range(n)]
    check_grads(lambda *ts: F.stack(list(ts), axis=axis), *arrays)


@FAST
@given(seed=seeds, parts=st.lists(st.integers(1, 3), min_size=1, max_size=4),
       equal=st.booleans(), axis=st.sampled_from([0, 1, -1]))
def test_split_gradient(seed, parts, equal, axis):
    """split into equal parts or given sizes; each piece's backward accumulates into x."""
    from minimodel import Tensor

    rng = np.random.default_rng(seed)
    sizes = [2] * len(parts) if equal else parts
    shape = [2, 3, 2]
    shape[axis] = sum(sizes)
    x = make(rng, shape)
    sections = len(sizes) if equal else sizes
    pieces = F.split(Tensor(x), sections, axis=axis)
    assert [p.shape[axis] for p in pieces] == sizes
    check_grads(lambda t: F.split(t, sections, axis=axis), x)
