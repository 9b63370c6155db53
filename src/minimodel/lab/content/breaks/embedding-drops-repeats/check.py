"""Checks for `embedding-drops-repeats`: the embedding gradient is a scatter-ADD."""

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, tr, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.nn.embedding import lookup  # noqa: E402

checks = Checks()


def lookup_grad(weight: np.ndarray, ids: np.ndarray, g: np.ndarray) -> np.ndarray:
    w = mm.Tensor(weight, requires_grad=True)
    lookup(w, ids).backward(g)
    return w.grad


def dense_reference(V: int, ids: np.ndarray, g: np.ndarray) -> np.ndarray:
    """onehot(ids).T @ g: the lookup written as a matrix product, differentiated by hand."""
    onehot = np.eye(V)[ids.reshape(-1)]  # (N, V)
    return onehot.T @ g.reshape(len(onehot), -1)  # (V, d)


def compare(got: np.ndarray, want: np.ndarray, what: str) -> None:
    if got is None or got.shape != want.shape or not np.allclose(got, want, atol=1e-10):
        worst = "-" if got is None or got.shape != want.shape else f"{np.abs(got - want).max():.3g}"
        raise CheckFailed(f"{what}: gradient differs from the reference (max |diff| "
                          f"{worst})",
                          f"{what}: el gradiente difiere de la referencia (máx. |dif| "
                          f"{worst})")


@checks.case("repeated-row", "a row used 3 times gets 3 times the gradient",
             "una fila usada 3 veces recibe 3 veces el gradiente")
def _():
    ids = np.array([3, 5, 3, 3])
    got = lookup_grad(np.zeros((8, 4)), ids, np.ones((4, 4)))
    if not np.allclose(got[3], 3.0):
        raise CheckFailed(f"row 3 gradient is {got[3].tolist()}, expected [3.0, 3.0, 3.0, 3.0]",
                          f"la fila 3 del gradiente es {got[3].tolist()}, se esperaba "
                          "[3.0, 3.0, 3.0, 3.0]")


@checks.case("dense-reference", "matches onehot(ids).T @ g for 1-D, 2-D and all-equal ids",
             "coincide con onehot(ids).T @ g para ids 1-D, 2-D y todos iguales")
def _():
    rng = np.random.default_rng(0)
    for shape, V in (((50,), 7), ((4, 16), 11), ((3, 5), 1), ((6,), 30)):
        ids = rng.integers(0, V, size=shape)
        g = rng.standard_normal(shape + (5,))
        compare(lookup_grad(rng.standard_normal((V, 5)), ids, g), dense_reference(V, ids, g),
                tr(f"ids shape {shape}, V={V}", f"ids de forma {shape}, V={V}"))


@checks.case("finite-differences", "matches central finite differences (float64)",
             "coincide con diferencias finitas centradas (float64)")
def _():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5, 3))
    ids = np.array([[0, 2, 2], [4, 2, 0]])
    R = rng.standard_normal((2, 3, 3))
    got = lookup_grad(W.copy(), ids, R)
    numeric = np.zeros_like(W)
    eps = 1e-6
    for i in np.ndindex(*W.shape):
        Wp, Wm = W.copy(), W.copy()
        Wp[i] += eps
        Wm[i] -= eps
        numeric[i] = ((Wp[ids] * R).sum() - (Wm[ids] * R).sum()) / (2 * eps)
    compare(got, numeric, tr("finite differences", "diferencias finitas"))


@checks.case("tied-sum", "a tied matrix gets the lookup's scatter-add plus the head's dlogits.T @ h",
             "una matriz atada recibe el scatter-add de la búsqueda más el dlogits.T @ h de la cabeza")
def _():
    rng = np.random.default_rng(2)
    V, d = 6, 4
    emb = nn.Embedding(V, d)
    emb.weight.data = rng.standard_normal((V, d))
    head = nn.TiedHead(emb)
    ids = np.array([1, 1, 4, 1, 0])
    R1, R2 = rng.standard_normal((5, d)), rng.standard_normal((3, V))
    h = rng.standard_normal((3, d))
    loss = (emb(ids) * mm.Tensor(R1)).sum() + (head(mm.Tensor(h)) * mm.Tensor(R2)).sum()
    loss.backward()
    compare(emb.weight.grad, dense_reference(V, ids, R1) + R2.T @ h,
            tr("tied lookup + head", "búsqueda atada + cabeza"))


checks.finish()
