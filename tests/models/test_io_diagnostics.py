"""Checkpoints keep ties and refuse bad files; diagnostics measure what they claim."""

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import minimodel as mm
from minimodel.diagnostics import (effective_rank, gradient_row_sparsity, nearest_neighbours,
                                   parameter_accounting, participation_ratio)
from minimodel.models import CBOW, GPT, GPTConfig, MaskedLM, MLMConfig


def gpt(tie=True):
    mm.nn.manual_seed(0)
    return GPT(GPTConfig(vocab_size=30, block_size=8, n_layer=1, n_head=2, d_model=8,
                         tie_embeddings=tie))


@pytest.mark.parametrize("make", [
    lambda: gpt(True), lambda: gpt(False),
    lambda: MaskedLM(MLMConfig(30, 8, 1, 2, 8)),
    lambda: CBOW(vocab_size=30, d_model=8, window=2, tie_embeddings=True),
])
def test_save_load_round_trip(tmp_path, make):
    model = make()
    path = mm.save(model, tmp_path / "m.safetensors")
    back = mm.load(path)
    assert type(back) is type(model)
    assert back.tie_groups() == model.tie_groups()
    for (n1, p1), (n2, p2) in zip(model.named_parameters(), back.named_parameters()):
        assert n1 == n2
        np.testing.assert_array_equal(p1.data, p2.data)
    if model.config.tie_embeddings:
        assert back.get_output_embeddings().weight is back.get_input_embeddings().weight


def test_tied_matrix_stored_once(tmp_path):
    path = mm.save(gpt(True), tmp_path / "m.safetensors")
    keys = set(load_file(str(path)))
    assert "token_emb.weight" in keys and "lm_head.weight" not in keys


def _with_head_key(tmp_path, head):
    model = gpt(True)
    path = mm.save(model, tmp_path / "m.safetensors")
    tensors = load_file(str(path))
    from safetensors import safe_open
    with safe_open(str(path), "np") as f:
        meta = f.metadata()
    tensors["lm_head.weight"] = head(tensors["token_emb.weight"])
    save_file(tensors, str(path), metadata=meta)
    return path


def test_both_keys_equal_reties(tmp_path):
    back = mm.load(_with_head_key(tmp_path, lambda e: e.copy()))
    assert back.lm_head.weight is back.token_emb.weight


def test_both_keys_different_refused_with_max_difference(tmp_path):
    path = _with_head_key(tmp_path, lambda e: e + np.float32(0.25))
    with pytest.raises(ValueError, match=r"max \|difference\| = 0.25"):
        mm.load(path)


def test_corrupt_and_foreign_files_refused(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="bad.safetensors"):
        mm.load(bad)
    foreign = tmp_path / "foreign.safetensors"
    save_file({"x": np.zeros(3, np.float32)}, str(foreign))
    with pytest.raises(ValueError, match="not a minimodel checkpoint"):
        mm.load(foreign)
    with pytest.raises(FileNotFoundError):
        mm.load(tmp_path / "missing.safetensors")


def test_float64_checkpoint_stays_float64(tmp_path):
    model = gpt()
    for p in model.parameters():
        p.data = p.data.astype(np.float64)
    back = mm.load(mm.save(model, tmp_path / "m.safetensors"))
    assert all(p.dtype == np.float64 for p in back.parameters())
    assert back.lm_head.weight is back.token_emb.weight


def test_save_refuses_unknown_module(tmp_path):
    with pytest.raises(TypeError, match="built-in models"):
        mm.save(mm.nn.Linear(2, 2), tmp_path / "x.safetensors")


def test_effective_rank_known_spectra():
    assert effective_rank(np.eye(6)) == pytest.approx(6.0)
    rank_one = np.outer(np.arange(1, 5), np.arange(1, 4)).astype(float)
    assert effective_rank(rank_one) == pytest.approx(1.0)
    s = np.array([3.0, 1.0])
    p = s / s.sum()
    assert effective_rank(np.diag(s)) == pytest.approx(np.exp(-(p * np.log(p)).sum()))
    assert participation_ratio(np.diag([1.0, 1.0, 1.0])) == pytest.approx(3.0)
    assert participation_ratio(np.diag(s)) == pytest.approx((9 + 1) ** 2 / (81 + 1))


def test_gradient_rows_touched_equal_unique_ids():
    model = gpt(False)
    ids = np.array([[1, 1, 5, 7, 7, 7, 2, 1]])
    _, loss = model(ids, ids)
    loss.backward()
    stats = gradient_row_sparsity(model.token_emb.weight.grad)
    assert stats["rows_touched"] == len(np.unique(ids)) == 4
    assert stats["fraction"] == pytest.approx(4 / 30)


def test_parameter_accounting_tied_vs_untied():
    tied, untied = parameter_accounting(gpt(True)), parameter_accounting(gpt(False))
    assert tied["saved_by_tying"] == 30 * 8
    assert untied["saved_by_tying"] == 0
    assert tied["parameters_if_untied"] == untied["parameters"]
    assert tied["tie_groups"] == [["token_emb.weight", "lm_head.weight"]]
    assert tied["bytes"] == 4 * tied["parameters"]
    json.dumps(tied)  # serialisable for `inspect --json`


def test_nearest_neighbours_by_cosine():
    E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    nn = nearest_neighbours(E, 0, k=3)
    assert [i for i, _ in nn] == [1, 2, 3]
    assert nn[0][1] == pytest.approx(0.9 / np.hypot(0.9, 0.1))
    with pytest.raises(ValueError, match="outside"):
        nearest_neighbours(E, 9)
