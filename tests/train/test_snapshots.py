"""Snapshots of the token matrices during training: schedule, ledger, bounds, no side effects."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from minimodel import autograd
from minimodel.models import GPT, GPTConfig
from minimodel.training import TrainConfig, train
from minimodel.training.snapshots import (MAX_FRAMES, Snapshots, frequency_buckets,
                                          gradient_ledger, snapshot_steps)

SMALL = dict(tokenizer="byte", d_model=16, n_layer=1, n_head=2, block_size=16, batch_size=4,
             steps=16, eval_interval=5, eval_batches=2, lr=1e-2, seed=7)


def _index(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "snapshots" / "index.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("total", [1, 7, 100, 1000, 10**7])
def test_the_schedule_runs_from_the_initialisation_to_the_end_denser_early(total):
    steps = snapshot_steps(total, MAX_FRAMES)
    assert steps[0] == 0 and steps[-1] == total
    assert steps == sorted(set(steps)) and len(steps) <= MAX_FRAMES
    if total >= 1000:                     # log-spaced: the first tenth holds most frames
        assert sum(s <= total // 10 for s in steps) > len(steps) // 2


def test_buckets_split_the_seen_tokens_into_thirds_by_frequency():
    counts = np.array([0, 5, 1, 9, 0, 3, 7, 2, 8])
    # seen ids rarest first: 2(1) 7(2) 5(3) | 1(5) 6(7) 8(8)... thirds of 7 seen tokens: 3, 2, 2
    np.testing.assert_array_equal(frequency_buckets(counts), [0, 2, 1, 3, 0, 1, 2, 1, 3])


@pytest.mark.parametrize("tied", [True, False])
def test_the_ledger_terms_add_up_to_the_gradient_of_e(tied):
    model = GPT(GPTConfig(vocab_size=50, block_size=8, n_layer=1, n_head=2, d_model=16,
                          tie_embeddings=tied))
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 20, (2, 8)), rng.integers(0, 50, (2, 8))   # ids 20..49 never looked up
    loss, lookup, head = gradient_ledger(model, (x, y))
    E = model.token_emb.weight
    assert model.lm_head.weight is E if tied else model.lm_head.weight is not E
    _, full = model(x, y)
    assert float(full.data) == pytest.approx(loss, rel=1e-6)
    params = [E] if tied else [E, model.lm_head.weight]
    grads = autograd.grad(full, params)
    if tied:
        np.testing.assert_allclose(lookup + head, grads[0], rtol=1e-5, atol=1e-7)
    else:
        np.testing.assert_allclose(lookup, grads[0], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(head, grads[1], rtol=1e-5, atol=1e-7)
    assert np.all(lookup[20:] == 0)                  # the lookup reaches only ids in the batch
    assert np.all(np.linalg.norm(head[20:], axis=1) > 0)   # the head reaches every row
    assert E.grad is None                            # nothing stored in .grad
    assert model.lm_head.weight is E if tied else True     # the tie is restored


def test_snapshots_change_nothing_in_training(tiny_corpus, tmp_path):
    kw = dict(SMALL, corpus=str(tiny_corpus))
    train(TrainConfig(**kw), tmp_path / "with")
    train(TrainConfig(**kw), tmp_path / "without", snapshots=False)
    a = load_file(str(tmp_path / "with" / "model.safetensors"))
    b = load_file(str(tmp_path / "without" / "model.safetensors"))
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)     # bitwise
    assert not (tmp_path / "without" / "snapshots").exists()
    rows = _index(tmp_path / "with")
    assert [r["step"] for r in rows] == snapshot_steps(16, MAX_FRAMES)
    last = load_file(str(tmp_path / "with" / "snapshots" / rows[-1]["file"]))
    assert last["E"].dtype == np.float16
    np.testing.assert_allclose(last["E"], a["token_emb.weight"], rtol=1e-3, atol=1e-4)
    assert rows[0]["probe_loss"] == pytest.approx(np.log(256), abs=0.05)   # ln V at the start
    assert set(rows[0]) >= {"erank_E", "norm_E", "ledger", "probe_loss", "buckets"}


def test_an_untied_run_snapshots_both_matrices(tiny_corpus, tmp_path):
    train(TrainConfig(**dict(SMALL, corpus=str(tiny_corpus), steps=4, tied=False)), tmp_path / "u")
    row = _index(tmp_path / "u")[-1]
    assert not row["tied"] and "erank_W" in row and "norm_W" in row
    assert set(load_file(str(tmp_path / "u" / "snapshots" / row["file"]))) == {"E", "W"}


def test_an_interrupted_run_resumed_has_the_straight_runs_frames(tiny_corpus, tmp_path):
    kw = dict(SMALL, corpus=str(tiny_corpus))
    train(TrainConfig(**kw), tmp_path / "straight")

    def stop(step, loss):
        if step == 9:
            raise KeyboardInterrupt
    train(TrainConfig(**kw), tmp_path / "cut", on_step=stop)
    train(TrainConfig(), tmp_path / "cut", resume=True)
    straight, cut = _index(tmp_path / "straight"), _index(tmp_path / "cut")
    assert [r["step"] for r in cut] == [r["step"] for r in straight]
    for a, b in zip(straight, cut):
        assert a["probe_loss"] == b["probe_loss"] and a["ledger"] == b["ledger"]
        fa = load_file(str(tmp_path / "straight" / "snapshots" / a["file"]))
        fb = load_file(str(tmp_path / "cut" / "snapshots" / b["file"]))
        np.testing.assert_array_equal(fa["E"], fb["E"])


def test_the_folder_is_bounded_by_the_budget(tiny_corpus, tmp_path):
    model = GPT(GPTConfig(vocab_size=256, block_size=16, n_layer=1, n_head=2, d_model=16))

    class Task:
        train_ids = np.arange(256)
        def eval_batches(self, n):
            yield np.zeros((4, 16), np.int64), np.zeros((4, 16), np.int64)
    frame = 256 * 16 * 2                                        # one float16 matrix
    snaps = Snapshots.for_run(tmp_path, model, Task(), 10**6, budget_bytes=5 * frame)
    assert len(snaps.steps) == 5 and snaps.steps[-1] == 10**6
    tiny_budget = Snapshots.for_run(tmp_path, model, Task(), 10**6, budget_bytes=1)
    assert len(tiny_budget.steps) == 2                          # never fewer than first + last


def test_a_diverged_model_gets_no_snapshot(tmp_path):
    model = GPT(GPTConfig(vocab_size=256, block_size=16, n_layer=1, n_head=2, d_model=16))

    class Task:
        train_ids = np.arange(256)
        def eval_batches(self, n):
            yield np.zeros((4, 16), np.int64), np.zeros((4, 16), np.int64)
    snaps = Snapshots.for_run(tmp_path, model, Task(), 10)
    model.token_emb.weight.data[3, 0] = np.nan
    assert snaps.take_if_due(model, 0) is False and snaps.read_index() == []
