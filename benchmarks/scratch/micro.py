"""Per-hotspot micro-benchmarks: today's minimodel path vs the prototype in proto.py, each
timed as forward + backward through the real autograd engine at d=256, V=8192, B=16, T=128.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/scratch/micro.py [section ...]
sections: linear head attention bmm gelu layernorm ce adamw embedding engine round2
(linear..engine compare proto.py against the engine at d92bfb2; round2 compares proto2.py
against the current fused kernels)
"""
import math
import sys

from _timing import compare, tune

tune("std")
import numpy as np

import minimodel as mm
import minimodel.functional as F
from minimodel import fused, nn, optim
import proto

B, T, d, V, H = 16, 128, 256, 8192, 4
rng = np.random.default_rng(0)
R = lambda *s: rng.standard_normal(s, dtype=np.float32)


def fb(fn, x_arr, g_arr):
    """forward + backward of fn on a fresh leaf; returns a zero-arg callable."""
    def run():
        x = mm.Tensor(x_arr, requires_grad=True)
        y = fn(x)
        y.backward(g_arr)
    return run


def sec_linear():
    for name, n_in, n_out in [("c_attn", d, 3 * d), ("c_fc", d, 4 * d), ("mlp.c_proj", 4 * d, d)]:
        lin = nn.Linear(n_in, n_out)
        x, g = R(B, T, n_in), R(B, T, n_out)
        fl = 6 * B * T * n_in * n_out
        compare({"today: MatMul(x, W.T) + Add(bias)": fb(lambda t: lin(t), x, g),
                 "proto LinearFn (2-D GEMM, bias in place)": fb(lambda t: proto._linear_forward(lin, t), x, g)},
                flops=fl, title=f"Linear {name} fwd+bwd (incl. zero_grad)")
        lin.zero_grad()


def sec_head():
    emb = nn.Embedding(V, d)
    head = nn.TiedHead(emb)
    x, g = R(B, T, d), R(B, T, V)
    def zg(f):
        def r():
            f(); emb.zero_grad()
        return r
    compare({"today: h @ E.T (3-D MatMul + Transpose)": zg(fb(lambda t: head(t), x, g)),
             "proto: one 2-D GEMM, dE owned": zg(fb(lambda t: proto._tied_head_forward(head, t), x, g))},
            reps=7, flops=6 * B * T * d * V, title="tied head fwd+bwd")


def sec_attention():
    from minimodel.nn.attention import MultiHeadAttention
    mha = MultiHeadAttention(d, H, causal=True)
    x, g = R(B, T, d), R(B, T, d)
    def attn_only_today(t):
        q, k, v = mm.ops.split(t, 3, axis=-1)
        q, k, v = mha._heads(q, B, T), mha._heads(k, B, T), mha._heads(v, B, T)
        y = F.scaled_dot_product_attention(q, k, v, causal=True)
        return y.transpose(0, 2, 1, 3).reshape(B, T, d)
    qkv, gq = R(B, T, 3 * d), R(B, T, d)
    compare({"today: split(GetItem) + heads + sdpa(Where, Softmax)": fb(attn_only_today, qkv, gq),
             "proto CausalAttentionFn (one node)": fb(lambda t: proto.CausalAttentionFn.apply(t, n_heads=H), qkv, gq)},
            title="attention core (B,T,3d)->(B,T,d) fwd+bwd")
    compare({"today: MultiHeadAttention": fb(lambda t: mha(t), x, g),
             "proto: LinearFn + CausalAttentionFn": fb(lambda t: proto._mha_forward(mha, t) if False else
                                                       proto.LinearFn.apply(proto.CausalAttentionFn.apply(
                                                           proto.LinearFn.apply(t, mha.c_attn.weight, mha.c_attn.bias),
                                                           n_heads=H), mha.c_proj.weight, mha.c_proj.bias), x, g)},
            title="whole MultiHeadAttention fwd+bwd")


def sec_bmm():
    """Is (B,H,T,dh) @ (B,H,dh,T) on strided head views BLAS-fast?"""
    dh = d // H
    qkv = R(B, T, 3 * d)
    q, k, v = qkv.reshape(B, T, 3, H, dh).transpose(2, 0, 3, 1, 4)
    qc, kc = np.ascontiguousarray(q), np.ascontiguousarray(k)
    att = R(B, H, T, T)
    fl = 2 * B * H * T * T * dh
    compare({"q @ k^T on strided views (today's layout)": lambda: q @ k.swapaxes(-1, -2),
             "contiguous copies then q @ k^T": lambda: np.ascontiguousarray(q) @ np.ascontiguousarray(k).swapaxes(-1, -2),
             "q @ k^T, inputs already contiguous": lambda: qc @ kc.swapaxes(-1, -2),
             "einsum bhtd,bhsd->bhts (views)": lambda: np.einsum("bhtd,bhsd->bhts", q, k),
             "python loop of 2-D GEMMs (64 x)": lambda: [q[b, h] @ k[b, h].T for b in range(B) for h in range(H)]},
            flops=fl, title="scores = q @ k^T (B,H,T,dh)x(B,H,dh,T)")
    compare({"att @ v (v strided view)": lambda: att @ v,
             "att @ contiguous v": lambda: att @ np.ascontiguousarray(v),
             "einsum bhts,bhsd->bhtd": lambda: np.einsum("bhts,bhsd->bhtd", att, v)},
            flops=fl, title="y = att @ v")
    # a layout numpy cannot hand to BLAS (negative stride on the inner axis)
    compare({"q @ k^T (BLAS-able)": lambda: q @ k.swapaxes(-1, -2),
             "non-BLAS strides (both axes strided) -> noblas loop": lambda: q[:, :, :, ::-1] @ k[:, :, :, ::-1].swapaxes(-1, -2)},
            flops=fl, title="sanity: what a non-BLAS-able layout costs")


def sec_gelu():
    x, g = R(B, T, 4 * d), R(B, T, 4 * d)
    compare({"today fused.GELU": fb(lambda t: fused.GELU.apply(t), x, g),
             "proto GELUFn (in-place temporaries)": fb(lambda t: proto.GELUFn.apply(t), x, g)},
            title="GELU (B,T,4d) fwd+bwd")


def sec_layernorm():
    ln = nn.LayerNorm(d)
    x, g = R(B, T, d), R(B, T, d)
    def run(fn):
        def r():
            t = mm.Tensor(x, requires_grad=True)
            fn.apply(t, ln.weight, ln.bias, eps=1e-5).backward(g)
            ln.zero_grad()
        return r
    compare({"today fused.LayerNorm": run(fused.LayerNorm), "proto LayerNormFn": run(proto.LayerNormFn)},
            title="LayerNorm (B,T,d) fwd+bwd")


def sec_ce():
    logits = R(B * T, V)
    tgt = rng.integers(0, V, B * T)
    def run(fn):
        def r():
            t = mm.Tensor(logits, requires_grad=True)
            fn.apply(t, mm.Tensor(tgt)).backward()
        return r
    compare({"today fused.CrossEntropy": run(fused.CrossEntropy),
             "proto chunked (64 rows) CrossEntropyFn": run(proto.CrossEntropyFn)},
            reps=9, title="cross-entropy (2048, 8192) fwd+bwd")


def sec_adamw():
    sys.path.insert(0, __file__.rsplit("/", 2)[0])
    from _models import build_minimodel, get_cfg
    m = build_minimodel(get_cfg("large"))
    params = list(m.parameters())
    for p in params:
        p.grad = np.ones_like(p.data) * 1e-3
    o1 = optim.AdamW(params)
    o2 = optim.AdamW(params)
    o2.step = proto.adamw_step.__get__(o2)
    compare({"today AdamW.step": o1.step, "proto (folded passes)": o2.step}, reps=15,
            title=f"AdamW step over {len(params)} tensors, {sum(p.size for p in params) / 1e6:.2f} M params")


def sec_embedding():
    ids = rng.integers(0, V, (B, T))
    g = R(B, T, d)
    flat_ids = ids.reshape(-1)

    def today():
        dW = np.zeros(V * d, np.float32)
        flat = (ids.reshape(-1, 1) * d + np.arange(d)).reshape(-1)
        np.add.at(dW, flat, g.reshape(-1))
        return dW.reshape(V, d)

    def sort_reduceat():
        order = np.argsort(flat_ids, kind="stable")
        s = flat_ids[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        dW = np.zeros((V, d), np.float32)
        dW[s[starts]] = np.add.reduceat(g.reshape(-1, d)[order], starts, axis=0)
        return dW

    def add_at_2d():
        dW = np.zeros((V, d), np.float32)
        np.add.at(dW, flat_ids, g.reshape(-1, d))
        return dW

    ref = today()
    assert np.allclose(ref, sort_reduceat(), atol=1e-5) and np.allclose(ref, add_at_2d(), atol=1e-5)
    compare({"today: flat 1-D np.add.at": today, "argsort + np.add.reduceat rows": sort_reduceat,
             "2-D np.add.at (rows)": add_at_2d}, title="embedding backward (V=8192, N=2048, d=256)")
    # the tied matrix: head grad (dense) + embedding grad (dense zeros + rows) summed by the engine
    head_g = R(V, d)
    def sum_dense():
        return head_g + today()
    def rows_into_head_grad():
        out = head_g.copy()  # stands for the already-accumulated head gradient
        order = np.argsort(flat_ids, kind="stable")
        s = flat_ids[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        out[s[starts]] += np.add.reduceat(g.reshape(-1, d)[order], starts, axis=0)
        return out
    assert np.allclose(sum_dense(), rows_into_head_grad(), atol=1e-5)
    compare({"today: dense dW_emb, engine adds head + emb": sum_dense,
             "row-sparse: add rows into the head grad": rows_into_head_grad},
            title="tied E gradient: lookup part + head part (the copy stands for the head grad)")


def sec_engine():
    """Leaf copy in Tensor._accumulate_grad: Linear weight grads arrive as transpose views."""
    lin = nn.Linear(d, 4 * d)
    x, g = R(B, T, d), R(B, T, 4 * d)
    import minimodel.tensor as tn
    orig = tn.Tensor._accumulate_grad
    def with_copy():
        tn.Tensor._accumulate_grad = orig
        fb(lambda t: lin(t), x, g)(); lin.zero_grad()
    def without_copy():
        tn.Tensor._accumulate_grad = proto._accumulate_grad
        fb(lambda t: lin(t), x, g)(); lin.zero_grad()
    compare({"today (W grad copied: F-ordered transpose view)": with_copy,
             "accept F-contiguous owned grads": without_copy}, title="Linear c_fc fwd+bwd, leaf copy")
    tn.Tensor._accumulate_grad = orig
    # engine sum 'previous + ig' vs in place
    a, b = R(B, T, 3 * d), R(B, T, 3 * d)
    compare({"previous + ig (new array)": lambda: a + b,
             "np.add(previous, ig, out=previous)": lambda: np.add(a, b, out=a)},
            title="engine gradient sum for a (B,T,3d) node")




def sec_round2():
    """proto2 (gemv / einsum reductions) vs today's fused kernels, fwd+bwd."""
    import proto2
    from minimodel.autograd import Context
    for dd in (128, 256):
        x, g = R(B, T, dd), R(B, T, dd)
        w, b = np.ones(dd, np.float32), np.zeros(dd, np.float32)
        def ln(cls):
            def r():
                c = Context((True, True, True))
                cls.forward(c, x, w, b, eps=1e-5)
                cls.backward(c, g)
            return r
        compare({"today fused.LayerNorm": ln(fused.LayerNorm), "proto2 LayerNorm2": ln(proto2.LayerNorm2)},
                reps=40, title=f"LayerNorm (2048, {dd}) fwd+bwd")
        qkv, gy = R(B, T, 3 * dd), R(B, T, dd)
        def at(cls):
            def r():
                c = Context((True,))
                cls.forward(c, qkv, n_heads=H, causal=True)
                cls.backward(c, gy)
            return r
        compare({"today fused.SelfAttention": at(fused.SelfAttention),
                 "proto2 SelfAttention2": at(proto2.SelfAttention2)},
                reps=20, title=f"SelfAttention (16,128,{3 * dd}) fwd+bwd")
    for VV in (512, 8192):
        lg = R(B * T, VV)
        tg = rng.integers(0, VV, B * T)
        def ce(cls):
            def r():
                c = Context((True, False))
                cls.forward(c, lg.copy(), tg)
                cls.backward(c, np.asarray(1.0, np.float32))
            return r
        compare({"today fused.CrossEntropy": ce(fused.CrossEntropy),
                 "proto2 CrossEntropy2": ce(proto2.CrossEntropy2)},
                reps=15, title=f"cross-entropy (2048, {VV}) fwd+bwd (incl. a copy of logits)")


SECTIONS = {k[4:]: v for k, v in globals().items() if k.startswith("sec_")}
for name in sys.argv[1:] or SECTIONS:
    SECTIONS[name]()
