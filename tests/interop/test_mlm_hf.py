"""Masked LM <-> transformers' MegatronBertForMaskedLM: same logits, same tie, same weights back."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import minimodel as mm  # noqa: E402
from minimodel.autograd import no_grad  # noqa: E402
from minimodel.cli import main  # noqa: E402
from minimodel.interop import from_hf, load_hf, to_hf  # noqa: E402
from minimodel.models import MaskedLM, MLMConfig  # noqa: E402
from interop_helpers import perturb_numpy  # noqa: E402

LOGIT_TOL = 1e-4


def make_mlm(V: int, tied: bool = True, seed: int = 0, **sizes) -> MaskedLM:
    """A small MaskedLM with every weight perturbed (LayerNorm gains and biases included)."""
    cfg = dict(block_size=16, n_layer=2, n_head=2, d_model=16, head_transform=True) | sizes
    model = MaskedLM(MLMConfig(V, tie_embeddings=tied, **cfg), rng=np.random.default_rng(seed))
    perturb_numpy(model, seed + 1)
    return model.eval()


def masked_batch(V: int, mask_id: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, V, size=(3, 16))
    masked = rng.random(ids.shape) < 0.2
    masked[:, 0] = True  # at least one per row
    return np.where(masked, mask_id, ids), masked


@pytest.mark.parametrize("tied", [True, False])
def test_masked_positions_agree_with_transformers(tmp_path, tied, small_bpe):
    model = make_mlm(small_bpe.vocab_size, tied=tied)
    to_hf(model, tmp_path / "hf", tokenizer=small_bpe)
    hf = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "hf"),
                                                           local_files_only=True).eval()
    assert type(hf).__name__ == "MegatronBertForMaskedLM"
    shares = (hf.cls.predictions.decoder.weight.data_ptr()
              == hf.bert.embeddings.word_embeddings.weight.data_ptr())
    assert shares is tied
    inputs, masked = masked_batch(small_bpe.vocab_size, small_bpe.special_tokens["[MASK]"])
    with no_grad():
        ours = model.forward_masked(inputs, masked).data  # (M, V)
    with torch.no_grad():
        theirs = hf(torch.from_numpy(inputs)).logits.numpy()[masked]
    assert ours.shape == theirs.shape == (int(masked.sum()), small_bpe.vocab_size)
    np.testing.assert_allclose(theirs, ours, atol=LOGIT_TOL, rtol=0)
    assert np.abs(ours).max() > 0.1  # the comparison is not between two near-zero arrays


@pytest.mark.parametrize("tied", [True, False])
def test_import_back_gives_identical_weights_and_the_tie(tmp_path, tied):
    model = make_mlm(40, tied=tied, mlp_ratio=2)
    to_hf(model, tmp_path / "hf")
    back, notes = load_hf(tmp_path / "hf")
    assert isinstance(back, MaskedLM) and notes == []
    assert back.config == model.config
    assert back.tied is tied
    assert (back.lm_head.weight is back.token_emb.weight) is tied
    mine, theirs = model.state_dict(), back.state_dict()
    assert mine.keys() == theirs.keys()
    for name in mine:
        np.testing.assert_array_equal(theirs[name], mine[name], err_msg=name)


def test_loss_and_gradients_agree_with_transformers(tmp_path):
    """Same masked-LM loss, and the tied matrix's gradient (lookup + decoder paths) agrees,
    except on the padding row: BERT-style embeddings drop its lookup path (``padding_idx``)."""
    model = make_mlm(40, tied=True).train()
    to_hf(model, tmp_path / "hf")
    hf = transformers.MegatronBertForMaskedLM.from_pretrained(str(tmp_path / "hf"),
                                                            local_files_only=True).train()
    inputs, masked = masked_batch(40, 1)
    labels = np.where(masked, np.random.default_rng(5).integers(0, 40, masked.shape), -100)
    _, loss = model(inputs, labels)
    loss.backward()
    out = hf(torch.from_numpy(inputs), labels=torch.from_numpy(labels))
    out.loss.backward()
    assert abs(loss.item() - out.loss.item()) < 1e-5
    pad = hf.config.pad_token_id
    theirs, ours = hf.bert.embeddings.word_embeddings.weight.grad.numpy(), model.token_emb.weight.grad
    assert (inputs == pad).any() and np.abs(theirs[pad] - ours[pad]).max() > 1e-3
    keep = np.arange(40) != pad
    np.testing.assert_allclose(theirs[keep], ours[keep], atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(hf.cls.predictions.transform.dense.weight.grad.numpy(),
                               model.head_transform.dense.weight.grad, atol=1e-5, rtol=1e-4)


def test_model_without_head_transform_is_refused_with_the_fix(tmp_path):
    model = MaskedLM(MLMConfig(30, 8, 1, 2, 8))  # head_transform defaults to False in the API
    with pytest.raises(ValueError, match=r"head_transform=True.*minimodel train --model mlm"):
        to_hf(model, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_bare_seed_variant_is_refused_naming_both_missing_parts(tmp_path):
    model = MaskedLM(MLMConfig(30, 8, 1, 2, 8, final_ln=False))
    with pytest.raises(ValueError, match=r"head_transform=True.*final_ln=True"):
        to_hf(model, tmp_path / "hf")


def test_model_without_biases_exports_neutral_values(tmp_path):
    model = make_mlm(30, bias=False, affine_ln=False)
    to_hf(model, tmp_path / "hf")
    hf = transformers.MegatronBertForMaskedLM.from_pretrained(str(tmp_path / "hf"),
                                                            local_files_only=True).eval()
    ids = np.random.default_rng(0).integers(0, 30, (2, 16))
    with no_grad():
        ours = model(ids)[0].data
    with torch.no_grad():
        np.testing.assert_allclose(hf(torch.from_numpy(ids)).logits.numpy(), ours,
                                   atol=LOGIT_TOL, rtol=0)


def _edit(folder, config=None, tensors=None):
    from safetensors.numpy import load_file, save_file

    if config:
        path = folder / "config.json"
        path.write_text(json.dumps(json.loads(path.read_text()) | config))
    if tensors:
        weights = load_file(str(folder / "model.safetensors"))
        tensors(weights)
        save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})


@pytest.mark.parametrize("config, tensors, message", [
    ({"hidden_act": "gelu"}, None, r"hidden_act='gelu'.*tanh GELU"),
    ({"layer_norm_eps": 1e-12}, None, r"layer_norm_eps=1e-12"),
    ({"position_embedding_type": "relative_key"}, None, r"position_embedding_type"),
    ({"is_decoder": True}, None, r"is_decoder=true"),
    ({"num_hidden_layers": 5}, None, r"num_hidden_layers=5 but the weights hold 2 layer"),
    ({"hidden_size": "abc"}, None, r"config\.json: hidden_size must be a positive integer, got 'abc'$"),
    ({"num_hidden_layers": True}, None, r"num_hidden_layers must be a positive integer, got true$"),
    ({"layer_norm_eps": None, "hidden_dropout_prob": "0.1"}, None,
     r"hidden_dropout_prob must be a number in \[0, 1\), got '0\.1'$"),
    ({"is_decoder": 0}, None, r"is_decoder must be a boolean \(true or false\), got 0$"),
    (None, lambda w: w.__setitem__("cls.predictions.bias", np.ones_like(w["cls.predictions.bias"])),
     r"cls.predictions.bias is not zero"),
    (None, lambda w: w.__setitem__("cls.predictions.decoder.weight",
                                   w["bert.embeddings.word_embeddings.weight"] + 1),
     r"tie_word_embeddings is true but cls.predictions.decoder.weight differs"),
    (None, lambda w: w.pop("bert.encoder.ln.weight"), r"missing bert.encoder.ln.weight"),
    (None, lambda w: w["bert.encoder.layer.0.ln.bias"].__setitem__(0, np.nan), r"NaN or Inf"),
])
def test_unsupported_or_damaged_folders_are_refused(tmp_path, config, tensors, message):
    to_hf(make_mlm(30), tmp_path / "hf")
    _edit(tmp_path / "hf", config, tensors)
    with pytest.raises(ValueError, match=message):
        from_hf(tmp_path / "hf")


def test_token_type_row_is_folded_into_positions(tmp_path):
    model = make_mlm(30)
    to_hf(model, tmp_path / "hf")
    shift = np.linspace(-1, 1, 16, dtype=np.float32)
    _edit(tmp_path / "hf", {"type_vocab_size": 2},
          lambda w: w.__setitem__("bert.embeddings.token_type_embeddings.weight",
                                  np.stack([shift, 2 * shift])))
    back, notes = load_hf(tmp_path / "hf")
    assert any("token_type_embeddings" in n for n in notes)
    hf = transformers.MegatronBertForMaskedLM.from_pretrained(str(tmp_path / "hf"),
                                                            local_files_only=True).eval()
    ids = np.random.default_rng(1).integers(0, 30, (2, 16))
    with no_grad():
        ours = back.eval()(ids)[0].data
    with torch.no_grad():
        np.testing.assert_allclose(hf(torch.from_numpy(ids)).logits.numpy(), ours,
                                   atol=LOGIT_TOL, rtol=0)


def test_cli_export_verify_and_import_round_trip(tmp_path, capsys, small_bpe):
    run = tmp_path / "runs" / "mlm"
    model = make_mlm(small_bpe.vocab_size)
    mm.save(model, run / "model.safetensors")
    small_bpe.save(run / "tokenizer.json")
    code = main(["export", str(run), str(tmp_path / "hf"), "--verify", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["tied"] is True
    assert report["verify"]["ok"] and report["verify"]["tokenizer_equal"]
    assert report["verify"]["max_abs_logit_diff"] < LOGIT_TOL
    hf_tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "hf"), local_files_only=True)
    assert hf_tok.mask_token == "[MASK]"
    assert hf_tok.mask_token_id == small_bpe.special_tokens["[MASK]"]
    code = main(["import-hf", str(tmp_path / "hf"), str(tmp_path / "back"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["tied"] is True and summary["tokenizer"]
    back = mm.load(tmp_path / "back" / "model.safetensors")
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[name], value, err_msg=name)


def test_cli_refuses_cbow_for_the_hf_format(tmp_path, capsys):
    from minimodel.models import CBOW, CBOWConfig

    mm.save(CBOW(CBOWConfig(20, 8, 2)), tmp_path / "cbow.safetensors")
    code = main(["export", str(tmp_path / "cbow.safetensors"), str(tmp_path / "hf")])
    assert code == 2
    assert "--format word2vec" in capsys.readouterr().err
