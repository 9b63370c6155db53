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
OTHER = "blocks.0.attn.c_attn.weight"  # any weight that is not E, for comparison


def one_step_ratios(opt) -> tuple[float, float, int]:
    """How far one step moves E and another weight, each relative to one correct AdamW update
    computed by hand; and E's step counter."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, V, size=(4, 16))
    model(x, np.roll(x, -1, axis=1))[1].backward()
    other = dict(model.named_parameters())[OTHER]
    tensors = (E, other)
    grads = [t.grad.astype(np.float64) for t in tensors]
    before = [t.data.astype(np.float64).copy() for t in tensors]
    opt.step()
    ratios = []
    for t, g, b in zip(tensors, grads, before):
        # One correct AdamW step from zero state, no weight decay: m_hat = g, v_hat = g^2.
        expected = -LR * g / (np.sqrt(g * g) + 1e-8)
        actual = t.data.astype(np.float64) - b
        rows = np.abs(expected).sum(-1) > 0
        ratios.append(float(np.abs(actual[rows]).sum() / np.abs(expected[rows]).sum()))
    return ratios[0], ratios[1], opt.state[E]["step"]


try:
    opt = optim.AdamW(params, lr=LR, weight_decay=0.0)
except ValueError as exc:
    say(f"AdamW refused the list: {exc}", f"AdamW rechazó la lista: {exc}")
    ratio, other_ratio, counter = float("nan"), float("nan"), 0
else:
    ratio, other_ratio, counter = one_step_ratios(opt)
    say(f"one AdamW step (lr = {LR}), how far each matrix moved / one correct AdamW update:",
        f"un paso de AdamW (lr = {es_num(LR, 'g')}), lo que se movió cada matriz / un paso "
        f"correcto de AdamW:")
    say(f"  token_emb.weight (E): {ratio:.3f}", f"  token_emb.weight (E): {es_num(ratio, '.3f')}")
    say(f"  {OTHER}: {other_ratio:.3f}", f"  {OTHER}: {es_num(other_ratio, '.3f')}")
listed = sum(p is E for p in params)
conclude(checks, listed != 1 or not abs(ratio - 1.0) <= 0.01 or counter != 1,
         f"one optimizer step moved E {ratio:.2f}x as far as one AdamW update, and "
         f"{OTHER} {other_ratio:.2f}x",
         f"un paso del optimizador movió E {es_num(ratio, '.2f')} veces lo que mueve una "
         f"actualización de AdamW, y {OTHER} {es_num(other_ratio, '.2f')} veces",
         "OK: one matrix, listed once; one step, one update of the tied matrix.",
         "OK: una matriz, listada una vez; un paso, una actualización de la matriz atada.")
