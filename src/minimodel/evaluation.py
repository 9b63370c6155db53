"""Word-similarity evaluation of word vectors: Spearman correlation with human scores.

For each benchmark pair (w1, w2, human score) whose two words are in the vocabulary, the model
score is the cosine similarity of the two word vectors,

    cos(u, v) = u . v / (|u| |v|),

and the figure of merit is Spearman's rank correlation between model and human scores:

    rho = Pearson correlation of rank(model scores) and rank(human scores),

with tied values given the *average* of the ranks they span (so ties do not favour either
order). Pairs with a word outside the vocabulary cannot be scored: they are counted, reported
(``unseen_pairs``) and give the ``coverage`` — they are never silently dropped, because a
correlation over 30 % of a benchmark is not comparable with one over 100 %.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from minimodel.data import load_word_similarity
from minimodel.messages import Phrase, phrase


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``; tied values share the mean of the ranks they occupy.

    Example: [10, 20, 20, 30] -> [1, 2.5, 2.5, 4].
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"average_ranks expects a 1-D sequence, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("average_ranks got NaN values; remove or impute them first")
    order = np.argsort(x, kind="mergesort")  # (n,) stable
    sorted_x = x[order]
    ranks = np.empty(len(x), dtype=np.float64)
    # Boundaries of runs of equal values in sorted order.
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])  # (runs,)
    ends = np.r_[starts[1:], len(x)]  # exclusive
    for lo, hi in zip(starts, ends):
        ranks[order[lo:hi]] = (lo + 1 + hi) / 2.0  # mean of ranks lo+1 .. hi
    return ranks


def spearman(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho with average ranks for ties; NaN when either side is constant.

        rho = sum_i (r_i - r')(s_i - s') / sqrt(sum_i (r_i - r')^2 * sum_i (s_i - s')^2)

    where r, s are the average ranks of a and b and r', s' their means.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"spearman needs two 1-D sequences of equal length, got shapes "
                         f"{a.shape} and {b.shape}")
    if len(a) < 2:
        return float("nan")
    r, s = average_ranks(a), average_ranks(b)
    r -= r.mean()
    s -= s.mean()
    denom = math.sqrt(float(r @ r) * float(s @ s))
    return float(r @ s / denom) if denom > 0 else float("nan")


def cosine_similarity(u: np.ndarray, v: np.ndarray) -> float:
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    return float(u @ v / (nu * nv)) if nu > 0 and nv > 0 else 0.0


@dataclass
class WordSimResult:
    """Outcome of one benchmark. ``spearman`` is over the covered pairs only (NaN if < 2)."""

    name: str
    spearman: float
    pairs: int
    covered: int
    unseen: int
    unseen_pairs: list[tuple[str, str]] = field(default_factory=list)
    unseen_words: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.covered / self.pairs if self.pairs else 0.0

    def to_dict(self, max_listed: int | None = 20) -> dict[str, Any]:
        d = asdict(self)
        d["coverage"] = self.coverage
        d["spearman"] = None if math.isnan(self.spearman) else self.spearman
        if max_listed is not None:
            d["unseen_pairs"] = [list(p) for p in self.unseen_pairs[:max_listed]]
            d["unseen_words"] = self.unseen_words[:max_listed]
        d["unseen_words_total"] = len(self.unseen_words)
        return d

    def phrase(self, show: int = 5) -> Phrase:
        """The one-line result (up to ``show`` unseen pairs named), to be said in a language."""
        rho = phrase("wordsim.no_rho") if math.isnan(self.spearman) else f"{self.spearman:+.3f}"
        examples: Phrase | str = ""
        if self.unseen_pairs:
            more = phrase("wordsim.more", n=self.unseen - show) if self.unseen > show else ""
            examples = phrase("wordsim.examples", more=more,
                              listed=", ".join(f"{a}/{b}" for a, b in self.unseen_pairs[:show]))
        return phrase("wordsim.result", name=self.name, rho=rho, covered=self.covered,
                      pairs=self.pairs, coverage=self.coverage, unseen=self.unseen,
                      examples=examples)

    def describe(self, show: int = 5) -> str:
        return str(self.phrase(show))


def evaluate_word_similarity(vectors: np.ndarray, vocab: Any,
                             pairs: Iterable[tuple[str, str, float]], name: str = "pairs"
                             ) -> WordSimResult:
    """Score ``pairs`` with the cosine of ``vectors`` rows and correlate with human scores.

    Args:
        vectors: (V, d) word vectors, row i for word id i.
        vocab: anything with ``word in vocab`` (known words; ``[UNK]`` is not "known") and
            ``vocab.id_of(word)`` / ``vocab.stoi[word]`` / ``vocab[word]`` giving the row.
        pairs: ``(word1, word2, human_score)`` triples, e.g. from
            ``minimodel.data.load_word_similarity("simlex999")``.
    """
    vectors = np.asarray(getattr(vectors, "data", vectors), dtype=np.float64)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must be a (V, d) matrix, got shape {vectors.shape}")
    lookup = _lookup(vocab)
    pairs = list(pairs)
    model_scores, human_scores = [], []
    unseen_pairs: list[tuple[str, str]] = []
    unseen_words: dict[str, None] = {}
    for w1, w2, score in pairs:
        missing = [w for w in (w1.lower(), w2.lower()) if w not in vocab]
        if missing:
            unseen_pairs.append((w1, w2))
            unseen_words.update(dict.fromkeys(missing))
            continue
        i, j = lookup(w1.lower()), lookup(w2.lower())
        if not (0 <= i < len(vectors) and 0 <= j < len(vectors)):
            raise ValueError(f"word ids {i}, {j} of {w1!r}/{w2!r} are outside the {len(vectors)} "
                             "rows of the vectors; the vocabulary and the matrix do not match")
        model_scores.append(cosine_similarity(vectors[i], vectors[j]))
        human_scores.append(float(score))
    rho = spearman(model_scores, human_scores) if len(model_scores) >= 2 else float("nan")
    return WordSimResult(name=name, spearman=rho, pairs=len(pairs), covered=len(model_scores),
                         unseen=len(unseen_pairs), unseen_pairs=unseen_pairs,
                         unseen_words=sorted(unseen_words))


def _lookup(vocab: Any):
    if hasattr(vocab, "id_of"):
        return vocab.id_of
    if hasattr(vocab, "stoi"):
        return vocab.stoi.__getitem__
    if hasattr(vocab, "__getitem__"):
        return vocab.__getitem__
    raise TypeError(f"vocab must map words to ids (WordVocab or dict), got {type(vocab).__name__}")


def evaluate_cbow(model: Any, vocab: Any, sets: Sequence[str] = ("simlex999", "wordsim353")
                  ) -> dict[str, dict[str, WordSimResult]]:
    """Word-similarity results of a CBOW model's input vectors (and output vectors if untied).

    Returns ``{"input": {set: result}, "output": {...}}``; with a tied model both are the same
    matrix, so only ``"input"`` is given.
    """
    matrices = {"input": model.in_emb.weight.data}
    if not model.config.tie_embeddings:
        matrices["output"] = model.lm_head.weight.data
    return {which: {name: evaluate_word_similarity(m, vocab, load_word_similarity(name), name)
                    for name in sets}
            for which, m in matrices.items()}
