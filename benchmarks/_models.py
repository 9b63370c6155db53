"""The benchmark model, twice: a minimodel GPT stack and the same network in PyTorch eager.

Both are GPT-2 shaped: token + learned position embeddings, ``n_layer`` pre-LN blocks
(causal multi-head attention with one fused ``c_attn`` projection, tanh-GELU MLP of width 4d),
a final LayerNorm and a head tied to the token embedding, trained with cross-entropy + AdamW.
The PyTorch model is loaded with the minimodel model's initial weights, so the two report the
same initial loss (a check that they really are the same network).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CONFIGS = {
    "small": dict(d=128, V=512),
    "large": dict(d=256, V=8192),
}


@dataclass(frozen=True)
class Cfg:
    name: str
    d: int
    V: int
    B: int = 16
    T: int = 128
    L: int = 4
    H: int = 4

    @property
    def tokens(self) -> int:
        return self.B * self.T

    def matmul_params(self) -> int:
        """Weights that take part in a GEMM: 12 d^2 per block (+ biases ignored) + tied head d V."""
        return self.L * 12 * self.d * self.d + self.d * self.V

    def flops(self) -> dict:
        """Training FLOPs per step: 6 * (matmul weights) * tokens  +  attention 12 * L * T * d * tokens.

        The attention term is QK^T and AV (2 * 2 T d per token per layer forward, x3 for
        forward + backward), counted for the full T x T square because both implementations
        compute it (the causal mask is applied after the GEMM). Elementwise work (LayerNorm,
        GELU, softmax, AdamW) is not counted.
        """
        dense = 6 * self.matmul_params() * self.tokens
        attn = 12 * self.L * self.T * self.d * self.tokens
        return {"dense": dense, "attention": attn, "total": dense + attn}


def get_cfg(name: str) -> Cfg:
    return Cfg(name=name, **CONFIGS[name])


def make_batch(cfg: Cfg, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    seq = rng.integers(0, cfg.V, size=(cfg.B, cfg.T + 1), dtype=np.int64)
    return seq[:, :-1].copy(), seq[:, 1:].copy()


# --------------------------------------------------------------------------- minimodel
def build_minimodel(cfg: Cfg, seed: int = 0, head_loss: str = "ce"):
    """The minimodel GPT stack (modules from minimodel.nn, names follow GPT-2).

    head_loss "ce": logits = TiedHead(h), then F.cross_entropy (the benchmark's definition);
    "chunked": F.linear_cross_entropy(h, E, targets) (what ``minimodel train`` uses; never
    holds the (N, V) logits).
    """
    import minimodel.functional as F
    from minimodel import nn

    class GPTStack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            rng = np.random.default_rng(seed)
            self.token_emb = nn.Embedding(cfg.V, cfg.d, std=0.02, rng=rng)
            self.pos_emb = nn.Embedding(cfg.T, cfg.d, std=0.02, rng=rng)
            for i in range(cfg.L):
                setattr(self, f"h{i}", nn.Block(cfg.d, cfg.H, causal=True, rng=rng))
            self.ln_f = nn.LayerNorm(cfg.d)
            self.lm_head = nn.TiedHead(self.token_emb)
            self._pos = np.arange(cfg.T)

        def forward(self, idx, targets):
            x = self.token_emb(idx) + self.pos_emb(self._pos[: idx.shape[1]])  # (B, T, d)
            for i in range(cfg.L):
                x = getattr(self, f"h{i}")(x)
            h = self.ln_f(x)  # (B, T, d)
            if head_loss == "chunked":
                return F.linear_cross_entropy(h, self.lm_head.weight, targets)
            return F.cross_entropy(self.lm_head(h), targets)  # logits (B, T, V)

    return GPTStack()


def minimodel_step_fn(cfg: Cfg, seed: int = 0, head_loss: str = "ce"):
    """Return (step(), model, optimizer); step() runs fwd, bwd, AdamW, zero_grad -> loss."""
    from minimodel import optim

    model = build_minimodel(cfg, seed, head_loss)
    opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    x, y = make_batch(cfg, seed)

    def step() -> float:
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return float(loss.item())

    return step, model, opt


# --------------------------------------------------------------------------- torch
def build_torch(cfg: Cfg, sdpa: bool, state: dict):
    """nanoGPT-style PyTorch model with the given minimodel state_dict loaded."""
    import torch
    import torch.nn as tnn
    import torch.nn.functional as TF

    class Attn(tnn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = tnn.Linear(cfg.d, 3 * cfg.d)
            self.c_proj = tnn.Linear(cfg.d, cfg.d)
            self.register_buffer("mask", torch.triu(torch.ones(cfg.T, cfg.T, dtype=torch.bool), 1),
                                 persistent=False)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T, cfg.H, C // cfg.H).transpose(1, 2) for t in (q, k, v))
            if sdpa:
                y = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.mask[:T, :T], float("-inf"))
                y = TF.softmax(att, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class MLP(tnn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = tnn.Linear(cfg.d, 4 * cfg.d)
            self.c_proj = tnn.Linear(4 * cfg.d, cfg.d)

        def forward(self, x):
            return self.c_proj(TF.gelu(self.c_fc(x), approximate="tanh"))

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = tnn.LayerNorm(cfg.d), Attn()
            self.ln_2, self.mlp = tnn.LayerNorm(cfg.d), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.token_emb = tnn.Embedding(cfg.V, cfg.d)
            self.pos_emb = tnn.Embedding(cfg.T, cfg.d)
            for i in range(cfg.L):
                setattr(self, f"h{i}", Block())
            self.ln_f = tnn.LayerNorm(cfg.d)
            self.register_buffer("pos", torch.arange(cfg.T), persistent=False)

        def forward(self, idx, targets):
            x = self.token_emb(idx) + self.pos_emb(self.pos[: idx.shape[1]])
            for i in range(cfg.L):
                x = getattr(self, f"h{i}")(x)
            logits = self.ln_f(x) @ self.token_emb.weight.T  # tied head
            return TF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    model = GPT()
    sd = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"state_dict mismatch: missing {missing}, unexpected {unexpected}")
    return model


def torch_step_fn(cfg: Cfg, sdpa: bool, adamw: str = "default", seed: int = 0):
    import torch

    state = {k: v for k, v in build_minimodel(cfg, seed).state_dict().items()}
    model = build_torch(cfg, sdpa, state)
    kw = {} if adamw == "default" else {adamw: True}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, **kw)
    x, y = (torch.from_numpy(a) for a in make_batch(cfg, seed))

    def step() -> float:
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return float(loss.item())

    return step, model, opt


def minimodel_dp_step_fn(cfg: Cfg, seed: int = 0, workers: int = 2):
    """EXPERIMENT (proposal, not library code): the same step as ``minimodel_step_fn`` split
    into ``workers`` batch slices run in Python threads (run it with OPENBLAS_NUM_THREADS=1).

    The replicas share the parameter ARRAYS (AdamW updates ``p.data`` in place, so every
    replica sees the update) and keep their own ``.grad``; each backward is seeded with
    1/workers so the summed gradients equal the full-batch mean.
    """
    import copy
    from concurrent.futures import ThreadPoolExecutor

    from minimodel import optim

    master = build_minimodel(cfg, seed)
    replicas = [master] + [copy.deepcopy(master) for _ in range(workers - 1)]
    params = [list(m.parameters()) for m in replicas]
    for rep in params[1:]:
        for a, b in zip(params[0], rep):
            b.data = a.data  # one array, several Parameter objects
    opt = optim.AdamW(params[0], lr=1e-3, weight_decay=0.01)
    x, y = make_batch(cfg, seed)
    cuts = [cfg.B * i // workers for i in range(workers + 1)]
    pool = ThreadPoolExecutor(workers)
    seed_grad = np.asarray(1.0 / workers, dtype=np.float32)

    def part(i: int) -> float:
        loss = replicas[i](x[cuts[i]:cuts[i + 1]], y[cuts[i]:cuts[i + 1]])
        loss.backward(seed_grad)
        return float(loss.item())

    def step() -> float:
        losses = list(pool.map(part, range(workers)))
        for rep in params[1:]:
            for a, b in zip(params[0], rep):
                a.grad += b.grad
        opt.step()
        for m in replicas:
            m.zero_grad()
        return sum(losses) / workers

    return step, master, opt
