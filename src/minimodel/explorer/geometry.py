r"""The geometry behind the explorer: projections, neighbours and aligning frames over time.

PCA: centre the rows (X - mean), take the SVD X = U S V^T and keep X V[:, :k], the coordinates
along the k directions of largest variance.

Cosine neighbours: normalise each row to unit length; the similarity of all pairs is then one
product Xn @ Xn.T, computed in blocks of rows so no (V, V) array is ever held.

Orthogonal Procrustes: two snapshots of a matrix can hold the same geometry turned by a
rotation (nothing in training fixes the orientation of the d axes). The rotation R that best
maps A onto B,

    R = argmin_{R^T R = I} || A R - B ||_F ,   R = U V^T  where  U S V^T = svd(A^T B),

is applied to A before both are projected, so a point moves on screen only when the geometry
around it changed.
"""

from __future__ import annotations

import numpy as np

NEIGHBOURS = 10


def pca_basis(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mean (d,), directions (d, k))``: the centre and the ``k`` principal directions."""
    mean = matrix.mean(axis=0)
    _, _, vt = np.linalg.svd(matrix - mean, full_matrices=False)
    return mean, vt[:k].T


def pca(matrix: np.ndarray, k: int) -> np.ndarray:
    """Coordinates of the rows along the ``k`` principal directions, (V, k) float32."""
    mean, directions = pca_basis(matrix, k)
    return ((matrix - mean) @ directions).astype(np.float32)


def tsne(matrix: np.ndarray, seed: int = 0) -> np.ndarray:
    """2-D t-SNE coordinates of the rows (scikit-learn; the same seed gives the same picture).

    t-SNE keeps each point's nearest neighbours near and lets far distances go, so clusters
    show that PCA's straight projection may overlap. It is slow on thousands of rows, hence
    opt-in, and it is drawn for the last snapshot only: two t-SNE maps of nearby snapshots
    are not comparable, so it cannot be animated.
    """
    try:
        from sklearn.manifold import TSNE  # optional dependency (docs extra): imported on use
    except ImportError:
        raise ValueError("t-SNE needs scikit-learn: pip install scikit-learn (or the docs "
                         "extra: pip install -e '.[docs]'), or leave out --tsne") from None
    perplexity = float(min(30, max(2, (len(matrix) - 1) // 3)))
    return TSNE(2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(
        matrix).astype(np.float32)


def cosine_neighbours(matrix: np.ndarray, k: int = NEIGHBOURS,
                      rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``rows`` (default all), the ``k`` most cosine-similar other rows.

    Returns ``(ids (n, k), similarities (n, k))``, most similar first.
    """
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    rows = np.arange(len(matrix)) if rows is None else np.asarray(rows)
    k = min(k, len(matrix) - 1)
    ids = np.empty((len(rows), k), dtype=np.int64)
    sims = np.empty((len(rows), k), dtype=np.float32)
    for lo in range(0, len(rows), 2048):       # a (2048, V) similarity slab at a time
        chunk = rows[lo:lo + 2048]
        block = unit[chunk] @ unit.T           # (b, V)
        block[np.arange(len(chunk)), chunk] = -np.inf   # a row is not its own neighbour
        top = np.argpartition(-block, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(block, top, axis=1), axis=1)
        ids[lo:lo + len(chunk)] = np.take_along_axis(top, order, axis=1)
        sims[lo:lo + len(chunk)] = np.take_along_axis(block, ids[lo:lo + len(chunk)], axis=1)
    return ids, sims


def procrustes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rotation R (d, d) minimising ||a R - b|| for centred a and b (module docstring)."""
    u, _, vt = np.linalg.svd(a.T @ b)
    return u @ vt


def aligned_coordinates(frames: list[np.ndarray]) -> np.ndarray:
    """2-D coordinates of every frame, (F, V, 2) float32, in the last frame's PCA plane.

    Each frame is rotated onto the (already aligned) frame after it, from the last one back,
    so consecutive frames differ only where the geometry changed; all are then projected on
    the last frame's two principal directions.
    """
    centred = [f - f.mean(axis=0) for f in frames]
    aligned = [centred[-1]]
    for frame in reversed(centred[:-1]):
        aligned.append(frame @ procrustes(frame, aligned[-1]))
    aligned.reverse()
    _, directions = pca_basis(centred[-1], 2)
    return np.stack([f @ directions for f in aligned]).astype(np.float32)


def neighbour_churn(frames: list[np.ndarray], sample: int = 500, seed: int = 0) -> list[float | None]:
    """Per frame, the fraction of a token's 10 nearest neighbours that were not its
    neighbours in the frame before, averaged over a fixed sample of tokens (None for the
    first frame)."""
    rows = np.random.default_rng(seed).permutation(len(frames[0]))[:sample]
    churn: list[float | None] = [None]
    previous = cosine_neighbours(frames[0], rows=rows)[0]
    for frame in frames[1:]:
        current = cosine_neighbours(frame, rows=rows)[0]
        kept = [len(set(a) & set(b)) for a, b in zip(previous, current)]
        churn.append(float(1 - np.mean(kept) / current.shape[1]))
        previous = current
    return churn
