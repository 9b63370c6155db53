"""Invariants behind `embedding-moves-too-far`: a tied matrix is one object, so it is listed once,
counted once and updated once per optimizer step, whatever the model or the name of the tie;
and an optimizer refuses a parameter passed twice instead of updating it twice.

Models, sizes and hyper-parameters are drawn afresh on every run (``checks.seed``); besides
small models, every check that builds one also builds two of a random kind at the main job's
d = 128 and at a d above 768, with V >= 1024, so a fix gated on the width fails. The
optimizers get their parameters both ways the library passes them: ``model.parameters()``,
and the two groups of ``training.loop.param_groups`` (the trainer and the experiment), and the
experiment's own run (tied GPT V = 64, T = 16, d = 32, 2 heads, AdamW lr 3e-3 on the groups
with weight decay 0.1, float32) is one more case, so a fix that holds for one of them only
fails. Run by
`minimodel break check`; `break run` reads the same checks.
"""

import numpy as np

from minimodel_break_harness import (WIDE_VOCAB, CheckFailed, Checks, allclose, es_num,
                                     use_workspace, wide_widths)

mm = use_workspace()
from minimodel import nn, optim  # noqa: E402
from minimodel.models import (CBOW, CBOWConfig, GPT, GPTConfig, MaskedLM,  # noqa: E402
                              MLMConfig)
from minimodel.training.loop import param_groups  # noqa: E402

checks = Checks()
rng = np.random.default_rng(checks.seed)
KINDS = ("GPT", "MaskedLM", "CBOW")
FLOATS = (np.float32, np.float64)
# One update's tolerance: float32 steps round at ~1e-7 of the weights; a second update moves
# the tied matrix by about lr (AdamW) or lr * |g| (SGD) more.
TOLERANCE = {np.float32: {"rtol": 1e-5, "atol": 1e-7}, np.float64: {"rtol": 1e-9, "atol": 1e-12}}


def dtypes(count: int) -> list:
    """``count`` (>= 2) float dtypes in a random order, float32 and float64 both among them."""
    drawn = [FLOATS[i % 2] for i in range(count)]
    return [drawn[i] for i in rng.permutation(count)]


def wide_vocab() -> int:
    """A vocabulary from 5 to 3000 tokens, log-uniform: a fix that holds only for small (or
    only for large) tables meets both across seeds."""
    return int(np.exp(rng.uniform(np.log(5), np.log(3000))))


def sizes() -> list[tuple[str, int | None, int | None]]:
    """(kind, d, V) of the models a check builds: each kind small (None: drawn by
    :func:`build`), then two of a random kind at d = 128 and at a d above 768, V >= 1024."""
    return [(kind, None, None) for kind in KINDS] + [
        (KINDS[int(rng.integers(len(KINDS)))], d, int(rng.integers(WIDE_VOCAB, 2049)))
        for d in wide_widths(rng, multiple=2)]


def build(kind: str, tied: bool = True, d: int | None = None, V: int | None = None,
          T: int = 8):
    V = wide_vocab() if V is None else V
    d = 4 * int(rng.integers(1, 5)) if d is None else d
    r = np.random.default_rng(int(rng.integers(1 << 30)))
    if kind == "GPT":
        return GPT(GPTConfig(V, T, 1, 2, d, tie_embeddings=tied), rng=r)
    if kind == "MaskedLM":
        return MaskedLM(MLMConfig(V, 8, 1, 2, d, tie_embeddings=tied), rng=r)
    return CBOW(CBOWConfig(V, d, window=2, tie_embeddings=tied), rng=r)


def batch(model, most: int = 32):
    """A batch of 1 to ``most`` sequences (CBOW: 2 to 4 * ``most`` windows)."""
    V = model.config.vocab_size
    if isinstance(model, CBOW):
        rows = int(rng.integers(2, 4 * most + 1))  # batches of 2 to 128 windows
        return rng.integers(0, V, size=(rows, 4)), rng.integers(0, V, size=rows)
    x = rng.integers(0, V, size=(int(rng.integers(1, most + 1)), 8))  # 1 to 32 sequences
    return x, rng.integers(0, V, size=x.shape)


@checks.case("listed-once",
             "parameters() and named_parameters() list a shared Parameter once, under its first "
             "name, in GPT, MaskedLM, CBOW (d up to 16, 128 and above 768) and a module whose "
             "tie has other names",
             "parameters() y named_parameters() listan un Parameter compartido una vez, con su "
             "primer nombre, en GPT, MaskedLM, CBOW (d hasta 16, 128 y más de 768) y un módulo "
             "cuya atadura usa otros nombres")
def _():
    models = {f"{kind} d={model.config.d_model}": model
              for kind, d, V in sizes() for model in [build(kind, d=d, V=V)]}
    k = 4 * int(rng.integers(1, 4))
    square = nn.Module()
    square.first = nn.Linear(k, k, rng=rng)
    square.second = nn.Linear(k, k, rng=rng)
    square.second.weight = square.first.weight  # tied under the names first/second
    models["Module(first, second)"] = square
    for what, model in models.items():
        params = list(model.parameters())
        named = [name for name, _ in model.named_parameters()]
        if len({id(p) for p in params}) != len(params) or len(named) != len(params):
            raise CheckFailed(f"{what}: parameters() has {len(params)} entries for "
                              f"{len({id(p) for p in params})} objects; names {named}",
                              f"{what}: parameters() tiene {len(params)} entradas para "
                              f"{len({id(p) for p in params})} objetos; nombres {named}")
    all_names = [n for n, _ in square.named_parameters(remove_duplicate=False)]
    if "second.weight" not in all_names or "second.weight" in dict(square.named_parameters()):
        raise CheckFailed(f"remove_duplicate=False should also list the alias second.weight, the "
                          f"default only first.weight; got {all_names}",
                          f"remove_duplicate=False debería listar también el alias "
                          f"second.weight, y por defecto solo first.weight; dio {all_names}")


@checks.case("counted-once",
             "num_params() and state_dict() count a tied matrix once: untied - tied = V*d (d up "
             "to 16, 128 and above 768)",
             "num_params() y state_dict() cuentan la matriz atada una sola vez: sin atar - "
             "atado = V*d (d hasta 16, 128 y más de 768)")
def _():
    for kind, d, V in sizes():
        state = rng.bit_generator.state
        tied = build(kind, d=d, V=V)
        rng.bit_generator.state = state  # same sizes for the untied twin
        untied = build(kind, tied=False, d=d, V=V)
        V, d = tied.config.vocab_size, tied.config.d_model
        diff = untied.num_params() - tied.num_params()
        if diff != V * d:
            raise CheckFailed(f"{kind}: untied - tied = {diff}, expected V*d = {V * d}",
                              f"{kind}: sin atar - atado = {diff}, se esperaba V*d = {V * d}")
        if "lm_head.weight" in tied.state_dict() or "lm_head.weight" not in untied.state_dict():
            raise CheckFailed(f"{kind}: state_dict() should hold lm_head.weight only when untied",
                              f"{kind}: state_dict() debería tener lm_head.weight solo sin atar")


def adamw_update(p, g, m, v, t, lr, b1, b2, eps, wd):
    """One AdamW step (PyTorch semantics) in float64; returns (new p, m, v)."""
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    new = p * (1 - lr * wd) - lr / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps)
    return new, m, v


# experiment.py's run: a tied GPT (d = 32, V = 64, T = 16), AdamW with lr 3e-3 on
# param_groups(model, weight_decay=0.1), in float32.
EXPERIMENT = ("GPT", 32, 64, np.float32, 3e-3, 0.1, True)


@checks.case("one-update",
             "each AdamW or SGD step moves a tied matrix by exactly one update (random model, "
             "lr, weight decay, momentum, 2-3 steps, float32 or float64, both on every run; d up "
             "to 16, 128 and above 768), and AdamW's step counter says so",
             "cada paso de AdamW o SGD mueve la matriz atada exactamente una actualización "
             "(modelo, tasa de aprendizaje, decaimiento de pesos y momento aleatorios, 2 o 3 "
             "pasos, en float32 o en float64, con los dos tipos en cada ejecución; d hasta 16, "
             "128 y más de 768), y el contador de pasos de AdamW lo refleja")
def _():
    models = sizes()
    # (kind, d, V, dtype, lr, wd, groups?) and last the experiment's run; the others alternate
    # model.parameters() and param_groups(model, wd), as the trainer passes them.
    cases = [(kind, d, V, dtype, float(rng.uniform(1e-3, 3e-2)), float(rng.choice([0.0, 0.1])),
              i % 2 == 1) for i, ((kind, d, V), dtype) in enumerate(zip(models,
                                                                      dtypes(len(models))))]
    cases.append(EXPERIMENT)
    for case in cases:
        kind, d, V, dtype, lr, wd, groups = case
        model = build(kind, d=d, V=V, T=16 if case is EXPERIMENT else 8).astype(dtype)
        E = model.get_input_embeddings().weight
        params = param_groups(model, wd) if groups else model.parameters()
        use_adam = kind != "CBOW" or rng.random() < 0.5
        if use_adam:
            b1, b2 = ((0.9, 0.999) if case is EXPERIMENT  # the experiment: AdamW's defaults
                      else (float(rng.uniform(0.8, 0.95)), float(rng.uniform(0.99, 0.9999))))
            opt = optim.AdamW(params, lr=lr, betas=(b1, b2), eps=1e-8, weight_decay=wd)
        else:
            opt = optim.SGD(params, lr=lr, weight_decay=wd)
        m = v = np.zeros(E.shape)
        x, y = batch(model, most=32 if d is None else 2)  # a wide model: a small batch
        for step in range(1, int(rng.integers(2, 4)) + 1):
            opt.zero_grad()
            model(x, y)[1].backward()
            before, g = E.data.astype(np.float64), E.grad.astype(np.float64)
            if use_adam:
                want, m, v = adamw_update(before, g, m, v, step, lr, b1, b2, 1e-8, wd)
            else:
                want = before - lr * (g + wd * before)
            opt.step()
            moved = np.abs(E.data - before).sum() / max(np.abs(want - before).sum(), 1e-30)
            if not allclose(E.data, want, **TOLERANCE[dtype]):
                what = f"{kind} d={E.shape[1]} ({np.dtype(dtype).name})"
                opt_name = type(opt).__name__
                raise CheckFailed(f"{what}, {opt_name} step {step}: the tied matrix moved "
                                  f"{moved:.2f}x one update",
                                  f"{what}, paso {step} de {opt_name}: la matriz atada se movió "
                                  f"{es_num(moved, '.2f')} veces lo que mueve una actualización")
            if use_adam and opt.state[E]["step"] != step:
                raise CheckFailed(f"{kind}: after {step} step(s) AdamW's counter for E is "
                                  f"{opt.state[E]['step']}",
                                  f"{kind}: tras {step} paso(s) el contador de AdamW para E vale "
                                  f"{opt.state[E]['step']}")


@checks.case("refuses-duplicates",
             "AdamW and SGD raise ValueError for a parameter passed twice (in one list or in two "
             "groups)",
             "AdamW y SGD lanzan ValueError con un parámetro pasado dos veces (en una lista o en "
             "dos grupos)")
def _():
    p = nn.Parameter(rng.standard_normal(int(rng.integers(1, 6))))
    q = nn.Parameter(rng.standard_normal(2))
    attempts = {"AdamW([p, q, p])": lambda: optim.AdamW([p, q, p]),
                "SGD([p, p])": lambda: optim.SGD([p, p], lr=0.1),
                "AdamW([{p}, {q, p}])": lambda: optim.AdamW([{"params": [p]},
                                                             {"params": [q, p]}])}
    for what, make in attempts.items():
        try:
            make()
        except ValueError:
            continue
        raise CheckFailed(f"{what} was accepted; p would be updated twice per step",
                          f"se aceptó {what}; p se actualizaría dos veces por paso")


if __name__ == "__main__":
    checks.finish()
