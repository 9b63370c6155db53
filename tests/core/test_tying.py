"""Weight-tying invariants at the nn / optim level, one per test.

The model under test is a minimal tied language model built here from library parts, so
these tests do not depend on the model files: embedding -> scale -> LayerNorm -> head.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import minimodel.functional as F
from minimodel import nn, optim

V, D = 11, 6


class TinyLM(nn.Module):
    """token_emb (V, d) -> LayerNorm -> lm_head (tied or untied)."""

    def __init__(self, tied: bool = True, seed: int = 0, dtype=np.float64) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.token_emb = nn.Embedding(V, D, std=0.5, rng=rng)
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.TiedHead(self.token_emb) if tied else nn.LMHead(D, V, std=0.5, rng=rng)
        for p in self.parameters():
            p.data = p.data.astype(dtype)
        self.ln_f.weight.data[...] = 1.0 + 0.1 * rng.standard_normal(D)

    def forward(self, ids, targets=None):
        logits = self.lm_head(self.ln_f(self.token_emb(ids)))  # (B, T, V)
        loss = None if targets is None else F.cross_entropy(logits, targets)
        return logits, loss


def batch(seed: int = 1):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, V, size=(2, 5))
    ids[0, :3] = 4  # a repeated token: its lookup gradient rows must add up
    targets = rng.integers(0, V, size=(2, 5))
    return ids, targets


def assert_tied(model: TinyLM) -> None:
    assert model.lm_head.weight is model.token_emb.weight


# --------------------------------------------------------------------------- structure
def test_tied_head_weight_is_the_embedding_parameter():
    """TiedHead.weight is the embedding's Parameter object (identity, not a copy)."""
    model = TinyLM()
    assert_tied(model)
    model.token_emb.weight.data[0, 0] = 42.0
    assert model.lm_head.weight.data[0, 0] == 42.0


def test_parameters_and_named_parameters_list_tied_matrix_once():
    """parameters()/named_parameters() yield the shared matrix once, under the embedding name."""
    model = TinyLM()
    params = list(model.parameters())
    assert len(params) == len({id(p) for p in params}) == 3
    names = [n for n, _ in model.named_parameters()]
    assert names == ["token_emb.weight", "ln_f.weight", "ln_f.bias"]
    aliases = [n for n, _ in model.named_parameters(remove_duplicate=False)]
    assert "lm_head.weight" in aliases and len(aliases) == 4
    assert model.tie_groups() == [["token_emb.weight", "lm_head.weight"]]


def test_num_params_counts_tied_matrix_once():
    """An untied model has exactly V*d more parameters than the tied one."""
    tied, untied = TinyLM(tied=True), TinyLM(tied=False)
    assert tied.num_params() == V * D + 2 * D
    assert untied.num_params() - tied.num_params() == V * D
    # non-embedding count: the tied matrix is an embedding; the untied head is a projection
    assert tied.num_params(non_embedding=True) == 2 * D
    assert untied.num_params(non_embedding=True) == 2 * D + V * D


def test_state_dict_has_no_head_key():
    """A tied model's state_dict stores the matrix once, under token_emb.weight."""
    sd = TinyLM().state_dict()
    assert list(sd) == ["token_emb.weight", "ln_f.weight", "ln_f.bias"]
    assert "lm_head.weight" in TinyLM(tied=False).state_dict()


def test_tied_head_with_wrong_vocab_size_raises_naming_both_sizes():
    """TiedHead(emb, vocab_size=wrong) fails early and names both sizes."""
    emb = nn.Embedding(V, D)
    with pytest.raises(ValueError) as info:
        nn.TiedHead(emb, vocab_size=V + 2)
    msg = str(info.value)
    assert str(V + 2) in msg and str(V) in msg
    assert nn.TiedHead(emb, vocab_size=V).vocab_size == V  # the matching size is accepted


# --------------------------------------------------------------------------- load / copy
def test_load_state_dict_round_trip_keeps_tie_and_loads_values():
    """Loading a tied state dict writes values in place: same objects, tie intact."""
    src, dst = TinyLM(seed=0), TinyLM(seed=5)
    emb_obj = dst.token_emb.weight
    assert not np.allclose(src.token_emb.weight.data, dst.token_emb.weight.data)
    dst.load_state_dict({k: v.copy() for k, v in src.state_dict().items()})
    assert dst.token_emb.weight is emb_obj
    assert_tied(dst)
    np.testing.assert_array_equal(dst.lm_head.weight.data, src.token_emb.weight.data)
    ids, _ = batch()
    np.testing.assert_array_equal(dst(ids)[0].data, src(ids)[0].data)


def test_state_dict_with_both_keys_equal_reties():
    """A checkpoint holding token_emb.weight and an equal lm_head.weight loads, tie kept."""
    src, dst = TinyLM(seed=0), TinyLM(seed=5)
    sd = {k: v.copy() for k, v in src.state_dict().items()}
    sd["lm_head.weight"] = sd["token_emb.weight"].copy()
    dst.load_state_dict(sd)
    assert_tied(dst)
    np.testing.assert_array_equal(dst.token_emb.weight.data, src.token_emb.weight.data)


def test_state_dict_with_both_keys_different_raises_with_max_difference():
    """Unequal embedding and head matrices are refused; the message gives the max difference."""
    src, dst = TinyLM(seed=0), TinyLM(seed=5)
    before = dst.token_emb.weight.data.copy()
    sd = {k: v.copy() for k, v in src.state_dict().items()}
    sd["lm_head.weight"] = sd["token_emb.weight"].copy()
    sd["lm_head.weight"][3, 2] += 0.75
    with pytest.raises(ValueError) as info:
        dst.load_state_dict(sd)
    msg = str(info.value)
    assert "0.75" in msg and "lm_head.weight" in msg and "token_emb.weight" in msg
    assert_tied(dst)
    np.testing.assert_array_equal(dst.token_emb.weight.data, before)  # nothing half-loaded


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_deepcopy_and_pickle_keep_the_tie(how):
    """The copy's head weight is the copy's embedding weight (not the original's)."""
    model = TinyLM()
    clone = copy.deepcopy(model) if how == "deepcopy" else pickle.loads(pickle.dumps(model))
    assert clone.lm_head.weight is clone.token_emb.weight
    assert clone.token_emb.weight is not model.token_emb.weight
    np.testing.assert_array_equal(clone.token_emb.weight.data, model.token_emb.weight.data)
    assert clone.num_params() == model.num_params()
    clone.token_emb.weight.data[0, 0] += 1.0  # independent of the original
    assert clone.lm_head.weight.data[0, 0] != model.lm_head.weight.data[0, 0]


def test_tie_survives_replacing_embedding_weight_and_resize():
    """A new Parameter of the same shape: the head follows automatically. A new shape is
    refused (it would disagree with every other copy of V); resize() grows the table in place."""
    model = TinyLM()
    old = model.token_emb.weight.data
    model.token_emb.weight = nn.Parameter(old * 2)
    assert_tied(model)
    np.testing.assert_array_equal(model.lm_head.weight.data, old * 2)
    with pytest.raises(ValueError, match=r"shape \(11, 6\), got \(14, 6\).*resize\(\)"):
        model.token_emb.weight = nn.Parameter(np.zeros((V + 3, D), np.float32))
    param = model.token_emb.weight
    model.token_emb.resize(V + 3)
    assert model.token_emb.weight is param  # in place: the same Parameter object
    np.testing.assert_array_equal(param.data[:V], old * 2)
    assert_tied(model)
    assert model.lm_head.vocab_size == model.token_emb.vocab_size == V + 3
    ids, _ = batch()
    logits, _ = model(ids)
    assert logits.shape == (2, 5, V + 3)
    assert model.num_params() == (V + 3) * D + 2 * D
    assert [n for n, _ in model.named_parameters()][0] == "token_emb.weight"


def test_freezing_the_head_freezes_the_embedding():
    """requires_grad_(False) on the tied head freezes the shared matrix for both uses."""
    model = TinyLM()
    model.lm_head.requires_grad_(False)
    assert model.token_emb.weight.requires_grad is False
    ids, targets = batch()
    _, loss = model(ids, targets)
    loss.backward()
    assert model.token_emb.weight.grad is None
    assert model.ln_f.weight.grad is not None and np.any(model.ln_f.weight.grad != 0)


# --------------------------------------------------------------------------- gradients
def test_tied_gradient_is_lookup_scatter_add_plus_head_projection():
    """dE = scatter_add(ids, dh_emb) + dlogits.T @ h, each part computed with NumPy.

    The model is logits = (E[ids] * s) @ E.T with a fixed scale s, so both parts are easy
    to write by hand; both are non-zero and the autograd gradient is exactly their sum.
    """
    from minimodel import Tensor

    rng = np.random.default_rng(3)
    emb = nn.Embedding(V, D, std=0.5, rng=rng)
    emb.weight.data = emb.weight.data.astype(np.float64)
    head = nn.TiedHead(emb)
    s = rng.uniform(0.5, 1.5, size=D)
    ids, targets = batch()
    targets[1, 4] = -100
    loss = F.cross_entropy(head(emb(ids) * Tensor(s)), targets)
    loss.backward()

    E = emb.weight.data
    h = (E[ids] * s).reshape(-1, D)  # (N, d)
    logits = h @ E.T  # (N, V)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    t = targets.reshape(-1)
    live = t != -100
    dlogits = p.copy()
    dlogits[np.arange(len(t)), np.where(live, t, 0)] -= 1
    dlogits *= live[:, None] / live.sum()
    head_part = dlogits.T @ h  # (V, d)
    dh = dlogits @ E  # (N, d)
    lookup_part = np.zeros_like(E)
    np.add.at(lookup_part, ids.reshape(-1), dh * s)

    assert np.abs(head_part).max() > 1e-3 and np.abs(lookup_part).max() > 1e-3
    np.testing.assert_allclose(emb.weight.grad, head_part + lookup_part, rtol=1e-10, atol=1e-13)
    assert not np.allclose(emb.weight.grad, head_part)
    assert not np.allclose(emb.weight.grad, lookup_part)


def test_tied_gradient_accumulates_across_two_backward_calls():
    """Two backward passes add (+=) into the one shared .grad."""
    model = TinyLM()
    ids, targets = batch()
    model(ids, targets)[1].backward()
    first = model.token_emb.weight.grad.copy()
    model(ids, targets)[1].backward()
    np.testing.assert_allclose(model.token_emb.weight.grad, 2 * first, rtol=1e-12)


def test_adamw_updates_tied_matrix_exactly_once_per_step():
    """One AdamW step on the tied model == one manual AdamW update of E with its gradient."""
    model = TinyLM()
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.1
    opt = optim.AdamW(model.parameters(), lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    E = model.token_emb.weight
    expected = E.data.copy()
    m = np.zeros_like(expected)
    v = np.zeros_like(expected)
    ids, targets = batch()
    for t in (1, 2, 3):
        opt.zero_grad()
        model(ids, targets)[1].backward()
        g = E.grad.copy()
        expected *= 1 - lr * wd
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        expected -= lr / (1 - b1 ** t) * m / (np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps)
        opt.step()
        np.testing.assert_allclose(E.data, expected, rtol=1e-12, atol=1e-14)
    assert len(opt.state) == 3  # one state entry per distinct parameter
    assert opt.state[E]["step"] == 3
    assert_tied(model)


def test_optimizer_rejects_a_parameter_passed_twice():
    """The tied matrix under both names (remove_duplicate=False) is refused with ValueError."""
    model = TinyLM()
    both = [p for _, p in model.named_parameters(remove_duplicate=False)]
    assert len(both) == 4
    for cls in (optim.AdamW, lambda ps: optim.SGD(ps, lr=0.1)):
        with pytest.raises(ValueError, match="twice"):
            cls(both)
    with pytest.raises(ValueError, match="twice"):  # also across parameter groups
        optim.AdamW([{"params": [model.token_emb.weight]}, {"params": [model.lm_head.weight]}])


def test_clip_grad_norm_counts_tied_matrix_once():
    """The global norm includes the shared gradient once, and clipping scales it once."""
    model = TinyLM()
    ids, targets = batch()
    model(ids, targets)[1].backward()
    grads = {id(p): p.grad.copy() for p in model.parameters()}
    true_norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    with_alias = [p for _, p in model.named_parameters(remove_duplicate=False)]
    norm = optim.clip_grad_norm(with_alias, max_norm=true_norm / 4)
    assert norm == pytest.approx(true_norm, rel=1e-12)
    coef = (true_norm / 4) / (true_norm + 1e-6)
    E = model.token_emb.weight
    np.testing.assert_allclose(E.grad, grads[id(E)] * coef, rtol=1e-12)  # not coef ** 2
    new_norm = math.sqrt(sum(float((p.grad ** 2).sum()) for p in model.parameters()))
    assert new_norm == pytest.approx(true_norm / 4, rel=1e-5)
