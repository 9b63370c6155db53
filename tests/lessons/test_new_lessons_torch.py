"""What lessons 03, 04 and 10-14 say about PyTorch and Hugging Face, checked against them.

The lessons' own code may import only NumPy, matplotlib and minimodel (the docs extra has no
torch), so their claims about other libraries are verified here instead.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minimodel as mm
import minimodel.functional as F

torch = pytest.importorskip("torch")
tnf = torch.nn.functional


# --- lesson 04: softmax and cross-entropy -----------------------------------------------------

def test_all_ignored_targets_give_nan_in_torch_and_zero_in_minimodel():
    logits = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    targets = np.full(4, -100)
    assert math.isnan(tnf.cross_entropy(torch.from_numpy(logits), torch.from_numpy(targets)).item())
    assert F.cross_entropy(mm.Tensor(logits), targets).item() == 0.0


def test_ignore_index_is_a_label_value_not_a_position():
    logits = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    targets = torch.tensor([1, 2, 3])
    # ignore_index=-1 skips targets equal to -1 (none here), not the last position
    full = tnf.cross_entropy(logits, targets, ignore_index=-1)
    assert torch.allclose(full, tnf.cross_entropy(logits, targets))
    assert not torch.allclose(full, tnf.cross_entropy(logits[:2], targets[:2]))


def test_mean_is_over_kept_positions_like_minimodel():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((8, 6)).astype(np.float32)
    targets = rng.integers(0, 6, 8)
    targets[[1, 4, 6]] = -100
    ours = F.cross_entropy(mm.Tensor(logits), targets).item()
    theirs = tnf.cross_entropy(torch.from_numpy(logits), torch.from_numpy(targets)).item()
    assert ours == pytest.approx(theirs, rel=1e-5)
    kept = targets != -100
    by_hand = -np.mean(np.log(np.exp(logits[kept]) / np.exp(logits[kept]).sum(1, keepdims=True))
                       [np.arange(kept.sum()), targets[kept]])
    assert ours == pytest.approx(by_hand, rel=1e-5)


# --- lesson 10: LayerNorm ----------------------------------------------------------------------

def test_torch_layer_norm_default_eps_and_population_variance():
    ln = torch.nn.LayerNorm(4)
    assert ln.eps == 1e-5
    x = torch.tensor([[1.0, 3.0, 5.0, 7.0]])
    expected = (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + 1e-5)
    assert torch.allclose(ln(x), expected)
    # torch.var's default is the unbiased (sample) estimate: the lesson's trap
    assert x.var().item() == pytest.approx(20 / 3)
    assert x.var(unbiased=False).item() == pytest.approx(5.0)


def test_eps_decides_near_constant_rows_in_torch_as_in_minimodel():
    row = np.array([[1.0, 1.001, 0.999, 1.0]])
    for eps, largest in ((1e-5, 0.309), (1e-12, 1.414)):
        theirs = tnf.layer_norm(torch.from_numpy(row), (4,), eps=eps).numpy()
        ours = F.layer_norm(mm.Tensor(row), eps).data
        assert np.allclose(ours, theirs, atol=1e-6)
        assert ours.max() == pytest.approx(largest, abs=1e-3)


def test_hugging_face_layer_norm_eps_bert_vs_gpt2():
    transformers = pytest.importorskip("transformers")
    assert transformers.BertConfig().layer_norm_eps == 1e-12
    assert transformers.GPT2Config().layer_norm_epsilon == 1e-5


# --- lesson 11: GELU ---------------------------------------------------------------------------

def test_minimodel_gelu_is_torch_tanh_form_and_erf_form_differs_by_4_7e_4():
    x = torch.linspace(-6, 6, 120001, dtype=torch.float64)
    tanh_form = tnf.gelu(x, approximate="tanh")
    erf_form = tnf.gelu(x)
    assert np.allclose(F.gelu(mm.Tensor(x.numpy())).data, tanh_form.numpy(), atol=1e-12)
    assert (tanh_form - erf_form).abs().max().item() == pytest.approx(4.73e-4, abs=1e-5)


def test_hugging_face_gpt2_uses_tanh_gelu_and_bert_uses_erf_gelu():
    transformers = pytest.importorskip("transformers")
    from transformers.activations import ACT2FN

    assert transformers.GPT2Config().activation_function == "gelu_new"
    assert transformers.BertConfig().hidden_act == "gelu"
    x = torch.linspace(-4, 4, 801, dtype=torch.float64)
    assert torch.allclose(ACT2FN["gelu_new"](x), tnf.gelu(x, approximate="tanh"))
    assert torch.allclose(ACT2FN["gelu"](x), tnf.gelu(x))


def test_numpy_float64_constant_promotes_float32_and_python_float_does_not():
    x32 = np.ones(3, dtype=np.float32)
    assert (np.sqrt(2 / np.pi) * x32).dtype == np.float64
    assert (math.sqrt(2 / math.pi) * x32).dtype == np.float32
    assert F.gelu(mm.Tensor(x32)).data.dtype == np.float32


# --- lessons 12-13: attention and the causal mask ----------------------------------------------

@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_torch(causal):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 3, 5, 8)) for _ in range(3))   # (B, H, T, d_head)
    theirs = tnf.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)),
                                              is_causal=causal).numpy()
    ours = F.scaled_dot_product_attention(mm.Tensor(q), mm.Tensor(k), mm.Tensor(v), causal).data
    assert np.allclose(ours, theirs, atol=1e-10)


def test_a_finite_mask_value_leaks_when_scores_fall_below_it():
    s = torch.tensor([[-15000.0, -16000.0, 0.0]])
    future = torch.tensor([[False, True, True]])
    leaky = torch.softmax(s.masked_fill(future, -1e4), dim=-1)
    exact = torch.softmax(s.masked_fill(future, float("-inf")), dim=-1)
    assert leaky[0, 1:].sum().item() == pytest.approx(1.0)
    assert exact[0, 0].item() == 1.0


# --- lesson 03: next-token targets -------------------------------------------------------------

def test_gpt2_lm_head_model_shifts_labels_inside():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=1,
                                     n_head=2)
    model = transformers.GPT2LMHeadModel(config).eval()
    ids = torch.randint(0, 32, (2, 10), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = model(ids, labels=ids)
    shifted = tnf.cross_entropy(out.logits[:, :-1].reshape(-1, 32), ids[:, 1:].reshape(-1))
    unshifted = tnf.cross_entropy(out.logits.reshape(-1, 32), ids.reshape(-1))
    assert out.loss.item() == pytest.approx(shifted.item(), rel=1e-5)
    assert out.loss.item() != pytest.approx(unshifted.item(), rel=1e-3)


# --- lesson 08: (B, T, V) logits passed unflattened ---------------------------------------------

def test_unflattened_3d_logits_read_axis_1_as_classes_in_torch_and_the_last_axis_in_minimodel():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 16, 1024)).astype(np.float32)      # (B, T, V)
    targets = rng.integers(0, 1024, size=(2, 16))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 1024\], got \[2, 16\]"):
        tnf.cross_entropy(torch.from_numpy(logits), torch.from_numpy(targets))
    flat = tnf.cross_entropy(torch.from_numpy(logits).reshape(-1, 1024),
                             torch.from_numpy(targets).reshape(-1)).item()
    assert F.cross_entropy(mm.Tensor(logits), targets).item() == pytest.approx(flat, rel=1e-5)
    # T == V: nothing stops, and the loss is a softmax over positions, not over the vocabulary
    square = rng.standard_normal((2, 8, 8)).astype(np.float32)
    square_targets = rng.integers(0, 8, size=(2, 8))
    silent = tnf.cross_entropy(torch.from_numpy(square), torch.from_numpy(square_targets)).item()
    right = tnf.cross_entropy(torch.from_numpy(square).reshape(-1, 8),
                              torch.from_numpy(square_targets).reshape(-1)).item()
    assert abs(silent - right) > 1e-3


# --- lesson tokens: Hugging Face appends an added token, minimodel's layout shifts the merges ----

def test_hugging_face_add_tokens_appends_while_a_minimodel_special_shifts_every_merge():
    hf_tokenizers = pytest.importorskip("tokenizers")
    hf = hf_tokenizers.Tokenizer(hf_tokenizers.models.BPE(vocab={"a": 0, "b": 1, "ab": 2},
                                                          merges=[("a", "b")]))
    assert hf.add_tokens(["[SEP]"]) == 1
    assert (hf.token_to_id("[SEP]"), hf.token_to_id("ab")) == (3, 2)        # appended, old kept
    from minimodel.data import BPETokenizer
    two = BPETokenizer.train("aaabdaaabac", vocab_size=261, special_tokens=("[PAD]", "[MASK]"))
    three = BPETokenizer(two.merges, special_tokens=("[PAD]", "[MASK]", "[SEP]"))
    assert three.token_to_id("[SEP]") == 258
    assert [three.encode("aaab")[0], two.encode("aaab")[0]] == [261, 260]  # every merge moves
