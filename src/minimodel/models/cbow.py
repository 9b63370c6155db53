"""CBOW word vectors (Mikolov et al. 2013): predict a word from the average of its context.

    h      = mean_j E_in[context_j]          # (N, d)
    logits = h @ E_out.T                     # (N, V), a full softmax (fine for small V)

or, with negative sampling (word2vec's usual objective, ``model.loss(contexts, targets, negatives)``), only
the true word's and K noise words' output vectors are scored:

    rows = E_out[[target, noise_1..noise_K]]            # (N, 1+K, d)
    loss = mean -log sigma(h.o_target) - sum_k log sigma(-h.o_noise_k)

which costs (1+K)·d per example instead of V·d and touches 1+K rows of E_out.

Untied (word2vec's default) keeps separate input and output matrices; tied uses
``TiedHead(in_emb)`` so E_out is E_in. Only the rows of the context words receive a gradient
in E_in: the embedding gradient is row-sparse (see ``minimodel.diagnostics``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import minimodel.functional as F
from minimodel.models.base import LanguageModel
from minimodel.nn import Embedding, LMHead, TiedHead
from minimodel.nn.embedding import check_token_ids, lookup
from minimodel.nn.parameter import default_rng
from minimodel.tensor import Tensor


@dataclass
class CBOWConfig:
    vocab_size: int
    d_model: int = 64
    window: int = 2
    tie_embeddings: bool = False

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "window"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"CBOWConfig.{name} must be a positive integer, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CBOW(LanguageModel):
    """``CBOW(CBOWConfig(...))`` or ``CBOW(vocab_size=..., d_model=..., window=..., tie_embeddings=...)``.

    ``forward(contexts, targets=None) -> (logits, loss)``: contexts (N, 2 * window) word ids,
    targets (N,) the centre words.
    """

    input_embedding_name = "in_emb"

    def __init__(self, config: CBOWConfig | None = None, rng: np.random.Generator | None = None,
                 **kwargs: Any) -> None:
        if config is None:
            config = CBOWConfig(**kwargs)
        elif kwargs:
            raise TypeError("pass either a CBOWConfig or keyword sizes, not both")
        super().__init__()
        self.config = config
        rng = rng if rng is not None else default_rng()
        # word2vec-style init: small uniform input vectors would do as well; 0.02 keeps the
        # initial loss at ln V for the tied variant too.
        self.in_emb = Embedding(config.vocab_size, config.d_model, rng=rng)  # (V, d)
        self.lm_head = (TiedHead(self.in_emb) if config.tie_embeddings
                        else LMHead(config.d_model, config.vocab_size, rng=rng))

    @staticmethod
    def state_shapes(config: CBOWConfig) -> dict[str, tuple[int, ...]]:
        """The ``state_dict()`` shapes of ``CBOW(config)``, without building it."""
        shapes = {"in_emb.weight": (config.vocab_size, config.d_model)}
        if not config.tie_embeddings:
            shapes["lm_head.weight"] = (config.vocab_size, config.d_model)
        return shapes

    def forward(self, contexts: Any, targets: Any = None) -> tuple[Tensor, Tensor | None]:
        """contexts (N, 2w) -> h = mean of their vectors (N, d) -> logits (N, V) and, given
        targets (N,), the full-softmax loss."""
        h = self.context_vectors(contexts)  # (N, d)
        logits = self.lm_head(h)  # (N, V)
        loss = F.cross_entropy(logits, targets) if targets is not None else None
        return logits, loss

    def loss(self, contexts: Any, targets: Any, negatives: Any = None) -> Tensor:
        """The loss without the (N, V) logits: the full softmax's (``lm_head.loss``) or, with
        ``negatives`` (N, K) noise word ids, the negative-sampling loss. The full softmax's
        is :meth:`loss_of_rows` over the batch (``F.batch_loss``, whose kernel may run its
        two halves at once)."""
        if negatives is not None:
            return self.negative_sampling_loss(self.context_vectors(contexts), targets, negatives)
        return F.batch_loss(self.loss_of_rows, contexts, targets)

    def loss_of_rows(self, contexts: Any, targets: Any) -> Tensor:
        """Context vectors h (N, d) -> ``lm_head.loss(h, targets)``, the full softmax's loss."""
        return self.lm_head.loss(self.context_vectors(contexts), targets)

    def context_vectors(self, contexts: Any) -> Tensor:
        """h (N, d): the mean of the input vectors of each example's 2w context words."""
        ctx_ids = np.asarray(contexts.data if isinstance(contexts, Tensor) else contexts)
        if ctx_ids.ndim != 2:
            raise ValueError(f"CBOW contexts must be (N, 2 * window), got shape {ctx_ids.shape}")
        return self.in_emb(ctx_ids).mean(axis=1)  # (N, d)

    def negative_sampling_loss(self, h: Tensor, targets: Any, negatives: Any) -> Tensor:
        """F.negative_sampling_loss on the output rows of the targets (N,) and noise (N, K)."""
        if targets is None:
            raise ValueError("negative sampling needs the targets (the true centre words)")
        tgt = check_token_ids(targets, self.config.vocab_size, where="CBOW targets")
        neg = check_token_ids(negatives, self.config.vocab_size, where="CBOW negatives")
        if tgt.shape != (h.shape[0],) or neg.ndim != 2 or neg.shape[0] != h.shape[0]:
            raise ValueError(f"CBOW: targets ({h.shape[0]},) and negatives ({h.shape[0]}, K) "
                             f"expected, got {tgt.shape} and {neg.shape}")
        ids = np.concatenate([tgt[:, None], neg], axis=1)  # (N, 1+K): the true word first
        rows = lookup(self.lm_head.weight, ids)  # (N, 1+K, d): E_out rows (E_in when tied)
        return F.negative_sampling_loss(h, rows)
