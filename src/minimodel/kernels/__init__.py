"""Fast kernels: verified replacements of the readable definitions, and every speed device.

A kernel is a function with the *same signature* as the definition it replaces, registered
with ``@register_kernel("name")`` (see :mod:`minimodel.dispatch`); most are one autograd
:class:`~minimodel.autograd.Function` (forward and a hand-derived backward in one place).

Why kernels at all: a composite allocates a temporary array per primitive and keeps several
of them alive for backward; on an (N, V) logits matrix that is the difference between one pass
over memory and six. Why they can be trusted: ``tests/kernels`` checks every registered kernel
against its definition (values and the gradient of every input, float32 and float64, random
shapes, tied inputs, ignored labels), and refuses a kernel it has no check for.

    file               replaces                  how
    elementwise.py     ops.add (Tensor + Tensor) the same sum, into reused memory
    linear.py          F.linear                  one 2-D GEMM over all rows; dW in (out, in) layout
    activations.py     F.softmax, F.log_softmax, F.gelu
    normalization.py   F.layer_norm
    losses.py          F.cross_entropy           one (N, V) buffer instead of several
                       F.linear_cross_entropy    logits in row chunks, never (N, V)
    attention.py       F.self_attention          heads, scale, mask and softmax in one node
    adamw.py           optim.adamw               fused in place, two threads
    batch_split.py     F.batch_loss              the batch's two halves in two threads
    gradients.py       autograd.sum_gradients    a tied matrix's two gradients summed in place

and the two devices they share, which nothing outside this package uses:

    buffers.py         memory reused across steps instead of page-faulted afresh
    threads.py         jobs in threads, one per core, with the BLAS threads shared out

The on/off switch is :func:`minimodel.dispatch.kernels` (``mm.kernels(False)``) or
``MINIMODEL_KERNELS=0``: with kernels off, nothing in this package runs.
"""

from minimodel.kernels import (activations, adamw, attention, batch_split, elementwise, gradients,
                               linear, losses, normalization)

__all__ = ["activations", "adamw", "attention", "batch_split", "elementwise", "gradients",
           "linear", "losses", "normalization"]
