"""Fast kernels: verified replacements of composites in :mod:`minimodel.functional`.

A kernel is one autograd :class:`~minimodel.autograd.Function` (forward and a hand-derived
backward in one place) plus a function with the *same signature* as the composite it
replaces, registered with ``@register_kernel("name")`` (see :mod:`minimodel.dispatch`).

Why kernels at all: a composite allocates a temporary array per primitive and keeps several
of them alive for backward; on an (N, V) logits matrix that is the difference between one pass
over memory and six. Why they can be trusted: ``tests/kernels`` checks every registered kernel
against its composite (values and the gradient of every input, float32 and float64, random
shapes, tied inputs, ignored labels), and refuses a kernel it has no samples for.

    file               replaces
    linear.py          linear                 one 2-D GEMM over all rows; dW in (out, in) layout
    activations.py     softmax, log_softmax, gelu
    normalization.py   layer_norm
    losses.py          cross_entropy          one (N, V) buffer instead of several
                       linear_cross_entropy   logits in row chunks, never (N, V)
    attention.py       self_attention         heads, scale, mask and softmax in one node
    batch_parallel.py  batch_loss             the batch's parts in threads, one per core

The package can also be called as the on/off switch: ``with mm.kernels(False): ...`` runs
everything on the composites (the same as ``minimodel.dispatch.kernels``).
"""

import sys
import types

from minimodel import dispatch
from minimodel.kernels import activations, attention, batch_parallel, linear, losses, normalization


class _SwitchModule(types.ModuleType):
    """Lets ``mm.kernels(False)`` read like the switch it is (a module cannot be called
    otherwise; assigning a module's ``__class__`` is supported Python)."""

    def __call__(self, enabled: bool = True):
        return dispatch.kernels(enabled)


sys.modules[__name__].__class__ = _SwitchModule

__all__ = ["activations", "attention", "batch_parallel", "linear", "losses", "normalization"]
