"""Spearman with average ranks (checked against SciPy) and unseen-pair accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minimodel.evaluation import (average_ranks, evaluate_cbow, evaluate_word_similarity,
                                  spearman)

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("seed", range(5))
def test_average_ranks_match_scipy(seed):
    x = np.random.default_rng(seed).integers(0, 6, size=40).astype(float)  # many ties
    np.testing.assert_allclose(average_ranks(x), scipy_stats.rankdata(x, method="average"))


def test_average_ranks_example():
    np.testing.assert_array_equal(average_ranks([10, 20, 20, 30]), [1, 2.5, 2.5, 4])


@pytest.mark.parametrize("seed", range(8))
def test_spearman_matches_scipy_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=50)
    b = a + rng.normal(scale=1.5, size=50)
    if seed % 2:
        a, b = np.round(a), np.round(b * 2) / 2  # ties on both sides
    assert spearman(a, b) == pytest.approx(scipy_stats.spearmanr(a, b).statistic, abs=1e-12)


def test_spearman_edge_cases():
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1.0], [2.0]))
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2], [1, 2, 3])


def test_unseen_pairs_are_counted_and_listed_not_dropped():
    vocab = {"cat": 0, "dog": 1, "car": 2, "road": 3}
    vectors = np.array([[1.0, 0.1], [0.9, 0.2], [0.0, 1.0], [0.1, 0.9]])
    pairs = [("cat", "dog", 9.0), ("car", "road", 8.0), ("cat", "car", 1.0),
             ("cat", "unicorn", 5.0), ("zebra", "horse", 7.0), ("dog", "road", 2.0)]
    r = evaluate_word_similarity(vectors, vocab, pairs, "toy")
    assert (r.pairs, r.covered, r.unseen) == (6, 4, 2)
    assert r.coverage == pytest.approx(4 / 6)
    assert r.unseen_pairs == [("cat", "unicorn"), ("zebra", "horse")]
    assert r.unseen_words == ["horse", "unicorn", "zebra"]
    cos = [vectors[a] @ vectors[b] / np.linalg.norm(vectors[a]) / np.linalg.norm(vectors[b])
           for a, b in ((0, 1), (2, 3), (0, 2), (1, 3))]
    assert r.spearman == pytest.approx(scipy_stats.spearmanr(cos, [9, 8, 1, 2]).statistic)
    text = r.describe(show=1)
    assert "4/6 pairs" in text and "2 pairs have an unseen word" in text
    assert "cat/unicorn" in text and "(1 more)" in text
    d = r.to_dict()
    assert d["coverage"] == pytest.approx(4 / 6) and d["unseen"] == 2


def test_no_covered_pairs_gives_nan_not_an_error():
    r = evaluate_word_similarity(np.eye(2), {"a": 0, "b": 1}, [("x", "y", 1.0)], "none")
    assert r.covered == 0 and r.unseen == 1 and math.isnan(r.spearman)
    assert r.to_dict()["spearman"] is None


def test_evaluate_cbow_reports_input_and_output_vectors():
    from minimodel.data import build_word_vocab
    from minimodel.models import CBOW

    vocab = build_word_vocab("old new smart intelligent hard difficult happy cheerful")
    untied = evaluate_cbow(CBOW(vocab_size=vocab.vocab_size, d_model=4), vocab)
    assert set(untied) == {"input", "output"}
    simlex = untied["input"]["simlex999"]
    assert simlex.pairs == 999 and simlex.covered + simlex.unseen == 999 and simlex.covered >= 3
    tied = evaluate_cbow(CBOW(vocab_size=vocab.vocab_size, d_model=4, tie_embeddings=True), vocab)
    assert set(tied) == {"input"}
