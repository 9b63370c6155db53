"""A tensor computed the first time something reads it: how ``model(x, y)`` avoids the logits.

A language model's logits are its largest array: (B·T, V) floats, 1.6 GB for B·T = 8192 and
GPT-2's V = 50257. Training never needs them — the loss is computed from the hidden states in
row chunks (``F.linear_cross_entropy``) — but ``logits, loss = model(x, y)`` promises them.
So the model returns a :class:`DeferredTensor`: it knows its shape and dtype, and holds a
function that makes the real tensor (``lm_head(h)``) on first use. Code that never reads the
logits never pays for them; code that does gets exactly the tensor it would have got, with
its place in the graph, so ``logits[...].sum().backward()`` still reaches ``h`` and ``E``.

What "reading" means: ``.data``, ``.item()``, printing, any operation that takes it as an
input, ``backward()`` through it. ``shape``, ``ndim``, ``dtype`` and ``size`` answer without
computing. The computation runs with gradient recording as it was when the tensor was
created (a deferred tensor made inside ``no_grad`` stays graph-free, and vice versa).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from minimodel.autograd import grad_mode
from minimodel.tensor import Tensor


class DeferredTensor(Tensor):
    """``DeferredTensor(compute, shape, dtype, requires_grad)``; ``compute()`` returns the
    Tensor this one stands for. See the module docstring."""

    def __init__(self, compute: Callable[[], Tensor], shape: tuple[int, ...], dtype: Any,
                 requires_grad: bool, grad_enabled: bool = True) -> None:
        # Tensor.__init__ is not called: there is no array yet.
        self._compute: Callable[[], Tensor] | None = compute
        self._value: Tensor | None = None
        self._shape = tuple(int(n) for n in shape)
        self._dtype = np.dtype(dtype)
        self._grad_enabled = grad_enabled
        self.requires_grad = bool(requires_grad)
        self._grad = None
        self._graph_freed = False

    @property
    def computed(self) -> bool:
        """Whether the values exist yet (for tests and the curious)."""
        return self._value is not None

    def _materialize(self) -> Tensor:
        if self._value is None:
            with grad_mode(self._grad_enabled):
                value = self._compute()
            if value.shape != self._shape:
                raise RuntimeError(f"deferred tensor promised shape {self._shape}, its "
                                   f"computation gave {value.shape}")
            self._value, self._compute = value, None  # the closure's references are released
        return self._value

    # The two attributes the engine reads on every tensor, delegated to the real one.
    @property  # type: ignore[override]
    def data(self) -> np.ndarray:
        return self._materialize().data

    @data.setter
    def data(self, value: np.ndarray) -> None:
        self._materialize().data = value

    @property  # type: ignore[override]
    def _node(self) -> tuple | None:
        return self._materialize()._node

    @_node.setter
    def _node(self, value: tuple | None) -> None:
        self._materialize()._node = value

    # Metadata without computing.
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def size(self) -> int:
        return math.prod(self._shape)
