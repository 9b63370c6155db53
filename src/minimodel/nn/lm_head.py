r"""The language-model head, and weight tying: the embedding matrix reused as the output layer.

The head turns the last hidden states h (..., d) into one score per vocabulary token:

    logits = h @ W^T            (..., d) @ (d, V) -> (..., V)

``logits[..., v]`` is the dot product of h with row v of W, so a token scores high when its row
points the same way as h. An untied head (:class:`LMHead`) has its own W (V, d). A tied head
(:class:`TiedHead`) has none: W *is* the input embedding E, the same Parameter object,

    logits = h @ E^T,

so "the vector that represents token v on the way in" and "the direction that predicts token v
on the way out" are one vector (Press & Wolf 2017; Inan et al. 2017). It saves V * d
parameters — 38.6 M of GPT-2 small's 124 M (V = 50257, d = 768) — and usually helps perplexity,
most for rare tokens, whose input rows would otherwise rarely be trained.

**One Parameter object.** Sharing the object means the optimizer sees one matrix,
``parameters()``/``state_dict()``/counts list it once, and a resize, cast or load of the
embedding is automatically a resize, cast or load of the head.

**The tied gradient is the sum of two paths.** E is used twice — by the lookup at the bottom
and by the head at the top — and autograd adds the gradients of both uses (the sum rule):

    dE = scatter_add(ids, dx)        +   dlogits^T @ h
         (V, d), rows of the batch's      (V, N) @ (N, d) = (V, d), dense:
         ids only (nn/embedding.py)       every token's row moves at every step

Worked example (V = 3, d = 2, the hidden state is just the looked-up rows, h = E[ids]):

    >>> import numpy as np
    >>> from minimodel import nn
    >>> emb = nn.Embedding(3, 2)
    >>> head = nn.TiedHead(emb)
    >>> emb.weight.data[:] = [[1., 0.], [0., 1.], [1., 1.]]
    >>> ids = np.array([0, 2])
    >>> h = emb(ids)                                   # (N=2, d=2): rows 0 and 2 of E
    >>> logits = head(h)                               # (2, V=3) = h @ E.T
    >>> dlogits = np.array([[1., 0., 0.], [0., 0., 1.]])
    >>> logits.backward(dlogits)
    >>> head_path = dlogits.T @ h.data                 # (V, d)
    >>> lookup_path = np.zeros((3, 2))
    >>> np.add.at(lookup_path, ids, dlogits @ emb.weight.data)   # dx = dlogits @ E, scattered
    >>> bool(np.allclose(emb.weight.grad, head_path + lookup_path))
    True
    >>> emb.weight.grad
    array([[2., 0.],
           [0., 0.],
           [2., 2.]], dtype=float32)

**One vocabulary size.** A tied model has exactly one V, and it lives in the matrix: the head
reads ``embedding.vocab_size`` every time, and a ``vocab_size`` passed to :class:`TiedHead` is
only a cross-check that fails at construction, naming both sizes, instead of a far-away
error when two sizes disagree.

**Initialisation.** Because E is also the output layer, it is initialised for that role with a
small standard deviation (0.02, as GPT-2): logits start near 0, so a fresh model predicts
nearly uniformly and its loss starts near ln V. With N(0, 1) rows the logits would have
standard deviation about sqrt(d) and the first loss would be far above ln V.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import minimodel.functional as F
from minimodel.nn.checks import check_last_dim, check_positive
from minimodel.nn.embedding import EMBEDDING_INIT_STD, Embedding, resize_rows
from minimodel.nn.module import Module
from minimodel.nn.parameter import Parameter, normal_
from minimodel.tensor import Tensor


class OutputHead(Module):
    """What both heads share: logits and the head's loss from a matrix ``weight`` (V, d)."""

    weight: Parameter

    def forward(self, h: Tensor) -> Tensor:
        """Logits (..., V) = h @ weight.T for hidden states h (..., d)."""
        check_last_dim(h, self.d_model, type(self).__name__)
        return F.linear(h, self.weight)  # (..., V)

    def loss(self, h: Tensor, targets: Any) -> Tensor:
        """``cross_entropy(self(h), targets)`` in one call, so the (N, V) logits need not be
        kept (``F.linear_cross_entropy``; its kernel computes them in row chunks)."""
        check_last_dim(h, self.d_model, type(self).__name__)
        return F.linear_cross_entropy(h, self.weight, targets)

    @property
    def vocab_size(self) -> int:
        return self.weight.shape[0]

    @property
    def d_model(self) -> int:
        return self.weight.shape[1]


class LMHead(OutputHead):
    """Untied output head: logits = h @ W.T with its own W of shape (vocab_size, d_model)."""

    def __init__(self, d_model: int, vocab_size: int, std: float = EMBEDDING_INIT_STD,
                 rng: np.random.Generator | None = None) -> None:
        check_positive(d_model=d_model, vocab_size=vocab_size)
        super().__init__()
        self.weight = Parameter(normal_((vocab_size, d_model), std, rng))  # (V, d)

    def resize(self, vocab_size: int, rng: np.random.Generator | None = None) -> None:
        """Grow or shrink W to ``vocab_size`` rows in place (same Parameter object)."""
        resize_rows(self.weight, vocab_size, rng)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, vocab_size={self.vocab_size}"


class TiedHead(OutputHead):
    """Tied output head: logits = h @ E.T, with E the input embedding's (V, d) matrix.

    Args:
        embedding: the input ``Embedding`` whose matrix is reused.
        vocab_size: optional; a model may pass the vocabulary size of its config here.
    """

    def __init__(self, embedding: Embedding, vocab_size: int | None = None) -> None:
        if not isinstance(embedding, Embedding):
            raise TypeError(f"TiedHead ties to an nn.Embedding, got {type(embedding).__name__}")
        if vocab_size is not None and vocab_size != embedding.vocab_size:
            raise ValueError(
                f"TiedHead: vocab_size={vocab_size} but the embedding it ties to has "
                f"vocab_size={embedding.vocab_size}. A tied head reuses the embedding matrix, so "
                f"both must be the same size: drop vocab_size (it is taken from the embedding) "
                f"or build the Embedding with vocab_size={vocab_size}.")
        super().__init__()
        # A plain attribute, not a registered submodule: the embedding belongs to the model
        # that owns it.
        object.__setattr__(self, "embedding", embedding)

    @property
    def weight(self) -> Parameter:
        """The embedding's Parameter, read from it at each access (so the head follows a resize)."""
        return self.embedding.weight

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "weight":
            raise AttributeError("TiedHead.weight is the embedding's matrix and cannot be "
                                 "replaced here; assign embedding.weight instead (the head "
                                 "follows), or use an untied LMHead")
        if name == "embedding":  # re-tie to another table (a model replacing its embedding)
            if not isinstance(value, Embedding):
                raise TypeError(f"TiedHead ties to an nn.Embedding, got {type(value).__name__}")
            object.__setattr__(self, name, value)
            return
        super().__setattr__(name, value)

    @property
    def vocab_size(self) -> int:
        return self.embedding.vocab_size

    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield "weight", self.embedding.weight

    def extra_repr(self) -> str:
        return f"tied to Embedding({self.vocab_size}, {self.d_model})"
