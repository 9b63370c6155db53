"""``logits, loss = model(x, y)``: the loss never needs the (B, T, V) logits, so they are made
only when read (minimodel.deferred.DeferredTensor) — same values, same graph, no N x V memory
for code that only trains."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import minimodel as mm
import minimodel.functional as F
from minimodel.deferred import DeferredTensor
from minimodel.models.gpt import GPT, GPTConfig


def _model(vocab=60, tie=True):
    return GPT(GPTConfig(vocab_size=vocab, block_size=8, n_layer=1, n_head=2, d_model=16,
                         tie_embeddings=tie), rng=np.random.default_rng(0))


def _batch(vocab=60, b=2, t=8):
    rng = np.random.default_rng(1)
    return rng.integers(0, vocab, (b, t)), rng.integers(0, vocab, (b, t))


@pytest.mark.parametrize("tie", [True, False])
def test_deferred_logits_equal_the_eager_ones_and_keep_the_graph(tie):
    model = _model(tie=tie)
    x, y = _batch()
    logits, loss = model(x, y)
    assert isinstance(logits, DeferredTensor) and not logits.computed
    assert logits.shape == (2, 8, 60) and logits.dtype == np.float32 and logits.ndim == 3
    assert not logits.computed                          # metadata did not compute anything
    eager, _ = model(x)                                 # no targets: plain logits
    np.testing.assert_allclose(logits.data, eager.data, rtol=1e-6, atol=1e-6)
    assert logits.computed
    np.testing.assert_allclose(float(F.cross_entropy(logits, y).data), float(loss.data),
                               rtol=1e-5)
    # Backpropagating through the logits reaches the embedding like the eager tensor does.
    for p in model.parameters():
        p.grad = None
    logits, _ = model(x, y)
    logits[:, -1, :5].sum().backward()
    deferred_grad = model.token_emb.weight.grad.copy()
    for p in model.parameters():
        p.grad = None
    eager, _ = model(x)
    eager[:, -1, :5].sum().backward()
    np.testing.assert_allclose(deferred_grad, model.token_emb.weight.grad, rtol=1e-5, atol=1e-7)


def test_no_grad_makes_graph_free_logits():
    model = _model()
    x, y = _batch()
    with mm.no_grad():
        logits, loss = model(x, y)
    assert not logits.requires_grad and not loss.requires_grad
    assert logits.data.shape == (2, 8, 60)              # computed later, still graph-free
    assert logits._node is None


def test_training_with_the_default_call_never_holds_the_logits():
    if not mm.kernels_enabled():
        pytest.skip("the row-chunked loss is a kernel's job; the composite (the definition) "
                    "computes the full logits, as written")
    vocab, b, t = 20_000, 8, 256                        # logits: 2048 x 20000 floats = 156 MiB
    model = GPT(GPTConfig(vocab_size=vocab, block_size=t, n_layer=1, n_head=2, d_model=32),
                rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, vocab, (b, t)), rng.integers(0, vocab, (b, t))
    model(x, y)[1].backward()                           # warm-up: kernels, buffers
    for p in model.parameters():
        p.grad = None
    logits_bytes = b * t * vocab * 4
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    logits, loss = model(x, y)
    loss.backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # Gradients of E (V x d) are needed either way; the (N, V) logits and their gradient are
    # not: the whole step stays far below one copy of the logits.
    grads = sum(p.data.nbytes for p in model.parameters())
    assert peak - start < grads + 0.5 * logits_bytes, (peak - start, grads, logits_bytes)
    assert not logits.computed
