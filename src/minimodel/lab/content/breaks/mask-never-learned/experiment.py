"""Experiment for the break `mask-never-learned`: which positions does the MLM loss see?

The last word comes from the break's invariants (random shapes, rates and special tokens),
not from this one example.
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
text = load_corpus()[:20000]
chars = sorted(set(text))
MASK = len(chars)
V, T = len(chars) + 1, 16
data = np.array([chars.index(c) for c in text], dtype=np.int64)
rng = np.random.default_rng(0)
rows = np.stack([data[s:s + T] for s in rng.integers(0, len(data) - T, 256)])  # (256, T)
inputs, labels = mask_tokens(rows, MASK, V, rng=1)
scored = labels != -100
visible = scored & (inputs == labels)  # scored positions whose answer is in the input
say(f"positions with a label: {scored.mean():.0%} (BERT scores ~15%)",
    f"posiciones con etiqueta: {es_num(scored.mean(), '.0%')} (BERT puntúa ~15 %)")
say(f"labelled positions whose answer is visible in the input: {visible.sum() / scored.sum():.0%}",
    f"posiciones etiquetadas cuya respuesta se ve en la entrada: "
    f"{es_num(visible.sum() / scored.sum(), '.0%')}")

model = MaskedLM(MLMConfig(V, T, 1, 2, 32), rng=np.random.default_rng(2))
opt = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
for step in range(60):
    idx = np.random.default_rng(10 + step).integers(0, 256, 16)
    opt.zero_grad()
    model(inputs[idx], labels[idx])[1].backward()
    opt.step()
with mm.no_grad():
    _, reported = model(inputs[:64], labels[:64])
    really_masked = np.where(inputs[:64] == MASK, rows[:64], -100)
    _, on_masked = model(inputs[:64], really_masked)
say(f"after 60 steps: the training loss says {float(reported.data):.2f}; the loss on the [MASK] "
    f"positions alone is {float(on_masked.data):.2f} (ln V = {math.log(V):.2f})",
    f"tras 60 pasos: la pérdida de entrenamiento dice {es_num(float(reported.data), '.2f')}; la "
    f"pérdida solo "
    f"en las posiciones [MASK] es {es_num(float(on_masked.data), '.2f')} (ln V = "
    f"{es_num(math.log(V), '.2f')})")

conclude(checks, scored.mean() > 0.5,
         f"{scored.mean():.0%} of positions carry a label and {visible.sum() / scored.sum():.0%} of "
         "them can be read in the input",
         f"el {es_num(scored.mean(), '.0%')} de las posiciones lleva etiqueta y el "
         f"{es_num(visible.sum() / scored.sum(), '.0%')} de ellas se puede leer en la entrada",
         "OK: only the chosen ~15% are scored, and most of those are hidden behind [MASK].",
         "OK: solo se puntúa el ~15 % elegido, y la mayoría está oculta tras [MASK].")
