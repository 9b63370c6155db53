"""Experiment for the break `frequent-tokens-learn-slowly`: how fast each token's row learns.

A short training run on skewed ids (a few tokens dominate, as in real text): the workspace's
embedding and SGD beside a reference written out in NumPy (gradient as a product with a
one-hot matrix, update by hand) on the same batches. The last word
comes from the break's invariants (random shapes and gradients, GPT, MaskedLM and CBOW
training), not from this one example.
"""

import numpy as np

from minimodel_break_harness import allclose, conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import nn, optim  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
emb = nn.Embedding(8, 4, rng=np.random.default_rng(0))
ids = np.array([3, 5, 3, 3])  # token 3 appears three times, token 5 once
out = emb(ids)  # (4, 4)
out.sum().backward()  # dL/d(out) = 1 everywhere, so each use of a row should add 1
grad = emb.weight.grad
expected = np.eye(8)[ids].T @ np.ones((4, 4))  # one-hot(ids).T @ dL/d(out): (8, 4)
# (Not printed: what a user sees is the training run below; conclude() reads this one.)

# Learning speed: every position of token v pulls row v towards the same target t_v, with
# loss = sum_p |E[ids_p] - t[ids_p]|^2 / (2N). SGD on the same skewed batches, twice: the
# workspace's embedding and optimizer, and the reference one-hot(ids).T @ dL/dx by hand.
V, D, N, STEPS, LR = 16, 4, 64, 60, 1.0
rng = np.random.default_rng(1)
targets = rng.standard_normal((V, D)).astype(np.float32)  # (V, d)
start = rng.standard_normal((V, D)).astype(np.float32)  # (V, d)
batches = [(rng.zipf(1.6, size=N) - 1) % V for _ in range(STEPS)]  # (N,) skewed ids each
model = nn.Embedding(V, D)
model.weight.data[:] = start
opt = optim.SGD(model.parameters(), lr=LR)
reference = start.copy()
first_loss = last_loss = 0.0
start_gap = np.linalg.norm(start - targets, axis=1)  # (V,) each row's distance at step 0
halfway = {"yours": np.full(V, -1), "reference": np.full(V, -1)}  # first step at <= half
for step, batch in enumerate(batches, 1):
    opt.zero_grad()
    diff = model(batch) - mm.Tensor(targets[batch])  # (N, d)
    loss = (diff * diff).sum() / (2 * N)
    loss.backward()
    opt.step()
    dx = (reference[batch] - targets[batch]) / N  # (N, d): dL/dx at each position
    reference -= LR * np.eye(V)[batch].T @ dx  # (V, N) @ (N, d)
    first_loss = float(loss.data) if step == 1 else first_loss
    for name, weight in (("yours", model.weight.data), ("reference", reference)):
        arrived = (np.linalg.norm(weight - targets, axis=1) <= start_gap / 2) & (halfway[name] < 0)
        halfway[name][arrived] = step


def batch_loss(weight: np.ndarray, batch: np.ndarray) -> float:
    return float(((weight[batch] - targets[batch]) ** 2).sum() / (2 * N))


last_loss, reference_loss = batch_loss(model.weight.data, batches[-1]), batch_loss(reference,
                                                                                   batches[-1])
uses = np.bincount(np.concatenate(batches), minlength=V) / STEPS  # mean uses per batch


def left(weight: np.ndarray) -> np.ndarray:
    """Fraction of each row's starting distance to its target still to go, (V,)."""
    return np.linalg.norm(weight - targets, axis=1) / np.linalg.norm(start - targets, axis=1)


buggy, fixed = left(model.weight.data), left(reference)
say(f"{STEPS} SGD steps (lr = {LR}) on batches of {N} skewed ids; loss {first_loss:.3f} -> "
    f"{last_loss:.3f} (reference: {reference_loss:.3f})",
    f"{STEPS} pasos de SGD (lr = {es_num(LR, '.1f')}) con lotes de {N} ids sesgados; pérdida "
    f"{es_num(first_loss, '.3f')} -> {es_num(last_loss, '.3f')} (referencia: "
    f"{es_num(reference_loss, '.3f')})")
say("for each token: the step at which its row was half-way to its target, and the distance "
    "still to go after the last step (1.00 = has not moved), this library vs reference:",
    "para cada token: el paso en que su fila llegó a mitad de camino de su objetivo y la "
    "distancia que le queda tras el último paso (1,00 = no se ha movido), esta biblioteca "
    "frente a la referencia:")


def when(name: str, token: int) -> str:
    return f"{halfway[name][token]:>3d}" if halfway[name][token] > 0 else "  -"


order = np.argsort(-uses)
shown = [*order[:3], order[8]]  # the three most frequent tokens and a rare one
for token in shown:
    say(f"  token {token:2d}: {uses[token]:4.1f} uses per batch   half-way at step "
        f"{when('yours', token)} vs {when('reference', token)}   still to go "
        f"{buggy[token]:.2f} vs {fixed[token]:.2f}",
        f"  token {token:2d}: {es_num(uses[token], '4.1f')} usos por lote   mitad de camino "
        f"en el paso {when('yours', token)} frente a {when('reference', token)}   le queda "
        f"{es_num(buggy[token], '.2f')} frente a {es_num(fixed[token], '.2f')}")
if any(halfway[name][token] < 0 for name in halfway for token in shown):
    say("(-: not half-way within the run)", "(-: no llegó a mitad de camino en la ejecución)")

conclude(checks, not allclose(grad, expected),
         f"after {STEPS} steps the most frequent token has {buggy[order[0]]:.2f} of its "
         f"distance still to go, against {fixed[order[0]]:.2f} with the reference",
         f"tras {STEPS} pasos al token más frecuente le queda "
         f"por recorrer {es_num(buggy[order[0]], '.2f')} de la distancia, frente a "
         f"{es_num(fixed[order[0]], '.2f')} en la referencia",
         "OK: every use of a row adds its gradient, whatever the shape of the ids.",
         "OK: cada uso de una fila suma su gradiente, sea cual sea la forma de los ids.")
