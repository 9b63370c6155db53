"""Experiment for the break `fresh-model-loss-44`: the loss of a model that has learned nothing.

The last word comes from the break's invariants (random V and d; GPT, MaskedLM and CBOW;
training and evaluation), not from this one example.
"""

import math

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
V, D = 512, 64
rng = np.random.default_rng(0)
x = rng.integers(0, V, size=(8, 32))
y = rng.integers(0, V, size=(8, 32))  # random targets: nothing to learn, ln V is the baseline
say(f"ln V = ln {V} = {math.log(V):.3f}  (a uniform guess over {V} tokens)",
    f"ln V = ln {V} = {es_num(math.log(V), '.3f')}  (adivinar al azar entre {V} tokens)")
losses = {}
for tie in (True, False):
    model = GPT(GPTConfig(V, 32, 2, 4, D, tie_embeddings=tie), rng=np.random.default_rng(1))
    with mm.no_grad():
        logits, loss = model(x, y)
    p = np.exp(logits.data - logits.data.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    losses[tie] = float(loss.data)
    name = "tied  " if tie else "untied"
    say(f"{name}: initial loss {losses[tie]:7.3f}   spread of the logits "
        f"{logits.data.std():6.2f}   mean max-prob {p.max(-1).mean():.3f}",
        f"{'atado   ' if tie else 'sin atar'}: pérdida inicial {es_num(losses[tie], '7.3f')}   "
        f"dispersión de los logits {es_num(logits.data.std(), '6.2f')}   "
        f"prob. máx. media {es_num(p.max(-1).mean(), '.3f')}")

conclude(checks, losses[True] > math.log(V) + 1.0,
         f"a fresh tied model starts at loss {losses[True]:.1f}, far above ln {V} = "
         f"{math.log(V):.2f}: it is confidently wrong before it has seen any data",
         f"un modelo atado recién creado empieza con pérdida {es_num(losses[True], '.1f')}, muy "
         f"por encima "
         f"de ln {V} = {es_num(math.log(V), '.2f')}: se equivoca con seguridad antes de ver datos",
         "OK: the fresh model starts near ln V, i.e. it knows that it knows nothing.",
         "OK: el modelo recién creado empieza cerca de ln V: sabe que no sabe nada.")
