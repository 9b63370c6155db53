"""Invariants behind `tied-model-too-large`: tying is structural. The head's matrix IS the embedding's
Parameter object, used by the forward pass and reported by every walk over the parameters, so
one matrix is counted, trained, saved, loaded and resized, and its gradient is the sum of both
uses.

Models, sizes and data are drawn afresh on every run (``checks.seed``); the experiment's own
GPT (V = 1024, T = 128, 2 blocks of 4 heads, d = 128) is one more case of the count. Run by
`minimodel break check`; `break run` reads the same checks.
"""

import os
import tempfile

import numpy as np
from safetensors.numpy import load_file

from minimodel_break_harness import CheckFailed, Checks, es_num, tr, use_workspace

mm = use_workspace()
from minimodel import nn, optim  # noqa: E402
from minimodel.models import (CBOW, CBOWConfig, GPT, GPTConfig, MaskedLM,  # noqa: E402
                              MLMConfig)

checks = Checks()
rng = np.random.default_rng(checks.seed)
KINDS = ("GPT", "MaskedLM", "CBOW")


def wide_vocab() -> int:
    """A vocabulary from 5 to 3000 tokens, log-uniform: a fix that holds only for small (or
    only for large) tables meets both across seeds."""
    return int(np.exp(rng.uniform(np.log(5), np.log(3000))))


# experiment.py's GPT: the main job's sizes (V = 1024, T = 128, 2 blocks of 4 heads, d = 128).
EXPERIMENT = dict(vocab_size=1024, block_size=128, n_layer=2, n_head=4, d_model=128)


def build(kind: str, V: int, d: int, tied: bool = True, seed: int = 0):
    r = np.random.default_rng(seed)
    if kind == "experiment":
        return GPT(GPTConfig(**EXPERIMENT, tie_embeddings=tied), rng=r)
    if kind == "GPT":
        return GPT(GPTConfig(V, 8, 1, 2, d, tie_embeddings=tied), rng=r)
    if kind == "MaskedLM":
        return MaskedLM(MLMConfig(V, 8, 1, 2, d, tie_embeddings=tied), rng=r)
    return CBOW(CBOWConfig(V, d, window=2, tie_embeddings=tied), rng=r)


def batch(kind: str, V: int):
    if kind == "CBOW":
        rows = int(rng.integers(2, 129))  # batches of 2 to 128 windows
        return rng.integers(0, V, size=(rows, 4)), rng.integers(0, V, size=rows)
    x = rng.integers(0, V, size=(int(rng.integers(1, 33)), 8))  # 1 to 32 sequences
    return x, rng.integers(0, V, size=x.shape)


def sizes() -> tuple[int, int]:
    return wide_vocab(), 4 * int(rng.integers(1, 5))


def all_widths() -> list[tuple[int, int]]:
    """(V, d) at a small width, at the main job's d = 128 and above GPT-2 small's 768: a fix
    that holds only below (or above) some width meets at least one of them."""
    wide = 4 * int(rng.integers(192, 276))  # d from 768 to 1100
    return [sizes(), (wide_vocab(), 128), (int(rng.integers(5, 65)), wide)]


def require_one(model, what: str) -> None:
    E, W = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    if W is not E:
        gap = (float(np.abs(W.data - E.data).max()) if W.shape == E.shape
               else f"shapes {W.shape} vs {E.shape}")
        # a few significant digits: 0.0541, not 0.054088447242975235
        gap_en, gap_es = ((f"{gap:.3g}", es_num(gap, ".3g")) if isinstance(gap, float)
                          else (gap, gap.replace("shapes", "formas").replace("vs", "frente a")))
        raise CheckFailed(f"{what}: lm_head.weight is not the embedding's Parameter (values "
                          f"differ by {gap_en})",
                          f"{what}: lm_head.weight no es el Parameter del embedding (los valores "
                          f"difieren en {gap_es})")


@checks.case("same-object",
             "in a fresh tied GPT, MaskedLM, CBOW and TiedHead(emb), the head's weight IS the "
             "embedding's Parameter",
             "en un GPT, MaskedLM, CBOW y TiedHead(emb) atados recién creados, el peso de la "
             "cabeza ES el Parameter del embedding")
def _():
    for V, d in all_widths():
        for kind in KINDS:
            require_one(build(kind, V, d), f"{kind} (d = {d})")
        emb = nn.Embedding(V, d, rng=rng)
        if nn.TiedHead(emb).weight is not emb.weight:
            raise CheckFailed(f"TiedHead(emb).weight is not emb.weight (d = {d})",
                              f"TiedHead(emb).weight no es emb.weight (d = {d})")


@checks.case("counted-once",
             "num_params, parameters() and state_dict() list the tied matrix once: untied - "
             "tied = V*d for every model (and the experiment's GPT)",
             "num_params, parameters() y state_dict() listan la matriz atada una sola vez: sin atar "
             "- atado = V*d en cada modelo (y en el GPT del experimento)")
def _():
    cases = [(kind, V, d) for V, d in all_widths() for kind in KINDS]
    for kind, V, d in cases + [("experiment", EXPERIMENT["vocab_size"], EXPERIMENT["d_model"])]:
        tied, untied = build(kind, V, d), build(kind, V, d, tied=False)
        diff = untied.num_params() - tied.num_params()
        params = list(tied.parameters())
        if diff != V * d or len({id(p) for p in params}) != len(params):
            raise CheckFailed(f"{kind} (d = {d}): untied - tied = {diff}, expected "
                              f"V*d = {V * d}",
                              f"{kind} (d = {d}): sin atar - atado = {diff}, se esperaba "
                              f"V*d = {V * d}")
        # An optimizer given parameters() keeps state per object: two objects over one array
        # are two parameters to it, whatever num_params says.
        overlapping = sum(np.shares_memory(p.data, q.data)
                          for i, p in enumerate(params) for q in params[i + 1:])
        if overlapping:
            raise CheckFailed(f"{kind}: parameters() yields {overlapping} pair(s) of objects "
                              "over the same array",
                              f"{kind}: parameters() da {overlapping} par(es) de objetos sobre "
                              "el mismo array")
        if "lm_head.weight" in tied.state_dict():
            raise CheckFailed(f"{kind}: state_dict() of a tied model has lm_head.weight",
                              f"{kind}: el state_dict() de un modelo atado tiene lm_head.weight")


@checks.case("tie-visible",
             "every walk over a tied GPT, MaskedLM, CBOW and TiedHead(emb) reports the "
             "embedding's Parameter itself under the head's name, and tie_groups() names the pair",
             "cada recorrido de un GPT, MaskedLM, CBOW y TiedHead(emb) atados declara el propio "
             "Parameter del embedding con el nombre de la cabeza, y tie_groups() nombra el par")
def _():
    for kind in KINDS:
        model = build(kind, *sizes())
        E = model.get_input_embeddings().weight
        E_name = f"{model.input_embedding_name}.weight"
        for walk in (1, 2):  # a second walk too: what it reports must not change between walks
            listed = dict(model.named_parameters(remove_duplicate=False))
            if listed.get("lm_head.weight") is not E:
                raise CheckFailed(f"{kind}: walk {walk} of named_parameters(remove_duplicate="
                                  f"False) does not give {E_name}'s Parameter under "
                                  "lm_head.weight",
                                  f"{kind}: el recorrido {walk} de named_parameters("
                                  f"remove_duplicate=False) no da el Parameter de {E_name} con "
                                  "el nombre lm_head.weight")
        groups = model.tie_groups()
        if groups != [[E_name, "lm_head.weight"]]:
            raise CheckFailed(f"{kind}: tie_groups() = {groups}, expected "
                              f"[['{E_name}', 'lm_head.weight']]",
                              f"{kind}: tie_groups() = {groups}, se esperaba "
                              f"[['{E_name}', 'lm_head.weight']]")
    emb = nn.Embedding(*sizes(), rng=rng)
    reported = list(nn.TiedHead(emb).named_parameters())
    if len(reported) != 1 or reported[0][0] != "weight" or reported[0][1] is not emb.weight:
        raise CheckFailed("TiedHead(emb).named_parameters() does not give exactly "
                          "('weight', emb.weight)",
                          "TiedHead(emb).named_parameters() no da exactamente "
                          "('weight', emb.weight)")


@checks.case("one-after-training",
             "after a random number of AdamW or SGD steps the head and the embedding are still "
             "one matrix",
             "tras un número aleatorio de pasos de AdamW o SGD, la cabeza y el embedding siguen "
             "siendo una sola matriz")
def _():
    for kind in KINDS:
        V, d = sizes()
        model = build(kind, V, d)
        opt = (optim.AdamW(model.parameters(), lr=1e-2) if rng.random() < 0.5
               else optim.SGD(model.parameters(), lr=0.5))
        steps = int(rng.integers(1, 4))
        for _ in range(steps):
            opt.zero_grad()
            model(*batch(kind, V))[1].backward()
            opt.step()
        name = type(opt).__name__
        require_one(model, tr(f"{kind} after {steps} {name} step(s)",
                              f"{kind} tras {steps} paso(s) de {name}"))


@checks.case("gradient-sum",
             "the tied gradient = lookup gradient + head gradient (compared with an untied copy "
             "of the same weights), in every model",
             "el gradiente atado = gradiente de la indexación + gradiente de la cabeza (frente a "
             "una copia sin atar con los mismos pesos), en cada modelo")
def _():
    for kind in KINDS:
        V, d = sizes()
        tied, untied = build(kind, V, d), build(kind, V, d, tied=False, seed=1)
        tied.astype(np.float64)
        untied.astype(np.float64)
        state = dict(tied.state_dict())
        E_name = f"{tied.input_embedding_name}.weight"
        state["lm_head.weight"] = state[E_name].copy()
        untied.load_state_dict(state)
        x, y = batch(kind, V)
        tied(x, y)[1].backward()
        untied(x, y)[1].backward()
        want = untied.get_input_embeddings().weight.grad + untied.lm_head.weight.grad
        got = tied.get_input_embeddings().weight.grad
        if got is None or not np.allclose(got, want, rtol=1e-7, atol=1e-10):
            worst = None if got is None else float(np.abs(got - want).max())
            raise CheckFailed(f"{kind}: the embedding's gradient misses part of the sum (max "
                              f"|diff| {'-' if worst is None else format(worst, '.3g')})",
                              f"{kind}: al gradiente del embedding le falta parte de la suma "
                              f"(máx. |dif| {'-' if worst is None else es_num(worst, '.3g')})")


@checks.case("save-load-resize",
             "the file minimodel.save writes holds the tied matrix once; the tie survives "
             "minimodel.save/load, load_state_dict (a second name loads when equal, is refused "
             "when not), resize_token_embeddings and replacing the input embedding",
             "el archivo que escribe minimodel.save guarda la matriz atada una sola vez; la "
             "atadura sobrevive a minimodel.save/load, load_state_dict (un segundo nombre se "
             "carga si es igual y se rechaza si no), resize_token_embeddings y al cambio del "
             "embedding de entrada")
def _():
    for kind in KINDS:
        V, d = sizes()
        model = build(kind, V, d)
        E_name = f"{model.input_embedding_name}.weight"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.safetensors")
            mm.save(model, path)
            if "lm_head.weight" in load_file(path):
                raise CheckFailed(f"{kind}: the file minimodel.save writes stores the tied "
                                  f"matrix twice (lm_head.weight beside {E_name})",
                                  f"{kind}: el archivo que escribe minimodel.save guarda dos "
                                  f"veces la matriz atada (lm_head.weight junto a {E_name})")
            require_one(mm.load(path), tr(f"{kind} after save/load",
                                          f"{kind} tras save/load"))
        both = dict(build(kind, V, d, seed=3).state_dict())
        both["lm_head.weight"] = both[E_name].copy()  # a file that stores both names, equal
        try:
            model.load_state_dict(both)
        except ValueError as exc:
            raise CheckFailed(f"{kind}: load_state_dict refused lm_head.weight equal to "
                              f"{E_name}: {exc}",
                              f"{kind}: load_state_dict rechazó un lm_head.weight igual a "
                              f"{E_name}: {exc}") from None
        require_one(model, tr(f"{kind} after load_state_dict with both names",
                              f"{kind} tras load_state_dict con los dos nombres"))
        both["lm_head.weight"] = both["lm_head.weight"] + 1.0
        try:
            model.load_state_dict(both)
        except ValueError:
            pass
        else:
            raise CheckFailed(f"{kind}: load_state_dict accepted a head that differs from "
                              f"{E_name} by 1.0 in a tied model",
                              f"{kind}: load_state_dict aceptó en un modelo atado una cabeza "
                              f"que difiere de {E_name} en 1,0")
        model.load_state_dict(build(kind, V, d, seed=2).state_dict())
        require_one(model, tr(f"{kind} after load_state_dict", f"{kind} tras load_state_dict"))
        model.resize_token_embeddings(V + int(rng.integers(1, 9)), rng=rng)
        require_one(model, tr(f"{kind} after resize_token_embeddings",
                              f"{kind} tras resize_token_embeddings"))
        new = nn.Embedding(model.config.vocab_size, d, rng=rng)
        model.set_input_embeddings(new)
        require_one(model, tr(f"{kind} after set_input_embeddings",
                              f"{kind} tras set_input_embeddings"))
        x, y = batch(kind, model.config.vocab_size)
        logits = model(x)[0].data
        h_rows = logits.shape[-1]
        if h_rows != model.config.vocab_size:
            raise CheckFailed(f"{kind}: logits have {h_rows} columns after the changes, expected "
                              f"{model.config.vocab_size}",
                              f"{kind}: los logits tienen {h_rows} columnas tras los cambios, se "
                              f"esperaban {model.config.vocab_size}")


if __name__ == "__main__":
    checks.finish()
