"""Unigram baseline, optimizer grouping, config defaults and the training-state format."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minimodel.models import GPT, GPTConfig
from minimodel.optim import AdamW
from minimodel.training import TrainConfig, param_groups, unigram_baseline
from minimodel.training.checkpoint import optimizer_state_from_files, optimizer_state_to_files


def test_unigram_baseline_by_hand():
    train = np.array([0, 0, 0, 1])  # counts (3, 1, 0) over V = 3
    val = np.array([0, 1, 2])
    # add-one: p = (4/7, 2/7, 1/7)
    expected = -(math.log(4 / 7) + math.log(2 / 7) + math.log(1 / 7)) / 3
    assert unigram_baseline(train, val, 3) == pytest.approx(expected, rel=1e-12)


def test_unigram_baseline_is_entropy_for_matching_distributions():
    rng = np.random.default_rng(0)
    p = np.array([0.5, 0.25, 0.125, 0.125])
    train = rng.choice(4, size=400_000, p=p)
    val = rng.choice(4, size=200_000, p=p)
    entropy = -(p * np.log(p)).sum()
    assert unigram_baseline(train, val, 4) == pytest.approx(entropy, abs=5e-3)
    # uniform data: ln V
    uniform = unigram_baseline(np.arange(8).repeat(1000), np.arange(8), 8)
    assert uniform == pytest.approx(math.log(8))


def test_unigram_baseline_errors():
    with pytest.raises(ValueError, match=r"target ids must lie in \[0, 3\)"):
        unigram_baseline(np.array([0, 1]), np.array([3]), 3)
    with pytest.raises(ValueError, match="at least one target"):
        unigram_baseline(np.array([0, 1]), np.array([], dtype=int), 3)


@pytest.mark.parametrize("tied", [True, False])
def test_param_groups_decay_matrices_only_and_list_the_tied_matrix_once(tied):
    model = GPT(GPTConfig(50, 8, 1, 2, 8, tie_embeddings=tied))
    decay, no_decay = param_groups(model, 0.1)
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.ndim >= 2 for p in decay["params"]) and all(p.ndim < 2 for p in no_decay["params"])
    ids = [id(p) for g in (decay, no_decay) for p in g["params"]]
    assert len(ids) == len(set(ids)) == len(list(model.parameters()))
    emb = model.token_emb.weight
    assert sum(p is emb for p in decay["params"]) == 1
    assert (model.lm_head.weight is emb) == tied
    AdamW([decay, no_decay])  # accepted: no parameter twice


def test_optimizer_state_round_trips_exactly():
    model = GPT(GPTConfig(20, 4, 1, 2, 8))
    opt = AdamW(param_groups(model, 0.1), lr=1e-3, betas=(0.9, 0.99))
    _, loss = model(np.array([[1, 2, 3, 4]]), np.array([[2, 3, 4, 5]]))
    loss.backward()
    opt.step()
    arrays, meta = optimizer_state_to_files(opt.state_dict())
    import json

    back = optimizer_state_from_files(arrays, json.loads(json.dumps(meta)))
    opt2 = AdamW(param_groups(model, 0.1), lr=1e-3, betas=(0.9, 0.99))
    opt2.load_state_dict(back)
    for p in model.parameters():
        for key in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(opt.state[p][key], opt2.state[p][key])
        assert opt2.state[p]["step"] == 1
    assert opt2.param_groups[0]["betas"] == (0.9, 0.99)


def test_config_defaults_per_model():
    gpt = TrainConfig().resolved()
    assert gpt.tied is True and gpt.tokenizer == "bpe" and gpt.vocab_size == 1024
    cbow = TrainConfig(model="cbow").resolved()
    assert cbow.tied is False and cbow.window == 2
    assert TrainConfig(steps=30).resolved().warmup == 3  # warm-up <= 10 % of a short run
    with pytest.raises(ValueError, match="--model must be one of"):
        TrainConfig(model="rnn").resolved()
    with pytest.raises(ValueError, match="--tokenizer 'bpe' does not apply"):
        TrainConfig(model="cbow", tokenizer="bpe").resolved()


@pytest.mark.parametrize("kw, message", [
    (dict(model="cbow", vocab_size=300), "--vocab-size does not apply to --model cbow"),
    (dict(model="gpt", window=3), "--window does not apply to --model gpt"),
    (dict(model="cbow", n_layer=2, block_size=8), "--n-layer, --block-size do not apply"),
    (dict(model="gpt", head_transform=True), "--head-transform does not apply to --model gpt"),
])
def test_options_a_model_does_not_use_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**kw).resolved()


def test_masked_lm_runs_build_the_head_transform_unless_asked_not_to():
    from minimodel.training.run_files import build_model

    rng = np.random.default_rng(0)
    default = TrainConfig(model="mlm", d_model=16, n_head=2, n_layer=1, block_size=8).resolved()
    assert default.head_transform is True
    assert build_model(default, 30, rng).head_transform is not None
    bare = TrainConfig(model="mlm", d_model=16, n_head=2, n_layer=1, block_size=8,
                       head_transform=False).resolved()
    assert build_model(bare, 30, rng).head_transform is None
    # a run saved before the option existed resumes with the head it was trained with
    saved = {k: v for k, v in default.to_dict().items() if k != "head_transform"}
    assert TrainConfig.from_dict(saved).head_transform is False
