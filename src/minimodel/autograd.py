"""Reverse-mode automatic differentiation: the engine under every Tensor.

A differentiable primitive is a :class:`Function` with two static methods::

    forward(ctx, *arrays, **options) -> np.ndarray        # plain NumPy in, NumPy out
    backward(ctx, grad_out) -> tuple[np.ndarray | None]   # one gradient per positional input

``Function.apply`` runs ``forward`` and, when gradients are wanted, records the inputs and the
context on the output tensor. :func:`backward` then walks the recorded graph from the output to
the leaves in reverse topological order, applying the chain rule node by node:

    dL/d(input) = backward(ctx, dL/d(output))

Why a topological sort at all: a tensor used twice (``y = x * x``, or a tied embedding used by
the lookup and by the head) must receive the *sum* of the gradients from all its uses before it
passes its own gradient on. Visiting nodes in reverse topological order guarantees that.
The sort is iterative (an explicit stack) so a chain of 10 000 operations does not hit
Python's recursion limit.

This module sits below :mod:`minimodel.tensor` and never imports it: ``apply`` builds its
output with the ``_wrap`` constructor of the tensors it is given.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from minimodel.dispatch import replaceable

if TYPE_CHECKING:  # pragma: no cover
    from minimodel.tensor import Tensor


class _GradMode(threading.local):
    """Whether operations record a graph; one flag per thread, so ``no_grad`` in one thread
    (an evaluation, say) never switches recording off in another."""

    enabled = True


_grad_mode = _GradMode()


def is_grad_enabled() -> bool:
    """True unless inside a :func:`no_grad` block (of this thread)."""
    return _grad_mode.enabled


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Context manager: operations inside record no graph (evaluation, optimizer updates)."""
    previous = _grad_mode.enabled
    _grad_mode.enabled = False
    try:
        yield
    finally:
        _grad_mode.enabled = previous


@contextlib.contextmanager
def grad_mode(enabled: bool) -> Iterator[None]:
    """Context manager: record a graph (``True``) or not (``False``) inside the block."""
    previous = _grad_mode.enabled
    _grad_mode.enabled = bool(enabled)
    try:
        yield
    finally:
        _grad_mode.enabled = previous


class Context:
    """What a Function's forward leaves for its backward.

    ``needs_input_grad[i]`` tells backward whether input ``i`` wants a gradient, so it can skip
    work (no gradient is computed for token ids or constants).
    """

    __slots__ = ("saved_tensors", "needs_input_grad", "__dict__")

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.saved_tensors: tuple[Any, ...] = ()
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *arrays: Any) -> None:
        self.saved_tensors = arrays


class Function:
    """Base class of differentiable primitives (see the module docstring)."""

    @staticmethod
    def forward(ctx: Context, *arrays: np.ndarray, **options: Any) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad_out: np.ndarray) -> tuple[np.ndarray | None, ...]:
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs: "Tensor", **options: Any) -> "Tensor":
        """Run forward on the inputs' arrays and record the graph node if gradients are on.

        ``inputs`` are Tensors (callers wrap constants first, see ``Tensor._const``).
        """
        needs = tuple(t.requires_grad for t in inputs)
        track = _grad_mode.enabled and any(needs)
        ctx = Context(needs)
        out = cls.forward(ctx, *[t.data for t in inputs], **options)
        result = inputs[0]._wrap(out, requires_grad=track)
        if track:
            result._node = (cls, ctx, inputs)
        return result


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` back down to ``shape``, undoing NumPy broadcasting.

    Broadcasting copies an input along new leading axes and along axes of size 1; the gradient
    of a copy is the sum over the copies. Example: ``b`` of shape (d,) added to ``x`` of shape
    (B, T, d) gets ``grad.sum(axis=(0, 1))``. This is the one place that does it.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad.reshape(shape)


def _topological_order(root: "Tensor") -> list["Tensor"]:
    """Tensors reachable from ``root`` that need gradients, each after all of its inputs."""
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        if node._graph_freed and node is not root:
            # An intermediate whose graph a previous backward() freed would otherwise be
            # treated as a leaf, silently cutting the gradient to its inputs.
            raise RuntimeError("a tensor in this graph was already used by backward() and its "
                               "graph has been freed; run the forward pass again before calling "
                               "backward() a second time")
        visited.add(id(node))
        stack.append((node, True))
        if node._node is not None:
            for parent in node._node[2]:
                if parent.requires_grad and id(parent) not in visited:
                    stack.append((parent, False))
    return order


def backward(root: "Tensor", grad: Any = None) -> None:
    """Backpropagate from ``root``; leaf tensors accumulate into ``.grad`` (``+=``).

    The graph is freed as it is consumed: every interior node drops its saved arrays, so memory
    returns to the level before the forward pass, and a second ``backward`` through the same
    graph raises instead of silently giving wrong gradients.
    """
    # One array object may be returned for several inputs (Add passes g to both sides), so a
    # leaf only takes ownership of an array no other leaf received.
    handed_to_leaves: set[int] = set()
    for leaf, g in _leaf_gradients(root, grad):
        leaf._accumulate_grad(g, fresh=id(g) not in handed_to_leaves)
        handed_to_leaves.add(id(g))


def grad(output: "Tensor", inputs: "Sequence[Tensor]", grad_output: Any = None, *,
         materialize_grads: bool = True) -> list[np.ndarray | None]:
    """The gradients of ``output`` with respect to ``inputs``, returned instead of stored.

    Like ``torch.autograd.grad``: one array per input, in order, and no ``.grad`` anywhere
    changes. An input the output does not depend on gets zeros of its shape (None with
    ``materialize_grads=False``, as ``torch.autograd.grad(..., allow_unused=True)``)::

        dW, = grad(loss, [W])          # dL/dW, while W.grad stays as it was

    The graph is consumed as by :func:`backward`. ``inputs`` must be leaves (parameters, or
    tensors created with ``requires_grad=True``).
    """
    for t in inputs:
        if t._node is not None:
            raise ValueError("grad(): every input must be a leaf tensor (a parameter or a tensor "
                             "created with requires_grad=True), not the result of an operation")
    found = {id(leaf): g for leaf, g in _leaf_gradients(output, grad_output)}
    handed: set[int] = set()
    result = []
    for t in inputs:
        g = found.get(id(t))
        if g is None:
            result.append(np.zeros_like(t.data) if materialize_grads else None)
            continue
        # A copy unless the array is the caller's alone (see can_keep).
        keep = id(g) not in handed and can_keep(g) and g.dtype == t.dtype
        result.append(g if keep else np.array(g, dtype=t.dtype))
        handed.add(id(g))
    return result


def can_keep(g: np.ndarray) -> bool:
    """True when a gradient array may be kept as it is, not copied: writeable, C-contiguous,
    and not a view of another array (whose owner could change it)."""
    return g.flags.writeable and g.flags.c_contiguous and not isinstance(g.base, np.ndarray)


def _leaf_gradients(root: "Tensor", grad: Any) -> list[tuple["Tensor", np.ndarray]]:
    """The chain rule from ``root`` to its leaves: ``(leaf, dL/dleaf)`` for every leaf reached."""
    if not root.requires_grad:
        raise RuntimeError("backward() called on a tensor that does not require gradients; "
                           "create the inputs with requires_grad=True (or use nn.Parameter)")
    if root._graph_freed:
        raise RuntimeError("this graph was already used by backward() and has been freed; "
                           "run the forward pass again before calling backward() a second time")
    if grad is None:
        if root.data.size != 1:
            raise ValueError(f"backward() without a gradient needs a scalar output, got shape "
                             f"{root.shape}; pass grad= an array of that shape "
                             f"(e.g. np.ones({root.shape}))")
        grad_arr = np.ones_like(root.data)
    else:
        # A copy: the caller's array must never become (and be mutated as) somebody's .grad.
        grad_arr = np.array(getattr(grad, "data", grad), dtype=root.dtype)
        if grad_arr.shape != root.shape:
            raise ValueError(f"backward(grad): grad has shape {grad_arr.shape} but the output has "
                             f"shape {root.shape}; they must match")

    leaves: list[tuple[Tensor, np.ndarray]] = []
    grads: dict[int, np.ndarray] = {id(root): grad_arr}  # dL/d(node), filled in as we go
    for node in reversed(_topological_order(root)):
        g = grads.pop(id(node), None)
        if node._node is None:  # a leaf
            if g is not None:
                leaves.append((node, g))
            continue
        fn, ctx, inputs = node._node
        node._node = None  # free the graph (saved arrays) as we go
        node._graph_freed = True
        if g is None:
            continue
        input_grads = fn.backward(ctx, g)
        if len(input_grads) != len(inputs):
            raise RuntimeError(f"{fn.__name__}.backward returned {len(input_grads)} gradients "
                               f"for {len(inputs)} inputs")
        for inp, ig in zip(inputs, input_grads):
            if ig is None or not inp.requires_grad:
                continue
            if ig.shape != inp.shape:
                raise RuntimeError(f"{fn.__name__}.backward produced a gradient of shape "
                                   f"{ig.shape} for an input of shape {inp.shape}")
            previous = grads.get(id(inp))
            grads[id(inp)] = ig if previous is None else sum_gradients(previous, ig)
    return leaves


@replaceable
def sum_gradients(total: np.ndarray, more: np.ndarray) -> np.ndarray:
    """The sum rule: a tensor used k times receives the sum of its k gradients.

    ``total`` is the sum of the gradients that reached the tensor so far, ``more`` the one
    that just arrived (same shape). The result is a new array: either input may still be
    used elsewhere (``Add`` hands one array to both of its inputs), so neither is changed.
    A tied matrix E (V, d) is the typical case: dE = head's dlogits^T h + lookup's scatter-add.
    """
    return total + more
