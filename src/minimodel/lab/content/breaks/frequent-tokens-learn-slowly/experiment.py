"""Experiment for the break `frequent-tokens-learn-slowly`: one token used three times.

The last word comes from the break's invariants (random shapes and gradients, GPT, MaskedLM
and CBOW training), not from this one example.
"""

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
emb = nn.Embedding(8, 4, rng=np.random.default_rng(0))
ids = np.array([3, 5, 3, 3])  # token 3 appears three times, token 5 once
out = emb(ids)  # (4, 4)
out.sum().backward()  # dL/d(out) = 1 everywhere, so each use of a row should add 1
grad = emb.weight.grad
expected = np.zeros((8, 4))
np.add.at(expected, ids, 1.0)  # the dense answer: one-hot(ids).T @ ones
say(f"ids = {ids.tolist()}; loss = sum of the looked-up rows",
    f"ids = {ids.tolist()}; pérdida = suma de las filas indexadas")
for token in (3, 5):
    uses = int((ids == token).sum())
    say(f"  token {token}: used {uses}x, grad row = {grad[token].tolist()}, expected "
        f"{expected[token].tolist()}",
        f"  token {token}: usado {uses}x, fila del gradiente = {grad[token].tolist()}, "
        f"esperado {expected[token].tolist()}")

# The same effect inside a real training signal: frequent tokens get too little gradient.
rng = np.random.default_rng(1)
ids = rng.zipf(1.5, size=200) % 8  # skewed: a few tokens dominate, like real text
g = rng.standard_normal((200, 4)).astype(np.float32)
emb.weight.grad = None
emb(ids).backward(g)
dense = np.zeros((8, 4))
np.add.at(dense, ids, g)
counts = np.bincount(ids, minlength=8)
ratio = np.linalg.norm(emb.weight.grad, axis=1) / np.maximum(np.linalg.norm(dense, axis=1), 1e-12)
say("200 skewed ids: |grad row| / |correct row| per token (1.0 = right):",
    "200 ids sesgados: |fila del gradiente| / |fila correcta| por token (1,0 = correcto):")
for token in np.argsort(-counts)[:4]:
    say(f"  token {token}: count {counts[token]:3d}  ratio {ratio[token]:.3f}",
        f"  token {token}: usos {counts[token]:3d}  cociente {es_num(ratio[token], '.3f')}")

conclude(checks, not np.allclose(grad, expected),
         f"token 3 was looked up 3 times but its gradient row is {grad[3].tolist()}, the size "
         f"of a single use (expected {expected[3].tolist()})",
         f"el token 3 se indexó 3 veces pero su fila del gradiente es {grad[3].tolist()}, lo "
         f"de un solo uso (esperado {expected[3].tolist()})",
         "OK: every use of a row adds its gradient, whatever the shape of the ids.",
         "OK: cada uso de una fila suma su gradiente, sea cual sea la forma de los ids.")
