"""Invariants behind `frequent-tokens-learn-slowly`: the gradient of a lookup is a scatter-ADD.

A row looked up k times receives the sum of its k gradient rows, whatever the shape of the
ids, the values of the gradient, the float dtype (the experiment trains in float32), the
model around it or its width: besides small tables every check draws the main job's d = 128
and a d above 768 (with V >= 1024), so a fix gated on the width fails. Sizes, ids, gradients
and which checks run in float32 or float64 are drawn afresh on every run (``checks.seed``);
the experiment's own table and batches (V = 16, d = 4, 64 ids, float32) are one more case,
and one case passes its ids as a nested list (``lookup`` takes lists and arrays).
Run by `minimodel break check`; `break run` reads the same checks.
"""

import numpy as np

from minimodel_break_harness import (WIDE_VOCAB, CheckFailed, Checks, allclose, es_num, tr,
                                     use_workspace, wide_widths)

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import CBOW, GPT, GPTConfig, MaskedLM, MLMConfig  # noqa: E402
from minimodel.nn.embedding import lookup  # noqa: E402

checks = Checks()
rng = np.random.default_rng(checks.seed)


FLOATS = (np.float32, np.float64)
# Allowed |diff| relative to the largest expected value: float32 sums of a few thousand rows
# round at about 1e-5 of it; a row divided by its k >= 2 uses is off by half its value or more.
RTOL = {np.float32: 1e-4, np.float64: 1e-10}


def dtypes(count: int) -> list:
    """``count`` (>= 2) float dtypes in a random order, float32 and float64 both among them."""
    drawn = [FLOATS[i % 2] for i in range(count)]
    return [drawn[i] for i in rng.permutation(count)]


def lookup_grad(weight: np.ndarray, ids, g: np.ndarray) -> np.ndarray:
    """The lookup's gradient, computed in the dtype of ``weight`` (``g`` cast to it)."""
    w = mm.Tensor(weight, requires_grad=True)
    lookup(w, ids).backward(g.astype(weight.dtype))
    return w.grad


def dense_reference(V: int, ids: np.ndarray, g: np.ndarray) -> np.ndarray:
    """onehot(ids).T @ g: the lookup written as a matrix product, differentiated by hand."""
    onehot = np.eye(V)[ids.reshape(-1)]  # (N, V)
    return onehot.T @ g.reshape(len(onehot), -1)  # (V, d)


def compare(got, want: np.ndarray, what: str, rtol: float = 1e-10) -> None:
    """``got`` equals ``want`` to ``rtol`` of ``want``'s largest magnitude (at least 1)."""
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    if got is None or got.shape != want.shape or not allclose(got, want, rtol=rtol,
                                                                 atol=rtol * scale):
        worst = (None if got is None or got.shape != want.shape
                 else float(np.abs(got - want).max()))
        worst_en, worst_es = ("-", "-") if worst is None else (f"{worst:.3g}",
                                                               es_num(worst, ".3g"))
        raise CheckFailed(f"{what}: gradient differs from the reference (max |diff| {worst_en})",
                          f"{what}: el gradiente difiere de la referencia (máx. |dif| {worst_es})")


def ids_with_repeats(V: int, shape: tuple[int, ...]) -> np.ndarray:
    """Random ids where one id fills half the positions (repeats across rows) and every row
    (last axis) repeats an id of its own (repeats inside one sequence)."""
    ids = rng.integers(0, V, size=shape)
    flat = ids.reshape(-1)
    flat[: len(flat) // 2] = flat[-1]
    rows = rng.permuted(flat).reshape(-1, shape[-1])  # (rows, last)
    if shape[-1] >= 2:
        rows[:, 1] = rows[:, 0]
    return rng.permuted(rows, axis=1).reshape(shape)


def spread_sizes(count: int, low: int = 2, high: int = 4000) -> list[int]:
    """``count`` total sizes drawn log-uniformly from ``low`` to ``high``, sorted, the first
    at most 40 and the last at least 1000: a fix that behaves differently above or below
    some batch size meets both sides on every seed."""
    sizes = np.exp(rng.uniform(np.log(low), np.log(high), size=count))
    sizes[0] = rng.integers(low, 41)
    sizes[-1] = rng.integers(1000, high + 1)
    return sorted(int(n) for n in sizes)


def shape_of(total: int, ndim: int) -> tuple[int, ...]:
    """A random shape with ``ndim`` axes holding about ``total`` ids (the last axis >= 2)."""
    shape = []
    for left in range(ndim - 1, 0, -1):
        axis = int(rng.integers(1, max(2, round(total ** (1 / (left + 1)))) + 1))
        shape.append(axis)
        total = max(2, total // axis)
    return tuple(shape) + (max(2, total),)


@checks.case("scatter-add",
             "for random V, d (small, 128 and above 768), ids of 1, 2 and 3 dimensions with "
             "repeats (from a few ids to a few thousand), float32 and float64, and a random "
             "upstream gradient, the lookup's gradient equals onehot(ids).T @ g (and at the "
             "experiment's V = 16, d = 4, 64 ids, float32)",
             "con V y d aleatorios (pequeños, 128 y más de 768), ids de 1, 2 y 3 dimensiones "
             "con repeticiones (de unos pocos ids a unos miles), en float32 y en float64, y un "
             "gradiente aleatorio respecto de la salida, el gradiente de la indexación es "
             "onehot(ids).T @ g (y con los V = 16, d = 4, 64 ids y float32 del experimento)")
def _():
    totals, cases = spread_sizes(4), []
    for total, ndim, dtype in zip(rng.permuted(totals), (1, 2, 3, int(rng.integers(1, 4))),
                                  dtypes(4)):
        shape = shape_of(int(total), ndim)
        n = int(np.prod(shape))
        # V from 2 to 3000, capped so the dense one-hot reference (N, V) stays small.
        V, d = int(rng.integers(2, max(3, min(3000, 4_000_000 // n)))), int(rng.integers(1, 7))
        cases.append((V, d, shape, dtype))
    for d, dtype in zip(wide_widths(rng), dtypes(2)):  # the main job's width and a wider one
        ndim = int(rng.integers(1, 4))
        cases.append((int(rng.integers(WIDE_VOCAB, 2049)), d,
                      shape_of(int(rng.integers(40, 301)), ndim), dtype))
    cases.append((16, 4, (64,), np.float32))  # the experiment's table and batches
    for i, (V, d, shape, dtype) in enumerate(cases):
        ids = ids_with_repeats(V, shape)
        g = rng.standard_normal(shape + (d,)).astype(dtype)  # the reference reads the same g
        name = np.dtype(dtype).name
        given = ids.tolist() if i == 0 else ids  # lookup takes a nested list as well
        compare(lookup_grad(rng.standard_normal((V, d)).astype(dtype), given, g),
                dense_reference(V, ids, g.astype(np.float64)),
                tr(f"{name} ids of shape {shape}, V={V}, d={d}",
                   f"{name}, ids de forma {shape}, V={V}, d={d}"), rtol=RTOL[dtype])


@checks.case("finite-differences",
             "matches central finite differences of sum(E[ids] * R) (float64, random sizes; "
             "at d = 128 and above 768 on random columns of every used row)",
             "coincide con diferencias finitas centradas de sum(E[ids] * R) (float64, tamaños "
             "aleatorios; con d = 128 y más de 768, en columnas al azar de cada fila usada)")
def _():
    for d in [int(rng.integers(1, 4))] + wide_widths(rng):
        V = int(rng.integers(2, 7))
        W = rng.standard_normal((V, d))
        ids = ids_with_repeats(V, (2, int(rng.integers(2, 6))))
        R = rng.standard_normal(ids.shape + (d,))
        got = lookup_grad(W.copy(), ids, R)
        columns = np.arange(d) if d < 8 else rng.choice(d, size=6, replace=False)
        entries = [(row, col) for row in range(V) for col in columns]
        numeric = np.zeros(len(entries))
        eps = 1e-6
        for k, i in enumerate(entries):
            Wp, Wm = W.copy(), W.copy()
            Wp[i] += eps
            Wm[i] -= eps
            numeric[k] = ((Wp[ids] * R).sum() - (Wm[ids] * R).sum()) / (2 * eps)
        rows, cols = np.array(entries).T
        compare(None if got is None else got[rows, cols], numeric,
                tr(f"finite differences, V={V}, d={d}", f"diferencias finitas, V={V}, d={d}"),
                rtol=1e-6)


def gradients(model, batches) -> dict[str, np.ndarray]:
    """Gradients of the sum of the losses of ``batches`` [(inputs, targets)], one backward."""
    model.zero_grad()
    total = None
    for x, y in batches:
        loss = model(x, y)[1] * float(len(x))  # undo the mean over this batch's examples
        total = loss if total is None else total + loss
    total.backward()
    return {name: p.grad.copy() for name, p in model.named_parameters() if "emb" in name}


@checks.case("batch-additive",
             "in GPT, MaskedLM and CBOW training (float32 and float64; d = 8, 128 and above 768), "
             "the embeddings' gradient on a batch equals the sum of the gradients on its "
             "examples one by one (positions repeat across a batch)",
             "en el entrenamiento de GPT, MaskedLM y CBOW (en float32 y en float64; d = 8, 128 y "
             "más de 768), el gradiente de los embeddings con un lote es la suma de los "
             "gradientes con sus ejemplos de uno en uno (las posiciones se repiten en un lote)")
def _():
    V, T, B = int(rng.integers(5, 40)), int(rng.integers(3, 8)), int(rng.integers(2, 5))
    kinds = ["GPT", "MaskedLM", "CBOW"]
    # (kind, V, d): each model small, then two drawn at the main job's width and a wider one.
    sizes = [(kind, V, 8) for kind in kinds] + [
        (kinds[int(rng.integers(3))], int(rng.integers(WIDE_VOCAB, 2049)), d)
        for d in wide_widths(rng, multiple=2)]
    for (name, V, d), dtype in zip(sizes, dtypes(len(sizes))):
        model = {"GPT": lambda: GPT(GPTConfig(V, T, 1, 2, d), rng=rng),
                 "MaskedLM": lambda: MaskedLM(MLMConfig(V, T, 1, 2, d), rng=rng),
                 "CBOW": lambda: CBOW(rng=rng, vocab_size=V, d_model=d, window=2)}[name]()
        model.astype(dtype)
        if name == "CBOW":
            x, y = ids_with_repeats(V, (B, 4)), rng.integers(0, V, size=B)
        else:
            x, y = ids_with_repeats(V, (B, T)), rng.integers(0, V, size=(B, T))
        whole = gradients(model, [(x, y)])
        one_by_one = gradients(model, [(x[i:i + 1], y[i:i + 1]) for i in range(B)])
        for param in whole:
            compare(whole[param], one_by_one[param],
                    f"{name} {np.dtype(dtype).name} {param} (B={B}, V={V}, d={d})",
                    rtol=1e-8 if dtype is np.float64 else RTOL[dtype])


@checks.case("tied-sum",
             "a tied matrix gets the lookup's scatter-add plus the head's dlogits.T @ h, in "
             "float32 and in float64, for small d, d = 128 and d above 768",
             "una matriz atada recibe la suma por índices de la indexación más el dlogits.T @ h "
             "de la cabeza, en float32 y en float64, con d pequeña, d = 128 y d mayor que 768")
def _():
    sizes = [(int(rng.integers(3, 300)), int(rng.integers(2, 6)), spread_sizes(2, 4)[-1])
             for _ in range(2)]
    sizes += [(int(rng.integers(WIDE_VOCAB, 3001)), d, int(rng.integers(40, 401)))
              for d in wide_widths(rng)]
    for (V, d, n), dtype in zip(sizes, dtypes(len(sizes))):
        emb = nn.Embedding(V, d, rng=rng)
        emb.weight.data = rng.standard_normal((V, d)).astype(dtype)
        head = nn.TiedHead(emb)
        ids = ids_with_repeats(V, (n,))
        R1, R2 = (rng.standard_normal(shape).astype(dtype) for shape in ((n, d), (3, V)))
        h = rng.standard_normal((3, d)).astype(dtype)
        loss = (emb(ids) * mm.Tensor(R1)).sum() + (head(mm.Tensor(h)) * mm.Tensor(R2)).sum()
        loss.backward()
        want = dense_reference(V, ids, R1.astype(np.float64)) + R2.T.astype(np.float64) @ h
        compare(emb.weight.grad, want, tr(f"{np.dtype(dtype).name} tied lookup + head, d={d}",
                                          f"indexación atada + cabeza, {np.dtype(dtype).name}, "
                                          f"d={d}"),
                rtol=1e-8 if dtype is np.float64 else RTOL[dtype])


if __name__ == "__main__":
    checks.finish()
