"""Every registered kernel against the composite it replaces: values and every input's gradient.

The composite (``minimodel.functional``) is the definition; a kernel (``minimodel.kernels``) is
an optimisation that must agree with it. For each kernel, Hypothesis draws random shapes and
values, in float64 (tight tolerance) and float32 (loose), including the corners where kernels
go wrong: one tensor passed as two inputs (a tie), ignored labels (also all of them), T = 1,
rows with masked (-inf) entries, large scores, several loss chunks. Both functions get fresh
tensors built from the same arrays and the same upstream gradient.

``SAMPLES`` and ``CHECKED_IN`` together must name exactly the registered kernels: a kernel
registered without samples here (or a test file of its own, for a kernel that is not an
autograd function) makes ``test_every_kernel_has_samples`` fail, so no kernel lands unverified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minimodel as mm
import minimodel.functional as F
from minimodel import dispatch
from minimodel.kernels import losses as loss_kernels

IGNORE = -100


@dataclass
class Case:
    """Arguments for one call: ``Arg`` placeholders become fresh Tensors for each run."""

    args: list[Any]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Arg:
    """A float input that requires a gradient; Args with the same ``key`` are ONE tensor."""

    key: str
    value: np.ndarray


def _build(case: Case) -> tuple[list[Any], dict[str, Any], dict[str, mm.Tensor]]:
    tensors: dict[str, mm.Tensor] = {}

    def make(x: Any) -> Any:
        if isinstance(x, Arg):
            if x.key not in tensors:
                tensors[x.key] = mm.Tensor(x.value.copy(), requires_grad=True)
            return tensors[x.key]
        return x

    return ([make(a) for a in case.args], {k: make(v) for k, v in case.kwargs.items()},
            tensors)


def _run(fn: Callable, case: Case, upstream_seed: int):
    """(output values, {key: gradient})."""
    args, kwargs, tensors = _build(case)
    out = fn(*args, **kwargs)
    upstream = np.random.default_rng(upstream_seed).normal(size=out.shape).astype(out.dtype)
    upstream[~np.isfinite(out.data)] = 0.0  # log_softmax is -inf at masked entries
    if out.ndim == 0:
        upstream = upstream + np.asarray(2.0, dtype=out.dtype)  # a scale != 1 on losses
    (out * mm.Tensor(upstream)).sum().backward()
    return out.data, {k: t.grad for k, t in tensors.items()}


# --------------------------------------------------------------------------- samples
def _floats(data, shape, dtype, scale=1.0, name="x"):
    seed = data.draw(st.integers(0, 2**31 - 1), label=f"{name} seed")
    return (np.random.default_rng(seed).normal(size=shape) * scale).astype(dtype)


def _lead(data, max_dims=2, max_size=4):
    """Leading (batch) axes: none, (N,) or (B, T) — T = 1 included."""
    return tuple(data.draw(st.lists(st.integers(1, max_size), max_size=max_dims), label="lead"))


def sample_linear(data, dtype) -> Case:
    fan_in, fan_out = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    w = Arg("w", _floats(data, (fan_out, fan_in), dtype, name="w"))
    if data.draw(st.booleans(), label="tied: x is the weight"):
        x = w  # linear(W, W): the same tensor is input and weight
    else:
        x = Arg("x", _floats(data, _lead(data) + (fan_in,), dtype))
    bias = Arg("b", _floats(data, (fan_out,), dtype, name="b")) if data.draw(st.booleans()) \
        else None
    return Case([x, w, bias])


def _scores(data, dtype):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape"))
    scale = data.draw(st.sampled_from([1.0, 30.0, 1e4]), label="scale")  # 1e4: stability
    x = _floats(data, shape, dtype, scale)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    if shape[axis] > 1 and data.draw(st.booleans(), label="masked entries"):
        masked = np.random.default_rng(0).random(shape) < 0.3
        first = [slice(None)] * len(shape)
        first[axis] = 0
        masked[tuple(first)] = False  # never a whole row of -inf
        x[masked] = -np.inf
    return Case([Arg("x", x)], {"axis": axis})


def sample_gelu(data, dtype) -> Case:
    shape = tuple(data.draw(st.lists(st.integers(1, 5), max_size=3), label="shape"))  # 0-d too
    return Case([Arg("x", _floats(data, shape, dtype, scale=3.0))])


def sample_layer_norm(data, dtype) -> Case:
    d = data.draw(st.integers(1, 7), label="d")
    x = Arg("x", _floats(data, _lead(data) + (d,), dtype, scale=data.draw(
        st.sampled_from([1e-3, 1.0, 100.0]), label="scale")))
    eps = data.draw(st.sampled_from([1e-5, 1e-3, 0.5]), label="eps")
    which = data.draw(st.sampled_from(["none", "weight", "bias", "both", "tied"]), label="affine")
    w = Arg("w", _floats(data, (d,), dtype, name="w")) if which in ("weight", "both", "tied") \
        else None
    b = Arg("b", _floats(data, (d,), dtype, name="b")) if which in ("bias", "both") else None
    if which == "tied":
        b = w  # one tensor as both scale and shift
    return Case([x], {"eps": eps, "weight": w, "bias": b})


def _targets(data, shape, vocab, ignore_index):
    seed = data.draw(st.integers(0, 2**31 - 1), label="targets seed")
    rng = np.random.default_rng(seed)
    t = rng.integers(0, vocab, size=shape)
    mode = data.draw(st.sampled_from(["some", "none", "all"]), label="ignored")
    if mode == "some":
        t[rng.random(shape) < 0.3] = ignore_index
    elif mode == "all":
        t[...] = ignore_index
    return t


def sample_cross_entropy(data, dtype) -> Case:
    vocab = data.draw(st.integers(1, 9), label="V")
    lead = _lead(data) or (1,)
    ignore_index = data.draw(st.sampled_from([IGNORE, -1]), label="ignore_index")
    logits = Arg("logits", _floats(data, lead + (vocab,), dtype,
                                   scale=data.draw(st.sampled_from([1.0, 1e3]), label="scale")))
    return Case([logits, _targets(data, lead, vocab, ignore_index)],
                {"ignore_index": ignore_index})


def sample_linear_cross_entropy(data, dtype) -> Case:
    vocab, d = data.draw(st.integers(1, 9), label="V"), data.draw(st.integers(1, 6), label="d")
    w = Arg("w", _floats(data, (vocab, d), dtype, name="w"))
    if data.draw(st.booleans(), label="tied: h is the weight"):
        h, lead = w, (vocab,)  # the head's matrix is also the hidden states
    else:
        lead = _lead(data, max_size=5) or (1,)
        h = Arg("h", _floats(data, lead + (d,), dtype))
    return Case([h, w, _targets(data, lead, vocab, IGNORE)])


def sample_self_attention(data, dtype) -> Case:
    n_heads = data.draw(st.integers(1, 3), label="heads")
    d = n_heads * data.draw(st.integers(1, 3), label="d_head")
    B, T = data.draw(st.integers(1, 3), label="B"), data.draw(st.integers(1, 5), label="T")
    qkv = Arg("qkv", _floats(data, (B, T, 3 * d), dtype))
    return Case([qkv, n_heads], {"causal": data.draw(st.booleans(), label="causal")})


def sample_add(data, dtype) -> Case:
    """a + b: equal shapes, b broadcast against a (a (T, d) position table against (B, T, d)
    rows, axes of size 1) or a against b, 0-d, and one tensor added to itself."""
    shape = tuple(data.draw(st.lists(st.integers(1, 4), max_size=3), label="shape"))  # 0-d too
    a = Arg("a", _floats(data, shape, dtype, name="a"))
    how = data.draw(st.sampled_from(["same", "tied", "b broadcast", "a broadcast"]), label="how")
    if how == "tied":
        return Case([a, a])  # x + x: both gradients go to one tensor
    small = shape
    if how != "same":
        keep = data.draw(st.integers(0, len(shape)), label="trailing axes kept")
        small = tuple(n if data.draw(st.booleans(), label="axis kept") else 1
                      for n in shape[len(shape) - keep:])
    b = Arg("b", _floats(data, small, dtype, name="b"))
    return Case([b, a] if how == "a broadcast" else [a, b])


SAMPLES: dict[str, Callable[[Any, Any], Case]] = {
    "add": sample_add,
    "linear": sample_linear,
    "softmax": _scores,
    "log_softmax": _scores,
    "gelu": sample_gelu,
    "layer_norm": sample_layer_norm,
    "cross_entropy": sample_cross_entropy,
    "linear_cross_entropy": sample_linear_cross_entropy,
    "self_attention": sample_self_attention,
}

# Kernels that are not autograd functions, each checked against its definition in its own file.
CHECKED_IN = {"adamw": "test_adamw.py", "batch_loss": "test_batch_split.py",
              "sum_gradients": "test_gradient_sums.py"}

TOLERANCE = {np.float64: dict(rtol=1e-9, atol=1e-10), np.float32: dict(rtol=2e-4, atol=2e-5)}


# --------------------------------------------------------------------------- tests
def test_every_kernel_has_samples():
    """No kernel is registered without being verified here (and no sample is stale)."""
    assert set(dispatch.registered_kernels()) == set(SAMPLES) | set(CHECKED_IN)
    assert not set(SAMPLES) & set(CHECKED_IN)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kernel_matches_composite(name, dtype, data):
    case = SAMPLES[name](data, dtype)
    kernel = dispatch.registered_kernels()[name]
    composite = dispatch.composites()[name]
    # Small loss chunks, so linear_cross_entropy's kernel always runs several of them, and
    # one-row blocks for its dW sum over the chunks.
    small = {"CHUNK_BYTES": 1, "MIN_CHUNK_ROWS": 2, "PRODUCT_BLOCK_BYTES": 1}
    old = {name: getattr(loss_kernels, name) for name in small}
    vars(loss_kernels).update(small)
    try:
        k_out, k_grads = _run(kernel, case, upstream_seed=1)
        c_out, c_grads = _run(composite, case, upstream_seed=1)
    finally:
        vars(loss_kernels).update(old)
    tol = TOLERANCE[dtype]
    assert k_out.dtype == c_out.dtype == dtype and k_out.shape == c_out.shape
    scale = max(1.0, float(np.max(np.abs(c_out[np.isfinite(c_out)]), initial=0.0)))
    np.testing.assert_allclose(k_out, c_out, rtol=tol["rtol"], atol=tol["atol"] * scale)
    assert set(k_grads) == set(c_grads)
    for key in c_grads:
        assert k_grads[key] is not None and c_grads[key] is not None, key
        g_scale = max(1.0, float(np.max(np.abs(c_grads[key]), initial=0.0)))
        np.testing.assert_allclose(k_grads[key], c_grads[key], rtol=tol["rtol"],
                                   atol=tol["atol"] * g_scale, err_msg=f"gradient of {key}")


def test_switch_runs_the_composite(monkeypatch):
    """With kernels off, calling F.gelu runs the composite body, and only then."""
    calls = []
    composite = dispatch.composites()["gelu"]
    monkeypatch.setitem(dispatch._COMPOSITES, "gelu", composite)
    x = mm.Tensor(np.linspace(-2, 2, 5))
    monkeypatch.setitem(dispatch._KERNELS, "gelu",
                        lambda x: calls.append("kernel") or composite(x))
    with mm.kernels(True):  # whatever MINIMODEL_KERNELS says for this test run
        mm.functional.gelu(x)
        assert calls == ["kernel"] and mm.active_kernels()
        with mm.kernels(False):
            assert mm.active_kernels() == [] and not mm.kernels_enabled()
            mm.functional.gelu(x)
        assert calls == ["kernel"] and mm.kernels_enabled()


def test_registry_refuses_unknown_duplicate_and_mismatched_kernels():
    with pytest.raises(ValueError, match="no composite named 'softmaxx'"):
        dispatch.register_kernel("softmaxx")(lambda x, axis=-1: x)
    with pytest.raises(ValueError, match="already registered"):
        dispatch.register_kernel("softmax")(lambda x, axis=-1: x)
    name = "gelu"
    kernel = dispatch._KERNELS.pop(name)
    try:
        with pytest.raises(TypeError, match="signature of the composite gelu"):
            dispatch.register_kernel(name)(lambda x, approximate=True: x)
    finally:
        dispatch._KERNELS[name] = kernel


def test_environment_variable_switches_kernels_off_for_a_process():
    import subprocess
    import sys

    code = "import minimodel as mm; print(mm.active_kernels())"
    on = "['adamw', 'add', 'batch_loss', 'cross_entropy'"
    for value, expected in (("0", "[]"), ("off", "[]"), ("1", on)):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**__import__("os").environ, "MINIMODEL_KERNELS": value},
                             check=True).stdout
        assert out.startswith(expected), (value, out)
    bad = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, env={**__import__("os").environ, "MINIMODEL_KERNELS": "maybe"})
    assert bad.returncode != 0 and "MINIMODEL_KERNELS='maybe' is not understood" in bad.stderr
