"""The claims of lesson 08 (vocabulary sizes) checked in PyTorch, where the lesson itself can
only run minimodel: what fails, and where, when the tokenizer, config and embedding disagree."""

import numpy as np
import pytest

import minimodel as mm
import minimodel.functional as F
from minimodel.models.gpt import GPT, GPTConfig

torch = pytest.importorskip("torch")


def test_cross_entropy_accepts_logits_wider_than_the_targets_need():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4, 8, 512))
    targets = rng.integers(0, 256, size=(4, 8))
    theirs = torch.nn.functional.cross_entropy(torch.tensor(logits).view(-1, 512),
                                               torch.tensor(targets).view(-1))
    ours = F.cross_entropy(mm.Tensor(logits), targets)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
    # unused columns stay in the softmax's denominator: uniform logits give ln 512, not ln 256
    uniform = torch.nn.functional.cross_entropy(torch.zeros(32, 512), torch.tensor(targets).view(-1))
    assert uniform.item() == pytest.approx(np.log(512), rel=1e-6)


def test_an_embedding_larger_than_the_tokenizer_trains_and_its_unused_rows_only_get_pushed_down():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(512, 16)                       # tied: the head is emb.weight
    ids = torch.randint(0, 256, (2, 16))
    targets = torch.randint(0, 256, (2, 16))
    h = emb(ids)                                            # stand-in for the trunk
    logits = h @ emb.weight.T                               # (2, 16, 512)
    loss = torch.nn.functional.cross_entropy(logits.view(-1, 512), targets.view(-1))
    loss.backward()
    grad = emb.weight.grad
    # rows >= 256 are never looked up and never targets: their gradient is the head's
    # push-down only, sum_n p[n, v] h_n / N
    p = torch.softmax(logits.detach().view(-1, 512), dim=-1)
    push_down = p[:, 256:].T @ h.detach().view(-1, 16) / 32
    assert torch.allclose(grad[256:], push_down, atol=1e-6)
    assert bool((grad[256:].abs().sum(1) > 0).all())


def test_a_tokenizer_larger_than_the_embedding_fails_at_the_lookup():
    emb = torch.nn.Embedding(512, 16)
    with pytest.raises(IndexError, match="index out of range"):
        emb(torch.tensor([[3, 600]]))
    model = GPT(GPTConfig(vocab_size=512, block_size=8, n_layer=1, n_head=2, d_model=16),
                rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="token id 600 is outside the vocabulary of size 512"):
        model(np.array([[3, 600]]))


def test_resizing_fixes_it_and_keeps_the_tie_in_both_libraries():
    model = GPT(GPTConfig(vocab_size=512, block_size=8, n_layer=1, n_head=2, d_model=16),
                rng=np.random.default_rng(0))
    old = model.token_emb.weight.data.copy()
    model.resize_token_embeddings(1024)
    assert model.lm_head.weight is model.token_emb.weight
    assert np.array_equal(model.token_emb.weight.data[:512], old)
    assert model(np.array([[3, 600]]))[0].shape == (1, 2, 1024)

    transformers = pytest.importorskip("transformers")
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=512, n_positions=8, n_embd=16, n_layer=1, n_head=2))
    with pytest.raises(IndexError):
        hf(torch.tensor([[3, 600]]))
    hf.resize_token_embeddings(1024)
    assert hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr()
    assert hf(torch.tensor([[3, 600]])).logits.shape == (1, 2, 1024)


def test_a_stale_config_size_in_a_reshape_is_a_batch_size_mismatch():
    logits = torch.zeros(2, 16, 1024)                       # the model's real V is 1024
    targets = torch.zeros(2, 16, dtype=torch.long)
    flat = logits.view(-1, 256)                             # stale V: 4 rows per position
    with pytest.raises(ValueError, match=r"Expected input batch_size \(128\) to match target "
                                         r"batch_size \(32\)"):
        torch.nn.functional.cross_entropy(flat, targets.view(-1))
    with pytest.raises(ValueError, match=r"need targets of shape \(128,\), got \(32,\)"):
        F.cross_entropy(mm.Tensor(flat.numpy()), targets.view(-1).numpy())
