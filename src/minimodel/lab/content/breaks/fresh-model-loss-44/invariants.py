"""Invariants behind `fresh-model-loss-44`: a tied E is also the output layer, so it starts small.

An embedding's rows start N(0, 0.02) (GPT-2's choice, ``EMBEDDING_INIT_STD``) in every model,
tied or untied, and nothing rescales the table afterwards; then the logits h @ E.T of a fresh
tied model start near 0 and its loss near ln V, whatever V, d (up to 384) or model, on the
training path (with targets) and the evaluation path (logits only). The head computes exactly
h @ E.T: scaling the logits would hide a bad initialisation, not fix it.

Sizes are drawn afresh on every run (``checks.seed``), widths as multiples of 4 (the
experiment's d = 172 is not a multiple of 16); the experiment's own GPT (V = 512, T = 32, 2
blocks of 4 heads, d = 172) is one more case of the loss check. Run by `minimodel break check`;
`break run` reads the same checks.
"""

import math

import numpy as np

from minimodel_break_harness import (WIDE_VOCAB, CheckFailed, Checks, es_num, use_workspace,
                                     wide_widths)

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import (CBOW, CBOWConfig, GPT, GPTConfig, MaskedLM,  # noqa: E402
                              MLMConfig)

checks = Checks()
rng = np.random.default_rng(checks.seed)
STD = 0.02  # GPT-2's embedding init, the library's documented default
TOLERANCE = 0.25  # |fresh loss - ln V|: about 10x the gap a correct init leaves at d = 128


# experiment.py's GPT: V = 512, T = 32, 2 blocks of 4 heads, d = 172 (not a multiple of 16).
EXPERIMENT = GPTConfig(512, 32, 2, 4, 172)


def fresh(kind: str, V: int, d: int, layers: int = 2):
    if kind == "experiment":
        return GPT(EXPERIMENT, rng=rng)
    if kind in ("GPT", "GPT (untied)"):
        return GPT(GPTConfig(V, 16, layers, 4, d, tie_embeddings=kind == "GPT"), rng=rng)
    if kind == "MaskedLM":
        return MaskedLM(MLMConfig(V, 16, 1, 4, d), rng=rng)
    return CBOW(CBOWConfig(V, d, window=2, tie_embeddings=True), rng=rng)


def data(kind: str, V: int):
    if kind == "CBOW":
        return rng.integers(0, V, size=(128, 4)), rng.integers(0, V, size=128)
    T = EXPERIMENT.block_size if kind == "experiment" else 16
    return rng.integers(0, V, size=(8, T)), rng.integers(0, V, size=(8, T))


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    z = logits.reshape(-1, logits.shape[-1]).astype(np.float64)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(z)), targets.reshape(-1)].mean())


def sizes() -> tuple[int, int]:
    return int(rng.integers(50, 2000)), 4 * int(rng.integers(4, 33))  # d in 16..128, 4 heads


def wide_sizes(widest: int = 1024) -> tuple[int, int]:
    """A small V with a width from 320 to ``widest`` (GPT-2 small's 768 inside by default): an
    init that is right only below some width meets one above it. (V is small to keep the
    check quick.) The loss check stops at 512: a correct std-0.02 tied head gives logits of
    variance 0.02^2 d against unit-variance h, which raises the fresh loss by about half that,
    0.1 at d = 512 and 0.2 at d = 1024, too close to the 0.25 tolerance; the std check has no
    such limit."""
    return int(rng.integers(50, 200)), 16 * int(rng.integers(20, widest // 16 + 1))


@checks.case("fresh-loss-near-ln-v",
             "a fresh tied GPT (twice: random sizes, and a small V with d of 320 to 512), "
             "MaskedLM, CBOW and the experiment's GPT (V = 512, d = 172) start within 0.25 of "
             "ln V, with targets (training) and from the logits alone (evaluation)",
             "un GPT atado recién creado (dos veces: tamaños aleatorios, y V pequeño con d entre "
             "320 y 512), un MaskedLM, un CBOW y el GPT del experimento (V = 512, d = 172) "
             "empiezan a menos de 0,25 de ln V, con objetivos (entrenamiento) y desde los logits "
             "(evaluación)")
def _():
    for kind, (V, d), layers in (("GPT", sizes(), 2), ("GPT", wide_sizes(512), 1),
                                 ("MaskedLM", sizes(), 2), ("CBOW", sizes(), 2),
                                 ("experiment", (EXPERIMENT.vocab_size, EXPERIMENT.d_model), 2)):
        model = fresh(kind, V, d, layers)
        x, y = data(kind, V)
        with mm.no_grad():
            train_loss = float(model.loss(x, y).data)
            eval_loss = cross_entropy(model(x)[0].data, y)
        for path, loss in (("training", train_loss), ("evaluation", eval_loss)):
            if not abs(loss - math.log(V)) < TOLERANCE:
                raise CheckFailed(f"{kind} (V={V}, d={d}), {path}: fresh loss {loss:.2f}, "
                                  f"expected within {TOLERANCE} of ln V = {math.log(V):.2f}",
                                  f"{kind} (V={V}, d={d}), "
                                  f"{'entrenamiento' if path == 'training' else 'evaluación'}: "
                                  f"pérdida inicial {es_num(loss, '.2f')}, se esperaba a menos de "
                                  f"{es_num(TOLERANCE, 'g')} de ln V = {es_num(math.log(V), '.2f')}")


@checks.case("default-std",
             "nn.Embedding(V, d) and the token tables of every model, tied or untied, start with "
             "std 0.02 (random V, d; each model also at a width from 320 to 1024; nn.Embedding "
             "and a model also at d = 128 and above 768 with V >= 1024)",
             "nn.Embedding(V, d) y las tablas de tokens de todos los modelos, atados o no, "
             "empiezan con std 0,02 (V, d aleatorios; cada modelo también con una anchura de "
             "320 a 1024; nn.Embedding y un modelo también con d = 128 y más de 768 y "
             "V >= 1024)")
def _():
    V, d = sizes()
    tables = {"nn.Embedding": nn.Embedding(V, d, rng=rng).weight.data}
    kinds = ("GPT", "GPT (untied)", "MaskedLM", "CBOW")
    for d in wide_widths(rng, multiple=4):
        V = int(rng.integers(WIDE_VOCAB, 2049))
        tables[f"nn.Embedding, d={d}"] = nn.Embedding(V, d, rng=rng).weight.data
        kind = kinds[int(rng.integers(len(kinds)))]
        tables[f"{kind}, d={d}"] = fresh(kind, V, d, layers=1).get_input_embeddings().weight.data
    for kind in kinds:
        tables[kind] = fresh(kind, *sizes()).get_input_embeddings().weight.data
        tables[f"{kind}, wide"] = fresh(kind, *wide_sizes(), layers=1) \
            .get_input_embeddings().weight.data
    for what, table in tables.items():
        got = float(table.std())
        if abs(got - STD) > 0.1 * STD:
            raise CheckFailed(f"{what} {table.shape}: std {got:.4f}, expected {STD}",
                              f"{what} {table.shape}: std {es_num(got, '.4f')}, se esperaba "
                              f"{es_num(STD, 'g')}")


@checks.case("logits-are-h-et",
             "a tied model's logits are exactly h @ E.T (no rescaling), and its training loss "
             "is the cross-entropy of those logits (random d, d = 128 and above 768)",
             "los logits de un modelo atado son exactamente h @ E.T (sin reescalar), y su "
             "pérdida de entrenamiento es la entropía cruzada de esos logits (d aleatoria, "
             "d = 128 y más de 768)")
def _():
    for V, d, layers in [sizes() + (2,)] + [(int(rng.integers(WIDE_VOCAB, 2049)), d, 1)
                                            for d in wide_widths(rng, multiple=4)]:
        logits_are_h_et(V, d, layers)


def logits_are_h_et(V: int, d: int, layers: int) -> None:
    """logits-are-h-et for a tied GPT of vocabulary ``V``, width ``d``."""
    model = fresh("GPT", V, d, layers).astype(np.float64)  # float64: no rounding to argue about
    x, y = data("GPT", V)
    with mm.no_grad():
        h = model.hidden_states(x).data
        logits = model(x)[0].data
        train_loss = float(model.loss(x, y).data)
    want = h @ model.token_emb.weight.data.T
    if np.abs(logits - want).max() > 1e-9 * max(np.abs(want).max(), 1e-30):
        ratio = float(np.abs(logits).mean() / max(np.abs(want).mean(), 1e-30))
        raise CheckFailed(f"GPT (d={d}) logits differ from h @ E.T (mean |logits| / mean "
                          f"|h @ E.T| = {ratio:.3g})",
                          f"los logits de GPT (d={d}) difieren de h @ E.T (media |logits| / "
                          f"media |h @ E.T| = {es_num(ratio, '.3g')})")
    if abs(train_loss - cross_entropy(logits, y)) > 1e-3:
        raise CheckFailed(f"the training loss {train_loss:.4f} is not the cross-entropy of the "
                          f"logits {cross_entropy(logits, y):.4f}",
                          f"la pérdida de entrenamiento {es_num(train_loss, '.4f')} no es la "
                          f"entropía "
                          f"cruzada de los logits {es_num(cross_entropy(logits, y), '.4f')}")


@checks.case("explicit-std", "Embedding(V, d, std=s) still honours an explicit std",
             "Embedding(V, d, std=s) sigue respetando una std explícita")
def _():
    for s in (float(rng.uniform(0.3, 2.0)), float(rng.uniform(0.005, 0.05))):
        got = float(nn.Embedding(400, 50, std=s, rng=rng).weight.data.std())
        if abs(got - s) > 0.1 * s:
            raise CheckFailed(f"asked for std={s:.4f}, got {got:.4f}",
                              f"se pidió std={es_num(s, '.4f')}, se obtuvo {es_num(got, '.4f')}")


if __name__ == "__main__":
    checks.finish()
