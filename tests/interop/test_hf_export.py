"""minimodel GPT -> Hugging Face GPT2LMHeadModel, checked with transformers as the client."""

from __future__ import annotations

import json

import numpy as np
import pytest

from interop_helpers import SIZES

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from minimodel.autograd import no_grad  # noqa: E402
from minimodel.interop import to_hf  # noqa: E402

LOGIT_TOL = 1e-4


def _load(out, attn: str = "sdpa"):
    hf = transformers.GPT2LMHeadModel.from_pretrained(str(out), attn_implementation=attn,
                                                      local_files_only=True)
    return hf.eval()


def _manual_greedy(hf, prompt: np.ndarray, n: int) -> np.ndarray:
    """Greedy decoding by full recomputation: no cache, no pad/eos logic at all."""
    ids = torch.from_numpy(prompt)
    with torch.no_grad():
        for _ in range(n):
            nxt = hf(ids).logits[:, -1, :].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
    return ids.numpy()


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "V{}-T{}-L{}-H{}-d{}".format(*s))
def test_logits_tie_and_greedy_match_transformers(tmp_path, make_gpt, size, tied):
    V, T, L, H, d = size
    model = make_gpt(*size, tied=tied, seed=sum(size))
    to_hf(model, tmp_path / "hf")
    hf = _load(tmp_path / "hf")

    # The tie crosses over: one storage in PyTorch exactly when ours is one Parameter.
    shared = hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr()
    assert shared is tied
    assert hf.config.tie_word_embeddings is tied

    ids = np.random.default_rng(7).integers(0, V, size=(3, T))
    with no_grad():
        ours = model(ids)[0].data
    with torch.no_grad():
        theirs = hf(torch.from_numpy(ids)).logits.numpy()
    assert theirs.dtype == np.float32 and theirs.shape == ours.shape == (3, T, V)
    np.testing.assert_allclose(theirs, ours, atol=LOGIT_TOL, rtol=0)

    prompt, n = ids[:, : T // 2], T - T // 2  # HF does not crop: stay inside n_positions
    mine = model.generate(prompt, n, temperature=0)
    with torch.no_grad():
        theirs_gen = hf.generate(torch.from_numpy(prompt), max_new_tokens=n, do_sample=False,
                                 eos_token_id=None, pad_token_id=None,
                                 attention_mask=torch.ones(prompt.shape, dtype=torch.long))
    np.testing.assert_array_equal(theirs_gen.numpy(), mine)
    np.testing.assert_array_equal(_manual_greedy(hf, prompt, n), mine)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_attention_implementations_agree(tmp_path, make_gpt, attn):
    """Both of transformers' attention paths apply the same causal mask as ours."""
    model = make_gpt(300, 16, 2, 4, 32)
    to_hf(model, tmp_path)
    hf = _load(tmp_path, attn)
    assert hf.config._attn_implementation == attn
    ids = np.random.default_rng(3).integers(0, 300, size=(2, 16))
    with no_grad():
        ours = model(ids)[0].data
    with torch.no_grad():
        full = hf(torch.from_numpy(ids)).logits.numpy()
        prefix = hf(torch.from_numpy(ids[:, :5])).logits.numpy()
    np.testing.assert_allclose(full, ours, atol=LOGIT_TOL, rtol=0)
    # Causality: the first 5 positions cannot see the later tokens.
    np.testing.assert_allclose(prefix, full[:, :5], atol=LOGIT_TOL, rtol=0)


def test_default_generate_with_exported_eos(tmp_path, make_gpt, small_bpe):
    """eos/pad come from the tokenizer; min_new_tokens keeps HF from stopping early."""
    model = make_gpt(small_bpe.vocab_size, 32, 2, 2, 32)
    to_hf(model, tmp_path, tokenizer=small_bpe)
    hf = _load(tmp_path)
    eot = small_bpe.special_tokens["<|endoftext|>"]
    assert (hf.config.eos_token_id, hf.config.bos_token_id) == (eot, eot)
    assert hf.config.pad_token_id == small_bpe.pad_id
    prompt = np.array([small_bpe.encode("ROMEO: But soft")])
    n = 32 - prompt.shape[1]
    with torch.no_grad():
        out = hf.generate(torch.from_numpy(prompt), max_new_tokens=n, min_new_tokens=n,
                          do_sample=False)
    mine = model.generate(prompt, n, temperature=0)
    # min_new_tokens works by masking the eos logit, so the comparison is exact only when our
    # greedy path never picks eos (true for this seed; a different seed may need changing).
    assert eot not in mine[0, prompt.shape[1]:]
    np.testing.assert_array_equal(out.numpy(), mine)


def test_float64_model_exports_as_float32(tmp_path, make_gpt):
    model = make_gpt(50, 8, 1, 2, 16)
    for _, p in model.named_parameters():
        p.data = p.data.astype(np.float64)
    to_hf(model, tmp_path)
    hf = _load(tmp_path)
    assert hf.dtype == torch.float32
    ids = np.arange(8)[None] % 50
    with no_grad():
        ours = model(ids)[0].data
    with torch.no_grad():
        np.testing.assert_allclose(hf(torch.from_numpy(ids)).logits.numpy(), ours,
                                   atol=LOGIT_TOL, rtol=0)


def test_training_config_maps_dropout(tmp_path, make_gpt):
    model = make_gpt(50, 8, 1, 2, 16, dropout=0.1)
    to_hf(model, tmp_path)
    config = transformers.AutoConfig.from_pretrained(str(tmp_path), local_files_only=True)
    assert (config.resid_pdrop, config.embd_pdrop, config.attn_pdrop) == (0.1, 0.1, 0.0)
    assert config.activation_function == "gelu_new" and config.n_inner == 64
    assert json.loads((tmp_path / "config.json").read_text())["architectures"] == [
        "GPT2LMHeadModel"]


def test_auto_classes_load_the_export(tmp_path, make_gpt, small_bpe):
    model = make_gpt(small_bpe.vocab_size, 32, 1, 2, 16, tied=False)
    to_hf(model, tmp_path, tokenizer=small_bpe)
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path), local_files_only=True)
    tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path), local_files_only=True)
    assert type(hf).__name__ == "GPT2LMHeadModel"
    text = "O Romeo, Romeo! [MASK] wherefore art thou<|endoftext|>"
    assert tok(text)["input_ids"] == small_bpe.encode(text)
    ids = np.array([small_bpe.encode(text)])
    with no_grad():
        ours = model(ids)[0].data
    with torch.no_grad():
        np.testing.assert_allclose(hf.eval()(torch.from_numpy(ids)).logits.numpy(), ours,
                                   atol=LOGIT_TOL, rtol=0)


def test_verify_helper_reports_agreement(tmp_path, make_gpt, small_bpe):
    from minimodel.interop.verify import verify_hf_export

    model = make_gpt(small_bpe.vocab_size, 16, 1, 2, 16)
    to_hf(model, tmp_path, tokenizer=small_bpe)
    report = verify_hf_export(model, tmp_path, small_bpe)
    assert report["ok"] and report["tied"] and report["hf_head_shares_wte"]
    assert report["max_abs_logit_diff"] < LOGIT_TOL and report["tokenizer_equal"] is True
