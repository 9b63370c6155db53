"""Experiment for the break `tied-vocab-mismatch`.

Story: a tokenizer merge grew the vocabulary from 256 to 512 ids. The embedding was rebuilt
with the new size, but the config that builds the tied head still says 256.
"""

import numpy as np

from minimodel.lab.breaks.harness import say, symptom, tr, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402  (after the workspace check)
import minimodel.functional as F  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
rng = np.random.default_rng(0)
V_TOKENIZER, V_CONFIG, D = 512, 256, 16

emb = nn.Embedding(V_TOKENIZER, D, rng=rng)
say(f"embedding.weight: {emb.weight.shape}  (the new tokenizer has {V_TOKENIZER} ids)",
    f"embedding.weight: {emb.weight.shape}  (el tokenizador nuevo tiene {V_TOKENIZER} ids)")
try:
    head = nn.TiedHead(emb, vocab_size=V_CONFIG)
except ValueError as exc:
    say("TiedHead refused at construction time, before any forward pass:",
        "TiedHead se negó al construirse, antes de cualquier pasada hacia delante:")
    print(f"  ValueError: {exc}")
    say("OK: the disagreement is caught where it is made, with both sizes in the message.",
        "OK: el desacuerdo se detecta donde se produce, con los dos tamaños en el mensaje.")
    raise SystemExit(0)

say(f"TiedHead built without complaint; head.vocab_size = {head.vocab_size}",
    f"TiedHead se construyó sin quejarse; head.vocab_size = {head.vocab_size}")
h = mm.Tensor(rng.standard_normal((4, 8, D)).astype(np.float32))  # (B, T, d) hidden states
logits = head(h)
say(f"logits = h @ E.T has shape {logits.shape}", f"logits = h @ E.T tiene forma {logits.shape}")
targets = rng.integers(0, V_TOKENIZER, size=(4, 8))  # ids from the new tokenizer
say(f"the training loop reshapes logits to (-1, head.vocab_size) = (-1, {head.vocab_size}) "
    "before the loss...",
    f"el bucle de entrenamiento cambia la forma de los logits a (-1, head.vocab_size) = "
    f"(-1, {head.vocab_size}) antes de la pérdida...")
try:
    loss = F.cross_entropy(logits.reshape(-1, head.vocab_size), targets.reshape(-1))
    outcome = tr(f"no error at all, loss = {float(loss.data):.3f} (silently wrong)",
                 f"ningún error, pérdida = {float(loss.data):.3f} (mal en silencio)")
except ValueError as exc:
    outcome = f"ValueError: {exc}"
print("  " + outcome)
symptom(f"the head was told {head.vocab_size} classes but the tied matrix has "
        f"{emb.vocab_size} rows, so logits have {logits.shape[-1]} columns ({V_TOKENIZER} vs "
        f"{V_CONFIG}); the error surfaces far from the cause",
        f"a la cabeza se le indicaron {head.vocab_size} clases pero la matriz atada tiene "
        f"{emb.vocab_size} filas, así que los logits tienen {logits.shape[-1]} columnas "
        f"({V_TOKENIZER} frente a {V_CONFIG}); el error aparece lejos de su causa")
