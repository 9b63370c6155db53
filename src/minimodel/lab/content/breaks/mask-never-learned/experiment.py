"""Experiment for the break `mask-never-learned`: what does the reported MLM loss measure?

Trains the workspace's masked LM for a few steps next to a reference (same start, same rows,
each batch masked afresh), and prints for both the loss the training loop reports beside the
loss at [MASK] positions of held-out rows, the skill a masked LM is trained for. The last word
comes from the break's invariants (random shapes, rates and special tokens), not from this
one example.
"""

import math

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import optim  # noqa: E402
from minimodel.data import load_corpus, mask_tokens  # noqa: E402
from minimodel.models import MaskedLM, MLMConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
text = load_corpus()[:40000]
chars = sorted(set(text))
MASK = len(chars)
V, T, B, STEPS, REPORT_EVERY = len(chars) + 1, 16, 16, 60, 30
data = np.array([chars.index(c) for c in text], dtype=np.int64)
train, held_out = data[:30000], data[30000:]  # the held-out text is never trained on

# The held-out measure: 15 % of each held-out row hidden behind [MASK], scored there only.
rng = np.random.default_rng(0)
held = np.stack([held_out[s:s + T] for s in rng.integers(0, len(held_out) - T, 128)])  # (128, T)
hidden = rng.random(held.shape) < 0.15
hidden[np.arange(len(held)), rng.integers(0, T, len(held))] = True  # at least one per row
held_inputs = np.where(hidden, MASK, held)
held_labels = np.where(hidden, held, -100)  # -100: not scored


def reference_masking(rows: np.ndarray, rng: np.random.Generator):
    """The reference's masking (Devlin et al. 2019): 15 % targets, 80/10/10."""
    chosen = rng.random(rows.shape) < 0.15
    chosen[np.arange(len(rows)), rng.integers(0, T, len(rows))] = True
    action = rng.random(rows.shape)
    inputs = np.where(chosen & (action < 0.8), MASK, rows)
    swap = chosen & (action >= 0.8) & (action < 0.9)
    inputs[swap] = rng.integers(0, MASK, int(swap.sum()))
    return inputs, np.where(chosen, rows, -100)


def held_out_mask_loss(model) -> float:
    with mm.no_grad():
        return float(model(held_inputs, held_labels)[1].data)


def train_and_measure(reference: bool) -> list[tuple[int, float, float]]:
    """(step, reported loss: mean of the last 10 training losses, held-out [MASK] loss)."""
    model = MaskedLM(MLMConfig(V, T, 1, 2, 32), rng=np.random.default_rng(2))
    opt = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    rows_rng, mask_rng = np.random.default_rng(3), np.random.default_rng(4)
    reported, table = [], []
    for step in range(1, STEPS + 1):
        rows = np.stack([train[s:s + T] for s in rows_rng.integers(0, len(train) - T, B)])
        inputs, labels = (reference_masking(rows, mask_rng) if reference
                          else mask_tokens(rows, MASK, V, rng=mask_rng))
        opt.zero_grad()
        loss = model(inputs, labels)[1]
        loss.backward()
        opt.step()
        reported.append(float(loss.data))
        if step % REPORT_EVERY == 0:
            table.append((step, float(np.mean(reported[-10:])), held_out_mask_loss(model)))
    return table


start = held_out_mask_loss(MaskedLM(MLMConfig(V, T, 1, 2, 32), rng=np.random.default_rng(2)))
yours, reference = train_and_measure(False), train_and_measure(True)
say(f"a masked LM over V = {V} characters (ln V = {math.log(V):.2f}), trained {STEPS} steps of "
    f"{B} rows x {T} characters, next to a reference model (same start, same rows)",
    f"un MLM con V = {V} caracteres (ln V = {es_num(math.log(V), '.2f')}), entrenado durante "
    f"{STEPS} pasos de {B} filas x {T} caracteres, junto a un modelo de referencia (mismo punto "
    "de partida, mismas filas)")
say("                      reported loss   [MASK] loss on 128 held-out rows",
    "                      pérdida registrada  pérdida en [MASK], 128 filas reservadas")
say(f"  before training            -              {start:.2f}",
    f"  antes de entrenar           -                  {es_num(start, '.2f')}")
for name_en, name_es, table in (("yours", "tu modelo", yours),
                                ("reference", "referencia", reference)):
    for step, rep, held_loss in table:
        say(f"  {name_en:<9} step {step:>3}      {rep:.2f}              {held_loss:.2f}",
            f"  {name_es:<10} paso {step:>3}      {es_num(rep, '.2f')}                  "
            f"{es_num(held_loss, '.2f')}")

_, your_reported, your_held = yours[-1]
conclude(checks, your_reported < your_held - 1.0,
         f"after {STEPS} steps the training loop reports {your_reported:.2f}, but on held-out "
         f"rows the loss at [MASK] is {your_held:.2f} (reference: reports {reference[-1][1]:.2f}, "
         f"{reference[-1][2]:.2f} at held-out [MASK])",
         f"tras {STEPS} pasos el bucle de entrenamiento registra {es_num(your_reported, '.2f')}, "
         f"pero en filas reservadas la pérdida en [MASK] es {es_num(your_held, '.2f')} "
         f"(referencia: registra {es_num(reference[-1][1], '.2f')}; "
         f"{es_num(reference[-1][2], '.2f')} en las [MASK] de filas reservadas)",
         "OK: the reported loss tracks the loss at held-out [MASK] positions, as the "
         "reference's does.",
         "OK: la pérdida registrada sigue a la pérdida en las posiciones [MASK] de filas "
         "reservadas, como la de la referencia.")
