"""Hugging Face GPT2LMHeadModel -> minimodel GPT: same logits, tie restored, refusals."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from interop_helpers import SIZES

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from minimodel.autograd import no_grad  # noqa: E402
from minimodel.interop import from_hf, load_hf_gpt2  # noqa: E402
from minimodel.nn import LMHead, TiedHead  # noqa: E402

LOGIT_TOL = 1e-4


def _compare(model, hf, V: int, T: int, seed: int = 0) -> float:
    ids = np.random.default_rng(seed).integers(0, V, size=(2, T))
    with no_grad():
        ours = model.eval()(ids)[0].data
    with torch.no_grad():
        theirs = hf(torch.from_numpy(ids)).logits.numpy()
    np.testing.assert_allclose(ours, theirs, atol=LOGIT_TOL, rtol=0)
    return float(np.abs(ours - theirs).max())


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "V{}-T{}-L{}-H{}-d{}".format(*s))
def test_save_pretrained_folder_imports_with_same_logits(tmp_path, make_hf_gpt2, size, tied):
    V, T, L, H, d = size
    hf = make_hf_gpt2(*size, tied=tied, seed=sum(size))
    hf.save_pretrained(str(tmp_path))
    model = from_hf(tmp_path)
    assert model.config.to_dict() == {"vocab_size": V, "block_size": T, "n_layer": L,
                                      "n_head": H, "d_model": d, "tie_embeddings": tied,
                                      "dropout": 0.1}
    if tied:  # one Parameter object, no head key
        assert isinstance(model.lm_head, TiedHead)
        assert model.lm_head.weight is model.token_emb.weight
        assert "lm_head.weight" not in model.state_dict()
    else:
        assert isinstance(model.lm_head, LMHead)
        assert model.lm_head.weight is not model.token_emb.weight
    _compare(model, hf, V, T)


def test_pytorch_bin_with_both_keys_reties(tmp_path, make_hf_gpt2):
    """A legacy pickle (loaded weights_only) that stores lm_head == wte re-ties them."""
    hf = make_hf_gpt2(50, 8, 1, 2, 16, tied=True)
    hf.config.save_pretrained(str(tmp_path))
    state = hf.state_dict()
    assert "lm_head.weight" in state
    torch.save(state, tmp_path / "pytorch_model.bin")
    model = from_hf(tmp_path)
    assert model.lm_head.weight is model.token_emb.weight
    _compare(model, hf, 50, 8)


def test_keys_without_transformer_prefix_and_old_mask_buffers(tmp_path, make_hf_gpt2):
    """The original hub GPT-2 files name tensors 'h.0.attn...' and carry 'attn.bias' masks."""
    from safetensors.torch import save_file

    hf = make_hf_gpt2(50, 8, 2, 2, 16, tied=True)
    hf.config.save_pretrained(str(tmp_path))
    state = {k.removeprefix("transformer."): v.contiguous() for k, v in hf.state_dict().items()
             if k != "lm_head.weight"}
    for i in range(2):
        state[f"h.{i}.attn.bias"] = torch.tril(torch.ones(1, 1, 8, 8))
        state[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    _compare(from_hf(tmp_path), hf, 50, 8)


def test_half_precision_checkpoint_loads_as_float32(tmp_path, make_hf_gpt2):
    hf = make_hf_gpt2(50, 8, 1, 2, 16).to(torch.bfloat16)
    hf.save_pretrained(str(tmp_path))
    model, notes = load_hf_gpt2(tmp_path)
    assert model.token_emb.weight.dtype == np.float32
    expected = hf.transformer.wte.weight.detach().float().numpy()
    np.testing.assert_array_equal(model.token_emb.weight.data, expected)
    widened = [n for n in notes if "widened to float32" in n]
    assert len(widened) == 1 and widened[0].startswith("model.safetensors: ")
    assert "(bfloat16)" in widened[0]


def test_integer_weights_are_refused_naming_file_tensor_and_dtype(tmp_path, make_hf_gpt2):
    """int64 weights once imported and gave a checkpoint minimodel's own generate refused."""
    from safetensors.torch import save_file

    hf = _export_folder(tmp_path, make_hf_gpt2)
    state = {k: v.contiguous() for k, v in hf.state_dict().items() if k != "lm_head.weight"}
    state["transformer.wte.weight"] = state["transformer.wte.weight"].round().to(torch.int64)
    save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError) as info:
        from_hf(tmp_path)
    message = str(info.value)
    assert f"{tmp_path / 'model.safetensors'}: tensor 'transformer.wte.weight' has dtype int64" \
        in message and "floating point" in message


def test_a_nan_tensor_is_reported_by_its_file_among_shards(tmp_path, make_hf_gpt2):
    from safetensors.torch import load_file, save_file

    make_hf_gpt2(300, 16, 2, 2, 32, tied=False).save_pretrained(str(tmp_path),
                                                                max_shard_size="40KB")
    index = json.loads((tmp_path / "model.safetensors.index.json").read_text())["weight_map"]
    shard = index["transformer.h.1.ln_2.bias"]
    assert len(set(index.values())) > 1
    tensors = load_file(str(tmp_path / shard))
    tensors["transformer.h.1.ln_2.bias"][0] = float("nan")
    save_file(tensors, str(tmp_path / shard), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=re.escape(
            f"{tmp_path / shard}: tensor 'transformer.h.1.ln_2.bias' holds NaN or Inf")):
        from_hf(tmp_path)


# ----------------------------------------------------------------------------- refusals
def _export_folder(tmp_path, make_hf_gpt2, tied: bool = True):
    hf = make_hf_gpt2(50, 8, 1, 2, 16, tied=tied)
    hf.save_pretrained(str(tmp_path))
    return hf


def _edit_config(folder, **changes) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


@pytest.mark.parametrize("changes, message", [
    ({"model_type": "gpt_neo"}, r"model_type='gpt_neo' is not supported; minimodel reads 'gpt2'"),
    ({"activation_function": "relu"}, r"activation_function='relu' .*tanh GELU"),
    ({"activation_function": "gelu"}, r"activation_function='gelu'"),
    ({"scale_attn_by_inverse_layer_idx": True}, r"scale_attn_by_inverse_layer_idx=True"),
    ({"reorder_and_upcast_attn": True}, r"reorder_and_upcast_attn=True"),
    ({"add_cross_attention": True}, r"add_cross_attention=True"),
    ({"scale_attn_weights": False}, r"scale_attn_weights=False"),
    ({"n_inner": 48}, r"n_inner=48 .*4\*n_embd=64"),
    ({"layer_norm_epsilon": 1e-6}, r"layer_norm_epsilon=1e-06 .*no eps setting"),
], ids=lambda x: next(iter(x)) if isinstance(x, dict) else "")
def test_unsupported_configs_are_refused_with_the_reason(tmp_path, make_hf_gpt2, changes,
                                                         message):
    _export_folder(tmp_path, make_hf_gpt2)
    _edit_config(tmp_path, **changes)
    with pytest.raises(ValueError, match=message):
        from_hf(tmp_path)


@pytest.mark.parametrize("changes, message", [
    ({"n_embd": "abc"}, r"n_embd must be a positive integer, got 'abc'$"),
    ({"n_embd": True}, r"n_embd must be a positive integer, got true$"),  # bool is an int
    ({"n_layer": 1.0}, r"n_layer must be a positive integer, got 1\.0$"),
    ({"n_head": 0}, r"n_head must be a positive integer, got 0$"),
    ({"layer_norm_epsilon": "1e-5"}, r"layer_norm_epsilon must be a positive number, got '1e-5'$"),
    ({"resid_pdrop": 1.5}, r"resid_pdrop must be a number in \[0, 1\), got 1\.5$"),
    ({"attn_pdrop": float("nan")}, r"attn_pdrop must be a number in \[0, 1\), got nan$"),
    ({"tie_word_embeddings": "false"},
     r"tie_word_embeddings must be a boolean \(true or false\), got 'false'$"),
], ids=lambda x: "-".join(map(str, x.items())) if isinstance(x, dict) else "")
def test_config_values_are_type_checked_first(tmp_path, make_hf_gpt2, changes, message):
    """A wrong type is named as such, before any check computes with it (n_inner == 4*n_embd
    once said "4*n_embd=abcabcabcabc")."""
    _export_folder(tmp_path, make_hf_gpt2)
    _edit_config(tmp_path, **changes)
    with pytest.raises(ValueError) as info:
        from_hf(tmp_path)
    assert str(info.value).startswith(f"cannot import {tmp_path / 'config.json'}: ")
    assert re.search(message, str(info.value))


def test_all_type_problems_are_listed_at_once(tmp_path, make_hf_gpt2):
    _export_folder(tmp_path, make_hf_gpt2)
    _edit_config(tmp_path, n_embd="16", n_positions=-8)
    with pytest.raises(ValueError, match=r"n_positions must be a positive integer, got -8; "
                                         r"n_embd must be a positive integer, got '16'"):
        from_hf(tmp_path)


def test_all_problems_are_listed_at_once(tmp_path, make_hf_gpt2):
    _export_folder(tmp_path, make_hf_gpt2)
    _edit_config(tmp_path, activation_function="relu", layer_norm_epsilon=1e-6)
    with pytest.raises(ValueError, match=r"activation_function.*; layer_norm_epsilon"):
        from_hf(tmp_path)


@pytest.mark.parametrize("act", ["gelu_pytorch_tanh", "gelu_fast"])
def test_other_tanh_gelu_spellings_are_accepted(tmp_path, make_hf_gpt2, act):
    """Same function as gelu_new; an explicit n_inner of 4*n_embd is the default."""
    _export_folder(tmp_path, make_hf_gpt2)
    _edit_config(tmp_path, activation_function=act, n_inner=64)
    hf = transformers.GPT2LMHeadModel.from_pretrained(str(tmp_path)).eval()
    _compare(from_hf(tmp_path), hf, 50, 8)


def test_sharded_checkpoint(tmp_path, make_hf_gpt2):
    hf = make_hf_gpt2(300, 16, 2, 2, 32, tied=False)
    hf.save_pretrained(str(tmp_path), max_shard_size="40KB")
    assert (tmp_path / "model.safetensors.index.json").is_file()
    assert not (tmp_path / "model.safetensors").exists()
    _compare(from_hf(tmp_path), hf, 300, 16)


def test_tied_config_with_a_different_head_is_refused(tmp_path, make_hf_gpt2):
    from safetensors.torch import save_file

    hf = _export_folder(tmp_path, make_hf_gpt2, tied=True)
    state = {k: v.clone().contiguous() for k, v in hf.state_dict().items()}
    state["lm_head.weight"][3, 5] += 0.25
    save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"differ \(max \|difference\| = 0\.25\)"):
        from_hf(tmp_path)


def test_untied_config_without_head_is_refused(tmp_path, make_hf_gpt2):
    from safetensors.torch import save_file

    hf = _export_folder(tmp_path, make_hf_gpt2, tied=False)
    state = {k: v.contiguous() for k, v in hf.state_dict().items() if k != "lm_head.weight"}
    save_file(state, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"tie_word_embeddings is false but there is no lm_head"):
        from_hf(tmp_path)


def test_wrong_layer_count_and_shapes_are_refused(tmp_path, make_hf_gpt2):
    _export_folder(tmp_path, make_hf_gpt2)
    _edit_config(tmp_path, n_layer=2)
    with pytest.raises(ValueError, match=r"says n_layer=2 but the weights hold 1 layer"):
        from_hf(tmp_path)
    _edit_config(tmp_path, n_layer=1, n_positions=16)
    with pytest.raises(ValueError, match=r"wpe\.weight has shape \(8, 16\) but config.json implies \(16, 16\)"):
        from_hf(tmp_path)


def test_missing_weights_and_config_name_the_folder(tmp_path, make_hf_gpt2):
    _export_folder(tmp_path, make_hf_gpt2)
    (tmp_path / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match=r"has no model weights"):
        from_hf(tmp_path)
    (tmp_path / "config.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"config\.json does not exist"):
        from_hf(tmp_path)


def test_a_git_lfs_pointer_instead_of_the_weights_is_named(tmp_path, make_hf_gpt2):
    _export_folder(tmp_path, make_hf_gpt2)
    (tmp_path / "model.safetensors").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 1000\n")
    with pytest.raises(ValueError, match=r"model\.safetensors is not a safetensors file \(it is "
                                         r"a Git LFS pointer, not the weights; run `git lfs pull`"):
        from_hf(tmp_path)


def test_dropout_differences_are_reported_as_notes(tmp_path, make_hf_gpt2):
    _export_folder(tmp_path, make_hf_gpt2)  # GPT2Config defaults: every pdrop 0.1
    model, notes = load_hf_gpt2(tmp_path)
    assert model.config.dropout == 0.1
    assert len(notes) == 1 and "attn_pdrop=0.1" in notes[0]
