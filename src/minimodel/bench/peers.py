"""The PyTorch peers of ``minimodel bench`` (imported only inside a worker process).

* ``NanoGPT``: a hand-written nanoGPT-style GPT-2 in PyTorch eager. Its parameter names are
  minimodel's GPT names (``token_emb``, ``blocks.i.attn.c_attn``...), so it loads a minimodel
  state_dict as is and both report the same initial loss: a check that they are the same
  network. Attention is ``F.scaled_dot_product_attention(is_causal=True)``; the head is tied
  (``h @ token_emb.weight.T``) and the loss is ``F.cross_entropy`` on the full (N, V) logits.
* ``hf_gpt2``: transformers' ``GPT2LMHeadModel`` from a ``GPT2Config`` of the same sizes, with
  dropout 0, a tied head and the requested attention implementation ("eager" or "sdpa"),
  loaded with the same weights through :func:`minimodel.interop.gpt2.hf_state_dict`.
* ``adamw``: ``torch.optim.AdamW(fused=True)``, or ``foreach=True`` when this torch cannot
  fuse on CPU (the reason is returned and printed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn as tnn
import torch.nn.functional as TF

from minimodel.bench.spec import Shape


class _Attention(tnn.Module):
    def __init__(self, d: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.c_attn = tnn.Linear(d, 3 * d)
        self.c_proj = tnn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = TF.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, dh)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class _MLP(tnn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.c_fc = tnn.Linear(d, 4 * d)
        self.c_proj = tnn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(TF.gelu(self.c_fc(x), approximate="tanh"))


class _Block(tnn.Module):
    def __init__(self, d: int, n_head: int) -> None:
        super().__init__()
        self.ln_1, self.attn = tnn.LayerNorm(d), _Attention(d, n_head)
        self.ln_2, self.mlp = tnn.LayerNorm(d), _MLP(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(tnn.Module):
    """GPT-2 in PyTorch eager, named like minimodel's GPT, tied head, full-logits loss."""

    def __init__(self, shape: Shape, block_size: int | None = None) -> None:
        super().__init__()
        self.token_emb = tnn.Embedding(shape.V, shape.d)
        self.pos_emb = tnn.Embedding(block_size or shape.T, shape.d)
        self.blocks = tnn.ModuleList([_Block(shape.d, shape.H) for _ in range(shape.L)])
        self.ln_f = tnn.LayerNorm(shape.d)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.shape[1])
        x = self.token_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.token_emb.weight.T  # tied head, (B, T, V)
        return TF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def load_numpy_state(module: tnn.Module, state: dict[str, np.ndarray],
                     allow_missing: tuple[str, ...] = ()) -> None:
    sd = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in state.items()}
    missing, unexpected = module.load_state_dict(sd, strict=False)
    missing = [m for m in missing if not m.endswith(allow_missing)]
    if missing or unexpected:
        raise RuntimeError(f"state_dict mismatch: missing {missing}, unexpected {unexpected}")


def nanogpt(shape: Shape, state: dict[str, np.ndarray]) -> NanoGPT:
    model = NanoGPT(shape)
    load_numpy_state(model, state)
    return model


def hf_gpt2(shape: Shape, attn: str, mm_model: Any) -> Any:
    """GPT2LMHeadModel with the minimodel GPT ``mm_model``'s weights; attn "eager" or "sdpa"."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from minimodel.interop.gpt2 import hf_state_dict

    config = GPT2Config(vocab_size=shape.V, n_positions=shape.T, n_embd=shape.d,
                        n_layer=shape.L, n_head=shape.H, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, tie_word_embeddings=True, layer_norm_epsilon=1e-5,
                        activation_function="gelu_new", use_cache=False)
    config._attn_implementation = attn
    model = GPT2LMHeadModel(config)
    got = getattr(model.config, "_attn_implementation", attn)
    if got != attn:
        raise RuntimeError(f"transformers chose attention {got!r} instead of {attn!r}")
    load_numpy_state(model, hf_state_dict(mm_model), allow_missing=("lm_head.weight",
                                                                   "attn.bias", "masked_bias"))
    if model.lm_head.weight.data_ptr() != model.transformer.wte.weight.data_ptr():
        raise RuntimeError("GPT2LMHeadModel's head is not tied to wte")
    model.train()
    return model


def hf_loss(model: Any, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Next-token loss on the same (idx, targets) as the other implementations."""
    logits = model(input_ids=idx, use_cache=False).logits
    return TF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def adamw(params: Any, lr: float = 1e-3, weight_decay: float = 0.01) -> tuple[Any, str]:
    """(optimizer, description): fused AdamW when this torch supports it on CPU, else foreach.

    Support is probed on a throwaway parameter, so a refusal never leaves a half-made step.
    """
    params = list(params)
    try:
        probe = tnn.Parameter(torch.zeros(4))
        probe.grad = torch.ones(4)
        torch.optim.AdamW([probe], lr=lr, fused=True).step()
    except (RuntimeError, TypeError, ValueError) as exc:
        reason = str(exc).splitlines()[0][:120]
        return (torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, foreach=True),
                f"foreach (fused unsupported on CPU: {reason})")
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=True), "fused"
