"""BERT 80/10/10 masking: proportions, label layout, special tokens, errors."""

from __future__ import annotations

import numpy as np
import pytest

from minimodel.data import IGNORE_INDEX, mask_tokens

V, PAD, MASK = 300, 256, 257


@pytest.fixture(scope="module")
def batch() -> np.ndarray:
    rng = np.random.default_rng(123)
    ids = rng.integers(0, 256, size=(200, 128))
    ids[:, -8:] = PAD  # padded tail
    return ids


def test_labels_are_original_ids_exactly_at_chosen_positions(batch):
    inputs, labels = mask_tokens(batch, MASK, V, np.random.default_rng(0), special_ids=(PAD,))
    assert inputs.shape == labels.shape == batch.shape
    assert inputs.dtype == labels.dtype == np.int64
    chosen = labels != IGNORE_INDEX
    assert np.array_equal(labels[chosen], batch[chosen])
    assert np.all(labels[~chosen] == -100)
    # Positions not chosen are untouched; padding is never chosen.
    assert np.array_equal(inputs[~chosen], batch[~chosen])
    assert not chosen[:, -8:].any()


def test_proportions_match_bert(batch):
    inputs, labels = mask_tokens(batch, MASK, V, np.random.default_rng(1), special_ids=(PAD,))
    chosen = labels != IGNORE_INDEX
    n_candidates = batch[:, :-8].size  # 200 * 120 = 24000
    rate = chosen.sum() / n_candidates
    assert abs(rate - 0.15) < 0.01  # std ~ 0.0023
    masked = (inputs == MASK) & chosen
    kept = (inputs == batch) & chosen
    replaced = chosen & ~masked & ~kept
    n = chosen.sum()
    assert abs(masked.sum() / n - 0.8) < 0.03
    assert abs(replaced.sum() / n - 0.1) < 0.025
    # "unchanged" also catches the ~1/254 random draws that hit the original token
    assert abs(kept.sum() / n - 0.1) < 0.025
    assert masked.sum() + replaced.sum() + kept.sum() == n


def test_random_replacements_are_never_special(batch):
    specials = (PAD, 258, 259)
    inputs, labels = mask_tokens(
        batch, MASK, V, np.random.default_rng(2), mask_prob=0.5, special_ids=specials
    )
    chosen = labels != IGNORE_INDEX
    replaced = chosen & (inputs != MASK) & (inputs != batch)
    assert replaced.sum() > 1000
    assert not np.isin(inputs[replaced], [PAD, MASK, 258, 259]).any()
    assert inputs[replaced].max() < V


def test_every_row_gets_a_target_when_possible():
    ids = np.full((50, 10), PAD)
    ids[:, 3] = 42  # one maskable token per row
    ids[0, 3] = PAD  # ... except row 0, which is all padding
    inputs, labels = mask_tokens(ids, MASK, V, np.random.default_rng(3), special_ids=(PAD,))
    assert np.all(labels[1:, 3] == 42)
    assert np.all(labels[0] == -100)
    assert np.all(labels[:, [0, 1, 2, 4, 5, 6, 7, 8, 9]] == -100)


def test_one_dimensional_input_and_determinism():
    ids = np.arange(100) % 250
    a = mask_tokens(ids, MASK, V, 7)
    b = mask_tokens(ids.tolist(), MASK, V, np.random.default_rng(7))
    assert a[0].shape == (100,)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_errors_name_values():
    ids = np.array([[1, 2, 300]])
    with pytest.raises(ValueError, match=r"token id 300 is outside the vocabulary \(vocab_size=300"):
        mask_tokens(ids, MASK, V, 0)
    with pytest.raises(ValueError, match=r"mask_id=300 is outside the vocabulary"):
        mask_tokens(np.array([1, 2]), 300, V, 0)
    with pytest.raises(ValueError, match=r"mask_prob must be in \(0, 1\], got 0"):
        mask_tokens(np.array([1, 2]), MASK, V, 0, mask_prob=0)
    with pytest.raises(TypeError, match="integers"):
        mask_tokens(np.array([1.0, 2.0]), MASK, V, 0)
