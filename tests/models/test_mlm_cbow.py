"""MaskedLM (masked rows only, seed equivalence) and CBOW (tied/untied, sparse gradient)."""

import numpy as np
import pytest

import minimodel as mm
from minimodel.models import CBOW, MaskedLM, MLMConfig, mlm_forward, mlm_forward_tied


def tiny_mlm(tie=True):
    mm.nn.manual_seed(0)
    return MaskedLM(MLMConfig(vocab_size=40, block_size=10, n_layer=2, n_head=2, d_model=16,
                              tie_embeddings=tie))


def test_mlm_logits_only_for_labelled_rows_in_row_major_order():
    model = tiny_mlm()
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 40, (3, 10))
    labels = np.full((3, 10), -100)
    labels[0, 2], labels[1, 7], labels[2, 0] = 5, 6, 7
    logits, loss = model(ids, labels)
    assert logits.shape == (3, 40)
    full, _ = model(ids)
    np.testing.assert_allclose(logits.data, full.data[[0, 1, 2], [2, 7, 0]], rtol=1e-5, atol=1e-6)
    ref = -np.log(np.exp(full.data[[0, 1, 2], [2, 7, 0]]) /
                  np.exp(full.data[[0, 1, 2], [2, 7, 0]]).sum(-1, keepdims=True))[[0, 1, 2], [5, 6, 7]]
    assert loss.item() == pytest.approx(ref.mean(), rel=1e-5)


def test_mlm_is_bidirectional():
    """Changing a later token changes the hidden state of an earlier position (no causal mask)."""
    model = tiny_mlm()
    ids = np.arange(10)[None] % 40
    other = ids.copy()
    other[0, 9] = 39
    a = model(ids)[0].data[0, 0]
    b = model(other)[0].data[0, 0]
    assert np.abs(a - b).max() > 1e-6


@pytest.mark.parametrize("tied", [True, False])
def test_from_packed_equals_seed_reference(tied):
    rng = np.random.default_rng(1)
    V, T, d, L, H = 25, 7, 12, 2, 3
    w_emb, pos = rng.normal(size=(V, d)), rng.normal(size=(T, d))
    blocks = rng.normal(size=(L, 6, d, d)) * 0.3
    ids = rng.integers(0, V, (4, T))
    mask = rng.random((4, T))
    w_head = None if tied else rng.normal(size=(d, V))
    model = MaskedLM.from_packed(w_emb, pos, blocks, H, w_head)
    ours = model.forward_masked(ids, mask).data
    ref = (mlm_forward_tied(ids, mask, w_emb, pos, blocks, H) if tied
           else mlm_forward(ids, mask, w_emb, pos, blocks, w_head, H))
    assert ours.dtype == np.float64
    assert ours.shape == ref.shape == (int((mask > 0.5).sum()), V)
    np.testing.assert_allclose(ours, ref, atol=1e-10)
    assert (model.lm_head.weight is model.token_emb.weight) == tied


def test_mlm_overfits_masked_positions():
    model = tiny_mlm()
    rng = np.random.default_rng(2)
    ids = rng.integers(0, 40, (2, 10))
    labels = np.where(rng.random((2, 10)) < 0.4, ids, -100)
    labels[0, 0] = ids[0, 0]
    inputs = np.where(labels != -100, 0, ids)  # id 0 plays [MASK]
    opt = mm.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(60):
        _, loss = model(inputs, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.05


def test_mlm_label_shape_checked():
    with pytest.raises(ValueError, match="labels"):
        tiny_mlm()(np.zeros((2, 5), dtype=np.int64), np.zeros((2, 4), dtype=np.int64))


def test_cbow_tied_and_untied_counts_and_sparsity():
    mm.nn.manual_seed(0)
    untied = CBOW(vocab_size=30, d_model=8, window=2)
    tied = CBOW(vocab_size=30, d_model=8, window=2, tie_embeddings=True)
    assert untied.num_params() == 2 * 30 * 8 and tied.num_params() == 30 * 8
    contexts = np.array([[1, 2, 4, 5], [2, 2, 9, 1]])
    _, loss = untied(contexts, np.array([3, 7]))
    loss.backward()
    touched = np.flatnonzero(np.any(untied.in_emb.weight.grad != 0, axis=1))
    np.testing.assert_array_equal(touched, [1, 2, 4, 5, 9])
    # row 2 appears three times (once in row 0, twice in row 1): its gradient adds up
    h_grad = untied.in_emb.weight.grad
    assert np.abs(h_grad[2]).sum() > np.abs(h_grad[9]).sum()


def test_cbow_learns_a_deterministic_context():
    mm.nn.manual_seed(1)
    model = CBOW(vocab_size=20, d_model=16, window=1)
    contexts = np.array([[1, 3], [4, 6], [7, 9]])
    targets = np.array([2, 5, 8])
    opt = mm.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.0)
    for _ in range(100):
        logits, loss = model(contexts, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    np.testing.assert_array_equal(logits.data.argmax(-1), targets)
