"""GPT: a GPT-2-architecture decoder with a tied (default) or untied output head.

Read bottom-up: ``GPT.forward`` embeds tokens and positions, runs the pre-LN blocks, applies
a final LayerNorm, then the head. With ``tie_embeddings=True`` the head is
``TiedHead(token_emb)``, so

    logits[b, t, v] = h[b, t] . E[v]        (a dot product with every token's embedding)

and the model has V * d fewer parameters than the untied version.

Parameter names follow GPT-2 inside each block (``ln_1``, ``attn.c_attn``, ``mlp.c_fc``...),
which keeps the Hugging Face export a renaming (see ``minimodel.interop``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterator

import numpy as np

import minimodel.functional as F
from minimodel.autograd import no_grad
from minimodel.models.base import LanguageModel, transformer_state_shapes
from minimodel.nn import (Block, Dropout, Embedding, KVCache, LayerNorm, Linear, LMHead,
                          Module, ModuleList, TiedHead)
from minimodel.nn.embedding import EMBEDDING_INIT_STD, check_token_ids
from minimodel.nn.parameter import default_rng
from minimodel.tensor import Tensor


@dataclass
class GPTConfig:
    """Sizes of a GPT. ``vocab_size`` must come from the tokenizer (its single source of truth)."""

    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    d_model: int
    tie_embeddings: bool = True
    dropout: float = 0.0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "d_model"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"GPTConfig.{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"GPTConfig: d_model={self.d_model} must be divisible by "
                             f"n_head={self.n_head}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig.dropout must be in [0, 1), got {self.dropout}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GPT(LanguageModel):
    """Decoder-only transformer language model (GPT-2 architecture).

    ``forward(idx, targets=None) -> (logits, loss)``: idx (B, T) token ids with T <= block_size;
    targets (B, T) are the next tokens (``-100`` to skip a position); loss is None without them.
    """

    def __init__(self, config: GPTConfig, rng: np.random.Generator | None = None) -> None:
        if not isinstance(config, GPTConfig):
            raise TypeError(f"GPT takes a GPTConfig, got {type(config).__name__}")
        super().__init__()
        self.config = config
        rng = rng if rng is not None else default_rng()
        c = config
        self.token_emb = Embedding(c.vocab_size, c.d_model, rng=rng)  # wte (V, d)
        self.pos_emb = Embedding(c.block_size, c.d_model, rng=rng)  # wpe (block_size, d)
        self.drop = Dropout(c.dropout, rng)
        self.blocks = ModuleList([Block(c.d_model, c.n_head, causal=True, dropout=c.dropout,
                                        rng=rng) for _ in range(c.n_layer)])
        self.ln_f = LayerNorm(c.d_model)
        self.lm_head = (TiedHead(self.token_emb, c.vocab_size) if c.tie_embeddings
                        else LMHead(c.d_model, c.vocab_size, rng=rng))
        init_gpt2_weights(self, c.n_layer, rng)

    @staticmethod
    def state_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
        """The ``state_dict()`` shapes of ``GPT(config)``, without building it."""
        c = config
        return transformer_state_shapes(c.vocab_size, c.block_size, c.n_layer, c.d_model,
                                        c.tie_embeddings)

    # ------------------------------------------------------------------ forward
    def _check_idx(self, idx: Any) -> np.ndarray:
        arr = check_token_ids(idx, self.config.vocab_size, where="GPT")
        if arr.ndim != 2:
            raise ValueError(f"GPT expects token ids of shape (B, T), got {arr.shape}")
        if arr.shape[1] > self.config.block_size:
            raise ValueError(f"sequence length {arr.shape[1]} exceeds block_size "
                             f"{self.config.block_size}; crop the input to the last "
                             f"{self.config.block_size} tokens")
        return arr

    def hidden_states(self, idx: Any, cache: KVCache | None = None) -> Tensor:
        """The final-LayerNorm output h (B, T, d) that the head turns into logits.

        With a ``cache``, ``idx`` holds only the new tokens; their positions continue after
        the ``cache.length`` tokens seen before.
        """
        ids = self._check_idx(idx)
        start = cache.length if cache is not None else 0
        T = ids.shape[1]
        if start + T > self.config.block_size:
            raise ValueError(f"positions {start}..{start + T - 1} exceed block_size "
                             f"{self.config.block_size}")
        x = self.token_emb(ids) + self.pos_emb(np.arange(start, start + T))  # (B, T, d) + (T, d)
        x = self.drop(x)
        for block in self.blocks:
            x = block(x, cache)  # (B, T, d)
        return self.ln_f(x)

    def forward(self, idx: Any, targets: Any = None) -> tuple[Tensor, Tensor | None]:
        """Logits (B, T, V) and, given targets, the mean next-token cross-entropy.

        ids (B, T) -> hidden states h (B, T, d) -> logits = lm_head(h) -> loss. Training does
        not need the logits, the largest array of the step: :meth:`loss` computes the same
        loss without them.
        """
        h = self.hidden_states(idx)  # (B, T, d)
        logits = self.lm_head(h)  # (B, T, V): h @ E.T when tied
        loss = F.cross_entropy(logits, targets) if targets is not None else None
        return logits, loss

    def loss(self, idx: Any, targets: Any) -> Tensor:
        """The mean next-token cross-entropy of ``model(idx, targets)``, without the logits:
        :meth:`loss_of_rows` over the batch (``F.batch_loss`` is that call; its kernel runs
        the two halves of a large batch at the same time, one per core)."""
        return F.batch_loss(self.loss_of_rows, idx, targets)

    def loss_of_rows(self, idx: Any, targets: Any) -> Tensor:
        """ids (B, T) -> hidden states h (B, T, d) -> ``lm_head.loss(h, targets)``
        (``F.linear_cross_entropy``, whose kernel runs the head and the loss in row chunks and
        never holds the (B*T, V) logits)."""
        return self.lm_head.loss(self.hidden_states(idx), targets)

    # ------------------------------------------------------------------ generation
    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, seed: int | None = None) -> np.ndarray:
        """Extend ``idx`` (B, T) by ``max_new_tokens`` sampled tokens; returns (B, T + n).

        temperature 0 picks the arg-max (greedy); top_k keeps the k most likely tokens. Only
        the last position's logits are computed at each step (the head is the costly part), and
        a key/value cache means each step projects only the newest token.
        """
        ids = np.array(check_token_ids(idx, self.config.vocab_size, where="GPT.generate"),
                       dtype=np.int64)
        new = list(self.generate_stream(ids, max_new_tokens, temperature, top_k, seed))
        if not new:
            return ids
        return np.concatenate([ids, np.stack(new, axis=1)], axis=1)

    def generate_stream(self, idx: Any, max_new_tokens: int, temperature: float = 1.0,
                        top_k: int | None = None, seed: int | None = None
                        ) -> Iterator[np.ndarray]:
        """Like :meth:`generate`, but yields each new token (B,) as soon as it is chosen, so a
        caller can show text while the rest is still being computed."""
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
        if top_k is not None and (int(top_k) != top_k or top_k < 1):
            raise ValueError(f"top_k must be a positive integer or None, got {top_k}")
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        ids = np.array(check_token_ids(idx, self.config.vocab_size, where="GPT.generate"),
                       dtype=np.int64)
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"generate expects a non-empty prompt of shape (B, T), got {ids.shape}")
        rng = np.random.default_rng(seed)
        cache, fed = KVCache(), 0  # fed = tokens of `ids` already in the cache
        for _ in range(max_new_tokens):
            # Eval mode and no graph only while this token is computed, never across the
            # `yield`: the caller's own code between two tokens runs in its own mode.
            with no_grad(), self.evaluating():
                if ids.shape[1] > self.config.block_size or fed == 0:
                    # learned absolute positions: once the window slides, every cached
                    # position is stale, so refill the cache from the cropped context
                    cache, fed = KVCache(), 0
                    h = self.hidden_states(ids[:, -self.config.block_size:], cache)
                else:
                    h = self.hidden_states(ids[:, fed:], cache)  # only the new token
                fed = ids.shape[1]
                logits = self.lm_head(h[:, -1, :]).data.astype(np.float64)  # (B, V)
            next_ids = sample_next(logits, temperature, top_k, rng)  # (B,)
            ids = np.concatenate([ids, next_ids[:, None]], axis=1)
            yield next_ids


def init_gpt2_weights(model: Module, n_layer: int, rng: np.random.Generator) -> None:
    """GPT-2 initialisation: N(0, 0.02) Linear weights, zero biases, and residual projections
    (``c_proj``) scaled by 1/sqrt(2 * n_layer) so the residual stream's variance does not grow
    with depth (Radford et al. 2019). Embeddings keep their own N(0, 0.02) init."""
    residual_std = EMBEDDING_INIT_STD / math.sqrt(2 * n_layer)
    for name, module in model.named_modules():
        if isinstance(module, Linear):
            std = residual_std if name.endswith("c_proj") else EMBEDDING_INIT_STD
            module.weight.data[...] = rng.standard_normal(module.weight.shape) * std
            if module.bias is not None:
                module.bias.data[...] = 0.0


def sample_next(logits: np.ndarray, temperature: float, top_k: int | None,
                rng: np.random.Generator) -> np.ndarray:
    """Pick one token per row of ``logits`` (B, V): greedy, or softmax(logits / T) sampling."""
    if temperature == 0:
        return logits.argmax(axis=-1)
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = np.partition(logits, -top_k, axis=-1)[:, -top_k][:, None]  # (B, 1)
        logits = np.where(logits < kth, -np.inf, logits)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return np.array([rng.choice(len(p), p=p) for p in probs], dtype=np.int64)
