"""Experiment for the break `loss-crash-after-merge`.

Story: a tied GPT built for a 256-id byte tokenizer trains. A tokenizer merge gives 512 ids;
the model is grown with ``resize_token_embeddings(512)`` and the next training step, on text
encoded with the merged tokenizer, crashes in the loss. The training step flattens the logits
with the vocabulary size the model reports for the layer that scores the tokens (what a
trainer written for any head reads). The run prints only what the user meets: the step before
the merge and the error after it. The last word comes from the break's invariants (random
sizes, every code path), not from this one example.
"""

import numpy as np

from minimodel_break_harness import conclude, es_num, say, tr, use_workspace

mm = use_workspace()
import minimodel.functional as F  # noqa: E402  (after the workspace check)
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
rng = np.random.default_rng(0)
V_OLD, V_NEW, D, B, T = 256, 512, 16, 4, 8


def training_step(model, ids: np.ndarray, targets: np.ndarray) -> float:
    """One step: logits (B, T, V) flattened to (B * T, V) rows, the loss, backward."""
    logits, _ = model(ids)
    vocab = model.get_output_embeddings().vocab_size
    loss = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    return float(loss.data)


model = GPT(GPTConfig(V_OLD, T, 1, 2, D), rng=rng)  # tied (the default)
say(f"a tied GPT for the byte tokenizer: {V_OLD} ids, d = {D}",
    f"un GPT atado para el tokenizador de bytes: {V_OLD} ids, d = {D}")
loss = training_step(model, rng.integers(0, V_OLD, (B, T)), rng.integers(0, V_OLD, (B, T)))
say(f"training step on {B} x {T} tokens of the byte tokenizer: loss {loss:.3f}",
    f"paso de entrenamiento con {B} x {T} tokens del tokenizador de bytes: pérdida "
    f"{es_num(loss, '.3f')}")

model.resize_token_embeddings(V_NEW, rng=rng)
say(f"tokenizer merge: {V_NEW} ids; model.resize_token_embeddings({V_NEW})",
    f"fusión de tokenizadores: {V_NEW} ids; model.resize_token_embeddings({V_NEW})")
ids, targets = rng.integers(0, V_NEW, (B, T)), rng.integers(0, V_NEW, (B, T))
story_failed, outcome = False, ""
try:
    loss = training_step(model, ids, targets)
except ValueError as exc:
    story_failed, outcome = True, f"ValueError: {exc}"
else:
    outcome = tr(f"loss {loss:.3f}", f"pérdida {es_num(loss, '.3f')}")
say(f"training step on {B} x {T} tokens of the merged tokenizer:",
    f"paso de entrenamiento con {B} x {T} tokens del tokenizador fusionado:")
print("  " + outcome)

conclude(checks, story_failed,
         f"after the merge and the resize, the first training step crashed: {outcome}",
         f"tras la fusión y el redimensionado, el primer paso de entrenamiento falló: {outcome}",
         "OK: after the resize the training step runs, and every part of the tied model reports "
         "the new vocabulary, whichever way the matrix was resized.",
         "OK: tras el redimensionado el paso de entrenamiento funciona, y cada parte del modelo "
         "atado da el vocabulario nuevo, se redimensione la matriz como se redimensione.")
