"""Experiment for the break `embedding-moves-too-far`: how far does one AdamW step move E?

The last word comes from the break's invariants (GPT, MaskedLM, CBOW and a tie under other
names; AdamW and SGD), not from this one example.
"""

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import optim  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
V, D, LR = 64, 32, 1e-2
model = GPT(GPTConfig(V, 16, 1, 2, D), rng=np.random.default_rng(0))
E = model.token_emb.weight
params = list(model.parameters())
say(f"model.parameters(): {len(params)} entries, {len({id(p) for p in params})} distinct objects; "
    f"num_params() = {model.num_params():,}",
    f"model.parameters(): {len(params)} entradas, {len({id(p) for p in params})} objetos "
    f"distintos; num_params() = {model.num_params()}")
say(f"times E appears in parameters(): {sum(p is E for p in params)}",
    f"veces que E aparece en parameters(): {sum(p is E for p in params)}")


def one_step_ratio(opt) -> tuple[float, int]:
    """How far one step moves E, relative to one correct AdamW update; and E's step counter."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, V, size=(4, 16))
    model(x, np.roll(x, -1, axis=1))[1].backward()
    g = E.grad.astype(np.float64)
    # One correct AdamW step from zero state: m = (1-b1) g, v = (1-b2) g^2, bias-corrected.
    b1, b2, eps = 0.9, 0.999, 1e-8
    m_hat, v_hat = (1 - b1) * g / (1 - b1), (1 - b2) * g * g / (1 - b2)
    expected = -LR * m_hat / (np.sqrt(v_hat) + eps)
    before = E.data.astype(np.float64).copy()
    opt.step()
    actual = E.data.astype(np.float64) - before
    rows = np.abs(expected).sum(1) > 0
    return float(np.abs(actual[rows]).sum() / np.abs(expected[rows]).sum()), opt.state[E]["step"]


try:
    opt = optim.AdamW(params, lr=LR, weight_decay=0.0)
except ValueError as exc:
    say(f"AdamW refused the list: {exc}", f"AdamW rechazó la lista: {exc}")
    ratio, counter = float("nan"), 0
else:
    ratio, counter = one_step_ratio(opt)
    say(f"|actual update of E| / |one correct AdamW update| = {ratio:.3f}",
        f"|cambio real de E| / |un paso correcto de AdamW| = {es_num(ratio, '.3f')}")
    say(f"AdamW state step counter for E: {counter}",
        f"contador de pasos de AdamW para E: {counter}")
listed = sum(p is E for p in params)
conclude(checks, listed != 1 or not abs(ratio - 1.0) <= 0.01 or counter != 1,
         f"one optimizer step moved E {ratio:.2f}x as far as one AdamW update, and E's step "
         f"counter reads {counter} after one step",
         f"un paso del optimizador movió E {es_num(ratio, '.2f')} veces lo que mueve una "
         f"actualización de "
         f"AdamW, y el contador de pasos de E marca {counter} tras un paso",
         "OK: one matrix, listed once; one step, one update of the tied matrix.",
         "OK: una matriz, listada una vez; un paso, una actualización de la matriz atada.")
