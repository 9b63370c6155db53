"""Readable definitions and the kernels that may replace them: one registry, one switch.

A computation that may have a faster version is written once, readably (a *composite* of
simpler operations), and marked ``@replaceable``: a model computation, an optimizer's update
rule, the sum of two tensors. A *kernel* may register itself (``@register_kernel``) as the
replacement of one such definition, by name, with the same signature. When kernels are on
(the default), calling the definition runs its kernel; when they are off, the definition
itself runs. Either way the numbers agree: the test suite checks every registered kernel
against its definition, values and gradients.

Switching kernels off (the "teaching mode": slower, but every step is the code you read):

    import minimodel as mm
    with mm.kernels(False):
        logits, loss = model(x, y)

or, for a whole process, the environment variable ``MINIMODEL_KERNELS=0``.

This module imports nothing else of minimodel, so any layer may mark a definition
replaceable; the kernels themselves live above everything they replace. This is how PyTorch
keeps its kernels honest (reference decompositions checked by OpInfo tests); here the
reference is the code that is documented and taught.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import warnings
from typing import Any, Callable, Iterator

_COMPOSITES: dict[str, Callable[..., Any]] = {}
_KERNELS: dict[str, Callable[..., Any]] = {}

KERNELS_ENV = "MINIMODEL_KERNELS"  # 0: every computation runs its readable composite
_OFF, _ON = {"0", "off", "false", "no"}, {"", "1", "on", "true", "yes"}


def _enabled_from_env() -> bool:
    value = os.environ.get(KERNELS_ENV, "").strip().lower()
    if value in _OFF:
        return False
    if value not in _ON:
        warnings.warn(f"{KERNELS_ENV}={os.environ[KERNELS_ENV]!r} is not understood; use {KERNELS_ENV}=0 (kernels "
                      f"off) or {KERNELS_ENV}=1 (on). Kernels stay on.", stacklevel=2)
    return True


_enabled = _enabled_from_env()


def replaceable(composite: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``composite`` as a definition that a kernel may replace (by its ``__name__``).

    The returned function runs the registered kernel when kernels are on and one exists, else
    the composite. ``fn.composite`` is always the readable definition itself.
    """
    name = composite.__name__
    if name in _COMPOSITES:
        raise ValueError(f"a composite named {name!r} is already registered")
    _COMPOSITES[name] = composite

    @functools.wraps(composite)
    def run(*args: Any, **kwargs: Any) -> Any:
        kernel = _KERNELS.get(name) if _enabled else None
        return (kernel or composite)(*args, **kwargs)

    run.composite = composite  # type: ignore[attr-defined]
    return run


def register_kernel(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register a kernel as the replacement of the composite called ``name``.

    Refuses a name with no composite, a second kernel for the same composite, and a signature
    that differs from the composite's (a kernel is a drop-in replacement, nothing more).
    """
    def register(kernel: Callable[..., Any]) -> Callable[..., Any]:
        if name not in _COMPOSITES:
            raise ValueError(f"no composite named {name!r} to replace; known composites: "
                             f"{', '.join(sorted(_COMPOSITES))}")
        if name in _KERNELS:
            raise ValueError(f"a kernel for {name!r} is already registered "
                             f"({_KERNELS[name].__module__})")
        want, got = inspect.signature(_COMPOSITES[name]), inspect.signature(kernel)
        if [(p.name, p.kind, p.default) for p in want.parameters.values()] != \
                [(p.name, p.kind, p.default) for p in got.parameters.values()]:
            raise TypeError(f"kernel {kernel.__module__}.{kernel.__name__}{got} must have the "
                            f"signature of the composite {name}{want}")
        _KERNELS[name] = kernel
        return kernel
    return register


def kernels_enabled() -> bool:
    """True when registered kernels replace their composites (the default)."""
    return _enabled


@contextlib.contextmanager
def kernels(enabled: bool = True) -> Iterator[None]:
    """Context manager: run with kernels on (True) or on the composites only (False).

    The switch is process-wide: it is meant for a whole forward + backward, not for threads
    that want different modes at the same time.
    """
    global _enabled
    previous = _enabled
    _enabled = bool(enabled)
    try:
        yield
    finally:
        _enabled = previous


def composites() -> dict[str, Callable[..., Any]]:
    """Every replaceable composite by name (a copy)."""
    return dict(_COMPOSITES)


def registered_kernels() -> dict[str, Callable[..., Any]]:
    """Every registered kernel by the name of the composite it replaces (a copy)."""
    return dict(_KERNELS)


def active_kernels() -> list[str]:
    """Names of the composites that a kernel replaces right now (empty when switched off)."""
    return sorted(_KERNELS) if _enabled else []
