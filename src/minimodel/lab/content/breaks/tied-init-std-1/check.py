"""Checks for `tied-init-std-1`: a fresh model's loss is close to ln V."""

import math

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import GPT, GPTConfig, MaskedLM, MLMConfig  # noqa: E402

checks = Checks()


def fresh_loss(model, V: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, V, size=(8, 16))
    y = rng.integers(0, V, size=(8, 16))
    with mm.no_grad():
        return float(model(x, y)[1].data)


def near_ln_v(loss: float, V: int, what: str) -> None:
    if not abs(loss - math.log(V)) < 0.5:
        raise CheckFailed(f"{what}: initial loss {loss:.2f}, expected within 0.5 of ln {V} = "
                          f"{math.log(V):.2f}",
                          f"{what}: pérdida inicial {loss:.2f}, se esperaba a menos de 0.5 de "
                          f"ln {V} = {math.log(V):.2f}")


@checks.case("gpt-512", "tied GPT (V=512, d=64): fresh loss within 0.5 of ln 512",
             "GPT atado (V=512, d=64): pérdida inicial a menos de 0.5 de ln 512")
def _():
    for seed in (0, 1):
        model = GPT(GPTConfig(512, 16, 2, 4, 64), rng=np.random.default_rng(seed))
        near_ln_v(fresh_loss(model, 512, seed), 512, f"seed {seed}")


@checks.case("gpt-wide", "tied GPT (V=256, d=128): fresh loss within 0.5 of ln 256",
             "GPT atado (V=256, d=128): pérdida inicial a menos de 0.5 de ln 256")
def _():
    model = GPT(GPTConfig(256, 16, 1, 4, 128), rng=np.random.default_rng(2))
    near_ln_v(fresh_loss(model, 256), 256, "d=128")


@checks.case("mlm", "tied MaskedLM (V=300, d=64): fresh loss within 0.5 of ln 300",
             "MaskedLM atado (V=300, d=64): pérdida inicial a menos de 0.5 de ln 300")
def _():
    model = MaskedLM(MLMConfig(300, 16, 1, 4, 64), rng=np.random.default_rng(3))
    near_ln_v(fresh_loss(model, 300), 300, "MaskedLM")


@checks.case("explicit-std", "Embedding(V, d, std=s) still honours an explicit std",
             "Embedding(V, d, std=s) sigue respetando una std explícita")
def _():
    for s in (0.5, 0.02):
        got = float(nn.Embedding(400, 50, std=s, rng=np.random.default_rng(4)).weight.data.std())
        if abs(got - s) > 0.1 * s:
            raise CheckFailed(f"asked for std={s}, got {got:.4f}",
                              f"se pidió std={s}, se obtuvo {got:.4f}")


checks.finish()
