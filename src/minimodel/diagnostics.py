"""Measurements of what tying does: effective rank, gradient sparsity, parameter accounting.

* Effective rank (Roy & Vetterli 2007): with singular values s_i and p_i = s_i / sum_j s_j,
  ``erank = exp(-sum_i p_i ln p_i)``. It is between 1 and min(V, d); a value far below
  min(V, d) means the embedding has collapsed into a few directions.
* Participation ratio: ``(sum_i s_i^2)^2 / sum_i s_i^4`` — the number of directions that carry
  the variance, another view of the same spectrum.
* Gradient-row sparsity: a lookup only touches the rows of the ids in the batch, so
  ``rows with a non-zero gradient == number of unique ids`` (for the lookup's share alone; a
  tied head's share is dense).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.nn import Embedding, Module


def _matrix(x: Any) -> np.ndarray:
    arr = np.asarray(getattr(x, "data", x), dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {arr.shape}")
    return arr


def singular_values(matrix: Any) -> np.ndarray:
    return np.linalg.svd(_matrix(matrix), compute_uv=False)


def effective_rank(matrix: Any) -> float:
    """exp(entropy of the normalised singular values); 0 for an all-zero matrix."""
    s = singular_values(matrix)
    total = s.sum()
    if total == 0:
        return 0.0
    p = s[s > 0] / total
    return float(np.exp(-(p * np.log(p)).sum()))


def participation_ratio(matrix: Any) -> float:
    """(sum s^2)^2 / sum s^4 over the singular values s; 0 for an all-zero matrix."""
    s2 = singular_values(matrix) ** 2
    denom = (s2 ** 2).sum()
    return float(s2.sum() ** 2 / denom) if denom > 0 else 0.0


def gradient_row_sparsity(grad: Any) -> dict[str, float]:
    """How many rows of an embedding gradient (V, d) are non-zero, and what fraction."""
    g = _matrix(grad)
    touched = int(np.count_nonzero(np.any(g != 0, axis=1)))
    return {"rows_touched": touched, "rows": g.shape[0], "fraction": touched / g.shape[0]}


def parameter_accounting(model: Module) -> dict[str, Any]:
    """Counts with and without tying, tie groups and memory (bytes) of a model."""
    unique = list(model.parameters())
    aliased = list(model.named_parameters(remove_duplicate=False))
    embedding_ids = {id(m.weight) for m in model.modules() if isinstance(m, Embedding)}
    unique_count = sum(p.size for p in unique)
    return {
        "parameters": unique_count,
        "parameters_if_untied": sum(p.size for _, p in aliased),
        "saved_by_tying": sum(p.size for _, p in aliased) - unique_count,
        "embedding_parameters": sum(p.size for p in unique if id(p) in embedding_ids),
        "non_embedding_parameters": model.num_params(non_embedding=True),
        "bytes": sum(p.data.nbytes for p in unique),
        "tie_groups": model.tie_groups(),
        "tensors": [{"name": n, "shape": list(p.shape), "dtype": str(p.dtype)}
                    for n, p in model.named_parameters()],
    }


def nearest_neighbours(matrix: Any, query: int, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` rows most similar to row ``query`` by cosine similarity (excluding itself)."""
    E = _matrix(matrix)
    if not 0 <= query < E.shape[0]:
        raise ValueError(f"query row {query} is outside the {E.shape[0]} rows of the matrix")
    norms = np.linalg.norm(E, axis=1)
    norms[norms == 0] = 1.0
    sims = (E @ E[query]) / (norms * norms[query])  # (V,)
    sims[query] = -np.inf
    order = np.argsort(-sims)[:k]
    return [(int(i), float(sims[i])) for i in order]
