"""Experiment for the break `val-loss-too-good`: a validation loss, and the text behind it.

Trains the workspace's GPT for a few seconds on Shakespeare characters next to a reference GPT
(same initialisation, same batches) and prints, for both, the training and validation losses
and a sample written by `generate`. The last word comes from the break's invariants (random
GPTs; evaluation, training and generation), not from this one example.
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

def batch(ids, rng, size=B):
    starts = rng.integers(0, len(ids) - T - 1, size)
    return (np.stack([ids[s:s + T] for s in starts]), np.stack([ids[s + 1:s + T + 1] for s in starts]))


PROMPT = "ROMEO:\n"


def train_and_eval(reference: bool) -> tuple[float, float, str]:
    """(training loss over the last 20 steps, validation loss, a 100-character sample)."""
    m = GPT(cfg, rng=np.random.default_rng(0))
    if reference:
        for block in m.blocks:
            block.attn.causal = True
    opt = optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.0)
    rng = np.random.default_rng(2)
    losses = []
    for _ in range(STEPS):
        xb, yb = batch(train, rng)
        opt.zero_grad()
        loss = m(xb, yb)[1]
        loss.backward()
        opt.step()
        losses.append(float(loss.data))
    xv, yv = batch(val, np.random.default_rng(3), size=128)
    with mm.no_grad():
        val_loss = float(m(xv, yv)[1].data)
    out = m.generate(np.array([[chars.index(c) for c in PROMPT]]), 100, seed=0)[0, len(PROMPT):]
    sample = "".join(chars[i] for i in out).replace("\n", " / ")
    return float(np.mean(losses[-20:])), val_loss, sample


start = time.perf_counter()
yours = train_and_eval(False)
reference = train_and_eval(True)
say(f"trained {STEPS} steps on {len(train):,} characters (V = {V}, ln V = {math.log(V):.2f}) "
    f"in {time.perf_counter() - start:.1f} s, your GPT next to a reference GPT (same start, "
    "same batches):",
    f"entrené {STEPS} pasos con {len(train)} caracteres (V = {V}, ln V = "
    f"{es_num(math.log(V), '.2f')}) en {es_num(time.perf_counter() - start, '.1f')} s, tu GPT "
    "junto a un GPT de referencia (mismo punto de partida, mismos lotes):")
say("                   training loss   validation loss",
    "                   pérdida de entrenamiento   pérdida de validación")
for name_en, name_es, (train_loss, val_loss, _) in (("your GPT", "tu GPT", yours),
                                                    ("reference", "referencia", reference)):
    say(f"  {name_en:<14}      {train_loss:.3f}           {val_loss:.3f}",
        f"  {name_es:<14}      {es_num(train_loss, '.3f')}                      "
        f"{es_num(val_loss, '.3f')}")
say(f"samples from generate, prompt {PROMPT!r}, 100 characters (/ marks a new line):",
    f"muestras de generate, prompt {PROMPT!r}, 100 caracteres (/ marca un salto de línea):")
say(f"  your GPT:  {yours[2]}", f"  tu GPT:      {yours[2]}")
say(f"  reference: {reference[2]}", f"  referencia:  {reference[2]}")

conclude(checks, yours[1] < reference[1] - 1.0,
         f"your GPT's validation loss is {yours[1]:.2f} against {reference[1]:.2f} for the "
         "reference, and its training loss agrees with it; compare the two samples",
         f"la pérdida de validación de tu GPT es {es_num(yours[1], '.2f')} frente a "
         f"{es_num(reference[1], '.2f')} de la referencia, y su pérdida de entrenamiento "
         "coincide con ella; compara las dos muestras",
         "OK: your GPT and the reference learn at the same honest pace.",
         "OK: tu GPT y la referencia aprenden al mismo ritmo honesto.")
