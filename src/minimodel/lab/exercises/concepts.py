"""The forbidden families: every API that computes one concept.

An exercise that forbids a concept forbids all of it, not one spelling: a fused encoder-layer
kernel runs attention as surely as ``F.scaled_dot_product_attention`` does, and
``F.local_response_norm`` whose window covers the whole row divides by ``sqrt(var + eps)``
as surely as ``F.layer_norm``. So the lists below name each family's members (the public
function, the module class, the ``torch.*`` binding, the private fused kernels and the ATen
operators; a member missing from an installed torch is simply absent), and
:func:`whole_families` widens an exercise's list: naming one member names its family. The
family rule of :mod:`.family` then adds every other name with the same words.

What is *not* a member, on purpose (honest code uses it, and it does not compute the
concept): vector norms and an L2 normalisation (``torch.linalg.vector_norm``, ``torch.norm``,
``F.normalize``, ``torch._weight_norm``, ``torch.renorm``): a norm and a division, with no
mean, no variance and no ``eps`` under the square root; the masked softmax
(``torch._masked_softmax``) and the input projections (``F._in_projection_packed``): parts of
an attention the learner still has to assemble. ``torch.nn.Transformer`` is refused through
its parts (it builds a ``TransformerEncoder``); naming it would also name ``torch.fx``'s
unrelated ``Transformer``. ``torch._refs._normalize`` is a member by identity only
(:data:`BY_IDENTITY_ONLY`): the public ``F.normalize`` shares its word and stays allowed.
"""

from __future__ import annotations

from minimodel.lab.exercises.family import FUSED_ACTIVATION

# Attention: the scaled dot-product kernels, multi-head attention, the fused encoder and
# decoder layers (each runs attention inside), flex attention.
ATTENTION = [
    "torch.nn.MultiheadAttention",
    "torch.nn.modules.activation.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.attention.flex_attention.flex_attention",
    "torch.nn.TransformerEncoderLayer", "torch.nn.TransformerEncoder",
    "torch.nn.TransformerDecoderLayer", "torch.nn.TransformerDecoder",
    "torch._transformer_encoder_layer_fwd",
    "torch._native_multi_head_attention", "torch._triton_multi_head_attention",
    "torch._triton_scaled_dot_attention",
    "torch._scaled_dot_product_attention_math",
    "torch._scaled_dot_product_flash_attention",
    "torch._scaled_dot_product_efficient_attention",
    "torch._scaled_dot_product_cudnn_attention",
    "torch._scaled_dot_product_fused_attention_overrideable",
    "torch._flash_attention_forward", "torch._efficient_attention_forward",
    "torch._cudnn_attention_forward",
]

# Normalisation: each of these computes a layer norm in disguise on a suitable input (one
# group, one instance, the batch axis transposed, an RMS norm of a centred row, a response
# window covering the row) or is a layer norm.
NORMALISATION = [
    "torch.nn.LayerNorm", "torch.nn.modules.normalization.LayerNorm",
    "torch.nn.functional.layer_norm", "torch.layer_norm", "torch.native_layer_norm",
    "torch.nn.GroupNorm", "torch.nn.functional.group_norm", "torch.group_norm",
    "torch.native_group_norm",
    "torch.nn.InstanceNorm1d", "torch.nn.InstanceNorm2d", "torch.nn.InstanceNorm3d",
    "torch.nn.LazyInstanceNorm1d", "torch.nn.LazyInstanceNorm2d",
    "torch.nn.LazyInstanceNorm3d",
    "torch.nn.functional.instance_norm", "torch.instance_norm",
    "torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d", "torch.nn.BatchNorm3d",
    "torch.nn.LazyBatchNorm1d", "torch.nn.LazyBatchNorm2d", "torch.nn.LazyBatchNorm3d",
    "torch.nn.SyncBatchNorm",
    "torch.nn.functional.batch_norm", "torch.batch_norm", "torch.native_batch_norm",
    "torch._native_batch_norm_legit", "torch._native_batch_norm_legit_no_training",
    "torch._batch_norm_impl_index", "torch._batch_norm_with_update",
    "torch._batch_norm_no_update",
    # the two halves of a batch norm: the statistics, then (x - mean) * invstd * w + b
    "torch.batch_norm_stats", "torch.batch_norm_elemt", "torch.batch_norm_gather_stats",
    "torch.batch_norm_gather_stats_with_counts", "torch.batch_norm_update_stats",
    "torch.cudnn_batch_norm", "torch.miopen_batch_norm", "torch.quantized_batch_norm",
    "torch.nn.RMSNorm", "torch.nn.functional.rms_norm", "torch.rms_norm",
    "torch._fused_rms_norm",
    "torch.nn.LocalResponseNorm", "torch.nn.functional.local_response_norm",
    # the cross-map LRN (module and autograd Function): a local response norm over channels
    "torch.nn.CrossMapLRN2d", "torch.nn.modules._functions.CrossMapLRN2d",
    # the BatchNorm-folding helpers: (b - running_mean) * rsqrt(running_var + eps) * w + b_bn
    # is batch_norm_elemt's normalise step (a layer norm given a row's mean and variance);
    # inductor's efficient_conv_bn_eval is in the family by its module's name ("bn")
    "torch.nn.utils.fusion.fuse_conv_bn_weights", "torch.nn.utils.fusion.fuse_linear_bn_weights",
    "torch.nn.utils.fusion.fuse_conv_bn_eval", "torch.nn.utils.fusion.fuse_linear_bn_eval",
    # torch's reference layer-norm core: mean and rstd over the given dims, then
    # (x - mean) * rstd (refused by identity only, see BY_IDENTITY_ONLY)
    "torch._refs._normalize",
]

# Refused by identity, never by their words: a private helper's name is generic
# (``_normalize`` would otherwise take the public L2 ``F.normalize`` and torch's
# ``_normalize_kwargs``, ``_normalize_path`` ... with it).
BY_IDENTITY_ONLY = ["torch._refs._normalize"]

# Embedding lookup: the gather itself, and the embedding bag (a bag of one id with mode
# "sum", "mean" or "max" is the row itself), for the exercises that forbid the lookup.
EMBEDDING = [
    "torch.nn.functional.embedding", "torch.nn.Embedding", "torch.embedding",
    "torch.nn.functional.embedding_bag", "torch.nn.EmbeddingBag", "torch.embedding_bag",
    "torch._embedding_bag", "torch._embedding_bag_forward_only",
]

# GELU, and every op that takes the activation to apply as an argument (FUSED_ACTIVATION: a
# matmul or convolution fused with a pointwise function chosen by a string or a flag, read from
# torch's op schemas, family.fused_activation_ops): oneDNN's _linear_pointwise(x, w, b, "gelu",
# [], "tanh") and torch._addmm_activation(..., use_gelu=True) are GELU under another name.
GELU = ["torch.nn.functional.gelu", "torch.nn.GELU", "torch.nn.modules.activation.GELU",
        "torch._C._nn.gelu", FUSED_ACTIVATION]

FAMILIES = {"attention": ATTENTION, "normalisation": NORMALISATION, "gelu": GELU,
            "embedding": EMBEDDING}


def whole_families(names: list[str]) -> list[str]:
    """``names`` with every family one of them belongs to, in order, without repeats."""
    out = list(names)
    for members in FAMILIES.values():
        if any(name in members for name in names):
            out += members
    return list(dict.fromkeys(out))
