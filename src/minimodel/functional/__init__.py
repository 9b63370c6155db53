"""The definitions: every model computation, written once as a composite of primitives.

    import minimodel.functional as F
    loss = F.cross_entropy(logits, targets)      # logits (B, T, V), targets (B, T)

Nothing here has backward code. Each function is built from the differentiable primitives
(:mod:`minimodel.ops`, reached through Tensor operators), so autograd derives its gradient,
and its docstring gives the maths. Functions marked ``@replaceable`` may be run by a faster,
registered replacement that is checked against them (:mod:`minimodel.dispatch`); with
``mm.kernels(False)`` or ``MINIMODEL_KERNELS=0`` every one of them runs exactly as written.

Files, by family:

    linear.py         linear                                   y = x W^T + b
    activations.py    softmax, log_softmax, log_sigmoid, gelu, dropout
    normalization.py  layer_norm
    losses.py         cross_entropy, linear_cross_entropy      (the head's loss, tied or not)
                      batch_loss                               (a model's loss over a batch)
                      negative_sampling_loss                   (word2vec's cheap objective)
    attention.py      scaled_dot_product_attention, self_attention, causal_mask
    tensors.py        where, masked_fill, concatenate, stack, split
"""

from minimodel.functional.activations import dropout, gelu, log_sigmoid, log_softmax, softmax
from minimodel.functional.attention import (causal_mask, merge_heads,
                                            scaled_dot_product_attention, self_attention,
                                            split_heads)
from minimodel.functional.linear import linear
from minimodel.functional.losses import (IGNORE_INDEX, batch_loss, cross_entropy,
                                        linear_cross_entropy, negative_sampling_loss)
from minimodel.functional.normalization import layer_norm
from minimodel.functional.tensors import concatenate, masked_fill, split, stack, where

__all__ = ["linear", "softmax", "log_softmax", "log_sigmoid", "gelu", "dropout", "layer_norm",
           "cross_entropy", "linear_cross_entropy", "batch_loss", "negative_sampling_loss", "IGNORE_INDEX", "causal_mask",
           "split_heads", "merge_heads", "scaled_dot_product_attention", "self_attention",
           "where", "masked_fill", "concatenate", "stack", "split"]
