"""``model.loss(x, y)``: the loss of ``model(x, y)`` without the (B, T, V) logits — the same
value and gradients, no graph through a logits tensor, and (with kernels) no N x V memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import minimodel as mm
from minimodel.models import CBOW, GPT, GPTConfig, MaskedLM, MLMConfig


def _float64(model):
    for p in model.parameters():
        p.data = p.data.astype(np.float64)
    return model


def _cases():
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 40, (2, 10))
    labels = np.where(rng.random((2, 10)) < 0.3, ids, -100)
    labels[0, 0] = ids[0, 0]
    targets = np.roll(ids, -1, axis=1)
    targets[0, :4] = -100
    for tie in (True, False):
        yield (f"gpt-tie={tie}", lambda tie=tie: GPT(GPTConfig(40, 10, 1, 2, 8, tie_embeddings=tie),
                                                     rng=np.random.default_rng(0)), (ids, targets))
        yield (f"mlm-tie={tie}", lambda tie=tie: MaskedLM(MLMConfig(40, 10, 1, 2, 8, tie_embeddings=tie),
                                                          rng=np.random.default_rng(0)), (ids, labels))
        yield (f"cbow-tie={tie}", lambda tie=tie: CBOW(vocab_size=40, d_model=8, window=1,
                                                       tie_embeddings=tie),
               (rng.integers(0, 40, (5, 2)), rng.integers(0, 40, 5)))


@pytest.mark.parametrize("name,make,args", list(_cases()), ids=[c[0] for c in _cases()])
def test_model_loss_is_the_loss_of_the_model_call_with_the_same_gradients(name, make, args):
    model = _float64(make())
    logits, full = model(*args)
    assert logits is not None and logits.shape[-1] == 40
    full.backward()
    grads = {n: p.grad.copy() for n, p in model.named_parameters()}
    model.zero_grad()
    lean = model.loss(*args)
    lean.backward()
    assert lean.item() == pytest.approx(full.item(), abs=1e-12)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(p.grad, grads[n], atol=1e-12, err_msg=n)


def test_model_loss_never_calls_the_head_for_logits(monkeypatch):
    model = GPT(GPTConfig(40, 10, 1, 2, 8), rng=np.random.default_rng(0))

    def no_logits(*args, **kwargs):
        raise AssertionError("model.loss made the logits")

    monkeypatch.setattr(type(model.lm_head), "forward", no_logits)
    ids = np.random.default_rng(1).integers(0, 40, (2, 10))
    assert np.isfinite(model.loss(ids, ids).item())


def test_training_with_model_loss_never_holds_the_logits():
    if not mm.kernels_enabled():
        pytest.skip("the row-chunked loss is a kernel's job; the composite (the definition) "
                    "computes the full logits, as written")
    vocab, b, t = 20_000, 8, 256                        # logits: 2048 x 20000 floats = 156 MiB
    model = GPT(GPTConfig(vocab_size=vocab, block_size=t, n_layer=1, n_head=2, d_model=32),
                rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, vocab, (b, t)), rng.integers(0, vocab, (b, t))
    model.loss(x, y).backward()                         # warm-up: kernels, buffers
    for p in model.parameters():
        p.grad = None
    logits_bytes = b * t * vocab * 4
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    model.loss(x, y).backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # Gradients of E (V x d) are needed either way; the (N, V) logits and their gradient are
    # not: the whole step stays far below one copy of the logits.
    grads = sum(p.data.nbytes for p in model.parameters())
    assert peak - start < grads + 0.5 * logits_bytes, (peak - start, grads, logits_bytes)
