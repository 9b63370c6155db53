"""Experiment for the break `val-loss-too-good`: a validation loss, and the text behind it.

Trains the workspace's GPT for a few seconds on Shakespeare characters and prints what a user
would look at: its training loss along the way, its validation loss, and a sample written by
`generate`. For scale, two counting models fitted on the same training characters are scored
on the same validation windows (one character's frequency, then the frequency of a character
after the one before it), and the pair model writes a sample too. The last word comes from the
break's invariants (random GPTs; evaluation, training and generation), not from this example.
"""

import math
import time

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel import optim  # noqa: E402
from minimodel.data import load_corpus  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
text = load_corpus()[:30000]
chars = sorted(set(text))
data = np.array([chars.index(c) for c in text], dtype=np.int64)
V, T, B, STEPS = len(chars), 8, 16, 240
train, val = data[:27000], data[27000:]
PROMPT = "ROMEO:\n"
prompt_ids = [chars.index(c) for c in PROMPT]


def batch(ids, rng, size=B):
    """Windows of T characters and, as targets, the same windows one character later."""
    starts = rng.integers(0, len(ids) - T - 1, size)
    return (np.stack([ids[s:s + T] for s in starts]), np.stack([ids[s + 1:s + T + 1] for s in starts]))


def readable(ids) -> str:
    return "".join(chars[i] for i in ids).replace("\n", " / ")


def train_gpt() -> tuple[dict[int, float], float, str | None]:
    """(training loss at a few steps, validation loss, a 100-character sample or None)."""
    model = GPT(GPTConfig(V, T, n_layer=1, n_head=8, d_model=32), rng=np.random.default_rng(0))
    opt = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    rng, losses = np.random.default_rng(2), []
    for _ in range(STEPS):
        xb, yb = batch(train, rng)
        opt.zero_grad()
        loss = model(xb, yb)[1]
        loss.backward()
        opt.step()
        losses.append(float(loss.data))
    curve = {step: float(np.mean(losses[max(0, step - 20):step])) for step in (20, 60, 120, 240)}
    with mm.no_grad():
        val_loss = float(model(xv, yv)[1].data)
    if not math.isfinite(val_loss):  # nothing sensible to sample from
        return curve, val_loss, None
    out = model.generate(np.array([prompt_ids]), 100, seed=0)[0, len(PROMPT):]
    return curve, val_loss, readable(out)


def counting_models() -> tuple[float, float, str]:
    """Validation losses of a one-character and a two-character counting model, and a sample
    of the second. p(c) = (n(c) + 1) / (N + V); p(c | b) = (n(b c) + 1) / (n(b) + V)."""
    ones = np.bincount(train, minlength=V) + 1.0  # (V,)
    pairs = np.ones((V, V))  # (V, V): pairs[b, c] = 1 + times c follows b
    np.add.at(pairs, (train[:-1], train[1:]), 1.0)
    p_one = ones / ones.sum()
    p_pair = pairs / pairs.sum(axis=1, keepdims=True)
    unigram = float(-np.log(p_one[yv]).mean())
    bigram = float(-np.log(p_pair[xv, yv]).mean())
    rng, ids = np.random.default_rng(0), list(prompt_ids)
    for _ in range(100):
        ids.append(int(rng.choice(V, p=p_pair[ids[-1]])))
    return unigram, bigram, readable(ids[len(PROMPT):])


xv, yv = batch(val, np.random.default_rng(3), size=128)  # (128, T) each
start = time.perf_counter()
curve, val_loss, sample = train_gpt()
seconds = time.perf_counter() - start
unigram, bigram, pair_sample = counting_models()

say(f"trained your GPT for {STEPS} steps on {len(train):,} characters (V = {V}, "
    f"ln V = {math.log(V):.2f}) in {seconds:.1f} s",
    f"tu GPT se entrenó durante {STEPS} pasos con {es_num(len(train), ',d')} caracteres (V = {V}, "
    f"ln V = {es_num(math.log(V), '.2f')}) en {es_num(seconds, '.1f')} s")
say("  training loss (mean of the 20 steps before):",
    "  pérdida de entrenamiento (media de los 20 pasos anteriores):")
say("    " + "   ".join(f"step {s}: {v:.3f}" for s, v in curve.items()),
    "    " + "   ".join(f"paso {s}: {es_num(v, '.3f')}" for s, v in curve.items()))
say(f"  validation loss on 128 windows of {T} characters: {val_loss:.3f}",
    f"  pérdida de validación con 128 ventanas de {T} caracteres: {es_num(val_loss, '.3f')}")
say("counting models fitted on the same training characters, scored on the same windows:",
    "modelos de recuento ajustados con los mismos caracteres de entrenamiento, evaluados en "
    "las mismas ventanas:")
say(f"  how often each character occurs:              {unigram:.3f}",
    f"  frecuencia de cada carácter:                      {es_num(unigram, '.3f')}")
say(f"  how often it follows the character before it: {bigram:.3f}",
    f"  frecuencia de cada carácter tras el anterior:     {es_num(bigram, '.3f')}")
say(f"samples, prompt {PROMPT!r}, 100 characters (/ marks a new line):",
    f"muestras con el prompt {PROMPT!r}, 100 caracteres (/ marca un salto de línea):")
say(f"  your GPT (generate): {sample or '(none: its loss is not a number)'}",
    f"  tu GPT (generate):    {sample or '(ninguna: su pérdida no es un número)'}")
say(f"  pair counts:         {pair_sample}", f"  recuento de pares:    {pair_sample}")

story_failed = not math.isfinite(val_loss) or val_loss < bigram - 1.0
if math.isfinite(val_loss):
    seen_en = (f"your GPT's validation loss is {val_loss:.2f}, {bigram - val_loss:.1f} below the "
               f"pair counts' {bigram:.2f}, and its training loss agrees with it; compare the "
               "samples")
    seen_es = (f"la pérdida de validación de tu GPT es {es_num(val_loss, '.2f')}, "
               f"{es_num(bigram - val_loss, '.1f')} por debajo de los {es_num(bigram, '.2f')} del "
               "recuento de pares, y su pérdida de entrenamiento coincide con ella; compara las "
               "muestras")
else:
    seen_en = f"your GPT's validation loss is {val_loss}: training produced no numbers"
    seen_es = f"la pérdida de validación de tu GPT es {val_loss}: el entrenamiento no dio números"
conclude(checks, story_failed, seen_en, seen_es,
         "OK: your GPT's validation loss is where a few seconds of training can honestly put it.",
         "OK: la pérdida de validación de tu GPT está donde unos segundos de entrenamiento "
         "pueden dejarla honradamente.")
