"""Invariants behind `val-loss-too-good`: a GPT predicts token t+1 from tokens 0..t only.

Its outputs at position t must not depend on any later token on every path: the logits of an
evaluation forward, the logits and the loss of a training forward (with targets, with and
without the logits), and generation, which must agree with full forward passes. The same holds
one level down for ``F.self_attention`` with ``causal=True``, with the kernels on and off, and
the fused kernel computes what its composite definition computes, values and gradients, for
several heads, causal or not; with the kernels on, that kernel is registered and runs (once
unregistered, "kernels on" would compare the composite with itself). The masked LM stays
bidirectional, and MultiHeadAttention honours its ``causal`` flag both ways.
The experiment trains in float32: the logits of an evaluation forward, ``F.self_attention``
and the kernel's agreement with its composite are checked in float32 and in float64 on every
run (a fix that holds in one dtype only fails).

Besides small ones, every check that builds a model or a layer also draws the main job's
d = 128 and a d above 768 (a model's vocabulary then at least 1024), so a fix gated on the
width fails. Heads are drawn from 2 to 16 (the kernel check also runs 1 and always 8, the
experiment's), and the experiment's own GPT (V = 62, T = 8, one layer, 8 heads, d = 32,
float32) is one more case of the model checks, so a fix gated on the number of heads or on
any other value the experiment passes fails. Sizes, weights and tokens are drawn afresh on every run (``checks.seed``). Run by
`minimodel break check`; `break run` reads the same checks.
"""

import numpy as np

from minimodel_break_harness import (WIDE_VOCAB, CheckFailed, Checks, array_equal, es_num,
                                     require_kernel_runs, use_workspace, wide_widths)

mm = use_workspace()
import minimodel.functional as F  # noqa: E402
from minimodel.kernels import attention as attention_kernel  # noqa: E402
from minimodel import nn  # noqa: E402
from minimodel.models import GPT, GPTConfig, MaskedLM, MLMConfig  # noqa: E402

checks = Checks()
rng = np.random.default_rng(checks.seed)
LEAK = 1e-6  # an honest causal model changes by 0 (float32) to ~1e-15 (float64)
FLOATS = (np.float32, np.float64)
# Kernel vs composite, relative to the largest value: float32 rounds at ~5e-7, float64 ~1e-15.
AGREE = {np.float32: 1e-4, np.float64: 1e-9}


def dtypes(count: int) -> list:
    """``count`` (>= 2) float dtypes in a random order, float32 and float64 both among them."""
    drawn = [FLOATS[i % 2] for i in range(count)]
    return [drawn[i] for i in rng.permutation(count)]


def widths() -> list[int | None]:
    """A check's widths: None (a small one, drawn where it is used), 128 and one above 768,
    all multiples of 16, so 2, 4, 8 and 16 heads (and others) divide them."""
    return [None] + wide_widths(rng, multiple=16)


MAX_HEADS = 16  # heads are drawn up to 16; the experiment's GPT has 8
EXPERIMENT = GPTConfig(62, 8, n_layer=1, n_head=8, d_model=32)  # experiment.py's GPT (float32)


def heads_and_width(d: int | None, low: int = 2) -> tuple[int, int]:
    """(heads, d): for a small model (``d`` None) heads drawn in [low, 16] and d a multiple
    of them; for a given ``d`` a head count in [low, 16] that divides it."""
    if d is None:
        heads = int(rng.integers(low, MAX_HEADS + 1))
        return heads, heads * int(rng.integers(1, 4))
    return int(rng.choice([h for h in range(low, MAX_HEADS + 1) if d % h == 0])), d


WIDE_GPTS: dict = {}  # (d, dtype) -> GPT: a wide model is built once a run, read-only after


def random_gpt(dtype=np.float64, d: int | None = None, config: GPTConfig | None = None) -> GPT:
    """A random GPT: small, of width ``d`` with one layer, V >= 1024 and T <= 6 (built once
    per width and dtype; the checks only read it), or of the given ``config``."""
    if d is not None and (d, dtype) in WIDE_GPTS:
        return WIDE_GPTS[d, dtype]
    V, T = int(rng.integers(5, 60)), int(rng.integers(4, 10))
    heads, d = heads_and_width(d)
    layers = int(rng.integers(1, 3))
    if d >= 128:
        V, T, layers = int(rng.integers(WIDE_VOCAB, 2049)), int(rng.integers(4, 7)), 1
    config = config or GPTConfig(V, T, layers, heads, d)
    d = config.d_model
    model = GPT(config, rng=rng)
    model.astype(dtype)
    for name, p in model.named_parameters():  # larger weights than a fresh model: sharper
        if d < 128 or ".attn." in name:       # attention (wide: attention only, for time)
            p.data[...] += rng.standard_normal(p.shape) * 0.3
    if d >= 128:
        WIDE_GPTS[d, dtype] = model
    return model


def future_leak(outputs, x: np.ndarray) -> tuple[float, int]:
    """Largest change of ``outputs(ids)[:, :t+1]`` when every token after t is redrawn."""
    V = int(x.max()) + 1
    with mm.no_grad():
        base = outputs(x)
        require_finite(base)
        worst, where = 0.0, -1
        for t in range(x.shape[1] - 1):
            x2 = x.copy()
            x2[:, t + 1:] = (x2[:, t + 1:] + rng.integers(1, V, size=x2[:, t + 1:].shape)) % V
            diff = float(np.abs(outputs(x2)[:, :t + 1] - base[:, :t + 1]).max())
            if diff > worst:
                worst, where = diff, t
    return worst, where


def require_finite(values: np.ndarray) -> None:
    if not np.isfinite(values).all():
        raise CheckFailed(f"{int((~np.isfinite(values)).sum())} of {values.size} outputs are not "
                          "finite (nan or inf)",
                          f"{int((~np.isfinite(values)).sum())} de {values.size} salidas no son "
                          "finitas (nan o inf)")


def require_causal(leak: float, t: int, what_en: str, what_es: str) -> None:
    if leak > LEAK:
        raise CheckFailed(f"{what_en} up to position {t} changed by {leak:.3g} when later tokens "
                          "changed",
                          f"{what_es} hasta la posición {t} cambiaron {es_num(leak, '.3g')} al "
                          f"cambiar "
                          "tokens posteriores")


def tokens(model: GPT, rows: int = 2) -> np.ndarray:
    V, T = model.config.vocab_size, model.config.block_size
    x = rng.integers(0, V, size=(rows, T))
    x[0, 0] = V - 1  # so future_leak sees the whole vocabulary
    return x


@checks.case("evaluation-causal",
             "random GPTs (small, d = 128 and d above 768), float32 and float64: the logits of "
             "model(ids) at position t do not depend on tokens after t",
             "GPT aleatorios (pequeños, d = 128 y d mayor que 768), en float32 y en float64: los "
             "logits de model(ids) en la posición t no dependen de los tokens posteriores a t")
def _():
    cases = [(None, dtype) for dtype in dtypes(2)] + list(zip(widths()[1:], dtypes(2)))
    for d, dtype in cases + [("experiment", np.float32)]:
        model = (random_gpt(dtype, config=EXPERIMENT) if d == "experiment"
                 else random_gpt(dtype, d))
        leak, t = future_leak(lambda ids: model(ids)[0].data, tokens(model))
        name = f"{np.dtype(dtype).name} d={model.config.d_model}"
        require_causal(leak, t, f"{name} logits", f"los logits en {name}")


@checks.case("training-causal",
             "with targets (the training path), the logits at position t ignore later tokens, "
             "and the loss equals the mean of the losses predicted from each prefix (small d, "
             "d = 128 and d above 768)",
             "con objetivos (el camino de entrenamiento), los logits en la posición t ignoran los "
             "tokens posteriores, y la pérdida es la media de las pérdidas predichas desde cada "
             "prefijo (d pequeña, d = 128 y d mayor que 768)")
def _():
    for d in widths():
        training_causal(random_gpt(d=d))
    training_causal(random_gpt(np.float32, config=EXPERIMENT))


def training_causal(model: GPT) -> None:
    """training-causal for one model."""
    x = tokens(model)
    y = rng.integers(0, model.config.vocab_size, size=x.shape)
    leak, t = future_leak(lambda ids: model(ids, y)[0].data, x)
    require_causal(leak, t, "training logits", "los logits de entrenamiento")
    with mm.no_grad():
        loss = float(model.loss(x, y).data)
        per_prefix = []
        for t in range(x.shape[1]):
            z = model(x[:, :t + 1])[0].data[:, t]  # (B, V), only tokens 0..t seen
            z = z - z.max(axis=1, keepdims=True)
            log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            per_prefix.append(-log_p[np.arange(len(z)), y[:, t]])
    want = float(np.mean(per_prefix))
    if abs(loss - want) > 1e-6:
        raise CheckFailed(f"training loss {loss:.6f}, but predicting each token from its prefix "
                          f"gives {want:.6f}: the loss saw the future",
                          f"pérdida de entrenamiento {es_num(loss, '.6f')}, pero predecir cada "
                          f"token desde "
                          f"su prefijo da {es_num(want, '.6f')}: la pérdida vio el futuro")


@checks.case("generation-matches-forward",
             "greedy generate() picks, at every step, the argmax of a full forward pass over the "
             "tokens so far, and those forward logits ignore the tokens generated later (small "
             "d, d = 128 and d above 768)",
             "generate() voraz elige, en cada paso, el argmax de una pasada completa sobre los "
             "tokens hasta ese momento, y esos logits no dependen de los tokens generados "
             "después (d pequeña, d = 128 y d mayor que 768)")
def _():
    for d in widths():
        generation_matches_forward(random_gpt(d=d))


def generation_matches_forward(model: GPT) -> None:
    """generation-matches-forward for one model."""
    T = model.config.block_size
    prompt = tokens(model, rows=3)[:, :2]
    out = model.generate(prompt, max_new_tokens=T - 2, temperature=0)  # (3, T)
    with mm.no_grad():
        full = model(out)[0].data  # (3, T, V): one pass over the whole generated text
        for t in range(1, T - 1):
            prefix = model(out[:, :t + 1])[0].data[:, t]  # (3, V)
            if not array_equal(out[:, t + 1], prefix.argmax(-1)):
                raise CheckFailed(f"step {t}: generate() chose {out[:, t + 1].tolist()}, a "
                                  f"forward over the prefix predicts {prefix.argmax(-1).tolist()}",
                                  f"paso {t}: generate() eligió {out[:, t + 1].tolist()}, una "
                                  f"pasada sobre el prefijo predice "
                                  f"{prefix.argmax(-1).tolist()}")
            gap = float(np.abs(full[:, t] - prefix).max())
            if gap > LEAK:
                raise CheckFailed(f"position {t}: the logits of one pass over the generated text "
                                  f"differ by {gap:.3g} from those of its prefix (later tokens "
                                  "leak in)",
                                  f"posición {t}: los logits de una pasada sobre el texto "
                                  f"generado difieren {es_num(gap, '.3g')} de los de su prefijo "
                                  f"(se cuelan "
                                  "los tokens posteriores)")


@checks.case("self-attention-causal",
             "F.self_attention(qkv, H, causal=True) on random inputs: the output at position t "
             "ignores later positions, with the kernels on and off, in float32 and float64 "
             "(small d, d = 128 and d above 768)",
             "F.self_attention(qkv, H, causal=True) con entradas aleatorias: la salida en la "
             "posición t ignora las posiciones posteriores, con los kernels activados y "
             "desactivados, en float32 y en float64 (d pequeña, d = 128 y d mayor que 768)")
def _():
    for d in widths():
        self_attention_causal(d)


def self_attention_causal(d: int | None) -> None:
    """self-attention-causal for width ``d`` (None: a small one)."""
    B, T = int(rng.integers(1, 4)), int(rng.integers(2, 12))
    heads, d = heads_and_width(d)
    qkv64 = rng.standard_normal((B, T, 3 * d)) * 2.0  # (B, T, 3d)
    x = np.arange(T)[None, :].repeat(B, axis=0)  # stands for the positions: future_leak redraws
    for dtype in dtypes(2):
        qkv, name = qkv64.astype(dtype), np.dtype(dtype).name
        for on in (True, False):
            def outputs(ids: np.ndarray) -> np.ndarray:
                changed = qkv.copy()
                moved = ids != x  # (B, T): the positions future_leak redrew
                changed[moved] += rng.standard_normal(changed[moved].shape)
                with mm.kernels(on):
                    return F.self_attention(mm.Tensor(changed), heads, causal=True).data
            leak, t = future_leak(outputs, x)
            require_causal(leak, t, f"{name} self_attention outputs (kernels "
                           f"{'on' if on else 'off'})",
                           f"las salidas de self_attention en {name} (kernels "
                           f"{'activados' if on else 'desactivados'})")


@checks.case("kernel-in-use",
             "with the kernels on, F.self_attention runs the fused kernel of "
             "minimodel/kernels/attention.py, registered for it (the next check compares that "
             "kernel with the composite, so it must be the one that runs)",
             "con los kernels activados, F.self_attention ejecuta el kernel fusionado de "
             "minimodel/kernels/attention.py, registrado para ella (la comprobación siguiente "
             "compara ese kernel con la versión compuesta, así que tiene que ser el que se "
             "ejecuta)")
def _():
    heads, d = heads_and_width(None)
    qkv = mm.Tensor(rng.standard_normal((int(rng.integers(1, 4)), int(rng.integers(2, 10)),
                                         3 * d)), requires_grad=True)  # (B, T, 3d)
    require_kernel_runs("self_attention", attention_kernel,
                        lambda: F.self_attention(qkv, heads, causal=True).sum().backward())


@checks.case("kernel-matches-composite",
             "F.self_attention with the kernels on computes what it computes with them off: the "
             "outputs and the gradient of qkv, for several batch sizes, lengths and numbers of "
             "heads, causal or not, float32 and float64, small d, d = 128 and d above 768",
             "F.self_attention con los kernels activados calcula lo mismo que con ellos "
             "desactivados: las salidas y el gradiente de qkv, con varios tamaños de lote, "
             "longitudes y números de cabezas, causal o no, en float32 y en float64, con d "
             "pequeña, d = 128 y d mayor que 768")
def _():
    # (B, T, heads, d, dtype): small d with 1 head, 8 heads and heads drawn in 2..16; 128 and
    # a d above 768 with heads drawn; the experiment's own call (16 x 8, 8 heads, d = 32).
    small = [(1, 1 * int(rng.integers(1, 4))), (8, 8 * int(rng.integers(1, 4))),
             heads_and_width(None)]
    cases = [(int(rng.integers(1, 4)), int(rng.integers(2, 10))) + hd + (dtype,)
             for hd, dtype in zip(small + [heads_and_width(d) for d in widths()[1:]],
                                  dtypes(5))]
    c = EXPERIMENT
    cases.append((16, c.block_size, c.n_head, c.d_model, np.float32))
    for B, T, heads, d, dtype in cases:
        qkv = rng.standard_normal((B, T, 3 * d)).astype(dtype)
        upstream = rng.standard_normal((B, T, qkv.shape[-1] // 3)).astype(dtype)  # (B, T, d)
        for causal in (True, False):
            results = {}
            for on in (True, False):
                x = mm.Tensor(qkv.copy(), requires_grad=True)
                with mm.kernels(on):
                    y = F.self_attention(x, heads, causal=causal)  # (B, T, d)
                    (y * mm.Tensor(upstream)).sum().backward()
                results[on] = (y.data, x.grad)
            for what_en, what_es, i in (("outputs", "las salidas", 0),
                                        ("gradients of qkv", "los gradientes de qkv", 1)):
                gap = float(np.abs(results[True][i] - results[False][i]).max())
                scale = max(1.0, float(np.abs(results[False][i]).max()))
                if not gap <= AGREE[dtype] * scale:
                    name = np.dtype(dtype).name
                    raise CheckFailed(f"{name}, B={B}, T={T}, d={d}, {heads} heads, "
                                      f"causal={causal}: "
                                      f"the {what_en} of the kernel and of the composite differ "
                                      f"by {gap:.3g}",
                                      f"{name}, B={B}, T={T}, d={d}, {heads} cabezas, "
                                      f"causal={causal}: "
                                      f"{what_es} del kernel y de la versión compuesta difieren "
                                      f"en {es_num(gap, '.3g')}")


@checks.case("mlm-bidirectional", "MaskedLM still looks both ways (only GPT is causal; d = 16, "
             "128 and above 768)",
             "MaskedLM sigue mirando a ambos lados (solo GPT es causal; d = 16, 128 y más de 768)")
def _():
    for d in widths():
        V, T = int(rng.integers(5, 40)), int(rng.integers(3, 9))
        V = V if d is None else int(rng.integers(WIDE_VOCAB, 2049))
        model = MaskedLM(MLMConfig(V, T, 1, 2, d or 16), rng=rng)
        model.astype(np.float64)
        x = rng.integers(0, V, size=(2, T))
        x[0, 0] = V - 1
        leak, _ = future_leak(lambda ids: model(ids)[0].data, x)
        if leak < 1e-9:
            raise CheckFailed(f"MaskedLM (d={d or 16}) ignores later tokens; the fix made every "
                              "model causal",
                              f"MaskedLM (d={d or 16}) ignora los tokens posteriores; el arreglo "
                              "volvió causal a todos los modelos")


@checks.case("attention-flag", "MultiHeadAttention honours causal=True and causal=False "
             "(small d, d = 128 and d above 768)",
             "MultiHeadAttention respeta causal=True y causal=False (d pequeña, d = 128 y d "
             "mayor que 768)")
def _():
    for d in widths():
        attention_flag(d)


def attention_flag(d: int | None) -> None:
    """attention-flag for width ``d`` (None: a small one)."""
    T = int(rng.integers(3, 8))
    heads, d = heads_and_width(d)
    x = rng.standard_normal((1, T, d))
    x2 = x.copy()
    x2[0, -1] += 1.0
    for causal in (True, False):
        attn = nn.MultiHeadAttention(d, heads, causal=causal, rng=rng)
        with mm.no_grad():
            change = float(np.abs(attn(mm.Tensor(x2)).data[0, :-1]
                                  - attn(mm.Tensor(x)).data[0, :-1]).max())
        if causal and change > LEAK:
            raise CheckFailed(f"d={d}, causal=True, yet earlier outputs changed by {change:.3g}",
                              f"d={d}, causal=True, pero las salidas anteriores cambiaron "
                              f"{es_num(change, '.3g')}")
        if not causal and change < 1e-9:
            raise CheckFailed(f"d={d}, causal=False, yet earlier outputs ignore the last token",
                              f"d={d}, causal=False, pero las salidas anteriores ignoran el "
                              "último token")


if __name__ == "__main__":
    checks.finish()
