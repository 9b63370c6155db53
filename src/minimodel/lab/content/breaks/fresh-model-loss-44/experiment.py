"""Experiment for the break `fresh-model-loss-44`: the loss of a model that has learned nothing.

Story: a freshly built GPT (V = 512, d = 172), tied and untied, before any training. The run
prints what a user sees: each model's first loss on random targets beside ln V, and a greedy
continuation of one prompt. The last word comes from the break's invariants (random V and d;
GPT, MaskedLM and CBOW; training and evaluation), not from this one example.
"""

import math

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
V, D, T = 512, 172, 32
rng = np.random.default_rng(0)
x = rng.integers(0, V, size=(8, T))
y = rng.integers(0, V, size=(8, T))  # random targets: nothing to learn, ln V is the baseline
prompt = np.array([[17, 301, 45, 222]])
say(f"ln V = ln {V} = {math.log(V):.3f}  (a uniform guess over {V} tokens)",
    f"ln V = ln {V} = {es_num(math.log(V), '.3f')}  (una predicción uniforme entre {V} tokens)")
losses = {}
for tie in (True, False):
    model = GPT(GPTConfig(V, T, 2, 4, D, tie_embeddings=tie), rng=np.random.default_rng(1))
    with mm.no_grad():
        losses[tie] = float(model(x, y)[1].data)
    greedy = model.generate(prompt, max_new_tokens=8, temperature=0)[0, prompt.shape[1]:]
    name = "tied  " if tie else "untied"
    say(f"{name}: first loss {losses[tie]:6.2f}   greedy continuation of "
        f"{prompt[0].tolist()}: {greedy.tolist()}",
        f"{'atado   ' if tie else 'sin atar'}: primera pérdida {es_num(losses[tie], '6.2f')}   "
        f"continuación voraz de {prompt[0].tolist()}: {greedy.tolist()}")

conclude(checks, losses[True] > math.log(V) + 1.0,
         f"a fresh tied model starts at loss {losses[True]:.1f}, far above ln {V} = "
         f"{math.log(V):.2f}; the untied one starts at {losses[False]:.2f}",
         f"un modelo atado recién creado empieza con una pérdida de "
         f"{es_num(losses[True], '.1f')}, muy "
         f"por encima de ln {V} = {es_num(math.log(V), '.2f')}; el modelo sin atar empieza en "
         f"{es_num(losses[False], '.2f')}",
         "OK: the fresh model starts near ln V, i.e. it knows that it knows nothing.",
         "OK: el modelo recién creado empieza cerca de ln V, es decir, sabe que no sabe nada.")
