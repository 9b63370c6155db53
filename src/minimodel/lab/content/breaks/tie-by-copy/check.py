"""Checks for `tie-by-copy`: tying is structural (one Parameter object), so it survives
training, counting, saving and resizing."""

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
from minimodel import nn, optim  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402

checks = Checks()
V, D = 40, 16
CFG = dict(vocab_size=V, block_size=8, n_layer=1, n_head=2, d_model=D)


def model(tied: bool = True, seed: int = 0) -> GPT:
    return GPT(GPTConfig(**CFG, tie_embeddings=tied), rng=np.random.default_rng(seed))


def batch(seed: int = 1):
    x = np.random.default_rng(seed).integers(0, V, size=(2, 8))
    return x, np.roll(x, -1, axis=1)


@checks.case("same-object", "lm_head.weight IS token_emb.weight (TiedHead too)",
             "lm_head.weight ES token_emb.weight (también en TiedHead)")
def _():
    m = model()
    if m.lm_head.weight is not m.token_emb.weight:
        raise CheckFailed("GPT: lm_head.weight is a different object",
                          "GPT: lm_head.weight es un objeto distinto")
    emb = nn.Embedding(10, 4)
    if nn.TiedHead(emb).weight is not emb.weight:
        raise CheckFailed("TiedHead(emb).weight is not emb.weight",
                          "TiedHead(emb).weight no es emb.weight")


@checks.case("counted-once", "num_params, parameters() and state_dict() see the matrix once",
             "num_params, parameters() y state_dict() ven la matriz una sola vez")
def _():
    tied, untied = model(True), model(False)
    if untied.num_params() - tied.num_params() != V * D:
        raise CheckFailed(f"untied - tied = {untied.num_params() - tied.num_params()}, expected "
                          f"V*d = {V * D}",
                          f"sin atar - atado = {untied.num_params() - tied.num_params()}, se "
                          f"esperaba V*d = {V * D}")
    if "lm_head.weight" in tied.state_dict():
        raise CheckFailed("state_dict() of a tied model has lm_head.weight",
                          "el state_dict() de un modelo atado tiene lm_head.weight")
    ids = [id(p) for p in tied.parameters()]
    if id(tied.token_emb.weight) not in ids:
        raise CheckFailed("token_emb.weight is not in parameters()",
                          "token_emb.weight no está en parameters()")


@checks.case("tied-after-steps", "after 3 AdamW steps head and embedding are still one matrix",
             "tras 3 pasos de AdamW cabeza y embedding siguen siendo una matriz")
def _():
    m = model()
    opt = optim.AdamW(m.parameters(), lr=1e-2)
    for step in range(3):
        x, y = batch(step)
        opt.zero_grad()
        m(x, y)[1].backward()
        opt.step()
    gap = float(np.abs(m.lm_head.weight.data - m.token_emb.weight.data).max())
    if m.lm_head.weight is not m.token_emb.weight or gap > 0:
        raise CheckFailed(f"head and embedding differ by up to {gap:.3g} after training",
                          f"cabeza y embedding difieren hasta {gap:.3g} tras entrenar")


@checks.case("gradient-sum", "the tied gradient = lookup gradient + head gradient",
             "el gradiente atado = gradiente de la búsqueda + gradiente de la cabeza")
def _():
    tied, untied = model(True, 4), model(False, 5)
    state = dict(tied.state_dict())
    state["lm_head.weight"] = tied.token_emb.weight.data.copy()
    untied.load_state_dict(state)
    x, y = batch(7)
    tied(x, y)[1].backward()
    untied(x, y)[1].backward()
    want = untied.token_emb.weight.grad + untied.lm_head.weight.grad
    got = tied.token_emb.weight.grad
    if got is None or not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        worst = "-" if got is None else f"{np.abs(got - want).max():.3g}"
        raise CheckFailed(f"token_emb.weight.grad misses part of the sum (max |diff| {worst})",
                          f"a token_emb.weight.grad le falta parte de la suma (máx. |dif| {worst})")


@checks.case("follows-resize", "after resize_token_embeddings the head uses the new matrix",
             "tras resize_token_embeddings la cabeza usa la matriz nueva")
def _():
    m = model()
    m.resize_token_embeddings(V + 5, rng=np.random.default_rng(9))
    if m.lm_head.weight is not m.token_emb.weight:
        raise CheckFailed("the head kept the old matrix after a resize",
                          "la cabeza se quedó con la matriz vieja tras redimensionar")
    logits, _ = m(np.array([[V + 4, 1]]))
    if logits.shape[-1] != V + 5:
        raise CheckFailed(f"logits have {logits.shape[-1]} columns, expected {V + 5}",
                          f"los logits tienen {logits.shape[-1]} columnas, se esperaban {V + 5}")


checks.finish()
