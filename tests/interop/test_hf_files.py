"""The exported files themselves (no transformers needed): names, layouts, tie, atomicity."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from minimodel.data import ByteTokenizer
from minimodel.interop import from_hf, to_hf
from minimodel.interop import _files as hf_files


def _tensors(folder):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_tied_export_stores_the_matrix_once(tmp_path, make_gpt):
    model = make_gpt(50, 8, 2, 2, 16, tied=True)
    to_hf(model, tmp_path)
    tensors = _tensors(tmp_path)
    assert "lm_head.weight" not in tensors
    assert len(tensors) == 2 + 2 * 12 + 2  # wte, wpe, 12 per block, ln_f
    np.testing.assert_array_equal(tensors["transformer.wte.weight"], model.token_emb.weight.data)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["tie_word_embeddings"] is True


def test_untied_export_writes_both_and_conv1d_is_transposed(tmp_path, make_gpt):
    model = make_gpt(50, 8, 1, 2, 16, tied=False)
    to_hf(model, tmp_path)
    t = _tensors(tmp_path)
    np.testing.assert_array_equal(t["lm_head.weight"], model.lm_head.weight.data)
    block = model.blocks[0]
    assert t["transformer.h.0.attn.c_attn.weight"].shape == (16, 48)  # Conv1D: (in, out)
    np.testing.assert_array_equal(t["transformer.h.0.attn.c_attn.weight"],
                                  block.attn.c_attn.weight.data.T)
    np.testing.assert_array_equal(t["transformer.h.0.mlp.c_proj.weight"],
                                  block.mlp.c_proj.weight.data.T)
    np.testing.assert_array_equal(t["transformer.h.0.ln_2.bias"], block.ln_2.bias.data)
    assert json.loads((tmp_path / "config.json").read_text())["tie_word_embeddings"] is False


def test_config_fields_and_special_ids_inside_the_vocabulary(tmp_path, make_gpt):
    model = make_gpt(258, 8, 1, 2, 16)
    to_hf(model, tmp_path / "plain")
    config = json.loads((tmp_path / "plain" / "config.json").read_text())
    expected = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 258,
                "n_positions": 8, "n_embd": 16, "n_layer": 1, "n_head": 2, "n_inner": 64,
                "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
                "scale_attn_weights": True, "bos_token_id": 0, "eos_token_id": 0,
                "pad_token_id": 0}
    assert {k: config[k] for k in expected} == expected
    tok = ByteTokenizer(special_tokens=("[PAD]", "</s>"))
    to_hf(model, tmp_path / "tok", tokenizer=tok)
    config = json.loads((tmp_path / "tok" / "config.json").read_text())
    assert (config["bos_token_id"], config["eos_token_id"], config["pad_token_id"]) == (
        257, 257, 256)


def test_round_trip_without_transformers(tmp_path, make_gpt):
    for tied in (True, False):
        model = make_gpt(50, 8, 2, 2, 16, tied=tied)
        to_hf(model, tmp_path / str(tied))
        back = from_hf(tmp_path / str(tied))
        assert (back.lm_head.weight is back.token_emb.weight) is tied
        own, theirs = model.state_dict(), back.state_dict()
        assert own.keys() == theirs.keys()
        for key in own:
            np.testing.assert_array_equal(theirs[key], own[key])


def test_vocab_mismatch_with_tokenizer_is_refused(tmp_path, make_gpt):
    model = make_gpt(300, 8, 1, 2, 16)
    with pytest.raises(ValueError, match=r"model has vocab_size=300 but the tokenizer has "
                                         r"vocab_size=256"):
        to_hf(model, tmp_path, tokenizer=ByteTokenizer())
    assert not tmp_path.joinpath("config.json").exists()


def test_only_gpt_and_masked_lm_export(tmp_path):
    from minimodel.models import CBOW, CBOWConfig

    with pytest.raises(TypeError, match=r"exports a GPT or a MaskedLM, got CBOW.*word2vec"):
        to_hf(CBOW(CBOWConfig(50, 8, 2)), tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_failed_export_leaves_the_previous_one_intact(tmp_path, make_gpt, monkeypatch):
    out = tmp_path / "hf"
    to_hf(make_gpt(50, 8, 1, 2, 16, seed=1), out)
    before = (out / "model.safetensors").read_bytes()

    def boom(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C in the middle of writing

    monkeypatch.setattr(hf_files, "export_tokenizer", boom)  # where the export looks it up
    with pytest.raises(KeyboardInterrupt):
        to_hf(make_gpt(256, 8, 1, 2, 16, seed=2), out, tokenizer=ByteTokenizer())
    assert (out / "model.safetensors").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf"]  # no staging folder left


def test_overwrite_rules(tmp_path, make_gpt):
    model = make_gpt(50, 8, 1, 2, 16)
    out = tmp_path / "hf"
    to_hf(model, out)
    to_hf(model, out)  # a previous export is replaced without asking
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files an export does not write \(notes\.txt\); "
                       r"choose another folder or use --force \(overwrite=True in Python\)"):
        to_hf(model, out)
    to_hf(model, out, overwrite=True)
    assert not (out / "notes.txt").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match=r"is a file"):
        to_hf(model, tmp_path / "file")


def test_a_file_in_the_output_path_is_named(tmp_path, make_gpt):
    (tmp_path / "vectors.txt").write_text("x")
    with pytest.raises(NotADirectoryError) as info:
        to_hf(make_gpt(50, 8, 1, 2, 16), tmp_path / "vectors.txt" / "sub")
    assert info.value.strerror == (f"{tmp_path / 'vectors.txt'} is a file, not a folder, so "
                                   f"{tmp_path / 'vectors.txt' / 'sub'} cannot be written there")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_an_uncreatable_folder_is_named_not_the_staging_folder(make_gpt):
    """/proc refuses new entries: the message names the user's path, not ".x.<hex>.tmp"."""
    with pytest.raises(OSError) as info:
        to_hf(make_gpt(50, 8, 1, 2, 16), "/proc/x")
    assert info.value.strerror == "cannot create the export folder /proc/x (no such file or directory)"
    assert ".tmp" not in str(info.value)
