"""Experiment for the break `tied-updated-twice`: how far does one AdamW step move E?"""

import numpy as np

from minimodel.lab.breaks.harness import say, symptom, use_workspace

mm = use_workspace()
from minimodel import optim  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402

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

try:
    opt = optim.AdamW(params, lr=LR, weight_decay=0.0)
except ValueError as exc:
    say(f"AdamW refused the list: {exc}", f"AdamW rechazó la lista: {exc}")
    raise SystemExit(0)
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
ratio = float(np.abs(actual[rows]).sum() / np.abs(expected[rows]).sum())
say(f"|actual update of E| / |one correct AdamW update| = {ratio:.3f}",
    f"|cambio real de E| / |un paso correcto de AdamW| = {ratio:.3f}")
say(f"AdamW state step counter for E: {opt.state[E]['step']}",
    f"contador de pasos de AdamW para E: {opt.state[E]['step']}")
if abs(ratio - 1.0) > 0.01 or opt.state[E]["step"] != 1:
    symptom(f"one optimizer step moved the tied matrix {ratio:.2f}x as far as AdamW should, and "
            f"its step counter says {opt.state[E]['step']}: E was updated twice",
            f"un paso del optimizador movió la matriz atada {ratio:.2f} veces lo que AdamW "
            f"debería, y su contador dice {opt.state[E]['step']}: E se actualizó dos veces")
else:
    say("OK: one step, one update of the tied matrix.",
        "OK: un paso, una actualización de la matriz atada.")
