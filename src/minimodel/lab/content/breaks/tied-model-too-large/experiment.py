"""Experiment for the break `tied-model-too-large`: is the tied GPT still tied after one step?

The last word comes from the break's invariants (GPT, MaskedLM and CBOW; training, saving,
loading, resizing), not from this one example.
"""

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import optim  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
V, D = 96, 32
cfg = dict(vocab_size=V, block_size=16, n_layer=1, n_head=2, d_model=D)
tied = GPT(GPTConfig(**cfg, tie_embeddings=True), rng=np.random.default_rng(0))
untied = GPT(GPTConfig(**cfg, tie_embeddings=False), rng=np.random.default_rng(0))
E, W = tied.token_emb.weight, tied.lm_head.weight

n_tied, n_untied = tied.num_params(), untied.num_params()
say(f"parameters: tied {n_tied:,}  untied {n_untied:,}  difference {n_untied - n_tied:,} "
    f"(V*d = {V * D:,})",
    f"parámetros: atado {n_tied}  sin atar {n_untied}  diferencia {n_untied - n_tied} "
    f"(V*d = {V * D})")
gap0 = float(np.abs(W.data - E.data).max())
say(f"before training: max |lm_head.weight - token_emb.weight| = {gap0:.3g}",
    f"antes de entrenar: máx |lm_head.weight - token_emb.weight| = {es_num(gap0, '.3g')}")
say(f"state_dict keys of the embedding and the head: "
    f"{[k for k in tied.state_dict() if k in ('token_emb.weight', 'lm_head.weight')]}",
    f"claves del state_dict del embedding/cabeza: "
    f"{[k for k in tied.state_dict() if k in ('token_emb.weight', 'lm_head.weight')]}")

opt = optim.AdamW(tied.parameters(), lr=1e-2)
rng = np.random.default_rng(1)
x = rng.integers(0, V, size=(4, 16))
_, loss = tied(x, np.roll(x, -1, axis=1))
loss.backward()
opt.step()
W = tied.lm_head.weight
gap = float(np.abs(W.data - E.data).max())
say(f"after one AdamW step: max |lm_head.weight - token_emb.weight| = {gap:.3g}",
    f"tras un paso de AdamW: máx |lm_head.weight - token_emb.weight| = {es_num(gap, '.3g')}")

conclude(checks, W is not E or gap > 0 or n_untied - n_tied != V * D,
         f"the 'tied' model has {n_tied:,} parameters ({n_tied - (n_untied - V * D):,} too many) "
         f"and its head drifted {gap:.3g} away from the embedding after one step",
         f"el modelo 'atado' tiene {n_tied} parámetros ({n_tied - (n_untied - V * D)} de más) y "
         f"su cabeza se alejó {es_num(gap, '.3g')} del embedding tras un paso",
         "OK: one matrix, counted once, identical before and after the step.",
         "OK: una sola matriz, contada una vez, idéntica antes y después del paso.")
