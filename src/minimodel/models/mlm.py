"""MaskedLM: a BERT-style bidirectional encoder trained to fill in masked tokens.

The encoder is GPT's trunk without the causal mask: every position sees every other. Training
hides ~15% of the tokens (BERT's 80/10/10 rule, see ``minimodel.data.masking``) and scores only
those positions, so the head is applied to the masked rows only:

    h_masked = h.reshape(-1, d)[masked]      # (M, d), M ~ 0.15 * B * T
    logits   = h_masked @ E.T                # (M, V) instead of (B*T, V)

Gathering before projecting is both exact and about 1/0.15 ~ 6.7x cheaper in the head.

With ``head_transform=True`` (what ``minimodel train --model mlm`` builds) each gathered row
first goes through BERT's prediction-head transform, ``LayerNorm(gelu(h @ W.T + b))``, and only
then meets E. That is the head of BERT, RoBERTa, MegatronBERT and ESM, and the reason this
model can graduate exactly to transformers' ``MegatronBertForMaskedLM``
(``minimodel.interop.mlm_hf``).

``MaskedLM.from_packed`` builds the bare architecture of the lab's seed exercise (no biases,
LayerNorm without affine, d_ff = d, no final LayerNorm) from packed weights, and then
``forward_masked`` equals ``mlm_forward_tied`` / ``mlm_forward`` exactly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import minimodel.functional as F
from minimodel.functional import IGNORE_INDEX
from minimodel.models.base import LanguageModel, transformer_state_shapes
from minimodel.models.gpt import init_gpt2_weights
from minimodel.nn import (Block, Dropout, Embedding, LayerNorm, Linear, LMHead, Module,
                          ModuleList, TiedHead)
from minimodel.nn.embedding import check_token_ids
from minimodel.nn.parameter import default_rng
from minimodel.tensor import Tensor



@dataclass
class MLMConfig:
    """Sizes of a MaskedLM.

    ``mlp_ratio=1, bias=False, affine_ln=False, final_ln=False`` select the bare "seed"
    variant of the lab's exercise. ``head_transform`` adds BERT's dense + GELU + LayerNorm
    before the decoder (see :class:`HeadTransform`); False keeps the head a bare
    ``h @ E.T``, as in older checkpoints that do not record the field.
    """

    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    d_model: int
    tie_embeddings: bool = True
    dropout: float = 0.0
    mlp_ratio: int = 4
    bias: bool = True
    affine_ln: bool = True
    final_ln: bool = True
    head_transform: bool = False

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "d_model", "mlp_ratio"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"MLMConfig.{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"MLMConfig: d_model={self.d_model} must be divisible by "
                             f"n_head={self.n_head}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class HeadTransform(Module):
    r"""BERT's prediction-head transform, applied to each row just before the decoder:

        t = LayerNorm(gelu(h @ W^T + b))        (M, d) -> (M, d),  W (d, d)

    Why have it: with a tied head the logits are ``t @ E^T``, so the last hidden state must
    point towards the *input* vector of the token to predict. The transform gives the head a
    d x d map of its own (and a LayerNorm), so the encoder's output space and the embedding
    space need not coincide. It costs d*d + 3d parameters (16.8 k at d = 128), a small fraction
    of the V*d the tie saves.
    """

    def __init__(self, d_model: int, rng: np.random.Generator | None = None) -> None:
        super().__init__()
        self.dense = Linear(d_model, d_model, rng=rng)  # (d, d)
        self.ln = LayerNorm(d_model)

    def forward(self, h: Tensor) -> Tensor:
        return self.ln(F.gelu(self.dense(h)))  # (..., d)


class MaskedLM(LanguageModel):
    """Bidirectional transformer encoder with a tied or untied masked-LM head.

    ``forward(idx, labels=None) -> (logits, loss)``: with labels (B, T) (``-100`` except at
    masked positions) the logits are (M, V) for the M labelled positions in row-major order
    and the loss is their mean cross-entropy; without labels the logits are (B, T, V).
    """

    def __init__(self, config: MLMConfig, rng: np.random.Generator | None = None) -> None:
        if not isinstance(config, MLMConfig):
            raise TypeError(f"MaskedLM takes an MLMConfig, got {type(config).__name__}")
        super().__init__()
        self.config = c = config
        rng = rng if rng is not None else default_rng()
        self.token_emb = Embedding(c.vocab_size, c.d_model, rng=rng)  # (V, d)
        self.pos_emb = Embedding(c.block_size, c.d_model, rng=rng)  # (block_size, d)
        self.drop = Dropout(c.dropout, rng)
        self.blocks = ModuleList([
            Block(c.d_model, c.n_head, causal=False, dropout=c.dropout, mlp_ratio=c.mlp_ratio,
                  bias=c.bias, affine=c.affine_ln, rng=rng) for _ in range(c.n_layer)])
        self.ln_f = LayerNorm(c.d_model) if c.final_ln else None
        self.head_transform = HeadTransform(c.d_model, rng) if c.head_transform else None
        self.lm_head = (TiedHead(self.token_emb, c.vocab_size) if c.tie_embeddings
                        else LMHead(c.d_model, c.vocab_size, rng=rng))
        init_gpt2_weights(self, c.n_layer, rng)

    @staticmethod
    def state_shapes(config: MLMConfig) -> dict[str, tuple[int, ...]]:
        """The ``state_dict()`` shapes of ``MaskedLM(config)``, without building it."""
        c = config
        return transformer_state_shapes(c.vocab_size, c.block_size, c.n_layer, c.d_model,
                                        c.tie_embeddings, c.mlp_ratio, c.bias, c.affine_ln,
                                        c.final_ln, head_transform=c.head_transform)

    def hidden_states(self, idx: Any) -> Tensor:
        ids = check_token_ids(idx, self.config.vocab_size, where="MaskedLM")
        if ids.ndim != 2 or ids.shape[1] > self.config.block_size:
            raise ValueError(f"MaskedLM expects ids of shape (B, T) with T <= "
                             f"{self.config.block_size}, got {ids.shape}")
        x = self.token_emb(ids) + self.pos_emb(np.arange(ids.shape[1]))  # (B, T, d)
        x = self.drop(x)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) if self.ln_f is not None else x

    def head_input(self, h: Tensor) -> Tensor:
        """What the decoder (``lm_head``) reads: ``h``, or ``HeadTransform(h)`` when enabled."""
        return self.head_transform(h) if self.head_transform is not None else h

    def forward(self, idx: Any, labels: Any = None) -> tuple[Tensor, Tensor | None]:
        """See the class docstring: logits (B, T, V) without labels; with them, the (M, V)
        logits of the M labelled positions and their mean cross-entropy."""
        h = self.hidden_states(idx)  # (B, T, d)
        if labels is None:
            return self.lm_head(self.head_input(h)), None
        rows, targets = self._labelled_rows(h, labels)  # (M, d), (M,)
        logits = self.lm_head(rows)  # (M, V)
        return logits, F.cross_entropy(logits, targets)

    def loss(self, idx: Any, labels: Any) -> Tensor:
        """The loss of ``model(idx, labels)`` without the (M, V) logits: :meth:`loss_of_rows`
        over the batch (``F.batch_loss``, whose kernel may run its two halves at once)."""
        return F.batch_loss(self.loss_of_rows, idx, labels)

    def loss_of_rows(self, idx: Any, labels: Any) -> Tensor:
        """The M labelled positions' rows of h -> ``lm_head.loss`` (no (M, V) logits kept)."""
        rows, targets = self._labelled_rows(self.hidden_states(idx), labels)
        return self.lm_head.loss(rows, targets)

    def _labelled_rows(self, h: Tensor, labels: Any) -> tuple[Tensor, np.ndarray]:
        """What the decoder reads at the labelled positions (M, d), and their labels (M,)."""
        lab = labels.data if isinstance(labels, Tensor) else np.asarray(labels)
        if lab.shape != h.shape[:2]:
            raise ValueError(f"MaskedLM labels must have the shape of the ids {h.shape[:2]}, "
                             f"got {lab.shape}")
        selected = (lab != IGNORE_INDEX).reshape(-1)  # (B*T,)
        rows = h.reshape(-1, h.shape[-1])[np.flatnonzero(selected)]  # (M, d): gather first
        targets = lab.reshape(-1)[selected].astype(np.int64)  # (M,)
        return self.head_input(rows), targets

    def forward_masked(self, idx: Any, mask_indicator: Any) -> Tensor:
        """Logits (M, V) at the positions where ``mask_indicator > 0.5`` (seed semantics)."""
        mask = np.asarray(mask_indicator.data if isinstance(mask_indicator, Tensor)
                          else mask_indicator)
        h = self.hidden_states(idx)
        if mask.shape != h.shape[:2]:
            raise ValueError(f"mask_indicator must have the shape of the ids {h.shape[:2]}, "
                             f"got {mask.shape}")
        rows = h.reshape(-1, h.shape[-1])[np.flatnonzero((mask > 0.5).reshape(-1))]  # (M, d)
        return self.lm_head(self.head_input(rows))  # (M, V): gather first, then project

    @classmethod
    def from_packed(cls, w_emb: np.ndarray, pos_embed: np.ndarray, blocks_weights: np.ndarray,
                    num_heads: int, w_head: np.ndarray | None = None) -> "MaskedLM":
        """Build the bare seed architecture from packed weights (float dtype is kept).

        blocks_weights (L, 6, d, d) holds [w_q, w_k, w_v, w_o, w_mlp1, w_mlp2], each used as
        ``x @ w``; our Linear computes ``x @ W.T``, so every matrix is stored transposed.
        ``w_head`` (d, V) gives an untied head; without it the head is tied to ``w_emb``.
        """
        w_emb, pos_embed, blocks_weights = (np.asarray(a) for a in (w_emb, pos_embed, blocks_weights))
        V, d = w_emb.shape
        if blocks_weights.ndim != 4 or blocks_weights.shape[1:] != (6, d, d):
            raise ValueError(f"blocks_weights must be (num_blocks, 6, {d}, {d}), got "
                             f"{blocks_weights.shape}")
        config = MLMConfig(V, pos_embed.shape[0], blocks_weights.shape[0], num_heads, d,
                           tie_embeddings=w_head is None, mlp_ratio=1, bias=False,
                           affine_ln=False, final_ln=False)
        model = cls(config)
        dtype = w_emb.dtype
        model.token_emb.weight.data = w_emb.copy()
        model.pos_emb.weight.data = pos_embed.astype(dtype)
        for block, packed in zip(model.blocks, blocks_weights.astype(dtype)):
            w_q, w_k, w_v, w_o, w_1, w_2 = packed
            block.attn.c_attn.weight.data = np.concatenate([w_q, w_k, w_v], axis=1).T.copy()
            block.attn.c_proj.weight.data = w_o.T.copy()
            block.mlp.c_fc.weight.data = w_1.T.copy()
            block.mlp.c_proj.weight.data = w_2.T.copy()
        if w_head is not None:
            w_head = np.asarray(w_head, dtype=dtype)
            if w_head.shape != (d, V):
                raise ValueError(f"w_head must be (d_model, vocab_size) = ({d}, {V}), got "
                                 f"{w_head.shape}")
            model.lm_head.weight.data = w_head.T.copy()
        return model
