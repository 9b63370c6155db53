"""Basic layers: Embedding, Linear, LayerNorm, Dropout and the two language-model heads.

The heads are where weight tying happens:

    LMHead(d, V)        logits = h @ W.T with its own W (V, d)          -> untied
    TiedHead(emb)       logits = h @ E.T with E = emb.weight (V, d)     -> tied

``TiedHead`` holds no matrix of its own. Its ``weight`` *is* ``embedding.weight`` (looked up
each time, so the tie survives a resize or a load), and the gradient that reaches E is the sum
of the lookup's scatter-add and the head's ``dlogits.T @ h`` — the autograd engine adds the
two because both uses read the same Parameter.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

import minimodel.functional as F
from minimodel import ops
from minimodel.nn.module import Module
from minimodel.nn.parameter import Parameter, normal_, uniform_
from minimodel.tensor import Tensor

EMBEDDING_INIT_STD = 0.02  # GPT-2's choice; small because a tied E is also the output layer


def _check_positive(**sizes: int) -> None:
    for name, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_last_dim(x: Tensor, expected: int, layer: str) -> None:
    if x.ndim == 0 or x.shape[-1] != expected:
        raise ValueError(f"{layer} expects inputs whose last axis has size {expected}, got "
                         f"shape {x.shape}")


def check_token_ids(ids: Any, vocab_size: int, where: str = "Embedding") -> np.ndarray:
    """Return ``ids`` as an integer array, refusing floats and ids outside [0, vocab_size)."""
    arr = ids.data if isinstance(ids, Tensor) else np.asarray(ids)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{where} takes integer token ids, got dtype {arr.dtype}; "
                        "convert with ids.astype(np.int64)")
    if arr.size and (arr.min() < 0 or arr.max() >= vocab_size):
        bad = int(arr.max()) if arr.max() >= vocab_size else int(arr.min())
        raise ValueError(f"{where}: token id {bad} is outside the vocabulary of size "
                         f"{vocab_size} (valid ids 0..{vocab_size - 1}); does the tokenizer's "
                         "vocab_size match the model's?")
    return arr


class Embedding(Module):
    """A lookup table: ``forward(ids)`` returns ``weight[ids]``, shape (*ids.shape, d_model).

    Mathematically the lookup is a one-hot row vector times the table, ``onehot(i) @ E = E[i]``;
    the gather computes exactly that without building the (N, V) one-hot matrix.
    """

    def __init__(self, vocab_size: int, d_model: int, std: float = EMBEDDING_INIT_STD,
                 rng: np.random.Generator | None = None) -> None:
        _check_positive(vocab_size=vocab_size, d_model=d_model)
        super().__init__()
        self.weight = Parameter(normal_((vocab_size, d_model), std, rng))  # (V, d)

    @property
    def vocab_size(self) -> int:
        return self.weight.shape[0]

    @property
    def d_model(self) -> int:
        return self.weight.shape[1]

    def forward(self, ids: Any) -> Tensor:
        arr = check_token_ids(ids, self.vocab_size)
        return ops.embedding(self.weight, arr)  # (*ids.shape, d)

    def extra_repr(self) -> str:
        return f"{self.vocab_size}, {self.d_model}"


class Linear(Module):
    """y = x @ W.T + b, with W of shape (out_features, in_features) as in PyTorch.

    Initialised like PyTorch: W and b ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 rng: np.random.Generator | None = None) -> None:
        _check_positive(in_features=in_features, out_features=out_features)
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(uniform_((out_features, in_features), bound, rng))  # (out, in)
        self.bias = Parameter(uniform_((out_features,), bound, rng)) if bias else None

    @property
    def in_features(self) -> int:
        return self.weight.shape[1]

    @property
    def out_features(self) -> int:
        return self.weight.shape[0]

    def forward(self, x: Tensor) -> Tensor:
        _check_last_dim(x, self.in_features, "Linear")
        return F.linear(x, self.weight, self.bias)  # (..., out)

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.out_features}, bias={self.bias is not None}"


class LayerNorm(Module):
    """Normalise the last axis to zero mean and unit (population) variance, then scale and shift."""

    def __init__(self, d: int, eps: float = 1e-5, elementwise_affine: bool = True) -> None:
        _check_positive(d=d)
        super().__init__()
        self.eps = eps
        self.weight = Parameter(np.ones(d, dtype=np.float32)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(d, dtype=np.float32)) if elementwise_affine else None
        self.d = d

    def forward(self, x: Tensor) -> Tensor:
        _check_last_dim(x, self.d, "LayerNorm")
        return F.layer_norm(x, self.eps, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"{self.d}, eps={self.eps}"


class ModuleList(Module):
    """An ordered list of submodules registered as "0", "1", ... (e.g. ``blocks.0.ln_1``)."""

    def __init__(self, modules: list[Module] | None = None) -> None:
        super().__init__()
        for module in modules or []:
            self.append(module)

    def append(self, module: Module) -> None:
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules, got {type(module).__name__}")
        self._modules[str(len(self._modules))] = module

    def __getitem__(self, index: int) -> Module:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class Dropout(Module):
    """Zero activations with probability ``p`` in training mode; identity in eval mode."""

    def __init__(self, p: float = 0.0, rng: np.random.Generator | None = None) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p
        self.rng = rng

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.rng)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class LMHead(Module):
    """Untied output head: logits = h @ W.T with its own W of shape (vocab_size, d_model)."""

    def __init__(self, d_model: int, vocab_size: int, std: float = EMBEDDING_INIT_STD,
                 rng: np.random.Generator | None = None) -> None:
        _check_positive(d_model=d_model, vocab_size=vocab_size)
        super().__init__()
        self.weight = Parameter(normal_((vocab_size, d_model), std, rng))  # (V, d)

    @property
    def vocab_size(self) -> int:
        return self.weight.shape[0]

    @property
    def d_model(self) -> int:
        return self.weight.shape[1]

    def forward(self, h: Tensor) -> Tensor:
        _check_last_dim(h, self.d_model, "LMHead")
        return F.linear(h, self.weight)  # (..., V) = h @ W.T

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, vocab_size={self.vocab_size}"


class TiedHead(Module):
    """Tied output head: logits = h @ E.T where E is ``embedding.weight`` itself.

    Args:
        embedding: the input ``Embedding`` whose matrix is reused.
        vocab_size: optional; when given it must equal ``embedding.vocab_size``. Passing it
            lets a model check its config against the embedding at construction time.
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
        # that owns it; the head only borrows its matrix (see _local_parameters).
        object.__setattr__(self, "embedding", embedding)

    @property
    def weight(self) -> Parameter:
        """The embedding's Parameter object itself (same identity, never a copy)."""
        return self.embedding.weight

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "weight":
            raise AttributeError("TiedHead.weight is the embedding's matrix and cannot be "
                                 "replaced here; assign embedding.weight instead (the head "
                                 "follows), or use an untied LMHead")
        super().__setattr__(name, value)

    @property
    def vocab_size(self) -> int:
        return self.embedding.vocab_size

    @property
    def d_model(self) -> int:
        return self.embedding.d_model

    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield "weight", self.embedding.weight

    def forward(self, h: Tensor) -> Tensor:
        _check_last_dim(h, self.d_model, "TiedHead")
        return F.linear(h, self.weight)  # (..., V) = h @ E.T

    def extra_repr(self) -> str:
        return f"tied to Embedding({self.vocab_size}, {self.d_model})"
