"""Files are checked before they are trusted: a checkpoint whose config, tensors, dtypes or
values are wrong is refused with a message naming the file and the tensor, before any model is
built — a config claiming a huge vocabulary or layer count must not allocate anything."""

from __future__ import annotations

import json
import time
import warnings

import numpy as np
import pytest
from safetensors.numpy import save_file

import minimodel as mm
from minimodel.models import CBOW, CBOWConfig, GPT, GPTConfig, MaskedLM, MLMConfig


def write(path, tensors, model="GPT", config=None):
    config = config or GPTConfig(17, 4, 1, 2, 8).to_dict()
    save_file(tensors, str(path), metadata={"minimodel.model": model,
                                            "minimodel.config": json.dumps(config)})
    return path


def good_tensors():
    return {k: v.copy() for k, v in GPT(GPTConfig(17, 4, 1, 2, 8)).state_dict().items()}


@pytest.mark.parametrize("field, value", [("vocab_size", 10**9), ("n_layer", 10**7),
                                          ("d_model", 2**20), ("block_size", 10**8)])
def test_a_huge_config_is_refused_at_once(tmp_path, field, value):
    config = {**GPTConfig(17, 4, 1, 2, 8).to_dict(), field: value}
    if field == "d_model":
        config["n_head"] = 1
    path = write(tmp_path / "m.safetensors", good_tensors(), config=config)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"{field}={value:,}, beyond the limit"):
        mm.load(path)
    assert time.perf_counter() - start < 10.0  # the old code allocated GBs or hung a minute


def test_a_config_that_disagrees_with_the_tensors_is_refused_before_building(tmp_path,
                                                                             monkeypatch):
    tensors, built = good_tensors(), []
    monkeypatch.setattr(GPT, "__init__", lambda *a, **k: built.append(1) or None)
    config = {**GPTConfig(17, 4, 1, 2, 8).to_dict(), "vocab_size": 5000}
    with pytest.raises(ValueError, match=r"'token_emb.weight' has shape \(17, 8\) but the stored "
                                         r"config needs \(5000, 8\)"):
        mm.load(write(tmp_path / "m.safetensors", tensors, config=config))
    config = {**GPTConfig(17, 4, 1, 2, 8).to_dict(), "n_layer": 3}
    with pytest.raises(ValueError, match="missing blocks.1.ln_1.weight"):
        mm.load(write(tmp_path / "m2.safetensors", tensors, config=config))
    assert built == []


def test_missing_unexpected_and_misshapen_tensors_name_the_file_and_tensor(tmp_path):
    t = good_tensors()
    del t["ln_f.bias"]
    t["extra.weight"] = np.zeros(3, np.float32)
    path = write(tmp_path / "m.safetensors", t)
    with pytest.raises(ValueError, match=r"m.safetensors does not hold .*missing ln_f.bias; "
                                         r"unexpected extra.weight"):
        mm.load(path)
    t = good_tensors()
    t["blocks.0.mlp.c_fc.weight"] = np.zeros((32, 9), np.float32)
    with pytest.raises(ValueError, match=r"'blocks.0.mlp.c_fc.weight' has shape \(32, 9\)"):
        mm.load(write(tmp_path / "m3.safetensors", t))


def test_integer_weights_are_refused(tmp_path):
    t = good_tensors()
    t["ln_f.weight"] = np.ones(8, np.int32)
    with pytest.raises(ValueError, match=r"'ln_f.weight' has dtype I32; weights must be float"):
        mm.load(write(tmp_path / "m.safetensors", t))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_weights_are_refused(tmp_path, bad):
    t = good_tensors()
    t["token_emb.weight"][3, 1] = bad
    with pytest.raises(ValueError, match=r"'token_emb.weight' holds 1 NaN/Inf value"):
        mm.load(write(tmp_path / "m.safetensors", t))


def test_float16_weights_are_widened_saying_so(tmp_path):
    t = {k: v.astype(np.float16) for k, v in good_tensors().items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = mm.load(write(tmp_path / "m.safetensors", t))
    assert any("float16 weights" in str(w.message) and "widened to float32" in str(w.message)
               for w in caught)
    assert all(p.dtype == np.float32 for p in model.parameters())
    assert model.lm_head.weight is model.token_emb.weight


@pytest.mark.parametrize("config", ['"not an object"', '{"vocab_size": -1}', "{broken"])
def test_a_damaged_config_is_refused(tmp_path, config):
    save_file(good_tensors(), str(tmp_path / "m.safetensors"),
              metadata={"minimodel.model": "GPT", "minimodel.config": config})
    with pytest.raises(ValueError, match="the stored GPT config is invalid"):
        mm.load(tmp_path / "m.safetensors")


def test_truncated_and_foreign_files(tmp_path):
    path = tmp_path / "m.safetensors"
    mm.save(GPT(GPTConfig(17, 4, 1, 2, 8)), path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        mm.load(path)
    for cut in (0, 5):  # cut before '{': nothing tells these from a truncated checkpoint
        path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}"[:cut])
        with pytest.raises(ValueError, match="corrupt or truncated"):
            mm.load(path)
    save_file({"x": np.zeros(2, np.float32)}, str(tmp_path / "f.safetensors"))
    with pytest.raises(ValueError, match="not a minimodel checkpoint"):
        mm.load(tmp_path / "f.safetensors")


@pytest.mark.parametrize("content, kind", [
    (b'{"version": "1.0", "model": {}}', "it looks like JSON"),
    (b"\xef\xbb\xbf  [1, 2]", "it looks like JSON"),
    (b"to be or not to be\n" * 5, "it looks like text"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:00\n",
     "it is a Git LFS pointer, not the weights; run `git lfs pull`"),
    (b"\x89PNG\r\n\x1a\n" + bytes(64), "it is a PNG image"),
    (b"PK\x03\x04" + bytes(64), "it is a ZIP archive, e.g. a PyTorch .pt/.bin file"),
    (bytes(range(256)), "its first bytes are not a safetensors header"),
], ids=["json", "json-bom", "text", "git-lfs", "png", "zip", "binary"])
def test_a_file_that_is_not_safetensors_at_all_says_what_it_looks_like(tmp_path, content, kind):
    """Only a file with safetensors' layout (8-byte header length, then '{') is called corrupt
    or truncated; any other file was simply the wrong one to give."""
    path = tmp_path / "tokenizer.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        mm.load(path)
    assert str(info.value) == (f"{path} is not a safetensors checkpoint ({kind}); give "
                               "model.safetensors or the run folder")


@pytest.mark.parametrize("model", [GPT(GPTConfig(11, 5, 2, 2, 8, tie_embeddings=False)),
                                   MaskedLM(MLMConfig(9, 4, 2, 1, 6, mlp_ratio=1, bias=False,
                                                      affine_ln=False, final_ln=False)),
                                   CBOW(CBOWConfig(7, 4, tie_embeddings=True))],
                         ids=["gpt-untied", "mlm-bare", "cbow-tied"])
def test_state_shapes_describe_every_model_exactly(model, tmp_path):
    assert type(model).state_shapes(model.config) == {k: v.shape for k, v
                                                      in model.state_dict().items()}
    mm.save(model, tmp_path / "m.safetensors")
    back = mm.load(tmp_path / "m.safetensors")
    assert back.tied == model.tied
