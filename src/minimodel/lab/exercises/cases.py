"""Test-case generation for the judge: one hidden case per *kind*, on every seed.

Every exercise names a generator in ``exercise.yaml`` (``cases.generator``) and lists its
clauses, each tested by some kinds of case. A generator declares its kinds and builds one
case of a given kind: ``gen(rng, kind, params) -> args`` (NumPy arrays or Python scalars, keyed
by argument name; a missing optional argument is simply absent). The hidden cases are exactly
one case of each kind, with sizes and values drawn from the seed the judge prints — so every
seed tests every clause, and any failure is reproducible with ``--seed``. The visible cases
("visible 1", ...; "example" kind) use a fixed seed so a learner always sees the same ones;
they are not the statement's example (a doctest checked by ``lab validate``).

After them the judge repeats one hidden case, in the same process, with new values at the same
sizes (:func:`with_new_values`): a function that answers from what it saw before (a cache keyed
by the inputs' shapes and dtypes) and ignores the values fails there.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

EXAMPLE_SEED = 20240501  # fixed: visible examples never change between runs

Args = dict[str, Any]
Builder = Callable[[np.random.Generator, str, dict], Args]


@dataclass(frozen=True)
class CaseGenerator:
    build: Builder
    kinds: tuple[str, ...]  # hidden kinds, each produced once per seed


GENERATORS: dict[str, CaseGenerator] = {}


@dataclass
class Case:
    """One call of the learner's function."""

    name: str
    hidden: bool
    label: str
    args: Args
    kind: str = "example"
    repeats: str | None = None  # the name of the case this one repeats with new values
    # the optional arguments passed by keyword (``ignore_index=3``), the others by position
    keywords: tuple[str, ...] = ()
    # what the draws that choose sizes, ids and positions returned (see with_new_values)
    draws: list = field(default_factory=list, repr=False)

    def call(self, fn: Callable[..., Any], values: dict[str, Any] | None = None) -> Any:
        """``fn`` called as the judge calls it: the case's arguments (or ``values``, by the
        same names) by position, those in ``keywords`` by name."""
        values = self.args if values is None else values
        return fn(*[values[k] for k in self.args if k not in self.keywords],
                  **{k: values[k] for k in self.keywords})

    def describe_inputs(self) -> dict[str, str]:
        """``{"x": "float32 (2, 3)", "num_heads": "2"}`` for reports."""
        out = {}
        for key, value in self.args.items():
            if isinstance(value, np.ndarray):
                out[key] = f"{value.dtype} {tuple(value.shape)}"
            else:
                out[key] = repr(value)
        return out


def generator(name: str, kinds: tuple[str, ...]) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        GENERATORS[name] = CaseGenerator(fn, kinds)
        return fn
    return deco


def _dtype(kind: str):
    return np.float32 if "float32" in kind else np.float64


def _ints(rng: np.random.Generator, low: int, high: int) -> int:
    return int(rng.integers(low, high))


# ----------------------------------------------------------------------------- embeddings
@generator("embedding", ("float64", "float32", "repeats", "order", "small ids"))
def gen_embedding(rng, kind, params):
    """ids (N, T), E (V, d). "repeats": one id everywhere; "order": N, T >= 2 so row-major and
    column-major orders differ; "small ids": every id < V - 1 (the one-hot width is still V),
    one row (so the flattening order cannot matter there). Every other case holds the id
    V - 1, so only "small ids" tells a width taken from the ids."""
    n, t, v, d = (2, 3, 5, 4) if kind == "example" else (
        _ints(rng, 2, 5), _ints(rng, 2, 9), _ints(rng, 4, 40), _ints(rng, 1, 17))
    ids = rng.integers(0, v, size=(n, t))
    ids.flat[-1] = ids.flat[0]  # at least one repeated id
    ids.flat[1] = v - 1
    if kind == "repeats":
        ids[...] = v - 1
    if kind == "small ids":
        ids = rng.integers(0, v - 2, size=(1, t))
    E = rng.normal(size=(v, d)).astype(_dtype(kind))
    return {"ids": ids, "E": E}


ONEHOT_ONLY = ("NaN in an unused row of E", "inf in a used row of E", "a column sum overflows")


@generator("embedding_onehot", (*GENERATORS["embedding"].kinds, *ONEHOT_ONLY))
def gen_embedding_onehot(rng, kind, params):
    """The embedding cases, and three where the product onehot @ E differs from a gather, or
    from a gather plus something computed from E's columns (``E[ids] + 0 * E.sum(0)``):

    * "NaN in an unused row of E": one NaN at E[V - 1, j], a row no id selects. The product
      multiplies it by 0 for every position, and 0 * NaN = NaN, so column j of every output
      is NaN; E[ids] never reads the row and stays finite.
    * "inf in a used row of E": E[V - 1, j] = inf, a row position [0, 1] selects, while
      position [0, 0] selects row 0. The product gives 1 * inf = inf where row V - 1 is
      selected and 0 * inf = NaN elsewhere in column j; a gather is finite there, and a column
      sum times 0 is NaN everywhere, inf nowhere.
    * "a column sum overflows": column j holds values between half the largest float64 and
      the largest, in every row. Each output picks one of them (1 * x + 0 * the others: finite),
      while the column's sum is inf, and 0 * inf = NaN."""
    if kind not in ONEHOT_ONLY:
        return gen_embedding(rng, kind, params)
    args = gen_embedding(rng, "float64", params)
    v, d = args["E"].shape
    j = int(rng.integers(0, d))
    if kind == "NaN in an unused row of E":
        args["ids"] = rng.integers(0, v - 1, size=args["ids"].shape)   # (N, T), never V - 1
        args["E"][v - 1, j] = np.nan
    elif kind == "inf in a used row of E":
        args["ids"].flat[0] = 0          # [0, 0] selects row 0, [0, 1] selects row V - 1
        args["E"][v - 1, j] = np.inf
    else:
        args["E"][:, j] = rng.uniform(0.5, 1.0, size=v) * np.finfo(np.float64).max
    return args


@generator("tied_head", ("float64", "float32", "V > d", "V < d", "d=1"))
def gen_tied_head(rng, kind, params):
    """h (N, T, d), E (V, d) with V != d so transposes cannot hide. "d=1": one feature, where
    a 1/sqrt(d) scale changes nothing (the case of the tying itself)."""
    n, t = (1, 2) if kind == "example" else (_ints(rng, 1, 4), _ints(rng, 2, 7))
    d, v = (3, 5) if kind == "example" else (_ints(rng, 2, 12), _ints(rng, 13, 50))
    if kind == "V < d":
        d, v = _ints(rng, 20, 40), _ints(rng, 3, 12)
    if kind == "d=1":
        d = 1
    dt = _dtype(kind)
    return {"h": rng.normal(size=(n, t, d)).astype(dt),
            "E": rng.normal(scale=0.5, size=(v, d)).astype(dt)}


# ----------------------------------------------------------------------------- activations
@generator("elementwise", ("float64", "float32", "large values", "0-d", "3-d", "4-d"))
def gen_elementwise(rng, kind, params):
    """x of any shape, values across GELU's range; "large values" reach |x| = 30 (where a
    tanh written with exp overflows); "0-d" is a single number; "3-d" and "4-d" any shape."""
    if kind == "example":
        return {"x": np.linspace(-3, 3, 7)}
    shape = {"0-d": (), "3-d": tuple(rng.integers(1, 5, size=3)),
             "4-d": tuple(rng.integers(1, 4, size=4))}.get(
        kind, tuple(rng.integers(1, 7, size=_ints(rng, 1, 3))))
    x = rng.normal(scale=3.0, size=shape)
    if kind == "large values":
        x = np.concatenate([x.ravel(), [-30.0, -12.0, 12.0, 30.0, 0.0]])
    return {"x": np.asarray(x, dtype=_dtype(kind))}


@generator("layer_norm", ("float64", "float32", "1-d", "4-d", "affine", "weight only",
                          "bias only", "tiny variance", "eps", "default eps", "float32 eps",
                          "float32 default eps"))
def gen_layer_norm(rng, kind, params):
    """x (..., d). "affine": weight and bias; "weight only"/"bias only": one of them;
    "tiny variance": rows whose variance (~1e-6) is comparable to eps; "eps": eps = 0.1;
    "default eps": rows of variance ~3e-6 and no eps argument, so the function's own default
    decides (1e-5; BERT's 1e-12 is off by about 1 there); "1-d": one vector (d,), "4-d":
    (A, B, C, d). Every other case passes eps. float32 sees every optional argument away
    from its default too: "float32 eps" passes weight, bias and eps = 0.1, "float32 default
    eps" is "default eps" in float32 (rows of mean 0, which float32 holds to 1e-7 of their
    spread): a function that treats float32 apart (another eps for it) fails there."""
    leading = {"1-d": 0, "4-d": 3}.get(kind, _ints(rng, 0, 3))
    shape = (2, 4) if kind == "example" else tuple(rng.integers(1, 5, size=leading)) \
        + (_ints(rng, 2, 33),)
    dt = _dtype(kind)
    x = rng.normal(size=shape) * 3 + 1
    if kind == "tiny variance":
        x = rng.normal(size=shape) * 1e-3 + 5
    if kind == "default eps":
        x = rng.normal(size=shape) * np.sqrt(3e-6) + 5
    if kind == "float32 default eps":
        x = rng.normal(size=shape) * np.sqrt(3e-6)
    args: Args = {"x": x.astype(dt)}
    d = shape[-1]
    if kind in ("affine", "weight only", "float32 eps"):
        args["weight"] = rng.normal(size=d).astype(dt)
    if kind in ("affine", "bias only", "float32 eps"):
        args["bias"] = rng.normal(size=d).astype(dt)
    if "default eps" not in kind:  # explicit, so a wrong default fails only its own clause
        args["eps"] = 0.1 if kind in ("eps", "float32 eps") else 1e-5
    return args


# ----------------------------------------------------------------------------- losses
@generator("cross_entropy", ("float64", "float32", "ignored positions", "ignore_index",
                             "large logits", "mixed scales", "3-d", "1-d", "4-d",
                             "default ignore_index", "logits near 5e4 past long double",
                             "logits near 1e7 past Decimal", "float32 ignore_index"))
def gen_cross_entropy(rng, kind, params):
    """logits (..., V), targets with ignored positions. "large logits": every row near 1e4
    (exp overflows without a max shift), no position ignored; "logits near 5e4 past long
    double": the same near 5e4, where exp overflows even np.longdouble (past about 11356), so
    computing in a wider float is no substitute for the shift; "logits near 1e7 past
    Decimal": the same near 1e7, past what Python's decimal holds in its default context
    (exp overflows past about 2.3e6), so arbitrary-precision numbers are no substitute
    either (float64 with the shift is exact there: the differences stay small); "mixed scales": one row near +1e3 and one near
    -1e3 (a single global max shift underflows the low row); "3-d": (N, T, V), "1-d": one row (V,)
    with a 0-d target, "4-d": (N, T, U, V), none ignored; "ignore_index": a custom index;
    "default ignore_index": targets with -100 and no ignore_index argument (the default);
    "float32 ignore_index": "ignore_index" in float32 (float32 sees a custom index too: a
    function that treats float32 apart, -100 for it, fails there)."""
    shape = (4,) if kind == "example" else (_ints(rng, 2, 6),)
    if kind in ("3-d", "4-d"):
        shape = tuple(rng.integers(2, 5, size=int(kind[0]) - 1))
    if kind == "1-d":
        shape = ()
    v = 5 if kind == "example" else _ints(rng, 3, 30)
    logits = rng.normal(size=(*shape, v)) * 2.0
    if kind == "large logits":  # every row near 1e4: a single global shift would do here
        logits += 1e4
    if kind == "logits near 5e4 past long double":  # exp(5e4) is inf in every float
        logits += 5e4
    if kind == "logits near 1e7 past Decimal":  # exp(1e7) overflows decimal's default context
        logits += 1e7
    if kind == "mixed scales":
        logits.reshape(-1, v)[0] += 1000.0
        logits.reshape(-1, v)[-1] -= 1000.0
    targets = rng.integers(0, v, size=shape)
    ignore = -100
    if kind in ("ignore_index", "float32 ignore_index"):
        ignore = int(rng.integers(0, v))  # a real class id, used as the ignore marker
        targets.flat[:] = np.where(targets.flat == ignore, (ignore + 1) % v, targets.flat)
        targets.flat[1] = ignore
    elif kind not in ("mixed scales", "large logits", "3-d", "1-d", "4-d",
                      "logits near 5e4 past long double", "logits near 1e7 past Decimal"):
        # those ignore no position
        targets[rng.random(shape) < 0.4] = -100
        if kind == "ignored positions" or kind == "example":
            targets.flat[-1] = -100
    targets.flat[0] = (ignore + 1) % v if ignore >= 0 else targets.flat[0] % v  # one kept
    if kind == "default ignore_index":
        targets.flat[-1] = -100  # at least one position the default must skip
        return {"logits": logits.astype(_dtype(kind)), "targets": targets}
    return {"logits": logits.astype(_dtype(kind)), "targets": targets, "ignore_index": ignore}


# ----------------------------------------------------------------------------- attention
def _attention_sizes(rng, kind):
    heads = 2 if kind == "example" else int(rng.choice([1, 2, 4]))
    if kind in ("heads", "zero-query heads"):
        heads = int(rng.choice([2, 4]))
    n, t = (1, 3) if kind == "example" else (_ints(rng, 1, 4), _ints(rng, 2, 8))
    # d_head >= 2: with one feature per head, sqrt(d_head) = 1 and a missing scale would hide
    return heads, n, t, heads * (2 if kind == "example" else _ints(rng, 2, 5))


@generator("attention", ("float64", "float32", "heads", "large scores", "T=1", "one head",
                         "zero queries", "zero-query heads"))
def gen_attention(rng, kind, params):
    """x (N, T, d) and four (d, d) weights. "heads": H >= 2, so head order matters; "large
    scores": scores of order 1e3 (the softmax must subtract the row max); "T=1": one position;
    "one head": H = 1, T >= 2 (the head split cannot matter, the scale does); "zero queries":
    H = 1 and w_q = 0, so every score is 0 and only a mask changes the (uniform) weights;
    "zero-query heads": H >= 2, T >= 2 and w_q = 0: the weights are uniform whatever the
    scale, so only which features and positions each head averages can be wrong (the head
    split, with the scale at its simplest)."""
    heads, n, t, d = _attention_sizes(rng, kind)
    if kind == "T=1":
        t = 1
    if kind in ("one head", "zero queries"):
        heads, d = 1, _ints(rng, 2, 9)
    scale = 60.0 if kind == "large scores" else 1.5
    w = rng.normal(scale=scale / np.sqrt(d), size=(4, d, d))
    if kind in ("zero queries", "zero-query heads"):
        w[0] = 0.0
    dt = _dtype(kind)
    x = rng.normal(size=(n, t, d)) * (4.0 if kind == "large scores" else 1.0)
    return {"x": x.astype(dt), "w_q": w[0].astype(dt), "w_k": w[1].astype(dt),
            "w_v": w[2].astype(dt), "w_o": w[3].astype(dt), "num_heads": heads}


# The MLM's cases whose attention scores no float (5e4) or decimal (1e7) can exp without the
# row-max shift: kind -> the std of w_q and w_k.
HUGE_SCORES = {"scores near 5e4 past long double": 80.0, "scores near 1e7 past Decimal": 1200.0}


@generator("mlm", ("float64", "float32", "heads", "mask at 0.5", "mask above 0.5",
                   "no masked rows", "several blocks", "large scores", "one position",
                   "zero blocks", "normalised output", "scores near 5e4 past long double",
                   "scores near 1e7 past Decimal"))
def gen_mlm(rng, kind, params):
    """The seed pipeline's inputs; params.tied drops w_head. "no masked rows": M = 0;
    "several blocks": L = 3; "large scores": float32 block weights of std 4, so attention
    scores reach the hundreds and a softmax without the row-max shift overflows to NaN;
    "scores near 5e4 past long double": float64, w_q and w_k of std 80, so the scores reach
    tens of thousands and exp overflows even np.longdouble (past about 11356) and float64
    inside: computing in a wider float is no substitute for the shift; "scores near 1e7 past
    Decimal": the same with w_q and w_k of std 1200, so the scores reach about 1e7, past what
    Python's decimal holds in its default context (exp overflows past about 2.3e6):
    arbitrary-precision numbers are no substitute either. "float32": d >= 8, so the
    feed-forward's GELU sees many inputs and another GELU (the erf form, off by up to 5e-4)
    moves the logits by tens of times float32's rounding (with d = 2 every LayerNorm'd row
    is +-1 and the GELU's inputs are few).
    "mask at 0.5": indicators 0, 0.5 and 1 only (0.5 is not selected; no value strictly
    between 0.5 and 1); "mask above 0.5": 0, 0.3, 0.7 and 1 (no 0.5). Cases that hold other
    clauses at their simplest: "heads": H >= 2, one block whose feed-forward adds 0 (w_mlp2
    = 0, so the GELU cannot matter), the first position of every row selected (under a causal
    mask it would see only itself); "one position": T = 1, one block, feed-forward adding 0,
    every row selected (attention over one position: no mask or scale can matter, nor a
    missing block or the GELU); "zero blocks": every block weight 0, so every block adds 0
    and the hidden state is the embeddings (only the head, and a LayerNorm outside the
    blocks, can matter); "normalised output": see :func:`_normalised_output`."""
    heads, n, t, d = _attention_sizes(rng, kind)
    t = 1 if kind in ("one position", "normalised output") else t
    if kind == "normalised output":  # d >= 4: with d = 2, P x = -x and post-LN would pass
        d = max(d, 4 * heads)
    if kind == "float32":  # d >= 8: enough GELU inputs that its form shows (docstring)
        d = heads * max(d // heads, 8 // heads)
    v = 7 if kind == "example" else _ints(rng, 5, 30)
    layers = 3 if kind == "several blocks" else (
        1 if kind in ("example", "one position", "heads", "normalised output")
        else _ints(rng, 1, 3))
    dt = _dtype(kind)
    ids = rng.integers(0, v, size=(n, t))
    mask = (rng.random((n, t)) < 0.4).astype(dt)
    if kind == "mask at 0.5":
        mask = rng.choice(np.array([0.0, 0.5, 1.0]), size=(n, t)).astype(dt)
        mask.flat[0], mask.flat[-1] = 0.5, 1.0
    if kind == "mask above 0.5":
        mask = rng.choice(np.array([0.0, 0.3, 0.7, 1.0]), size=(n, t)).astype(dt)
        mask.flat[0], mask.flat[-1] = 0.7, 0.3
    if kind == "no masked rows":
        mask[...] = 0.0
    elif kind in ("one position", "normalised output"):
        mask[...] = 1.0
    elif kind == "heads":
        mask[:, 0] = 1.0
    elif not (mask > 0.5).any():
        mask.flat[int(rng.integers(0, n * t))] = 1.0
    block_std = 4.0 if kind == "large scores" else 1.2 / np.sqrt(d)
    if kind == "large scores":  # d >= 8, T >= 4: scores of std ~16 d, far past exp's 88.7
        dt, t, d = np.float32, max(t, 4), heads * max(d // heads, 8 // heads)
        ids = rng.integers(0, v, size=(n, t))
        mask = np.ones((n, t), dtype=dt)  # every row is returned: none can hide a NaN
    huge = HUGE_SCORES.get(kind)  # the std of w_q and w_k
    if huge:  # one block, every row returned; scores of std about huge^2 d (docstring)
        layers, t, d = 1, max(t, 4), heads * max(d // heads, 8 // heads)
        ids = rng.integers(0, v, size=(n, t))
        mask = np.ones((n, t), dtype=dt)
    w_emb = rng.normal(scale=0.7, size=(v, d))
    pos_embed = rng.normal(scale=0.5, size=(t, d))
    blocks = rng.normal(scale=block_std, size=(layers, 6, d, d))   # [w_q, w_k, w_v, w_o,
    if huge:
        blocks[:, :2] *= huge / block_std
    if kind in ("heads", "one position"):                           #  w_mlp1, w_mlp2]
        blocks[:, 5] = 0.0          # w_mlp2 = 0: the feed-forward adds 0
    if kind == "zero blocks":
        blocks[...] = 0.0
    if kind == "normalised output":
        w_emb, pos_embed, blocks = _normalised_output(w_emb, blocks)
    args: Args = {"input_ids": ids, "mask_indicator": mask, "w_emb": w_emb.astype(dt),
                  "pos_embed": pos_embed.astype(dt), "blocks_weights": blocks.astype(dt)}
    if not params.get("tied"):
        args["w_head"] = rng.normal(scale=0.7, size=(d, v)).astype(dt)
    args["num_heads"] = heads
    return args


def _normalised_output(w_emb, blocks, var=4.0, eps=1e-5):
    """Inputs (T = 1, one block) whose pre-LN hidden state comes out already LayerNorm'd, so
    a final LayerNorm changes nothing while post-LN blocks do.

    Every embedding row x has mean 0 and variance ``var`` (no position embedding), so
    LN(x) = u = x / sqrt(var + eps). Over one position attention returns u @ w_v @ w_o; with
    w_o = I and w_v = beta P - sqrt(var + eps) I (P a cyclic shift of the features) the
    residual gives x + u w_v = beta u P, whose variance beta^2 var / (var + eps) is 1 - eps
    for beta = sqrt((1 - eps)(var + eps) / var): LN(beta u P) = beta u P. w_mlp2 = 0, so the
    feed-forward adds 0. A post-LN block instead returns LN(x + x w_v), a normalised
    x (beta P - (sqrt(var + eps) - 1) I), which is not beta u P."""
    w_emb = w_emb - w_emb.mean(axis=1, keepdims=True)                  # (V, d), rows of mean 0
    w_emb = w_emb * np.sqrt(var / w_emb.var(axis=1, keepdims=True))    # and variance var
    d = w_emb.shape[1]
    beta = np.sqrt((1 - eps) * (var + eps) / var)
    shift = np.roll(np.eye(d), 1, axis=1)                              # (d, d) permutation P
    blocks = blocks.copy()
    blocks[0, 2] = beta * shift - np.sqrt(var + eps) * np.eye(d)       # w_v
    blocks[0, 3] = np.eye(d)                                           # w_o
    blocks[0, 5] = 0.0                                                 # w_mlp2
    return w_emb, np.zeros((1, d)), blocks


# ----------------------------------------------------------------------------- word vectors
@generator("cbow", ("float64", "float32", "repeats", "batch", "wide window"))
def gen_cbow(rng, kind, params):
    """CBOW batch. "repeats": one window holding an id twice; "batch": B >= 3 (mean over the
    batch), distinct ids; "wide window": one window of C >= 4 distinct ids (mean over the
    context); the general float64/float32 cases repeat ids within a window and across the
    batch."""
    if kind == "example":
        b, c, v, d = 2, 2, 6, 3
    else:
        b, c, v, d = _ints(rng, 1, 6), _ints(rng, 2, 7), _ints(rng, 8, 40), _ints(rng, 2, 9)
    if kind == "batch":
        b = _ints(rng, 3, 7)
    if kind in ("wide window", "repeats"):  # one window: a sum over the batch is the mean
        b = 1
    if kind == "wide window":
        c = _ints(rng, 4, 9)
    v = max(v, b * c + 1)
    # distinct ids, except where repeats are the point: a dropped repeat fails only there
    context = rng.permutation(v)[:b * c].reshape(b, c)
    if kind in ("example", "repeats", "float64", "float32"):
        context[0, 1] = context[0, 0]       # a repeat inside one window
        context[-1, -1] = context[0, 0]     # and across the batch
    dt = _dtype(kind)
    return {"context_ids": context, "target_ids": rng.integers(0, v, size=b),
            "w_in": rng.normal(size=(v, d)).astype(dt),
            "w_out": rng.normal(size=(v, d)).astype(dt)}


@generator("matrix", ("float64", "float32", "low rank", "exact zeros", "orthonormal",
                      "one direction"))
def gen_matrix(rng, kind, params):
    """Matrices for effective rank: full rank, low rank, diagonal with exact zero singular
    values (0 log 0 must count as 0), orthonormal columns (erank = min(m, n)); "one
    direction": singular values 1 and 1e-12 (every other), so the effective rank is 1 to
    within 1e-9 whether s or s**2 is normalised, while the integer rank is full."""
    if kind == "example":
        return {"A": np.diag([3.0, 1.0, 1.0])}
    m, n = _ints(rng, 2, 30), _ints(rng, 2, 30)
    if kind == "low rank":
        r = _ints(rng, 2, min(m, n) + 1)  # r = 1 would make the effective rank exactly 1
        A = rng.normal(size=(m, r)) @ rng.normal(size=(r, n))
    elif kind == "exact zeros":
        A = np.diag(np.concatenate([rng.uniform(0.5, 3, size=3), np.zeros(3)]))
    elif kind == "orthonormal":
        A = np.linalg.qr(rng.normal(size=(max(m, n), min(m, n))))[0]
    elif kind == "one direction":
        k = min(m, n)
        s = np.full(k, 1e-12)
        s[0] = 1.0                                          # (k,): one direction carries all
        u = np.linalg.qr(rng.normal(size=(m, k)))[0]        # (m, k) orthonormal columns
        v = np.linalg.qr(rng.normal(size=(n, k)))[0]        # (n, k)
        A = (u * s) @ v.T                                   # (m, n) = U diag(s) V^T
    else:
        A = rng.normal(size=(m, n))
    return {"A": A.astype(_dtype(kind))}


# ----------------------------------------------------------------------------- cases
def _label(kind: str, args: Args) -> str:
    floats = [v.dtype.name for v in args.values() if isinstance(v, np.ndarray)
              and v.dtype.kind == "f"]
    dtype = floats[0] if floats else ""
    kind = kind.removeprefix(f"{dtype} ")   # "float32 eps" reads "float32, eps"
    return ", ".join(p for p in (dtype, kind if kind not in ("example", dtype) else "") if p)


def generator_kinds(generator_name: str) -> tuple[str, ...]:
    return _get(generator_name).kinds


def _get(name: str) -> CaseGenerator:
    if name not in GENERATORS:
        raise ValueError(f"unknown case generator {name!r}; known: "
                         f"{', '.join(sorted(GENERATORS))}")
    return GENERATORS[name]


def make_cases(generator_name: str, seed: int, examples: int = 2,
               params: dict | None = None) -> list[Case]:
    """Visible cases (fixed seed) followed by one hidden case of every kind (``seed``)."""
    gen, params = _get(generator_name), params or {}
    cases = []
    for k in range(examples):
        args = gen.build(np.random.default_rng([EXAMPLE_SEED, k]), "example" if k == 0
                         else gen.kinds[0], params)
        # "visible", not "example": the statement's own example is another call, and a pass
        # here must not read as "the statement's example passed"
        cases.append(Case(f"visible {k + 1}", False, _label("example", args), args))
    rng = np.random.default_rng(seed)
    for k, kind in enumerate(gen.kinds):
        recording = _Recording(rng)  # draws exactly as rng does, and keeps the structure ones
        args = gen.build(recording, kind, params)
        cases.append(Case(f"hidden {k + 1}", True, _label(kind, args), args, kind,
                          draws=recording.draws))
    return cases


# ----------------------------------------------------------------------------- new values
# The draws that choose sizes, ids, positions and patterns (which rows are masked or ignored);
# the others (normal, standard_normal, uniform) draw the values.
STRUCTURE_DRAWS = ("integers", "choice", "permutation", "random")
REPEAT_KIND = "repeated with new values"
REPEAT_SALT = 7  # the new values' stream: np.random.default_rng([seed, REPEAT_SALT])


class _Recording:
    """``rng`` itself, remembering what each structure draw returned, in order."""

    def __init__(self, rng: np.random.Generator):
        self._rng, self.draws = rng, []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._rng, name)
        if name not in STRUCTURE_DRAWS:
            return method

        def draw(*args: Any, **kwargs: Any) -> Any:
            out = method(*args, **kwargs)
            self.draws.append((name, repr((args, kwargs)), copy.deepcopy(out)))
            return out
        return draw


class _Diverged(Exception):
    """A replayed build asked for another structure draw than the recorded one."""


class _Replaying:
    """The recorded structure draws given back in order; the values drawn from ``rng``."""

    def __init__(self, draws: list, rng: np.random.Generator):
        self.left, self._rng = list(draws), rng

    def __getattr__(self, name: str) -> Any:
        if name not in STRUCTURE_DRAWS:
            return getattr(self._rng, name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            if not self.left or self.left[0][:2] != (name, repr((args, kwargs))):
                raise _Diverged(name)
            return copy.deepcopy(self.left.pop(0)[2])
        return draw


def with_new_values(generator_name: str, case: Case, seed: int, name: str,
                    params: dict | None = None) -> Case | None:
    """The hidden ``case`` again with new values at the same sizes, or None when its
    generator cannot give one (its draws went another way).

    The case is built again by its own generator and kind, with every structure draw
    (:data:`STRUCTURE_DRAWS`: sizes, ids, positions, masks) given back as it was, and every
    value drawn anew from ``default_rng([seed, REPEAT_SALT])``: the inputs stay valid as the
    generator makes them (an id stays an id below V, a mask a mask, a special value in its
    place). Then the entries of every integer array are shuffled (ids stay ids in range), so an
    exercise whose inputs are all ids gets new inputs too. Same arguments, shapes and dtypes
    as ``case``; the judge keeps the repeat only if the earlier case's answer is wrong for it.
    """
    rng = np.random.default_rng([seed, REPEAT_SALT])
    replay = _Replaying(case.draws, rng)
    try:
        args = _get(generator_name).build(replay, case.kind, params or {})
    except _Diverged:
        return None
    if replay.left:  # a recorded draw was never asked for
        return None
    args = {key: rng.permuted(value.reshape(-1)).reshape(value.shape)
            if isinstance(value, np.ndarray) and value.dtype.kind in "iu" else value
            for key, value in args.items()}
    if not all(_same_layout(value, case.args.get(key, value)) for key, value in args.items()):
        return None
    return Case(name, True, f"{case.label}, {REPEAT_KIND}", args, REPEAT_KIND, repeats=case.name,
                keywords=case.keywords)


def _same_layout(a: Any, b: Any) -> bool:
    """Both arrays of one shape and dtype, or both values of one Python type."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and a.dtype == b.dtype)
    return type(a) is type(b)
