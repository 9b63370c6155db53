"""The batch-parallel kernel on real models: same numbers as one thread, same bits every run,
BLAS settings restored, errors reported as for the whole batch, and no split where it must not.

(``test_kernels.py`` checks the kernel against its composite on random small losses.)
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import minimodel as mm
from minimodel import dispatch
from minimodel import threads as th
from minimodel.kernels import batch_parallel as bp
from minimodel.models import GPT, MLMConfig, GPTConfig, MaskedLM


@pytest.fixture
def two_parts(monkeypatch):
    """Split every batch of >= 2 rows in two, as on a 2-core machine, however small; records
    the threads the parts ran in. Kernels on, also in CI's MINIMODEL_KERNELS=0 pass."""
    monkeypatch.setattr(bp, "MIN_TOKENS_PER_PART", 1)
    monkeypatch.setattr(th, "available_threads", lambda: 2)
    seen: list[str] = []
    real = th._in_part

    def spy(job):
        seen.append(threading.current_thread().name)
        return real(job)

    monkeypatch.setattr(th, "_in_part", spy)
    with mm.kernels(True):
        yield seen


def _gpt(dtype=np.float64, dropout=0.0, seed=0):
    model = GPT(GPTConfig(vocab_size=23, block_size=8, n_layer=2, n_head=2, d_model=8,
                          dropout=dropout), rng=np.random.default_rng(seed))
    for p in model.parameters():
        p.data = p.data.astype(dtype)
    return model


def _batch(V=23, B=5, T=8, seed=1):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))
    y[0, :3] = -100
    return x, y


def _loss_and_grads(model, x, y, kernels: bool):
    with mm.kernels(kernels):
        logits, loss = model(x, y)
        loss.backward()
    grads = {name: p.grad.copy() for name, p in model.named_parameters()}
    model.zero_grad()
    return loss.item(), grads, logits


def test_gpt_loss_and_every_gradient_match_one_thread(two_parts):
    model, (x, y) = _gpt(), _batch()
    loss_p, grads_p, _ = _loss_and_grads(model, x, y, kernels=True)
    assert len(two_parts) == 4  # two parts forward, two backward
    assert any(name.startswith("minimodel-part") for name in two_parts)
    loss_1, grads_1, _ = _loss_and_grads(model, x, y, kernels=False)
    assert loss_p == pytest.approx(loss_1, rel=1e-12)
    assert grads_p.keys() == grads_1.keys()
    for name in grads_1:
        np.testing.assert_allclose(grads_p[name], grads_1[name], rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_same_bits_every_run(two_parts):
    model, (x, y) = _gpt(np.float32), _batch()
    first = _loss_and_grads(model, x, y, kernels=True)
    for _ in range(3):
        again = _loss_and_grads(model, x, y, kernels=True)
        assert again[0] == first[0]
        for name in first[1]:
            assert np.array_equal(again[1][name], first[1][name]), name


def test_deferred_logits_are_the_whole_batch_and_differentiable(two_parts):
    model, (x, y) = _gpt(), _batch()
    logits, loss = model(x, y)
    with mm.kernels(False):
        whole, _ = model(x)
    assert logits.shape == (5, 8, 23)
    np.testing.assert_allclose(logits.data, whole.data, rtol=1e-12)
    logits[:, -1].sum().backward()  # through the joined hidden states to every part
    with mm.kernels(False):
        expected = model.token_emb.weight.grad.copy()
        model.zero_grad()
        model(x)[0][:, -1].sum().backward()
    np.testing.assert_allclose(expected, model.token_emb.weight.grad, rtol=1e-10)


def test_masked_lm_matches_one_thread(two_parts):
    model = MaskedLM(MLMConfig(vocab_size=19, block_size=6, n_layer=1, n_head=2, d_model=8),
                     rng=np.random.default_rng(0))
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 19, (4, 6))
    labels = np.full((4, 6), -100)
    labels[0, 1], labels[2, 0], labels[2, 5], labels[3, 3] = 4, 7, 1, 18  # row 1: none
    for return_logits in (True, False):
        logits_p, loss_p = model(ids, labels, return_logits=return_logits)
        loss_p.backward()
        g_p = model.token_emb.weight.grad.copy()
        model.zero_grad()
        with mm.kernels(False):
            logits_1, loss_1 = model(ids, labels, return_logits=return_logits)
            loss_1.backward()
        assert loss_p.item() == pytest.approx(loss_1.item(), rel=1e-6)
        np.testing.assert_allclose(g_p, model.token_emb.weight.grad, rtol=1e-5, atol=1e-8)
        if return_logits:
            assert logits_p.shape == logits_1.shape == (4, 19)
            np.testing.assert_allclose(logits_p.data, logits_1.data, rtol=1e-5, atol=1e-6)
        model.zero_grad()


def test_blas_threads_are_restored_and_one_per_part(two_parts):
    seen_inside = []
    model, (x, y) = _gpt(), _batch()
    real = model._loss_and_hidden

    def spying(idx, targets):
        seen_inside.append(_blas_now())  # BLAS threads while a part runs
        return real(idx, targets)

    model._loss_and_hidden = spying
    before = _blas_now()
    loss = model(x, y)[1]
    loss.backward()
    assert _blas_now() == before
    if th._blas().lib_controllers:  # a BLAS threadpoolctl can limit (OpenBLAS, MKL)
        assert seen_inside == [1, 1]


def _blas_now() -> int | None:
    libs = th._blas().lib_controllers
    return min(lib.num_threads for lib in libs) if libs else None


def test_bad_targets_report_the_whole_batch(two_parts):
    model, (x, _) = _gpt(), _batch()
    with pytest.raises(ValueError) as split_error:
        model(x, np.full((5, 8), 99))
    with mm.kernels(False), pytest.raises(ValueError) as whole_error:
        model(x, np.full((5, 8), 99))
    assert str(split_error.value) == str(whole_error.value)
    with pytest.raises(ValueError, match="shape"):
        model(x, np.zeros((4, 8), dtype=np.int64))  # one row short: not cut into parts


def test_no_split_with_dropout_without_gradients_or_for_one_row(two_parts):
    model, (x, y) = _gpt(dropout=0.1), _batch()
    model(x, y)[1].backward()
    assert two_parts == []  # dropout in training mode: one thread, reproducible draws
    model.eval()
    model(x, y)[1].backward()
    assert len(two_parts) == 4  # eval mode: dropout is off, so the batch is split
    two_parts.clear()
    with mm.no_grad():
        model(x, y)
    model(x[:1], y[:1])
    assert two_parts == []


def test_parts_depend_on_the_batch_shape_only(monkeypatch):
    monkeypatch.setattr(bp, "MIN_TOKENS_PER_PART", 16)
    for threads in (1, 2, 8):
        monkeypatch.setattr(th, "available_threads", lambda: threads)
        assert bp.parts_for(np.zeros((8, 4), dtype=np.int64), splittable=True) == 2
        assert bp.parts_for(np.zeros((8, 3), dtype=np.int64), splittable=True) == 1  # 24 < 32
        assert bp.parts_for(np.zeros((1, 64), dtype=np.int64), splittable=True) == 1
        assert bp.parts_for(np.zeros((8, 4), dtype=np.int64), splittable=False) == 1


def test_one_blas_thread_runs_the_parts_here_with_the_same_bits(two_parts, monkeypatch):
    """A busy machine (--threads auto chose 1) or --threads 1: the parts run one after the
    other in this thread, and the run's numbers are exactly those of the threaded run."""
    model, (x, y) = _gpt(np.float32), _batch()
    threaded = _loss_and_grads(model, x, y, kernels=True)
    assert any(name.startswith("minimodel-part") for name in two_parts)
    two_parts.clear()
    monkeypatch.setattr(th, "available_threads", lambda: 1)
    here = _loss_and_grads(model, x, y, kernels=True)
    assert len(two_parts) == 4 and not any(n.startswith("minimodel-part") for n in two_parts)
    assert here[0] == threaded[0]
    assert all(np.array_equal(here[1][k], threaded[1][k]) for k in here[1])


def test_part_bounds_cover_the_rows_in_order():
    assert bp._part_bounds(16, 3) == [(0, 5), (5, 11), (11, 16)]
    assert bp._part_bounds(2, 2) == [(0, 1), (1, 2)]


def test_a_failing_part_waits_for_the_others_then_raises_the_first():
    done = []

    def slow_ok():
        import time

        time.sleep(0.05)
        done.append("ok")
        return 1

    def fails():
        raise KeyError("part 0")

    with pytest.raises(KeyError, match="part 0"):
        th.run_parts([fails, slow_ok])
    assert done == ["ok"]
    assert th.run_parts([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]


def test_models_in_two_user_threads_leave_blas_as_it_was(two_parts):
    before = _blas_now()
    errors = []

    def train(seed):
        try:
            model, (x, y) = _gpt(seed=seed), _batch(seed=seed)
            for _ in range(3):
                model(x, y)[1].backward()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=train, args=(s,)) for s in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _blas_now() == before


def test_the_kernel_is_registered_and_switched_off_with_the_others():
    assert "batch_loss" in dispatch.registered_kernels()
    with mm.kernels(False):
        assert "batch_loss" not in mm.active_kernels()


def test_parts_run_here_when_no_thread_can_start(monkeypatch):
    """In a sandbox with a process limit a thread may not start: the work is still done."""
    class NoThreads:
        def submit(self, *args, **kwargs):
            raise RuntimeError("can't start new thread")

    monkeypatch.setattr(th, "_pool", NoThreads())
    assert th.run_parts([lambda: 1, lambda: 2]) == [1, 2]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_can_still_split_its_batches(two_parts):
    """The parent's worker thread does not exist in a forked child: the child makes its own."""
    import multiprocessing as mp

    model, (x, y) = _gpt(), _batch()
    model(x, y)[1].backward()  # the parent's pool exists now
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        result = pool.apply_async(_child_step, (model, x, y))
        assert result.get(timeout=60) > 0


def _child_step(model, x, y):
    bp.MIN_TOKENS_PER_PART = 1
    th.available_threads = lambda: 2
    model.zero_grad()
    loss = model(x, y)[1]
    loss.backward()
    return float(np.abs(model.token_emb.weight.grad).sum())
