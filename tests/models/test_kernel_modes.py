"""The same model gives the same numbers with kernels on and off: forward, loss, one optimizer
step and generation, for GPT (tied and untied), the masked LM and CBOW (float64, so the only
differences are rounding)."""

from __future__ import annotations

import numpy as np
import pytest

import minimodel as mm
from minimodel import optim
from minimodel.models import CBOW, CBOWConfig, GPT, GPTConfig, MaskedLM, MLMConfig

V = 29


def build(kind: str):
    rng = np.random.default_rng(11)
    if kind.startswith("gpt"):
        model = GPT(GPTConfig(V, 8, 2, 2, 12, tie_embeddings=kind == "gpt-tied"), rng=rng)
        ids = rng.integers(0, V, (3, 8))
        return model.astype(np.float64), (ids, np.roll(ids, -1, axis=1))
    if kind == "mlm":
        model = MaskedLM(MLMConfig(V, 8, 2, 2, 12), rng=rng)
        ids = rng.integers(0, V, (3, 8))
        labels = np.where(rng.random((3, 8)) < 0.4, ids, -100)
        labels[0, 0] = ids[0, 0]
        return model.astype(np.float64), (ids, labels)
    model = CBOW(CBOWConfig(V, 12, window=2), rng=rng)
    return model.astype(np.float64), (rng.integers(0, V, (10, 4)), rng.integers(0, V, 10))


def one_step(kind: str, kernels_on: bool, with_logits: bool):
    model, (x, y) = build(kind)
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    with mm.kernels(kernels_on):
        logits, loss = model(x, y) if with_logits else (None, model.loss(x, y))
        loss.backward()
        grads = {n: p.grad.copy() for n, p in model.named_parameters()}
        opt.step()
        after = {n: p.data.copy() for n, p in model.named_parameters()}
        out = None
        if isinstance(model, GPT):
            out = model.generate(x[:, :3], 6, temperature=0)
    return (None if logits is None else logits.data), loss.item(), grads, after, out


@pytest.mark.parametrize("with_logits", [True, False])
@pytest.mark.parametrize("kind", ["gpt-tied", "gpt-untied", "mlm", "cbow"])
def test_kernels_and_composites_train_the_same_model(kind, with_logits):
    fast = one_step(kind, True, with_logits)
    slow = one_step(kind, False, with_logits)
    if with_logits:
        np.testing.assert_allclose(fast[0], slow[0], rtol=1e-10, atol=1e-12)
    assert fast[1] == pytest.approx(slow[1], rel=1e-10)
    for name in slow[2]:
        np.testing.assert_allclose(fast[2][name], slow[2][name], rtol=1e-8, atol=1e-12,
                                   err_msg=name)
        np.testing.assert_allclose(fast[3][name], slow[3][name], rtol=1e-8, atol=1e-12,
                                   err_msg=name)
    if fast[4] is not None:
        np.testing.assert_array_equal(fast[4], slow[4])
