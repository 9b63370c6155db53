r"""The token embedding: a lookup table E of shape (V, d), one row per token id.

**Forward: a gather.** ``Embedding(ids)`` returns ``E[ids]``. Mathematically it is a one-hot
row vector times the table,

    onehot(i) @ E = E[i]          (1, V) @ (V, d) -> (1, d)

because the one-hot has a single 1, at column i, which picks row i. The gather computes exactly
that product without ever building the (N, V) one-hot matrix: N * d reads instead of N * V * d
multiply-adds.

**Backward: a scatter-add.** The gradient of the product is ``onehot^T @ g``: row i of dE is
the sum of the gradient rows of every position whose id is i, and rows of tokens absent from
the batch stay zero (the gradient is row-sparse: at most N of the V rows are touched).

**Worked example** (V = 4, d = 2, token 1 appears twice, so it was used twice and its row
receives the sum of both gradient rows, as ``onehot^T @ g`` says):

    >>> import numpy as np
    >>> from minimodel import nn
    >>> emb = nn.Embedding(4, 2)
    >>> x = emb(np.array([1, 3, 1]))                  # (3, 2): rows 1, 3 and 1 again
    >>> x.backward(np.array([[1., 0.], [0., 1.], [10., 0.]]))
    >>> emb.weight.grad              # row 1 = [1, 0] + [10, 0]; row 3 = [0, 1]; rows 0, 2 untouched
    array([[ 0.,  0.],
           [11.,  0.],
           [ 0.,  0.],
           [ 0.,  1.]], dtype=float32)

In a tied model this matrix is also the output layer (:mod:`minimodel.nn.lm_head`), and its
gradient is the sum of this scatter-add and the head's dense ``dlogits^T @ h``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.autograd import Function
from minimodel.functional.losses import check_token_ids
from minimodel.nn.checks import check_positive
from minimodel.nn.module import Module
from minimodel.nn.parameter import Parameter, default_rng, normal_
from minimodel.tensor import Tensor

EMBEDDING_INIT_STD = 0.02  # GPT-2's value for its embeddings and output layer


class Lookup(Function):
    """``E[ids]`` for E (V, d) and integer ids of any shape -> (*ids.shape, d)."""

    @staticmethod
    def forward(ctx, weight, ids):
        ctx.save_for_backward(ids)
        ctx.weight_shape, ctx.dtype = weight.shape, weight.dtype
        return weight[ids]  # (*ids.shape, d)

    @staticmethod
    def backward(ctx, g):
        (ids,) = ctx.saved_tensors
        vocab, d = ctx.weight_shape
        # Scatter-add every gradient row into the row of its token id; repeats add up.
        # Done on the flattened (V * d,) matrix with flat indices id * d + column, because
        # 1-D np.add.at is much faster than the 2-D form (docs/results.md).
        dW = np.zeros(vocab * d, dtype=ctx.dtype)  # flat (V * d,)
        flat = (ids.reshape(-1, 1) * d + np.arange(d)).reshape(-1)  # (N * d,)
        np.add.at(dW, flat, g.reshape(-1))
        return dW.reshape(vocab, d), None


def lookup(weight: Tensor, ids: Any) -> Tensor:
    """Differentiable ``weight[ids]`` for integer ``ids`` (no gradient flows to the ids)."""
    ids_arr = ids.data if isinstance(ids, Tensor) else np.asarray(ids)
    return Lookup.apply(weight, Tensor._wrap(ids_arr))


def resize_rows(weight: Parameter, rows: int, rng: np.random.Generator | None = None) -> None:
    """Give ``weight`` (V, d) ``rows`` rows *in place*: the same Parameter object, so every
    module that shares it (a tied head), its ``requires_grad`` and any optimizer that holds it
    stay attached. Learned rows are kept; new rows are drawn from N(0, EMBEDDING_INIT_STD²)."""
    check_positive(vocab_size=rows)
    rng = rng if rng is not None else default_rng()
    keep = min(rows, weight.shape[0])
    data = normal_((rows, weight.shape[1]), EMBEDDING_INIT_STD, rng, dtype=weight.dtype)
    data[:keep] = weight.data[:keep]
    weight.data = data
    weight.grad = None  # a gradient of the old shape means nothing now


class Embedding(Module):
    """A lookup table: ``forward(ids)`` returns ``weight[ids]``, shape (*ids.shape, d_model).

    ``weight`` (V, d) is drawn from N(0, std²). ``vocab_size`` and ``d_model`` are read from
    the matrix itself, the single source of truth for both sizes.
    """

    embedding_table = True  # Module.num_params(non_embedding=True) leaves these out

    def __init__(self, vocab_size: int, d_model: int, std: float = EMBEDDING_INIT_STD,
                 rng: np.random.Generator | None = None) -> None:
        check_positive(vocab_size=vocab_size, d_model=d_model)
        super().__init__()
        self.weight = Parameter(normal_((vocab_size, d_model), std, rng))  # (V, d)

    def __setattr__(self, name: str, value: Any) -> None:
        # A new matrix must have the old shape: everything tied to this table (a head, a config,
        # a tokenizer) agreed on it. Changing the vocabulary is resize()'s job.
        if name == "weight" and "weight" in self.__dict__.get("_parameters", {}):
            if not isinstance(value, Parameter) or value.shape != self.weight.shape:
                shape = getattr(value, "shape", type(value).__name__)
                raise ValueError(f"Embedding.weight must stay a Parameter of shape "
                                 f"{self.weight.shape}, got {shape}; to change the vocabulary "
                                 "use resize() (or the model's resize_token_embeddings)")
        super().__setattr__(name, value)

    @property
    def vocab_size(self) -> int:
        return self.weight.shape[0]

    @property
    def d_model(self) -> int:
        return self.weight.shape[1]

    def forward(self, ids: Any) -> Tensor:
        arr = check_token_ids(ids, self.vocab_size)
        return lookup(self.weight, arr)  # (*ids.shape, d)

    def resize(self, vocab_size: int, rng: np.random.Generator | None = None) -> None:
        """Grow or shrink the table to ``vocab_size`` rows, in place (see :func:`resize_rows`)."""
        resize_rows(self.weight, vocab_size, rng)

    def extra_repr(self) -> str:
        return f"{self.vocab_size}, {self.d_model}"
