"""Checks for `gpt-no-causal-mask`: GPT's logits at position t ignore tokens after t, while
the bidirectional MaskedLM still sees both sides."""

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import GPT, GPTConfig, MaskedLM, MLMConfig  # noqa: E402

checks = Checks()
V, T = 30, 7


def future_leak(forward, x: np.ndarray, rng) -> tuple[float, int]:
    """Largest change of outputs at positions <= t when every token after t is redrawn."""
    with mm.no_grad():
        base = forward(x)
        worst, where = 0.0, -1
        for t in range(x.shape[1] - 1):
            x2 = x.copy()
            x2[:, t + 1:] = rng.integers(0, V, size=x2[:, t + 1:].shape)
            diff = float(np.abs(forward(x2)[:, :t + 1] - base[:, :t + 1]).max())
            if diff > worst:
                worst, where = diff, t
    return worst, where


@checks.case("gpt-causal", "GPT logits at position t do not depend on tokens after t",
             "los logits de GPT en la posición t no dependen de los tokens posteriores a t")
def _():
    for seed, layers in ((0, 1), (1, 2)):
        model = GPT(GPTConfig(V, T, layers, 2, 16), rng=np.random.default_rng(seed))
        rng = np.random.default_rng(seed + 10)
        leak, t = future_leak(lambda ids: model(ids)[0].data, rng.integers(0, V, (2, T)), rng)
        if leak > 1e-5:
            raise CheckFailed(f"{layers}-layer GPT: logits up to position {t} changed by "
                              f"{leak:.3g} when later tokens changed",
                              f"GPT de {layers} capa(s): los logits hasta la posición {t} "
                              f"cambiaron {leak:.3g} al cambiar tokens posteriores")


@checks.case("generate-consistent", "greedy generate gives the same tokens as argmax of a full "
             "forward", "generate voraz da los mismos tokens que el argmax de una pasada completa")
def _():
    model = GPT(GPTConfig(V, T, 1, 2, 16), rng=np.random.default_rng(5))
    out = model.generate(np.array([[1, 2]]), max_new_tokens=4, temperature=0)
    with mm.no_grad():
        logits = model(out[:, :-1])[0].data
    want = logits[0, 1:].argmax(-1)
    if not np.array_equal(out[0, 2:], want):
        raise CheckFailed(f"generated {out[0, 2:].tolist()}, a full forward predicts "
                          f"{want.tolist()}",
                          f"se generó {out[0, 2:].tolist()}, una pasada completa predice "
                          f"{want.tolist()}")


@checks.case("mlm-bidirectional", "MaskedLM still looks both ways (only GPT is causal)",
             "MaskedLM sigue mirando a ambos lados (solo GPT es causal)")
def _():
    model = MaskedLM(MLMConfig(V, T, 1, 2, 16), rng=np.random.default_rng(6))
    rng = np.random.default_rng(7)
    leak, _ = future_leak(lambda ids: model(ids)[0].data, rng.integers(0, V, (2, T)), rng)
    if leak < 1e-6:
        raise CheckFailed("MaskedLM ignores later tokens; the fix made every model causal",
                          "MaskedLM ignora los tokens posteriores; el arreglo volvió causal a "
                          "todos los modelos")


@checks.case("attention-flag", "MultiHeadAttention honours causal=True and causal=False",
             "MultiHeadAttention respeta causal=True y causal=False")
def _():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 5, 8)).astype(np.float32)
    x2 = x.copy()
    x2[0, 4] += 1.0
    for causal in (True, False):
        attn = nn.MultiHeadAttention(8, 2, causal=causal, rng=np.random.default_rng(9))
        with mm.no_grad():
            change = float(np.abs(attn(mm.Tensor(x2)).data[0, :4] - attn(mm.Tensor(x)).data[0, :4]).max())
        if causal and change > 1e-6:
            raise CheckFailed(f"causal=True, yet earlier outputs changed by {change:.3g}",
                              f"causal=True, pero las salidas anteriores cambiaron {change:.3g}")
        if not causal and change < 1e-6:
            raise CheckFailed("causal=False, yet earlier outputs ignore the last token",
                              "causal=False, pero las salidas anteriores ignoran el último token")


checks.finish()
