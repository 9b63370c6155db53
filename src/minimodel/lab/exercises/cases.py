"""Test-case generation for the judge.

Every exercise names a generator in ``exercise.yaml`` (``cases.generator``). A generator
``gen(rng, k, hidden, params) -> (args, label)`` returns the function's arguments (NumPy arrays
or Python scalars, keyed by argument name; a missing optional argument is simply absent) and
a short label. Visible examples use a fixed seed so a learner always sees the same ones;
hidden cases come from the seed that the judge prints, so any failure is reproducible with
``--seed``. Hidden cases deliberately include float32 inputs (to catch silent up-casts) and the
edge cases each exercise is about (repeated ids, large logits, tiny variances, empty masks ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

EXAMPLE_SEED = 20240501  # fixed: visible examples never change between runs

Args = dict[str, Any]
Generator = Callable[[np.random.Generator, int, bool, dict], tuple[Args, str]]
GENERATORS: dict[str, Generator] = {}


@dataclass
class Case:
    """One call of the learner's function."""

    name: str
    hidden: bool
    label: str
    args: Args

    def describe_inputs(self) -> dict[str, str]:
        """``{"x": "float32 (2, 3)", "num_heads": "2"}`` for reports."""
        out = {}
        for key, value in self.args.items():
            if isinstance(value, np.ndarray):
                out[key] = f"{value.dtype} {tuple(value.shape)}"
            else:
                out[key] = repr(value)
        return out


def generator(name: str) -> Callable[[Generator], Generator]:
    def deco(fn: Generator) -> Generator:
        GENERATORS[name] = fn
        return fn
    return deco


def _float(k: int, hidden: bool) -> type:
    """Every third hidden case is float32; visible examples are float64."""
    return np.float32 if hidden and k % 3 == 2 else np.float64


def _label(dtype: type, *extra: str) -> str:
    return ", ".join([np.dtype(dtype).name, *[e for e in extra if e]])


@generator("embedding")
def gen_embedding(rng, k, hidden, params):
    """ids (N, T) with repeats, E (V, d)."""
    dt = _float(k, hidden)
    n, t, v, d = (2, 3, 5, 4) if not hidden else (rng.integers(1, 5), rng.integers(1, 9),
                                                  rng.integers(3, 40), rng.integers(1, 17))
    ids = rng.integers(0, v, size=(n, t))
    ids.flat[-1] = ids.flat[0]  # at least one repeated id
    if hidden and k == 0:
        ids[...] = v - 1  # the last row of E, every position
    E = rng.normal(size=(v, d)).astype(dt)
    return {"ids": ids, "E": E}, _label(dt, "all ids = V-1" if hidden and k == 0 else "")


@generator("tied_head")
def gen_tied_head(rng, k, hidden, params):
    """h (N, T, d), E (V, d) with V != d so transposes cannot hide."""
    dt = _float(k, hidden)
    n, t, d, v = (1, 2, 3, 5) if not hidden else (rng.integers(1, 4), rng.integers(1, 7),
                                                  rng.integers(2, 12), rng.integers(13, 50))
    return {"h": rng.normal(size=(n, t, d)).astype(dt),
            "E": rng.normal(scale=0.5, size=(v, d)).astype(dt)}, _label(dt)


@generator("cross_entropy")
def gen_cross_entropy(rng, k, hidden, params):
    """logits (N, V) or (N, T, V); targets with ignored positions; large logits for stability."""
    dt = _float(k, hidden)
    shape = (4,) if not hidden else tuple(rng.integers(1, 6, size=1 + k % 2))
    if hidden and k == 3:
        shape = (int(rng.integers(2, 5)), 3)
    v = 5 if not hidden else int(rng.integers(2, 30))
    scale = 1000.0 if hidden and k % 4 == 1 else 2.0  # exp(1000) overflows without a shift
    logits = (rng.normal(size=(*shape, v)) * scale).astype(dt)
    targets = rng.integers(0, v, size=shape)
    ignore = -100
    if hidden and k == 3:
        ignore = 0  # the argument must be used, not a hard-coded -100
    else:
        targets[rng.random(shape) < 0.4] = -100
    if ignore == 0:
        targets.flat[0], targets.flat[1] = 1, 0  # one kept position, one ignored
    else:
        targets.flat[0] = 0  # at least one position counts
    if not hidden and k == 1:
        targets[-1] = -100
    label = _label(dt, f"logits x{scale:g}" if scale > 2 else "",
                   "ignore_index=0" if ignore == 0 else "")
    return {"logits": logits, "targets": targets, "ignore_index": ignore}, label


@generator("layer_norm")
def gen_layer_norm(rng, k, hidden, params):
    """x (..., d); affine on odd cases; some rows with a tiny variance where eps matters."""
    dt = _float(k, hidden)
    shape = (2, 4) if not hidden else tuple(rng.integers(1, 6, size=1 + k % 3)) + (
        int(rng.integers(2, 33)),)
    x = (rng.normal(size=shape) * 3 + 1).astype(dt)
    tiny = hidden and k % 4 == 0 and dt == np.float64  # float32 cannot resolve 1e-3 at 5
    if tiny:  # variance ~1e-6, comparable to eps
        x = (rng.normal(size=shape) * 1e-3 + 5).astype(dt)
    args: Args = {"x": x}
    if k % 2 == 1:
        d = shape[-1]
        args["weight"] = rng.normal(size=d).astype(dt)
        args["bias"] = rng.normal(size=d).astype(dt)
    return args, _label(dt, "affine" if k % 2 else "no affine", "tiny variance" if tiny else "")


@generator("elementwise")
def gen_elementwise(rng, k, hidden, params):
    """x of any shape, values across the interesting range of GELU."""
    dt = _float(k, hidden)
    if not hidden:
        x = np.linspace(-3, 3, 7) if k == 0 else np.array([[-1.0, 0.0], [0.5, 2.0]])
        return {"x": x.astype(dt)}, _label(dt)
    shape = tuple(rng.integers(1, 7, size=1 + k % 3))
    x = rng.normal(scale=3.0, size=shape)
    if k == 1:
        x = np.concatenate([x.ravel(), [-30.0, -8.0, 8.0, 30.0, 0.0]])
    return {"x": x.astype(dt)}, _label(dt)


@generator("attention")
def gen_attention(rng, k, hidden, params):
    """x (N, T, d) and four (d, d) weights; scores of order one so scaling mistakes show."""
    dt = _float(k, hidden)
    if hidden:
        heads = int(rng.choice([1, 2, 4]))
        n, t, d = int(rng.integers(1, 4)), int(rng.integers(2, 8)), heads * int(rng.integers(1, 5))
    else:
        heads, n, t, d = (1, 1, 3, 2) if k == 0 else (2, 1, 3, 4)
    w = rng.normal(scale=1.5 / np.sqrt(d), size=(4, d, d)).astype(dt)
    args = {"x": rng.normal(size=(n, t, d)).astype(dt), "w_q": w[0], "w_k": w[1],
            "w_v": w[2], "w_o": w[3], "num_heads": heads}
    return args, _label(dt, f"{heads} head{'s' * (heads > 1)}")


@generator("mlm")
def gen_mlm(rng, k, hidden, params):
    """The seed pipeline's inputs; params.tied drops w_head. One hidden case masks nothing."""
    dt = _float(k, hidden)
    if hidden:
        heads = int(rng.choice([1, 2, 4]))
        n, t = int(rng.integers(1, 4)), int(rng.integers(2, 7))
        d, v, layers = heads * int(rng.integers(1, 4)), int(rng.integers(5, 30)), int(
            rng.integers(1, 4))
    else:
        heads, n, t, d, v, layers = (2, 2, 4, 4, 7, 1) if k == 0 else (1, 1, 3, 2, 5, 2)
    ids = rng.integers(0, v, size=(n, t))
    mask = (rng.random((n, t)) < 0.4).astype(dt)
    empty = hidden and k == 1
    if empty:
        mask[...] = 0.0
    else:
        mask.flat[int(rng.integers(0, n * t))] = 1.0
    w_emb = rng.normal(scale=0.7, size=(v, d)).astype(dt)
    args: Args = {"input_ids": ids, "mask_indicator": mask, "w_emb": w_emb,
                  "pos_embed": rng.normal(scale=0.5, size=(t, d)).astype(dt),
                  "blocks_weights": rng.normal(scale=1.2 / np.sqrt(d),
                                               size=(layers, 6, d, d)).astype(dt)}
    if not params.get("tied"):
        args["w_head"] = rng.normal(scale=0.7, size=(d, v)).astype(dt)
    args["num_heads"] = heads
    return args, _label(dt, f"{layers} block{'s' * (layers > 1)}, {heads} head"
                            f"{'s' * (heads > 1)}", "M=0" if empty else "")


@generator("cbow")
def gen_cbow(rng, k, hidden, params):
    """CBOW batch whose contexts repeat ids (within a window and across the batch)."""
    dt = _float(k, hidden)
    if hidden:
        b, c, v, d = (int(rng.integers(1, 6)), int(rng.integers(2, 7)), int(rng.integers(8, 40)),
                      int(rng.integers(2, 9)))
    else:
        b, c, v, d = (2, 2, 6, 3) if k == 0 else (1, 4, 8, 2)
    context = rng.integers(0, v, size=(b, c))
    context[0, 1] = context[0, 0]           # a repeat inside one window
    context[-1, -1] = context[0, 0]         # and across the batch
    args = {"context_ids": context, "target_ids": rng.integers(0, v, size=b),
            "w_in": rng.normal(size=(v, d)).astype(dt),
            "w_out": rng.normal(size=(v, d)).astype(dt)}
    return args, _label(dt, "repeated ids")


@generator("matrix")
def gen_matrix(rng, k, hidden, params):
    """Matrices for effective rank: full rank, low rank, and diagonal with exact zeros."""
    dt = _float(k, hidden)
    if not hidden:
        mats = [np.diag([3.0, 1.0, 1.0]), rng.normal(size=(4, 3))]
        return {"A": mats[k % 2].astype(dt)}, _label(dt)
    m, n = int(rng.integers(2, 30)), int(rng.integers(2, 30))
    kind = ["full", "low rank", "zeros", "orthonormal"][k % 4]
    if kind == "full":
        A = rng.normal(size=(m, n))
    elif kind == "low rank":
        r = int(rng.integers(1, min(m, n) + 1))
        A = rng.normal(size=(m, r)) @ rng.normal(size=(r, n))
    elif kind == "zeros":  # exact zero singular values: 0 * log 0 must count as 0
        A = np.diag(np.concatenate([rng.uniform(0.5, 3, size=3), np.zeros(3)]))
    else:
        A = np.linalg.qr(rng.normal(size=(max(m, n), min(m, n))))[0]
    return {"A": A.astype(dt)}, _label(dt, kind)


def make_cases(generator_name: str, seed: int, examples: int = 2, hidden: int = 6,
               params: dict | None = None) -> list[Case]:
    """Visible examples (fixed seed) followed by hidden cases drawn from ``seed``."""
    if generator_name not in GENERATORS:
        raise ValueError(f"unknown case generator {generator_name!r}; "
                         f"known: {', '.join(sorted(GENERATORS))}")
    gen, params = GENERATORS[generator_name], params or {}
    cases = []
    for k in range(examples):
        args, label = gen(np.random.default_rng([EXAMPLE_SEED, k]), k, False, params)
        cases.append(Case(f"example {k + 1}", False, label, args))
    rng = np.random.default_rng(seed)
    for k in range(hidden):
        args, label = gen(rng, k, True, params)
        cases.append(Case(f"hidden {k + 1}", True, label, args))
    return cases
