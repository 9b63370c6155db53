"""Experiment for the break `loss-crash-after-merge`.

Story: a tokenizer merge grew the vocabulary from 256 to 512 ids. The embedding was rebuilt
with the new size, but the config that builds the tied head still says 256. The last word
comes from the break's invariants (random sizes, every code path), not from this one example.
"""

import numpy as np

from minimodel_break_harness import conclude, es_num, say, tr, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402  (after the workspace check)
import minimodel.functional as F  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
rng = np.random.default_rng(0)
V_TOKENIZER, V_CONFIG, D = 512, 256, 16

emb = nn.Embedding(V_TOKENIZER, D, rng=rng)
say(f"embedding.weight: {emb.weight.shape}  (the new tokenizer has {V_TOKENIZER} ids)",
    f"embedding.weight: {emb.weight.shape}  (el tokenizador nuevo tiene {V_TOKENIZER} ids)")
story_failed, outcome = False, ""
try:
    head = nn.TiedHead(emb, vocab_size=V_CONFIG)
except ValueError as exc:
    say("TiedHead refused at construction time, before any forward pass:",
        "TiedHead se negó al construirse, antes de cualquier pasada hacia delante:")
    print(f"  ValueError: {exc}")
else:
    story_failed = True
    say("TiedHead built without complaint", "TiedHead se construyó sin quejarse")
    h = mm.Tensor(rng.standard_normal((4, 8, D)).astype(np.float32))  # (B, T, d) hidden states
    logits = head(h)
    say(f"logits = h @ E.T has shape {logits.shape}",
        f"logits = h @ E.T tiene forma {logits.shape}")
    targets = rng.integers(0, V_TOKENIZER, size=(4, 8))  # ids from the new tokenizer
    say("first training step: the loss over the batch's 4 * 8 = 32 targets...",
        "primer paso de entrenamiento: la pérdida sobre los 4 * 8 = 32 objetivos del lote...")
    try:  # the training loop flattens the logits with the head's vocabulary size
        loss = F.cross_entropy(logits.reshape(-1, head.vocab_size), targets.reshape(-1))
        outcome = tr(f"no error at all, loss = {float(loss.data):.3f} (silently wrong)",
                     f"ningún error, pérdida = {es_num(float(loss.data), '.3f')} (mal en "
                     f"silencio)")
    except ValueError as exc:
        outcome = f"ValueError: {exc}"
    print("  " + outcome)

conclude(checks, story_failed,
         f"the tied head was built without a complaint; the first loss then said: {outcome}",
         f"la cabeza atada se construyó sin quejarse; la primera pérdida dijo después: {outcome}",
         "OK: the disagreement is caught where it is made, with both sizes in the message, and "
         "every part of a tied model reads its size from the embedding.",
         "OK: el desacuerdo se detecta donde se produce, con los dos tamaños en el mensaje, y "
         "cada parte de un modelo atado lee su tamaño del embedding.")
