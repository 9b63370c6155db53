"""The kernels' buffer pool: memory is reused only when no array can see it any more."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from minimodel.kernels import buffers

BIG = (512, 256)  # float32: 512 KiB, above MIN_BYTES


@pytest.fixture(autouse=True)
def _empty_pool():
    buffers.clear()
    yield
    buffers.clear()


def leased(a: np.ndarray) -> bool:
    """True when ``a``'s memory belongs to a pool lease."""
    while isinstance(a, np.ndarray):
        a = a.base
    return isinstance(a, buffers._Lease)


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_memory_is_reused_after_the_last_view_dies():
    a = buffers.empty(BIG, np.float32)
    assert a.shape == BIG and a.dtype == np.float32 and a.flags.c_contiguous
    where = address(a)
    view = a.T[3:]  # views keep the memory in use
    del a
    b = buffers.empty(BIG, np.float32)
    assert address(b) != where  # not handed out while `view` can still see it
    del view
    assert buffers.idle_bytes() == 512 * 256 * 4
    c = buffers.empty((256, 512), np.float32)  # same byte size, another shape
    assert address(c) == where and buffers.idle_bytes() == 0


def test_values_seen_through_a_kept_array_are_never_overwritten():
    kept = buffers.empty(BIG, np.float32)
    kept[...] = 7.0
    for _ in range(5):
        other = buffers.empty(BIG, np.float32)
        other[...] = -1.0
        del other
    assert np.all(kept == 7.0)


def test_small_arrays_are_plain_numpy():
    small = buffers.empty((10, 10), np.float64)
    assert small.flags.owndata and buffers.idle_bytes() == 0


def test_idle_memory_is_bounded_and_clear_releases_it(monkeypatch):
    monkeypatch.setattr(buffers, "LIMIT_BYTES", 600 * 1024)
    arrays = [buffers.empty(BIG, np.float32) for _ in range(3)]
    del arrays
    assert buffers.idle_bytes() == 512 * 1024  # one kept, two freed normally
    assert buffers.clear() == 512 * 1024 and buffers.idle_bytes() == 0


def test_threads_never_share_a_buffer():
    errors = []

    def work(tag: float) -> None:
        for _ in range(200):
            a = buffers.empty(BIG, np.float32)
            a[...] = tag
            if not np.all(a == tag):
                errors.append(tag)

    threads = [threading.Thread(target=work, args=(float(i),)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _gpt_step(seed: int = 0):
    from minimodel.models import GPT, GPTConfig

    model = GPT(GPTConfig(64, 32, 2, 2, 64), rng=np.random.default_rng(seed))
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 64, (8, 32)), rng.integers(0, 64, (8, 32))
    logits, loss = model(x, y)
    loss.backward()
    return logits.data, float(loss.data), {n: p.grad.copy() for n, p in model.named_parameters()}


def test_a_training_step_is_bitwise_the_same_with_and_without_the_pool(monkeypatch):
    import minimodel as mm

    monkeypatch.setattr(buffers, "MIN_BYTES", 1024)  # pool even this tiny model's arrays
    with mm.kernels(True):  # the pool is the kernels' (with kernels off nothing uses it)
        logits, loss, grads = _gpt_step()
        assert buffers.idle_bytes() > 100_000  # the step's temporaries went back to the pool
        monkeypatch.setattr(buffers, "MIN_BYTES", 1 << 62)  # every request: plain np.empty
        logits2, loss2, grads2 = _gpt_step()
    assert loss == loss2
    np.testing.assert_array_equal(logits, logits2)
    for name in grads:
        np.testing.assert_array_equal(grads[name], grads2[name], err_msg=name)


@pytest.mark.parametrize("kernels", [True, False])
def test_logits_kept_from_one_step_survive_the_next_steps(monkeypatch, kernels):
    import minimodel as mm

    monkeypatch.setattr(buffers, "MIN_BYTES", 1024)
    with mm.kernels(kernels):
        logits, _, _ = _gpt_step(seed=0)
        if kernels:
            assert leased(logits)  # the head's output lives in pooled memory, which stays its
        snapshot = logits.copy()
        for seed in (1, 2, 3):
            _gpt_step(seed)
    np.testing.assert_array_equal(logits, snapshot)


def test_weight_gradients_come_from_the_pool_down_to_64_kib():
    """glibc gives the heap's top back to the kernel when blocks of 64 KiB or more are freed
    there; a step's weight gradients (64-256 KiB at d=128) were enough to make about half of
    all processes page-fault ~1,100 times a step. They are pooled now, from 64 KiB up."""
    import minimodel as mm
    from minimodel.models import GPT, GPTConfig

    assert buffers.MIN_BYTES == 64 * 1024
    model = GPT(GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, d_model=128),
                rng=np.random.default_rng(0))
    x = np.random.default_rng(1).integers(0, 64, (2, 16))
    with mm.kernels(True):
        _, loss = model(x, x)
        loss.backward()
    grads = {name: p.grad for name, p in model.named_parameters()
             if p.grad.nbytes >= buffers.MIN_BYTES}
    # c_attn (384, 128), c_proj (128, 128), c_fc (512, 128), mlp c_proj (128, 512): float32
    assert sorted(g.nbytes for g in grads.values()) == [65536, 196608, 262144, 262144]
    assert all(leased(g) for g in grads.values()), [n for n, g in grads.items() if not leased(g)]
    x2 = np.random.default_rng(2).integers(0, 64, (2, 16))
    kept = {name: address(g) for name, g in grads.items()}
    del grads
    model.zero_grad()
    with mm.kernels(True):
        _, loss = model(x2, x2)
        loss.backward()
    reused = {name for name, p in model.named_parameters()
              if name in kept and address(p.grad) in kept.values()}
    assert reused  # the freed gradients' memory served the next step


@pytest.mark.parametrize("kernels", [True, False])
def test_the_sum_of_two_tensors_lives_in_the_pool_only_with_kernels_on(kernels):
    """``x + y`` (the residual stream) is the kernel of ``ops.add`` with kernels on: the same
    bits in pooled memory; with kernels off it is NumPy's ``a + b``, and the pool is untouched."""
    import minimodel as mm

    x = mm.Tensor(np.random.default_rng(0).normal(size=BIG).astype(np.float32),
                  requires_grad=True)
    pos = mm.Tensor(np.random.default_rng(1).normal(size=BIG[1:]).astype(np.float32))
    with mm.kernels(kernels):
        s = x + pos  # (512, 256) + (256,)
        assert leased(s.data) is kernels
        np.testing.assert_array_equal(s.data, x.data + pos.data)
        del s
    assert buffers.idle_bytes() == (512 * 256 * 4 if kernels else 0)
