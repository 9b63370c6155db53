"""Checks for `tied-updated-twice`: a tied matrix is one object, listed and updated once."""

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
from minimodel import nn, optim  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402

checks = Checks()
V, D = 48, 16


def model(tied: bool = True) -> GPT:
    return GPT(GPTConfig(V, 8, 1, 2, D, tie_embeddings=tied), rng=np.random.default_rng(0))


@checks.case("listed-once", "parameters() and named_parameters() list the tied matrix once",
             "parameters() y named_parameters() listan la matriz atada una vez")
def _():
    m = model()
    E = m.token_emb.weight
    count = sum(p is E for p in m.parameters())
    names = [n for n, p in m.named_parameters() if p is E]
    if count != 1 or names != ["token_emb.weight"]:
        raise CheckFailed(f"E appears {count} times, under the names {names}",
                          f"E aparece {count} veces, con los nombres {names}")
    aliases = [n for n, p in m.named_parameters(remove_duplicate=False) if p is E]
    if aliases != ["token_emb.weight", "lm_head.weight"]:
        raise CheckFailed(f"named_parameters(remove_duplicate=False) should list both names, "
                          f"got {aliases}",
                          f"named_parameters(remove_duplicate=False) debería listar los dos "
                          f"nombres, dio {aliases}")


@checks.case("counts-and-state", "num_params and state_dict count the tied matrix once",
             "num_params y state_dict cuentan la matriz atada una vez")
def _():
    tied, untied = model(True), model(False)
    diff = untied.num_params() - tied.num_params()
    if diff != V * D:
        raise CheckFailed(f"untied - tied = {diff}, expected V*d = {V * D}",
                          f"sin atar - atado = {diff}, se esperaba V*d = {V * D}")
    if "lm_head.weight" in tied.state_dict():
        raise CheckFailed("state_dict() of a tied model has lm_head.weight",
                          "el state_dict() de un modelo atado tiene lm_head.weight")


@checks.case("one-adamw-update", "one AdamW step changes E by exactly one AdamW update",
             "un paso de AdamW cambia E exactamente en una actualización de AdamW")
def _():
    m = model()
    E = m.token_emb.weight
    lr, wd, b1, b2, eps = 1e-2, 0.1, 0.9, 0.999, 1e-8
    opt = optim.AdamW(m.parameters(), lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    x = np.random.default_rng(1).integers(0, V, size=(3, 8))
    for step in (1, 2):
        opt.zero_grad()
        m(x, np.roll(x, -1, axis=1))[1].backward()
        g, p = E.grad.astype(np.float64), E.data.astype(np.float64)
        if step == 1:
            mom, vel = np.zeros_like(p), np.zeros_like(p)
        mom = b1 * mom + (1 - b1) * g
        vel = b2 * vel + (1 - b2) * g * g
        want = p * (1 - lr * wd) - lr / (1 - b1 ** step) * mom / (
            np.sqrt(vel) / np.sqrt(1 - b2 ** step) + eps)
        opt.step()
        got = E.data.astype(np.float64)
        ratio = np.abs(got - p).sum() / np.abs(want - p).sum()
        if not np.allclose(got, want, rtol=1e-4, atol=1e-6):
            raise CheckFailed(f"step {step}: E moved {ratio:.2f}x the single AdamW update",
                              f"paso {step}: E se movió {ratio:.2f} veces la actualización de AdamW")
        if opt.state[E]["step"] != step:
            raise CheckFailed(f"after {step} step(s) AdamW's counter for E is "
                              f"{opt.state[E]['step']}",
                              f"tras {step} paso(s) el contador de AdamW para E vale "
                              f"{opt.state[E]['step']}")


@checks.case("refuses-duplicates", "AdamW([p, p]) raises ValueError (a parameter passed twice)",
             "AdamW([p, p]) lanza ValueError (un parámetro pasado dos veces)")
def _():
    p = nn.Parameter(np.zeros(3))
    for make in (lambda: optim.AdamW([p, p]), lambda: optim.SGD([p, p], lr=0.1),
                 lambda: optim.AdamW([{"params": [p]}, {"params": [p]}])):
        try:
            make()
        except ValueError:
            continue
        raise CheckFailed("a parameter passed twice was accepted; it would be updated twice "
                          "per step",
                          "se aceptó un parámetro pasado dos veces; se actualizaría dos veces "
                          "por paso")


checks.finish()
