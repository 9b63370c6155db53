"""The kernel of ``F.batch_loss`` (kernels/batch_split.py) on real models: the plain
``model.loss(x, y).backward()`` gives the numbers of the whole batch (the definition), the same
bits every run, BLAS settings restored, errors reported as for the whole batch, no split where
it must not, and nothing of it with kernels off.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import minimodel as mm
from minimodel import runtime
from minimodel.kernels import threads as th
from minimodel.models import CBOW, GPT, CBOWConfig, GPTConfig, MaskedLM, MLMConfig
from minimodel.kernels import batch_split as bs


@pytest.fixture
def two_parts(monkeypatch):
    """Split every batch of >= 2 rows in two, as on a 2-core machine, however small; records
    the threads the parts ran in. Kernels on, also in CI's MINIMODEL_KERNELS=0 pass."""
    monkeypatch.setattr(bs, "MIN_TOKENS_PER_PART", 1)
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


def loss_and_backward(model, x, y) -> float:
    """The learner's two lines."""
    loss = model.loss(x, y)
    loss.backward()
    return float(loss.data)


def _loss_and_grads(model, x, y, kernels: bool):
    with mm.kernels(kernels):
        loss = loss_and_backward(model, x, y)
    grads = {name: p.grad.copy() for name, p in model.named_parameters()}
    model.zero_grad()
    return loss, grads


def test_gpt_loss_and_every_gradient_match_one_thread(two_parts):
    model, (x, y) = _gpt(), _batch()
    loss_p, grads_p = _loss_and_grads(model, x, y, kernels=True)
    assert len(two_parts) == 4  # two parts, forward then backward
    assert sorted(two_parts) == ["MainThread"] * 2 + ["minimodel-part_0"] * 2
    loss_1, grads_1 = _loss_and_grads(model, x, y, kernels=False)
    assert len(two_parts) == 4  # kernels off: no part, no thread
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


def test_masked_lm_matches_the_whole_batch(two_parts):
    model = MaskedLM(MLMConfig(vocab_size=19, block_size=6, n_layer=1, n_head=2, d_model=8),
                     rng=np.random.default_rng(0))
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 19, (4, 6))
    labels = np.full((4, 6), -100)
    labels[0, 1], labels[2, 0], labels[2, 5], labels[3, 3] = 4, 7, 1, 18  # row 1: none
    loss_p, grads_p = _loss_and_grads(model, ids, labels, kernels=True)
    assert len(two_parts) == 4
    loss_1, grads_1 = _loss_and_grads(model, ids, labels, kernels=False)
    assert loss_p == pytest.approx(loss_1, rel=1e-6)
    for name in grads_1:
        np.testing.assert_allclose(grads_p[name], grads_1[name], rtol=1e-5, atol=1e-8)


def test_a_scaled_loss_and_cbow_get_the_gradients_of_the_whole_batch(two_parts):
    """The joined loss is a node like any other: an upstream factor reaches both parts, and
    every model whose loss goes through F.batch_loss is split (CBOW's full softmax here)."""
    model, (x, y) = _gpt(), _batch()
    with mm.kernels(True):
        (model.loss(x, y) * 3.0).backward()
    split = {n: p.grad.copy() for n, p in model.named_parameters()}
    model.zero_grad()
    with mm.kernels(False):
        (model.loss(x, y) * 3.0).backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(split[name], p.grad, rtol=1e-9, atol=1e-12, err_msg=name)
    two_parts.clear()
    cbow = CBOW(CBOWConfig(vocab_size=17, d_model=6, window=2),
                          rng=np.random.default_rng(0))
    for p in cbow.parameters():
        p.data = p.data.astype(np.float64)
    rng = np.random.default_rng(5)
    contexts, targets = rng.integers(0, 17, (6, 4)), rng.integers(0, 17, 6)
    loss_p, grads_p = _loss_and_grads(cbow, contexts, targets, kernels=True)
    assert len(two_parts) == 4
    loss_1, grads_1 = _loss_and_grads(cbow, contexts, targets, kernels=False)
    assert loss_p == pytest.approx(loss_1, rel=1e-12)
    for name in grads_1:
        np.testing.assert_allclose(grads_p[name], grads_1[name], rtol=1e-9, atol=1e-12)


def test_the_split_weights_each_part_by_its_labelled_targets(two_parts):
    """Part 0 has 3 labelled targets, part 1 has 16: L = (3 L_0 + 16 L_1) / 19, the mean over
    the batch's 19 labelled targets, and not (L_0 + L_1) / 2."""
    model, (x, y) = _gpt(), _batch(B=4)
    y[:2, :] = -100
    y[0, :3] = x[0, :3]
    loss, _ = _loss_and_grads(model, x, y, kernels=True)
    l0, l1 = model.loss_of_rows(x[:2], y[:2]).item(), model.loss_of_rows(x[2:], y[2:]).item()
    assert loss == pytest.approx((3 * l0 + 16 * l1) / 19, rel=1e-12)
    assert abs(loss - (l0 + l1) / 2) > 1e-3


def test_a_parameter_the_loss_does_not_reach_keeps_no_gradient(two_parts):
    """As with the whole batch: a parameter outside the loss's graph keeps .grad None (an
    optimizer then skips it), not a zero gradient it would decay."""
    model, (x, y) = _gpt(), _batch()
    model.unused = mm.nn.Parameter(np.ones(3))
    loss_and_backward(model, x, y)
    assert len(two_parts) == 4 and model.unused.grad is None
    assert model.token_emb.weight.grad is not None


def test_blas_threads_are_restored_and_one_per_part(two_parts, monkeypatch):
    seen_inside = []
    model, (x, y) = _gpt(), _batch()
    real = GPT.loss_of_rows

    def spying(self, idx, targets):
        seen_inside.append(_blas_now())  # BLAS threads while a part runs
        return real(self, idx, targets)

    monkeypatch.setattr(GPT, "loss_of_rows", spying)
    before = _blas_now()
    loss_and_backward(model, x, y)
    assert _blas_now() == before
    if runtime.blas_libraries().lib_controllers:  # a BLAS threadpoolctl can limit
        assert seen_inside == [1, 1]


def _blas_now() -> int | None:
    libs = runtime.blas_libraries().lib_controllers
    return min(lib.num_threads for lib in libs) if libs else None


def test_bad_targets_report_the_whole_batch(two_parts):
    model, (x, _) = _gpt(), _batch()
    with pytest.raises(ValueError) as split_error:
        loss_and_backward(model, x, np.full((5, 8), 99))
    with mm.kernels(False), pytest.raises(ValueError) as whole_error:
        loss_and_backward(model, x, np.full((5, 8), 99))
    assert str(split_error.value) == str(whole_error.value)
    with pytest.raises(ValueError, match="shape"):
        loss_and_backward(model, x, np.zeros((4, 8), dtype=np.int64))  # one row short
    assert all(p.grad is None for p in model.parameters())


def test_no_split_with_dropout_without_gradients_or_for_one_row(two_parts):
    model, (x, y) = _gpt(dropout=0.1), _batch()
    loss_and_backward(model, x, y)
    assert two_parts == []  # dropout in training mode: one thread, reproducible draws
    model.eval()
    loss_and_backward(model, x, y)
    assert len(two_parts) == 4  # eval mode: dropout is off, so the batch is split
    two_parts.clear()
    with mm.no_grad():
        assert bs.parts_for(model.loss_of_rows, x) == 1
    loss_and_backward(model, x[:1], y[:1])
    assert two_parts == []


def test_parts_depend_on_the_batch_shape_only(monkeypatch):
    monkeypatch.setattr(bs, "MIN_TOKENS_PER_PART", 16)
    model = _gpt()
    for threads in (1, 2, 8):
        monkeypatch.setattr(th, "available_threads", lambda: threads)
        with mm.kernels(True):
            assert bs.parts_for(model.loss_of_rows, np.zeros((8, 4), dtype=np.int64)) == 2
            assert bs.parts_for(model.loss_of_rows, np.zeros((8, 3), dtype=np.int64)) == 1  # 24<32
            assert bs.parts_for(model.loss_of_rows, np.zeros((1, 64), dtype=np.int64)) == 1


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
                loss_and_backward(model, x, y)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=train, args=(s,)) for s in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _blas_now() == before


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
    loss_and_backward(model, x, y)  # the parent's pool exists now
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        result = pool.apply_async(_child_step, (model, x, y))
        assert result.get(timeout=60) > 0


def _child_step(model, x, y):
    bs.MIN_TOKENS_PER_PART = 1
    th.available_threads = lambda: 2
    model.zero_grad()
    loss_and_backward(model, x, y)
    return float(np.abs(model.token_emb.weight.grad).sum())
