"""minimodel: a from-scratch NumPy deep-learning library for learning embeddings and weight tying.

The public names::

    import minimodel as mm
    x = mm.Tensor([[1.0, 2.0]], requires_grad=True)
    y = (x * x).sum(); y.backward(); x.grad   # -> [[2., 4.]]

    with mm.kernels(False):                    # run every computation on its readable
        ...                                    # composite (or MINIMODEL_KERNELS=0)
"""

from __future__ import annotations

__version__ = "0.1.0"

from minimodel.autograd import is_grad_enabled, no_grad
from minimodel.tensor import Tensor
from minimodel import functional, nn, optim  # noqa: E402  (engine first)
import minimodel.kernels  # noqa: E402,F401  (registers the kernels, binds minimodel.kernels)
# ``mm.kernels`` is the switch, not the package: this rebinds the name the import above bound
# (reach the package's modules with ``from minimodel.kernels import losses``).
from minimodel.dispatch import active_kernels, kernels, kernels_enabled  # noqa: E402


def save(model, path, extra_metadata=None):
    """Save a built-in model to a safetensors file (ties kept). See :func:`minimodel.io.save`."""
    from minimodel.io import save as _save

    return _save(model, path, extra_metadata)


def load(path):
    """Load a model saved with :func:`save`, re-tying shared matrices. See :func:`minimodel.io.load`."""
    from minimodel.io import load as _load

    return _load(path)


__all__ = ["Tensor", "no_grad", "is_grad_enabled", "save", "load", "functional", "nn", "optim",
           "kernels", "kernels_enabled", "active_kernels", "__version__"]
