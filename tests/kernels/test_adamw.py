"""The AdamW kernel (kernels/adamw.py) against its definition (``optim.adamw``): same update
within float rounding, the same bits whatever the cut into pieces and threads, and nothing of
it (no thread, no pooled buffer) with kernels off."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minimodel as mm
from minimodel import dispatch, nn, optim
from minimodel.kernels import adamw as kernel
from minimodel.kernels import buffers, threads

TOLERANCE = {np.float64: dict(rtol=1e-12, atol=1e-14), np.float32: dict(rtol=1e-5, atol=1e-7)}


def _arrays(rng, shapes, dtype):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_kernel_is_the_definition(dtype):
    rng = np.random.default_rng(3)
    shapes = [(5,), (64, 64), (kernel.SPLIT_ABOVE + 3,), (2 * kernel.PIECE + 5, 3)]
    params = _arrays(rng, shapes, dtype)
    grads = _arrays(rng, shapes, dtype)
    ms = [0.1 * a for a in _arrays(rng, shapes, dtype)]
    vs = [0.01 * np.abs(a) for a in _arrays(rng, shapes, dtype)]
    steps = [1, 2, 7, 30]
    options = dict(lr=0.01, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.1)
    fast = [[a.copy() for a in arrays] for arrays in (params, ms, vs)]
    slow = [[a.copy() for a in arrays] for arrays in (params, ms, vs)]
    assert dispatch.registered_kernels()["adamw"] is kernel.adamw
    kernel.adamw(fast[0], grads, fast[1], fast[2], steps, **options)
    optim.adamw.composite(slow[0], grads, slow[1], slow[2], steps, **options)
    for f, s in zip(fast, slow):
        for a, b, shape in zip(f, s, shapes):
            assert a.dtype == dtype
            np.testing.assert_allclose(a, b, err_msg=str(shape), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adamw_in_pieces_and_threads_gives_the_whole_array_bits(dtype, monkeypatch):
    # Sizes chosen to cover every path of plan_threads: small (whole, balanced between the
    # threads), just above SPLIT_ABOVE (halves of one piece), several PIECEs per half with a
    # ragged end, and a Fortran-ordered matrix (no flat view: updated whole).
    monkeypatch.setattr(threads, "available_threads", lambda: 2)
    rng = np.random.default_rng(7)
    shapes = [(5,), (64, 64), (kernel.SPLIT_ABOVE + 3,), (2 * kernel.PIECE + 5, 3), (300, 200)]
    params = [nn.Parameter(rng.standard_normal(s).astype(dtype)) for s in shapes]
    params[-1].data = np.asfortranarray(params[-1].data)
    plain = [p.data.copy() for p in params]
    m = [np.zeros_like(a) for a in plain]
    v = [np.zeros_like(a) for a in plain]
    opt = optim.AdamW(params, lr=0.01, weight_decay=0.1)
    plan = kernel.plan_threads([(p.data,) for p in params])
    assert all(plan), "both threads get work"
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.1
    with mm.kernels(True):
        for t in (1, 2, 3):
            for i, p in enumerate(params):
                p.grad = rng.standard_normal(p.shape).astype(dtype)
                # one whole-array fused update in this thread: the bits the pieces must give
                kernel.adamw_update(plain[i], p.grad, m[i], v[i], 1 - lr * wd, b1, b2,
                                    eps * math.sqrt(1 - b2**t), lr * math.sqrt(1 - b2**t) / (1 - b1**t))
            opt.step()
            for i, p in enumerate(params):
                np.testing.assert_array_equal(p.data, plain[i], err_msg=f"{shapes[i]}, step {t}")
                np.testing.assert_array_equal(opt.state[p]["exp_avg_sq"], v[i])


def test_a_parameter_listed_twice_is_updated_twice_in_order_by_one_thread():
    # Optimizer refuses duplicates, but the embedding-moves-too-far break removes that check: the
    # two updates of the same array must then run one after the other, never at once.
    big = np.zeros(4 * kernel.PIECE, np.float32)
    small = np.zeros(10, np.float32)
    plan = kernel.plan_threads([(big,), (small,), (big,), (small,)])
    for thread in plan:
        first = [r for i, r in thread if i == 0]
        second = [r for i, r in thread if i == 2]
        assert first == second  # the same ranges of the big array, in this thread only
        assert [i for i, _ in thread if i in (0, 2)] == sorted(i for i, _ in thread if i in (0, 2))
    assert sum(1 for thread in plan for i, _ in thread if i in (1, 3)) == 2
    assert len({t for t, thread in enumerate(plan) for i, _ in thread if i in (1, 3)}) == 1


def test_with_kernels_off_no_thread_and_no_pooled_buffer_runs(monkeypatch):
    """The switch turns off every speed device: a whole training step (loss, backward, AdamW)
    with kernels off never enters the thread runner or the buffer pool."""
    from minimodel.models import GPT, GPTConfig
    from minimodel.kernels import batch_split

    def loss_and_backward(model, x, y):
        loss = model.loss(x, y)
        loss.backward()
        return float(loss.data)

    def refuse(*args, **kwargs):
        raise AssertionError("a speed device ran with kernels off")

    model = GPT(GPTConfig(64, 64, 2, 2, 32), rng=np.random.default_rng(0))
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    x = np.random.default_rng(1).integers(0, 64, (16, 64))  # 1024 tokens: split with kernels
    monkeypatch.setattr(threads, "run_parts", refuse)
    monkeypatch.setattr(buffers, "empty", refuse)
    monkeypatch.setattr(kernel, "run_parts", refuse)
    monkeypatch.setattr(batch_split, "run_parts", refuse)
    monkeypatch.setattr(batch_split, "MIN_TOKENS_PER_PART", 1)
    with mm.kernels(False):
        loss = loss_and_backward(model, x, np.roll(x, -1, axis=1))
        opt.step()
        model(x)  # a forward pass with logits, too
    assert np.isfinite(loss)
    with mm.kernels(True), pytest.raises(AssertionError, match="speed device"):
        loss_and_backward(model, x, np.roll(x, -1, axis=1))  # the test can see them run
