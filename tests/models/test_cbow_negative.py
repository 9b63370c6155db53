"""CBOW with word2vec's negative sampling: the model's loss, the noise distribution, training."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from minimodel.cli import main
from minimodel.models.cbow import CBOW, CBOWConfig
from minimodel.training.tasks import noise_table


@pytest.mark.parametrize("tied", [False, True])
def test_negative_sampling_loss_and_gradients_match_torch(tied):
    model = CBOW(CBOWConfig(vocab_size=40, d_model=6, window=2, tie_embeddings=tied),
                 rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    ctx, tgt, neg = rng.integers(0, 40, (9, 4)), rng.integers(0, 40, 9), rng.integers(0, 40, (9, 5))
    loss = model.loss(ctx, tgt, neg)
    loss.backward()
    e_in = torch.tensor(model.in_emb.weight.data, dtype=torch.float64, requires_grad=True)
    e_out = e_in if tied else torch.tensor(model.lm_head.weight.data, dtype=torch.float64,
                                           requires_grad=True)
    h = e_in[torch.tensor(ctx)].mean(1)
    rows = e_out[torch.tensor(np.concatenate([tgt[:, None], neg], 1))]
    scores = (rows @ h.unsqueeze(-1)).squeeze(-1)
    sign = torch.tensor([1.0] + [-1.0] * 5, dtype=torch.float64)
    expected = -torch.nn.functional.logsigmoid(scores * sign).sum(1).mean()
    expected.backward()
    np.testing.assert_allclose(float(loss.data), expected.item(), rtol=1e-5)
    np.testing.assert_allclose(model.in_emb.weight.grad, e_in.grad.numpy(), rtol=1e-4, atol=1e-7)
    if not tied:
        np.testing.assert_allclose(model.lm_head.weight.grad, e_out.grad.numpy(), rtol=1e-4,
                                   atol=1e-7)
        # Only the 1 + K output rows of each example get a gradient: sparse, unlike softmax.
        touched = np.unique(np.concatenate([tgt, neg.ravel()]))
        assert set(np.flatnonzero(np.abs(model.lm_head.weight.grad).sum(1))) <= set(touched)


def test_bad_noise_ids_are_refused():
    model = CBOW(CBOWConfig(vocab_size=10, d_model=4, window=1))
    with pytest.raises(ValueError, match="CBOW negatives"):
        model.loss(np.zeros((2, 2), dtype=np.int64), np.zeros(2, dtype=np.int64),
                   np.full((2, 3), 10))
    with pytest.raises(ValueError, match="negatives"):
        model.loss(np.zeros((2, 2), dtype=np.int64), np.zeros(2, dtype=np.int64),
                   np.zeros(3, int))


def test_noise_table_follows_count_to_the_three_quarters_without_unk():
    ids = np.repeat(np.arange(5), [50, 1000, 100, 10, 1])  # id 0 plays [UNK]
    table = noise_table(ids, vocab_size=6, unk_id=0)
    share = np.bincount(table, minlength=6) / len(table)
    weights = np.array([0, 1000, 100, 10, 1, 0], dtype=float) ** 0.75
    np.testing.assert_allclose(share, weights / weights.sum(), atol=2e-6)
    assert share[0] == 0 and share[5] == 0


def test_train_with_negative_sampling(tmp_path, capsys):
    out = tmp_path / "ns"
    code = main(["train", "--model", "cbow", "--negative", "5", "--batch-size", "512",
                 "--steps", "60", "--eval-interval", "60", "--out", str(out), "--json"])
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary = next(e for e in events if e["event"] == "summary")
    steps = [e for e in events if e["event"] == "step"]
    assert summary["negative"] == 5
    # The negative-sampling loss starts near (1 + K) ln 2 (all scores ~0) and falls.
    assert abs(steps[0]["loss"] - 6 * np.log(2)) < 0.1 and steps[-1]["loss"] < steps[0]["loss"] - 1


@pytest.mark.parametrize("args, words", [
    (["--model", "cbow", "--negative", "-1"], "--negative must be an integer >= 0"),
    (["--model", "gpt", "--negative", "5"], "--negative does not apply to --model gpt"),
])
def test_negative_option_is_checked(tmp_path, capsys, args, words):
    assert main(["train", *args, "--out", str(tmp_path / "x")]) == 2
    assert words in capsys.readouterr().err
