"""The head-loss kernel in row chunks: every chunk size gives the composite's loss and gradients."""

import numpy as np
import pytest

import minimodel as mm
from minimodel.kernels import losses as loss_kernels


@pytest.mark.parametrize("chunk", [1, 4, 23, 64])
def test_every_chunk_size_gives_the_plain_cross_entropy(chunk, monkeypatch):
    rng = np.random.default_rng(5)
    h, W = rng.normal(size=(23, 6)), rng.normal(size=(11, 6))
    t = rng.integers(0, 11, 23)
    t[[2, 9]] = -100
    H, Wt = mm.Tensor(h, requires_grad=True), mm.Tensor(W, requires_grad=True)
    with mm.kernels(False):
        ref = mm.functional.linear_cross_entropy(H, Wt, t)
    (ref * 2.5).backward()
    monkeypatch.setattr(loss_kernels, "CHUNK_BYTES", 1)
    monkeypatch.setattr(loss_kernels, "MIN_CHUNK_ROWS", chunk)
    assert loss_kernels.chunk_rows_for(11, 8) == chunk
    H2, W2 = mm.Tensor(h, requires_grad=True), mm.Tensor(W, requires_grad=True)
    loss = mm.functional.linear_cross_entropy(H2, W2, t)
    (loss * 2.5).backward()
    assert loss.item() == pytest.approx(ref.item(), abs=1e-12)
    np.testing.assert_allclose(H2.grad, H.grad, atol=1e-12)
    np.testing.assert_allclose(W2.grad, Wt.grad, atol=1e-12)
    with pytest.raises(ValueError, match=r"outside the vocabulary of size 11 \(valid ids 0..10"):
        mm.functional.linear_cross_entropy(H2, W2, np.full(23, 11))


def test_default_chunks_hold_about_16_mib_of_logits():
    assert loss_kernels.chunk_rows_for(50257, 4) == (16 * 2**20) // (4 * 50257)
    assert loss_kernels.chunk_rows_for(10, 4) > 1000  # small vocabularies: one big chunk
    assert loss_kernels.chunk_rows_for(10**9, 4) == loss_kernels.MIN_CHUNK_ROWS
