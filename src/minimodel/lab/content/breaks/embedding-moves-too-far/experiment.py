"""Experiment for the break `embedding-moves-too-far`: how far training moves a tied GPT's E.

The story is the user's: the same small GPT trained tied and untied with minimodel's own recipe
(AdamW with weight decay on the matrices, warm-up and cosine, clipping at 1.0), on the same
batches, and how far every matrix ends from where it started, relative to its starting norm. The last word comes from the break's invariants (GPT, MaskedLM, CBOW and a tie under other
names; AdamW and SGD), not from this one example.
"""

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel.models import GPT, GPTConfig  # noqa: E402
from minimodel.optim import AdamW, clip_grad_norm, cosine_with_warmup  # noqa: E402
from minimodel.training.loop import param_groups  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
V, D, T, B, STEPS, LR, WARMUP = 64, 32, 16, 8, 60, 3e-3, 5
# A toy corpus with structure to learn: token t is mostly followed by t + 7 (mod V).
text = (np.arange(5000) * 7 + np.random.default_rng(0).integers(0, 3, 5000)) % V


def train(tied: bool) -> tuple[float, float, dict[str, float], bool]:
    """First and last loss, ||W_end - W_start|| / ||W_start|| for every matrix (2-D parameter)
    under every name it has, and whether the head's matrix is the embedding's."""
    model = GPT(GPTConfig(V, T, 1, 2, D, tie_embeddings=tied), rng=np.random.default_rng(0))
    matrices = {name: p for name, p in model.named_parameters(remove_duplicate=False)
                if p.data.ndim == 2}
    start = {name: p.data.copy() for name, p in matrices.items()}
    opt = AdamW(param_groups(model, weight_decay=0.1), lr=LR)
    batches = np.random.default_rng(1)
    losses = []
    for step in range(STEPS):
        for group in opt.param_groups:
            group["lr"] = cosine_with_warmup(step, LR, WARMUP, STEPS)
        at = batches.integers(0, len(text) - T - 1, B)
        x = np.stack([text[i:i + T] for i in at])  # (B, T)
        y = np.stack([text[i + 1:i + T + 1] for i in at])  # (B, T): the next tokens
        opt.zero_grad()
        loss = model(x, y)[1]
        loss.backward()
        clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.data))
    moved = {name: float(np.linalg.norm(p.data - start[name]) / np.linalg.norm(start[name]))
             for name, p in matrices.items()}
    return losses[0], losses[-1], moved, matrices["lm_head.weight"] is matrices["token_emb.weight"]


runs = {tied: train(tied) for tied in (True, False)}
say(f"{STEPS} AdamW steps (lr {LR}, weight decay 0.1), same batches, tied and untied GPT:",
    f"{STEPS} pasos de AdamW (lr {es_num(LR, 'g')}, decaimiento de pesos 0,1), mismos lotes, GPT "
    f"atado y sin atar:")
say(f"  loss, first -> last step       tied {runs[True][0]:.3f} -> {runs[True][1]:.3f}   "
    f"untied {runs[False][0]:.3f} -> {runs[False][1]:.3f}",
    f"  pérdida, primer -> último paso atado {es_num(runs[True][0], '.3f')} -> "
    f"{es_num(runs[True][1], '.3f')}   sin atar {es_num(runs[False][0], '.3f')} -> "
    f"{es_num(runs[False][1], '.3f')}")
say("  how far every matrix moved, ||W_end - W_start|| / ||W_start||:",
    "  cuánto se movió cada matriz, ||W_fin - W_inicio|| / ||W_inicio||:")
for name in runs[False][2]:  # every matrix of the untied model, in its order
    label = "E (token_emb.weight)" if name == "token_emb.weight" else name
    tied_moved = runs[True][2][name]
    same_as_e = "  (= E)" if name == "lm_head.weight" and runs[True][3] else ""
    say(f"    {label:30s} tied {tied_moved:6.2f}{same_as_e:7s} untied {runs[False][2][name]:6.2f}",
        f"    {label:30s} atado {es_num(tied_moved, '6.2f')}{same_as_e:7s} sin atar "
        f"{es_num(runs[False][2][name], '6.2f')}")

e_moved = runs[True][2]["token_emb.weight"]
furthest = max(runs[False][2], key=runs[False][2].get)  # the untied matrix that moved most
untied_most = runs[False][2][furthest]
conclude(checks, e_moved > 1.3 * untied_most,
         f"after {STEPS} steps the tied E moved {e_moved:.2f} times its starting norm, further "
         f"than any matrix of the untied model (the furthest, {furthest}: {untied_most:.2f})",
         f"tras {STEPS} pasos la E atada se movió {es_num(e_moved, '.2f')} veces su norma "
         f"inicial, más que cualquier matriz del modelo sin atar (la que más, {furthest}: "
         f"{es_num(untied_most, '.2f')})",
         "OK: the tied E moved about as far as the untied model's matrices.",
         "OK: la E atada se movió más o menos lo que las matrices del modelo sin atar.")
