"""Experiment for the break `val-loss-too-good`: can the GPT see the future?

Two measurements: (1) change one future token and see whether earlier logits move;
(2) train for a few seconds on Shakespeare characters and compare the validation loss with
a reference whose attention is forced to be causal (same init, same batches). The last word
comes from the break's invariants (random GPTs; evaluation, training and generation), not from
this one example.
"""

import math
import time

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import optim  # noqa: E402
from minimodel.data import load_corpus  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
text = load_corpus()[:30000]
chars = sorted(set(text))
data = np.array([chars.index(c) for c in text], dtype=np.int64)
V, T, B, STEPS = len(chars), 8, 16, 240
train, val = data[:27000], data[27000:]
cfg = GPTConfig(V, T, n_layer=1, n_head=1, d_model=32)

# (1) the leak probe, on an untrained model
model = GPT(cfg, rng=np.random.default_rng(0))
x = np.random.default_rng(1).integers(0, V, size=(1, T))
x2 = x.copy()
x2[0, 6] = (x2[0, 6] + 1) % V  # change only position 6
with mm.no_grad():
    a, b = model(x)[0].data, model(x2)[0].data
leak = float(np.abs(a[0, :6] - b[0, :6]).max())
say(f"changed the token at position 6: max |change| of the logits at positions 0-5 = {leak:.3g}",
    f"cambié el token de la posición 6: máx |cambio| de los logits en las posiciones 0-5 = "
    f"{es_num(leak, '.3g')}")


# (2) a few seconds of training
def batch(ids, rng, size=B):
    starts = rng.integers(0, len(ids) - T - 1, size)
    return (np.stack([ids[s:s + T] for s in starts]), np.stack([ids[s + 1:s + T + 1] for s in starts]))


def train_and_eval(force_causal: bool) -> float:
    m = GPT(cfg, rng=np.random.default_rng(0))
    if force_causal:
        for block in m.blocks:
            block.attn.causal = True
    opt = optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.0)
    rng = np.random.default_rng(2)
    for _ in range(STEPS):
        xb, yb = batch(train, rng)
        opt.zero_grad()
        m(xb, yb)[1].backward()
        opt.step()
    xv, yv = batch(val, np.random.default_rng(3), size=128)
    with mm.no_grad():
        return float(m(xv, yv)[1].data)


start = time.perf_counter()
yours = train_and_eval(False)
# When nothing leaks, the forced-causal reference would be the very same model: skip it.
reference = train_and_eval(True) if leak > 1e-6 else yours
say(f"trained {STEPS} steps on {len(train):,} characters (V = {V}, ln V = {math.log(V):.2f}) "
    f"in {time.perf_counter() - start:.1f} s:",
    f"entrené {STEPS} pasos con {len(train)} caracteres (V = {V}, ln V = "
    f"{es_num(math.log(V), '.2f')}) "
    f"en {es_num(time.perf_counter() - start, '.1f')} s:")
say(f"  validation loss, your GPT:              {yours:.3f}",
    f"  pérdida de validación, tu GPT:          {es_num(yours, '.3f')}")
say(f"  validation loss, forced-causal GPT:     {reference:.3f}",
    f"  pérdida de validación, GPT forzado causal: {es_num(reference, '.3f')}")

conclude(checks, leak > 1e-6,
         f"logits at earlier positions change when a later token changes (by {leak:.2g}), and "
         f"the validation loss is {yours:.2f} vs {reference:.2f} for the reference",
         f"los logits de posiciones anteriores cambian al cambiar un token posterior (en "
         f"{es_num(leak, '.2g')}), y la pérdida de validación es {es_num(yours, '.2f')} frente a "
         f"{es_num(reference, '.2f')} de "
         "la referencia",
         "OK: no position can see a later one; both models learn at the same honest pace.",
         "OK: ninguna posición ve una posterior; los dos modelos aprenden al mismo ritmo honesto.")
