"""The NumPy MLM reference (`mlm_forward`, `mlm_forward_tied`) against an independent PyTorch
implementation written here, plus tying, dtype, empty-mask and input-validation checks."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

try:
    from minimodel.models import mlm_reference as ref
except ImportError:  # the package __init__ may be mid-rewrite by others; the file needs numpy only
    _path = Path(__file__).resolve().parents[2] / "src/minimodel/models/mlm_reference.py"
    _spec = importlib.util.spec_from_file_location("_mlm_reference_standalone", _path)
    ref = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(ref)

torch = pytest.importorskip("torch")


def torch_mlm(ids, mask, w_emb, pos, blocks, num_heads, w_head=None) -> np.ndarray:
    """Written from the spec with torch ops only (full logits, then boolean gather)."""
    E = torch.from_numpy(w_emb)
    x = E[torch.from_numpy(ids)] + torch.from_numpy(pos)[: ids.shape[1]]
    n, t, d = x.shape
    dh = d // num_heads

    def ln(z):
        mu = z.mean(-1, keepdim=True)
        return (z - mu) / torch.sqrt(z.var(-1, unbiased=False, keepdim=True) + 1e-5)

    def heads(z):
        return z.view(n, t, num_heads, dh).permute(0, 2, 1, 3)

    for wq, wk, wv, wo, w1, w2 in torch.from_numpy(blocks):
        h = ln(x)
        att = torch.softmax(heads(h @ wq) @ heads(h @ wk).transpose(-1, -2) / math.sqrt(dh), -1)
        x = x + (att @ heads(h @ wv)).permute(0, 2, 1, 3).reshape(n, t, d) @ wo
        x = x + torch.nn.functional.gelu(ln(x) @ w1, approximate="tanh") @ w2
    head = E.T if w_head is None else torch.from_numpy(w_head)
    logits = x @ head                                            # (N, T, V)
    return logits[torch.from_numpy(mask > 0.5)].numpy()


def make(rng, n=2, t=5, d=8, v=11, layers=2, dtype=np.float64, mask_p=0.4):
    ids = rng.integers(0, v, size=(n, t))
    mask = (rng.random((n, t)) < mask_p).astype(dtype)
    mask[0, 0] = 1.0
    w_emb = rng.normal(0, 0.5, (v, d)).astype(dtype)
    pos = rng.normal(0, 0.5, (t, d)).astype(dtype)
    blocks = rng.normal(0, d**-0.5, (layers, 6, d, d)).astype(dtype)
    w_head = rng.normal(0, 0.5, (d, v)).astype(dtype)
    return ids, mask, w_emb, pos, blocks, w_head


@pytest.mark.torch
@pytest.mark.parametrize("heads,layers", [(1, 1), (2, 2), (4, 3)])
def test_matches_torch_float64(heads, layers):
    rng = np.random.default_rng(heads * 10 + layers)
    ids, mask, w_emb, pos, blocks, w_head = make(rng, layers=layers)
    got = ref.mlm_forward(ids, mask, w_emb, pos, blocks, w_head, heads)
    want = torch_mlm(ids, mask, w_emb, pos, blocks, heads, w_head)
    assert got.shape == (int((mask > 0.5).sum()), w_emb.shape[0])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    got_t = ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, heads)
    np.testing.assert_allclose(got_t, torch_mlm(ids, mask, w_emb, pos, blocks, heads),
                               rtol=0, atol=1e-10)


def test_tied_equals_untied_with_transposed_embedding():
    ids, mask, w_emb, pos, blocks, _ = make(np.random.default_rng(1))
    tied = ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, 2)
    untied = ref.mlm_forward(ids, mask, w_emb, pos, blocks, w_emb.T.copy(), 2)
    np.testing.assert_allclose(tied, untied, rtol=0, atol=1e-12)
    # and the head matters: a different w_head gives different logits
    other = ref.mlm_forward(ids, mask, w_emb, pos, blocks, w_emb.T * 1.5, 2)
    assert np.abs(other - tied).max() > 1e-3


def test_row_major_order_of_selected_positions():
    ids, mask, w_emb, pos, blocks, w_head = make(np.random.default_rng(2), n=3, t=4)
    mask[:] = 0
    mask[1, 2] = mask[0, 3] = mask[2, 0] = 1
    got = ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, 2)
    full = np.ones_like(mask)
    all_rows = ref.mlm_forward_tied(ids, full, w_emb, pos, blocks, 2).reshape(3, 4, -1)
    np.testing.assert_allclose(got, all_rows[[0, 1, 2], [3, 2, 0]], atol=1e-12)


def test_empty_mask_gives_zero_rows():
    ids, mask, w_emb, pos, blocks, w_head = make(np.random.default_rng(3))
    mask[:] = 0.5  # not > 0.5, so nothing is selected
    assert ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, 2).shape == (0, w_emb.shape[0])
    assert ref.mlm_forward(ids, mask, w_emb, pos, blocks, w_head, 2).shape == (0, w_head.shape[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_preserved(dtype):
    ids, mask, w_emb, pos, blocks, w_head = make(np.random.default_rng(4), dtype=dtype)
    assert ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, 2).dtype == dtype
    assert ref.mlm_forward(ids, mask, w_emb, pos, blocks, w_head, 2).dtype == dtype
    if dtype == np.float32:  # float32 result close to the float64 one
        args64 = [a.astype(np.float64) for a in (w_emb, pos, blocks)]
        want = ref.mlm_forward_tied(ids, mask, *args64, 2)
        got = ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, 2)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_gathers_before_projecting(monkeypatch):
    """The head sees only the M selected rows, never the full (N, T, V) tensor."""
    ids, mask, w_emb, pos, blocks, w_head = make(np.random.default_rng(5), n=4, t=6)
    sizes = []
    real_encode = ref._encode

    def spy(*a, **k):
        x = real_encode(*a, **k)

        class Probe(np.ndarray):
            def __getitem__(self, item):
                out = np.ndarray.__getitem__(self, item)
                sizes.append(out.shape)
                return out.view(np.ndarray)
        return x.view(Probe)

    monkeypatch.setattr(ref, "_encode", spy)
    out = ref.mlm_forward_tied(ids, mask, w_emb, pos, blocks, 2)
    assert sizes == [(out.shape[0], w_emb.shape[1])]


@pytest.mark.parametrize("change,exc,words", [
    (lambda a: a.update(num_heads=3), ValueError, ["d_model=8", "num_heads=3"]),
    (lambda a: a["ids"].__setitem__((0, 0), 11), ValueError, ["V=11", ", 11]"]),
    (lambda a: a["ids"].__setitem__((0, 0), -1), ValueError, ["V=11"]),
    (lambda a: a.update(pos=a["pos"][:3]), ValueError, ["3 positions", "T=5"]),
    (lambda a: a.update(blocks=a["blocks"][:, :5]), ValueError, ["(L, 6, 8, 8)", "(2, 5, 8, 8)"]),
    (lambda a: a.update(mask=a["mask"][:, :4]), ValueError, ["(2, 4)", "(2, 5)"]),
    (lambda a: a.update(ids=a["ids"].astype(np.float64)), TypeError, ["input_ids", "float64"]),
    (lambda a: a.update(w_emb=a["w_emb"].tolist()), TypeError, ["w_emb", "list"]),
    (lambda a: a.update(num_heads=2.0), TypeError, ["num_heads", "float"]),
])
def test_clear_errors(change, exc, words):
    ids, mask, w_emb, pos, blocks, _ = make(np.random.default_rng(6))
    a = dict(ids=ids, mask=mask, w_emb=w_emb, pos=pos, blocks=blocks, num_heads=2)
    change(a)
    with pytest.raises(exc) as info:
        ref.mlm_forward_tied(a["ids"], a["mask"], a["w_emb"], a["pos"], a["blocks"],
                             a["num_heads"])
    for word in words:
        assert word in str(info.value)


def test_untied_head_shape_error_names_both():
    ids, mask, w_emb, pos, blocks, w_head = make(np.random.default_rng(7))
    with pytest.raises(ValueError, match=r"\(8, 11\).*\(11, 8\)"):
        ref.mlm_forward(ids, mask, w_emb, pos, blocks, w_head[:, :-1].T.copy(), 2)
