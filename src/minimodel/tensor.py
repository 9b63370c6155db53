"""``Tensor``: a NumPy array that remembers how it was computed, so it can be differentiated.

    >>> import minimodel as mm
    >>> x = mm.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()        # y = sum_i x_i^2
    >>> y.backward()             # dy/dx_i = 2 x_i
    >>> x.grad
    array([2., 4., 6.], dtype=float32)

dtype rules: Python numbers and lists become float32 (or int64 for integers); a NumPy array
keeps its dtype, so float64 input stays float64 (gradient checks rely on that). Only
floating-point tensors can require gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel import autograd, ops

_FLOAT_KINDS = "f"


def _to_array(data: Any, dtype: Any = None) -> np.ndarray:
    """Convert ``data`` to an ndarray following the dtype rules in the module docstring."""
    if isinstance(data, Tensor):
        data = data.data
    if dtype is not None:
        return np.asarray(data, dtype=dtype)
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data)
    arr = np.asarray(data)
    if arr.dtype == np.float64:  # Python floats: float32 is the library default
        return arr.astype(np.float32)
    if arr.dtype.kind in "iu" and arr.dtype != np.int64:
        return arr.astype(np.int64)
    if arr.dtype == object:
        raise TypeError(f"cannot build a Tensor from {type(data).__name__} holding mixed or "
                        "non-numeric values; pass numbers, nested lists of numbers or an ndarray")
    return arr


class Tensor:
    """An n-dimensional array with optional gradient tracking.

    Attributes:
        data: the values, an ``np.ndarray``.
        grad: ``None`` or an ``np.ndarray`` of the same shape, filled by :meth:`backward`.
        requires_grad: whether operations on this tensor are recorded for differentiation.
    """

    __array_priority__ = 1000  # make ``ndarray + Tensor`` call Tensor.__radd__

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        arr = _to_array(data, dtype)
        if requires_grad and arr.dtype.kind not in _FLOAT_KINDS:
            raise TypeError(f"only floating-point tensors can require gradients, got dtype "
                            f"{arr.dtype}; convert with np.asarray(x, dtype=np.float32)")
        self.data: np.ndarray = arr
        self.requires_grad = bool(requires_grad)
        self._grad: np.ndarray | None = None
        self._node: tuple | None = None  # (Function class, Context, input tensors)
        self._graph_freed = False

    @staticmethod
    def _wrap(data: np.ndarray, requires_grad: bool = False) -> "Tensor":
        """Fast constructor for op outputs (no dtype conversion or checks); always a plain
        Tensor, also when called on a Parameter (an op's output is not a parameter)."""
        t = Tensor.__new__(Tensor)
        t.data = data
        t.requires_grad = requires_grad
        t._grad = None
        t._node = None
        t._graph_freed = False
        return t

    # ----------------------------------------------------------------- properties
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def size(self) -> int:
        """Number of elements (NumPy's meaning of ``size``)."""
        return self.data.size

    @property
    def grad(self) -> np.ndarray | None:
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._grad = None
            return
        if isinstance(value, Tensor):
            value = value.data
        if not isinstance(value, np.ndarray):
            raise TypeError(f"grad must be an np.ndarray or None, got {type(value).__name__}")
        if value.shape != self.shape:
            raise ValueError(f"grad of shape {value.shape} does not match the tensor's shape "
                             f"{self.shape}")
        self._grad = value.astype(self.dtype, copy=False)

    def _accumulate_grad(self, g: np.ndarray, fresh: bool) -> None:
        """``self.grad += g``; copies ``g`` first unless this tensor may own it (``fresh``)."""
        if g.dtype != self.dtype:
            g, fresh = g.astype(self.dtype), True
        if self._grad is None:
            self._grad = g if fresh and autograd.can_keep(g) else g.copy()
        else:
            self._grad += g

    # ----------------------------------------------------------------- autograd
    def backward(self, grad: Any = None) -> None:
        """Compute gradients of this tensor with respect to every leaf that requires them.

        Args:
            grad: dL/d(self). Optional for a single-element tensor (taken as 1).
        """
        autograd.backward(self, grad)

    def detach(self) -> "Tensor":
        """The same values, cut from the graph (shares memory)."""
        return Tensor._wrap(self.data, requires_grad=False)

    def numpy(self) -> np.ndarray:
        return self.data

    def item(self) -> float:
        if self.data.size != 1:
            raise ValueError(f"item() needs a single-element tensor, got shape {self.shape}")
        return self.data.item()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        body = np.array2string(self.data, precision=4, threshold=20, separator=", ",
                               prefix="Tensor(")
        extras = [] if self.dtype == np.float32 else [f"dtype={self.dtype}"]
        if self.requires_grad:
            extras.append("requires_grad=True")
        return f"Tensor({body}{''.join(', ' + e for e in extras)})"

    # ----------------------------------------------------------------- operators
    def _const(self, other: Any) -> "Tensor":
        """Wrap a Python/NumPy constant, adopting this tensor's float dtype."""
        if isinstance(other, Tensor):
            return other
        if self.dtype.kind in _FLOAT_KINDS and np.isscalar(other):
            return Tensor._wrap(np.asarray(other, dtype=self.dtype))
        return Tensor(other)

    def __add__(self, other): return ops.add(self, self._const(other))
    def __radd__(self, other): return ops.add(self._const(other), self)
    def __sub__(self, other): return ops.Sub.apply(self, self._const(other))
    def __rsub__(self, other): return ops.Sub.apply(self._const(other), self)
    def __mul__(self, other): return ops.Mul.apply(self, self._const(other))
    def __rmul__(self, other): return ops.Mul.apply(self._const(other), self)
    def __truediv__(self, other): return ops.Div.apply(self, self._const(other))
    def __rtruediv__(self, other): return ops.Div.apply(self._const(other), self)
    def __matmul__(self, other): return ops.MatMul.apply(self, self._const(other))
    def __rmatmul__(self, other): return ops.MatMul.apply(self._const(other), self)
    def __neg__(self): return ops.Neg.apply(self)

    def __pow__(self, exponent: float) -> "Tensor":
        if isinstance(exponent, Tensor) or not np.isscalar(exponent):
            raise TypeError("x ** p supports a number p only; for a tensor exponent write "
                            "(p * x.log()).exp()")
        return ops.Pow.apply(self, exponent=float(exponent))

    def exp(self): return ops.Exp.apply(self)
    def log(self): return ops.Log.apply(self)
    def tanh(self): return ops.Tanh.apply(self)
    def sqrt(self): return ops.Sqrt.apply(self)

    def sum(self, axis=None, keepdims=False): return ops.Sum.apply(self, axis=axis, keepdims=keepdims)
    def mean(self, axis=None, keepdims=False): return ops.Mean.apply(self, axis=axis, keepdims=keepdims)
    def max(self, axis=None, keepdims=False): return ops.Max.apply(self, axis=axis, keepdims=keepdims)

    def reshape(self, *shape) -> "Tensor":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.Reshape.apply(self, shape=shape)

    def transpose(self, *axes) -> "Tensor":
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return ops.Transpose.apply(self, axes=axes or None)

    @property
    def T(self) -> "Tensor":
        """Reverse all axes (NumPy semantics); ``(V, d).T`` is ``(d, V)``."""
        return ops.Transpose.apply(self, axes=None)

    def __getitem__(self, index) -> "Tensor":
        return ops.GetItem.apply(self, index=_plain_index(index))


def as_tensor(x: Any) -> Tensor:
    """Return ``x`` if it is a Tensor, else a constant Tensor holding it."""
    return x if isinstance(x, Tensor) else Tensor(x)


def _plain_index(index: Any) -> Any:
    """Replace Tensors inside an index by their arrays (and lists by arrays)."""
    if isinstance(index, tuple):
        return tuple(_plain_index(p) for p in index)
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, list):
        return np.asarray(index)
    return index
