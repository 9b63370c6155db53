"""Forward and gradient parity with PyTorch for ops, modules and optimizers.

Every comparison copies the same numbers into both libraries and checks values and gradients,
in float64 (tight tolerances) and float32 (single-precision tolerances).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tF = torch.nn.functional

import minimodel.functional as F  # noqa: E402
from minimodel import Tensor, nn, ops, optim  # noqa: E402

pytestmark = pytest.mark.torch

TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6)}
DTYPES = [np.float64, np.float32]


def tt(a: np.ndarray, grad: bool = True):
    """A torch leaf holding a copy of ``a``."""
    return torch.tensor(np.array(a), requires_grad=grad)


def close(ours, theirs, dtype, scale: float = 1.0):
    tol = TOL[dtype]
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    assert ours.dtype == dtype, f"dtype {ours.dtype}, expected {np.dtype(dtype)}"
    np.testing.assert_allclose(ours, theirs, rtol=tol["rtol"] * scale, atol=tol["atol"] * scale)


# --------------------------------------------------------------------------- ops
OP_CASES = {
    "add_broadcast": (lambda a, b: a + b, lambda a, b: a + b, [(3, 1, 4), (4,)]),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, [(2, 3), (2, 1)]),
    "mul_broadcast": (lambda a, b: a * b, lambda a, b: a * b, [(2, 1, 3), (4, 1)]),
    "div": (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0), [(2, 3), (3,)]),
    "pow": (lambda a: (a * a + 0.5) ** 1.5, lambda a: (a * a + 0.5) ** 1.5, [(2, 3)]),
    "exp_log": (lambda a: (a.exp() + 1.0).log(), lambda a: (a.exp() + 1.0).log(), [(3, 4)]),
    "tanh_sqrt": (lambda a: (a.tanh() + 2.0).sqrt(), lambda a: (a.tanh() + 2.0).sqrt(), [(5,)]),
    "neg": (lambda a: -a, lambda a: -a, [(2, 2)]),
    "sum_mean": (lambda a: a.sum(axis=(0, 2)) + a.mean(axis=-1, keepdims=True),
                 lambda a: a.sum(dim=(0, 2)) + a.mean(dim=-1, keepdim=True), [(2, 3, 4)]),
    "max": (lambda a: a.max(axis=1), lambda a: a.amax(dim=1), [(3, 5)]),
    "matmul_batched": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)]),
    "matmul_vec": (lambda a, b: a @ b, lambda a, b: a @ b, [(4,), (2, 4, 3)]),
    "reshape_transpose": (lambda a: a.transpose(2, 0, 1).reshape(4, -1).T,
                          lambda a: a.permute(2, 0, 1).reshape(4, -1).T, [(2, 3, 4)]),
    "getitem": (lambda a: a[1:, ::2] * a[np.array([0, 0])][:, :1] + a[np.array([2, 0]), 1:3],
                lambda a: a[1:, ::2] * a[torch.tensor([0, 0])][:, :1] + a[torch.tensor([2, 0]), 1:3],
                [(3, 4)]),
    "concat_stack": (lambda a, b: F.stack([F.concatenate([a, b], axis=1),
                                             F.concatenate([b * a, a], axis=-1)], axis=1),
                     lambda a, b: torch.stack([torch.cat([a, b], dim=1),
                                               torch.cat([b * a, a], dim=-1)], dim=1),
                     [(2, 3), (2, 3)]),
    "softmax": (lambda a: F.softmax(a, axis=0), lambda a: torch.softmax(a, dim=0), [(3, 4)]),
    "log_softmax": (F.log_softmax, lambda a: torch.log_softmax(a, dim=-1), [(2, 3, 5)]),
    "gelu": (F.gelu, lambda a: tF.gelu(a, approximate="tanh"), [(4, 5)]),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, 1e-5, w, b),
                   lambda a, w, b: tF.layer_norm(a, (6,), w, b, 1e-5), [(2, 3, 6), (6,), (6,)]),
    "layer_norm_plain": (F.layer_norm, lambda a: tF.layer_norm(a, (6,)), [(4, 6)]),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_forward_and_gradient_match_torch(name, dtype):
    """Values and every input gradient of dot(out, R) agree with PyTorch."""
    ours_fn, torch_fn, shapes = OP_CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ts = [Tensor(a, requires_grad=True) for a in arrays]
    out = ours_fn(*ts)
    r = rng.standard_normal(out.shape).astype(dtype)
    out.backward(r)
    tts = [tt(a) for a in arrays]
    tout = torch_fn(*tts)
    tout.backward(torch.tensor(r))
    close(out.data, tout, dtype)
    for t, ref in zip(ts, tts):
        close(t.grad, ref.grad, dtype, scale=5.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_function_matches_torch_sdpa(causal, dtype):
    """scaled_dot_product_attention vs torch's, values and q/k/v gradients."""
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((2, 3, 5, 4)).astype(dtype) for _ in range(3)]
    ts = [Tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*ts, causal=causal)
    r = rng.standard_normal(out.shape).astype(dtype)
    out.backward(r)
    tts = [tt(a) for a in arrays]
    tout = tF.scaled_dot_product_attention(*tts, is_causal=causal)
    tout.backward(torch.tensor(r))
    close(out.data, tout, dtype, scale=5.0)
    for t, ref in zip(ts, tts):
        close(t.grad, ref.grad, dtype, scale=5.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_cross_entropy_with_ignore_index_matches_torch(dtype):
    """Mean over non-ignored positions, -100 ignored, on (B, T, V) logits."""
    rng = np.random.default_rng(3)
    logits = (rng.standard_normal((3, 4, 7)) * 3).astype(dtype)
    targets = rng.integers(0, 7, size=(3, 4))
    targets[0, :2] = -100
    targets[2, 3] = -100
    x = Tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, targets)
    loss.backward()
    tx = tt(logits)
    tloss = tF.cross_entropy(tx.reshape(-1, 7), torch.tensor(targets.reshape(-1)),
                             ignore_index=-100)
    tloss.backward()
    close(np.asarray(loss.data), tloss, dtype)
    close(x.grad, tx.grad, dtype)


# --------------------------------------------------------------------------- modules
def _cast(module: nn.Module, dtype) -> nn.Module:
    """Cast every parameter in place (keeps the Parameter objects)."""
    for p in module.parameters():
        p.data = p.data.astype(dtype)
    return module


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_linear_matches_torch(dtype):
    """nn.Linear (PyTorch weight layout (out, in)) vs torch.nn.Linear with copied weights."""
    rng = np.random.default_rng(0)
    ours = _cast(nn.Linear(5, 3, rng=rng), dtype)
    ref = torch.nn.Linear(5, 3).to(torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(ours.weight.data))
        ref.bias.copy_(torch.tensor(ours.bias.data))
    x = rng.standard_normal((2, 4, 5)).astype(dtype)
    xt, tx = Tensor(x, requires_grad=True), tt(x)
    y, ty = ours(xt), ref(tx)
    r = rng.standard_normal(y.shape).astype(dtype)
    y.backward(r)
    ty.backward(torch.tensor(r))
    close(y.data, ty, dtype)
    close(xt.grad, tx.grad, dtype)
    close(ours.weight.grad, ref.weight.grad, dtype, scale=5.0)
    close(ours.bias.grad, ref.bias.grad, dtype, scale=5.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_layer_norm_module_matches_torch(dtype):
    """nn.LayerNorm with non-trivial weight and bias vs torch.nn.LayerNorm."""
    rng = np.random.default_rng(1)
    ours = _cast(nn.LayerNorm(6), dtype)
    ours.weight.data[...] = rng.standard_normal(6)
    ours.bias.data[...] = rng.standard_normal(6)
    ref = torch.nn.LayerNorm(6, eps=1e-5).to(torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(ours.weight.data))
        ref.bias.copy_(torch.tensor(ours.bias.data))
    x = (rng.standard_normal((3, 2, 6)) * 4 + 1).astype(dtype)
    xt, tx = Tensor(x, requires_grad=True), tt(x)
    y, ty = ours(xt), ref(tx)
    r = rng.standard_normal(y.shape).astype(dtype)
    y.backward(r)
    ty.backward(torch.tensor(r))
    close(y.data, ty, dtype)
    close(xt.grad, tx.grad, dtype, scale=5.0)
    close(ours.weight.grad, ref.weight.grad, dtype, scale=5.0)
    close(ours.bias.grad, ref.bias.grad, dtype, scale=5.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_embedding_matches_torch_with_repeated_ids(dtype):
    """nn.Embedding lookup and its scatter-added gradient vs torch.nn.Embedding."""
    rng = np.random.default_rng(2)
    ours = _cast(nn.Embedding(7, 4, rng=rng), dtype)
    ref = torch.nn.Embedding(7, 4).to(torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(ours.weight.data))
    ids = np.array([[1, 3, 1, 1], [6, 3, 0, 1]])
    y, ty = ours(ids), ref(torch.tensor(ids))
    r = rng.standard_normal(y.shape).astype(dtype)
    y.backward(r)
    ty.backward(torch.tensor(r))
    close(y.data, ty, dtype)
    close(ours.weight.grad, ref.weight.grad, dtype)
    assert np.all(ours.weight.grad[[2, 4, 5]] == 0)


def _torch_mha(x, mha: nn.MultiHeadAttention, causal: bool, params: dict):
    """The same attention written with torch ops from our c_attn / c_proj weights."""
    B, T, d = x.shape
    h = mha.n_heads
    qkv = x @ params["c_attn.weight"].T + params["c_attn.bias"]
    q, k, v = qkv.split(d, dim=-1)
    q, k, v = (t.reshape(B, T, h, d // h).transpose(1, 2) for t in (q, k, v))
    y = tF.scaled_dot_product_attention(q, k, v, is_causal=causal)
    y = y.transpose(1, 2).reshape(B, T, d)
    return y @ params["c_proj.weight"].T + params["c_proj.bias"]


def _torch_params(module: nn.Module) -> dict:
    return {name: tt(p.data) for name, p in module.named_parameters()}


def _compare_module(ours: nn.Module, torch_forward, x: np.ndarray, dtype, scale=5.0):
    rng = np.random.default_rng(9)
    params = _torch_params(ours)
    xt, tx = Tensor(x, requires_grad=True), tt(x)
    y, ty = ours(xt), torch_forward(tx, params)
    r = rng.standard_normal(y.shape).astype(dtype)
    y.backward(r)
    ty.backward(torch.tensor(r))
    close(y.data, ty, dtype, scale=scale)
    close(xt.grad, tx.grad, dtype, scale=scale)
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        close(p.grad, params[name].grad, dtype, scale=scale * 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_matches_torch(causal, dtype):
    """nn.MultiHeadAttention vs torch SDPA built by hand from our c_attn / c_proj weights."""
    rng = np.random.default_rng(4)
    mha = _cast(nn.MultiHeadAttention(8, 2, causal=causal, rng=rng), dtype)
    x = rng.standard_normal((2, 5, 8)).astype(dtype)
    _compare_module(mha, lambda tx, p: _torch_mha(tx, mha, causal, p), x, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_block_matches_torch_pre_ln_gpt2_block(dtype):
    """nn.Block == x + attn(ln_1(x)); x + c_proj(gelu_tanh(c_fc(ln_2(x)))) in torch."""
    rng = np.random.default_rng(5)
    block = _cast(nn.Block(8, 2, causal=True, rng=rng), dtype)
    for ln in (block.ln_1, block.ln_2):  # non-trivial affine parameters
        ln.weight.data[...] = 1 + 0.1 * rng.standard_normal(8)
        ln.bias.data[...] = 0.1 * rng.standard_normal(8)

    def torch_block(tx, p):
        attn_p = {k[len("attn."):]: v for k, v in p.items() if k.startswith("attn.")}
        h = tF.layer_norm(tx, (8,), p["ln_1.weight"], p["ln_1.bias"], 1e-5)
        tx = tx + _torch_mha(h, block.attn, True, attn_p)
        h = tF.layer_norm(tx, (8,), p["ln_2.weight"], p["ln_2.bias"], 1e-5)
        h = tF.gelu(h @ p["mlp.c_fc.weight"].T + p["mlp.c_fc.bias"], approximate="tanh")
        return tx + h @ p["mlp.c_proj.weight"].T + p["mlp.c_proj.bias"]

    x = rng.standard_normal((2, 4, 8)).astype(dtype)
    _compare_module(block, torch_block, x, dtype)
    assert {n for n, _ in block.named_parameters()} == {
        "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
        "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
        "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_tied_embedding_and_head_gradient_matches_torch(dtype):
    """A tied lookup + head + cross-entropy: the shared matrix's gradient equals torch's."""
    rng = np.random.default_rng(6)
    emb = _cast(nn.Embedding(9, 4, std=0.5, rng=rng), dtype)
    head = nn.TiedHead(emb)
    ids = rng.integers(0, 9, size=(2, 5))
    targets = rng.integers(0, 9, size=(2, 5))
    loss = F.cross_entropy(head(emb(ids).tanh()), targets)
    loss.backward()
    E = tt(emb.weight.data)
    tloss = tF.cross_entropy((E[torch.tensor(ids)].tanh() @ E.T).reshape(-1, 9),
                             torch.tensor(targets.reshape(-1)))
    tloss.backward()
    close(np.asarray(loss.data), tloss, dtype)
    close(emb.weight.grad, E.grad, dtype, scale=5.0)


# --------------------------------------------------------------------------- optimizers
def _param_set(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal((3,)).astype(dtype)]


def _grads(dtype, steps):
    rng = np.random.default_rng(100)
    return [[rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal((3,)).astype(dtype)]
            for _ in range(steps)]


def _run_ours(opt_cls, kwargs, dtype, steps=5):
    params = [nn.Parameter(a) for a in _param_set(dtype)]
    opt = opt_cls(params, **kwargs)
    for grads in _grads(dtype, steps):
        for p, g in zip(params, grads):
            p.grad = g.copy()
        opt.step()
    return params, opt


def _run_torch(opt_cls, kwargs, dtype, steps=5):
    params = [torch.tensor(a, requires_grad=True) for a in _param_set(dtype)]
    opt = opt_cls(params, **kwargs)
    for grads in _grads(dtype, steps):
        for p, g in zip(params, grads):
            p.grad = torch.tensor(g)
        opt.step()
    return params, opt


OPT_CASES = {
    "adamw": (optim.AdamW, torch.optim.AdamW,
              dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)),
    "adamw_defaults": (optim.AdamW, torch.optim.AdamW, dict(lr=1e-3, weight_decay=0.01)),
    "sgd_momentum_wd": (optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.05)),
    "sgd_plain": (optim.SGD, torch.optim.SGD, dict(lr=0.1)),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(OPT_CASES))
def test_optimizer_matches_torch_after_five_steps(name, dtype):
    """Parameters after 5 steps (same params, same grads) match torch.optim to ~1e-6."""
    ours_cls, torch_cls, kwargs = OPT_CASES[name]
    ours, opt = _run_ours(ours_cls, kwargs, dtype)
    theirs, topt = _run_torch(torch_cls, kwargs, dtype)
    start = _param_set(dtype)
    for p, t, p0 in zip(ours, theirs, start):
        assert p.dtype == dtype
        assert not np.allclose(p.data, p0)  # the steps did move the parameters
        np.testing.assert_allclose(p.data, t.detach().numpy(),
                                   rtol=1e-6 if dtype == np.float32 else 1e-12,
                                   atol=1e-6 if dtype == np.float32 else 1e-12)
    if name.startswith("adamw"):  # the moment estimates agree too
        ts = topt.state_dict()["state"]
        os_ = opt.state_dict()["state"]
        for i in range(2):
            assert os_[i]["step"] == 5
            np.testing.assert_allclose(os_[i]["exp_avg"], ts[i]["exp_avg"].numpy(), rtol=1e-5)
            np.testing.assert_allclose(os_[i]["exp_avg_sq"], ts[i]["exp_avg_sq"].numpy(),
                                       rtol=1e-5)


@pytest.mark.parametrize("name", sorted(OPT_CASES))
@pytest.mark.parametrize("via", ["direct", "pickle", "deepcopy"])
def test_optimizer_state_dict_round_trip_resumes_identically(name, via):
    """2 steps, state_dict -> fresh optimizer -> 3 steps == 5 uninterrupted steps, bit for bit."""
    ours_cls, _, kwargs = OPT_CASES[name]
    dtype = np.float32
    straight, _ = _run_ours(ours_cls, kwargs, dtype, steps=5)

    params = [nn.Parameter(a) for a in _param_set(dtype)]
    all_grads = _grads(dtype, 5)
    opt = ours_cls(params, **kwargs)
    for grads in all_grads[:2]:
        for p, g in zip(params, grads):
            p.grad = g.copy()
        opt.step()
    sd = opt.state_dict()
    if via == "pickle":
        sd = pickle.loads(pickle.dumps(sd))
    elif via == "deepcopy":
        sd = copy.deepcopy(sd)
    fresh = ours_cls(params, **{**kwargs, "lr": 123.0})  # hyper-parameters come from the state
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["lr"] == kwargs["lr"]
    for grads in all_grads[2:]:
        for p, g in zip(params, grads):
            p.grad = g.copy()
        fresh.step()
    for a, b in zip(params, straight):
        np.testing.assert_array_equal(a.data, b.data)


def test_optimizer_state_dict_is_a_snapshot():
    """Stepping after state_dict() must not change the saved moments (they are copies)."""
    params, opt = _run_ours(optim.AdamW, dict(lr=0.1), np.float64, steps=2)
    sd = opt.state_dict()
    saved = sd["state"][0]["exp_avg"].copy()
    params[0].grad = np.ones((4, 3))
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"], saved)
    assert sd["state"][0]["step"] == 2
