"""CBOW word vectors (Mikolov et al. 2013): predict a word from the average of its context.

    h      = mean_j E_in[context_j]          # (N, d)
    logits = h @ E_out.T                     # (N, V), a full softmax (fine for small V)

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

    def forward(self, contexts: Any, targets: Any = None, return_logits: bool = True
                ) -> tuple[Tensor | None, Tensor | None]:
        ctx_ids = np.asarray(contexts.data if isinstance(contexts, Tensor) else contexts)
        if ctx_ids.ndim != 2:
            raise ValueError(f"CBOW contexts must be (N, 2 * window), got shape {ctx_ids.shape}")
        h = self.in_emb(ctx_ids).mean(axis=1)  # (N, d)
        if targets is not None and not return_logits:
            return None, self.lm_head.loss(h, targets)
        logits = self.lm_head(h)  # (N, V)
        loss = F.cross_entropy(logits, targets) if targets is not None else None
        return logits, loss
