"""The *family* half of the forbidden-API rule: a name with the same words is the same
computation.

``torch.embedding`` is ``torch.nn.functional.embedding`` under another name, the C binding
``torch._C._nn.cross_entropy_loss`` is ``torch.nn.functional.cross_entropy``, and a private
fused op holding all the words (``torch._native_multi_head_attention``) is
``torch.nn.MultiheadAttention``. Names are compared by their words, ignoring case, the
words ``native``, ``fused``, ``loss``, ``forward``, ``impl`` and ``nd``, and a
dimension suffix once those are gone (``nll_loss2d``, ``BatchNorm1d``,
``nll_loss2d_forward``); an abbreviation is read as its words (``LRN`` is
``local response norm``: ``CrossMapLRN2d``, ``_cross_map_lrn2d``). A family's gradient kernel,
its words and ``backward``, is a member (``native_layer_norm_backward``: given the statistics, its weight gradient for a
one-hot ``grad_out`` is the normalised row; ``native_batch_norm_backward`` divides by
``sqrt(var + eps)`` itself).

A callable named exactly by a family's word is a member (:func:`named_by_family_word`:
``torch.onnx.ops.attention`` runs a whole multi-head attention).

A module whose name holds a family's word defines members of it (:func:`module_in_family`:
``torch._inductor.fx_passes.fuse_attention._sfdp_pattern_1`` is a scaled dot-product
attention under a name without the word).

The gelu family also holds the ops that take the activation to apply as an argument
(:func:`fused_activation_ops`): oneDNN's ``_linear_pointwise(x, w, b, "gelu", [], "tanh")``
and ``torch._addmm_activation(..., use_gelu=True)`` compute GELU fused into a matmul, under a
name without the word.

This file imports nothing of minimodel: the static scan (:mod:`.astscan`, through
:mod:`.aliases`) and the judged child (:mod:`._enforce`, which runs where the package is out of
sight) use the very same two functions.
"""

import functools
import re

NOISE_WORDS = {"native", "fused", "loss", "forward", "impl", "nd"}
ABBREVIATIONS = {"lrn": ("local", "response", "norm")}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def words(name):
    """The words of an identifier, lower case, without the noise words
    (``CrossEntropyLoss`` -> ``["cross", "entropy"]``)."""
    return list(_words(name))


@functools.lru_cache(maxsize=1 << 16)  # the child asks for every name torch holds
def _words(name):
    found = [w.lower() for w in _WORD.findall(name)]
    spelled = [part for w in found for part in ABBREVIATIONS.get(w, (w,))]
    return _without_dimension([w for w in spelled if w not in NOISE_WORDS])


def _without_dimension(found):
    """The words without a dimension suffix (``nll_loss2d``, ``BatchNorm1d``, and once the
    noise words are gone ``nll_loss2d_forward``)."""
    if len(found) > 2 and found[-1] == "d" and found[-2].isdigit():
        return tuple(found[:-2])
    return tuple(found)


def joined(name):
    """The words of ``name`` run together (``CrossMapLRN2d`` -> ``crossmaplocalresponsenorm``):
    a quick test that a family's word is in a name at all."""
    return "".join(_words(name))


def same_family(name, forbidden_name):
    """Is ``name`` (a last path component) the forbidden computation under another name: the
    same words (``embedding``, ``CrossEntropyLoss`` ~ ``cross_entropy_loss``), or a private
    name holding all of its words (``_native_multi_head_attention``)?"""
    mine, theirs = _words(name), _words(forbidden_name)
    if not theirs:
        return False
    if _same_words(name, mine, theirs):
        return True
    if "backward" in mine and "backward" not in theirs:  # the family's gradient kernel
        return _same_words(name, _without_dimension([w for w in mine if w != "backward"]),
                           theirs)
    return False


def _same_words(name, mine, theirs):
    if "".join(mine) == "".join(theirs):
        return True
    return name.startswith("_") and ("".join(theirs) in "".join(mine)
                                     or set(theirs) <= set(mine))


# The word that names each family in a module's name: a module whose name holds it
# (``torch._inductor.fx_passes.fuse_attention``, ``torch.nn.modules.batchnorm``,
# ``torch._inductor.fx_passes.efficient_conv_bn_eval``) defines members of that family, whatever
# its functions are called (``_sfdp_pattern_1`` is a scaled dot-product attention).
FAMILY_WORDS = ("attention", "norm", "gelu", "embedding")
# Module words read as the normalisation family besides ``...norm``: the module of the norm
# layers, and ``bn`` (batch norm, in the names of torch's BatchNorm-folding code:
# ``efficient_conv_bn_eval``, ``bn_relu``).
NORM_MODULE_WORDS = {"normalization", "normalisation", "bn"}
# A norm that is a vector norm, not a normalisation by mean and variance: modules
# ``torch.nn.utils.weight_norm`` and ``spectral_norm`` stay allowed (concepts.py says why).
VECTOR_NORM_WORDS = {"weight", "spectral", "vector", "matrix", "grad"}


def family_word(forbidden_name):
    """The word of :data:`FAMILY_WORDS` that ``forbidden_name`` holds (``batch_norm_elemt`` ->
    ``norm``), or None."""
    return next((fam for w in _words(forbidden_name) for fam in FAMILY_WORDS
                 if w == fam or w.endswith(fam)), None)


def module_in_family(part, forbidden_name):
    """Does ``part``, one component of a module's dotted name, name the family of
    ``forbidden_name``: one of its words is the family's word or ends with it
    (``fuse_attention``, ``batchnorm``, ``layer_norm_expanded_weights``), and for the
    normalisation family ``normalization`` or ``bn``; a vector norm (``weight_norm``) is not.
    ``normal`` (the distribution) does not end with ``norm``. The bare word is a package of
    the topic's tools, not a computation (``torch.nn.attention``: ``sdpa_kernel`` chooses
    a backend; its ``flex_attention`` module is a member by its own name)."""
    fam = family_word(forbidden_name)
    mine = _words(part)
    if fam is None or mine == (fam,):
        return False
    for i, w in enumerate(mine):
        if fam == "norm" and w in NORM_MODULE_WORDS:
            return True
        if (w == fam or w.endswith(fam) or (fam != "norm" and w.startswith(fam))) and not (
                fam == "norm" and i > 0 and mine[i - 1] in VECTOR_NORM_WORDS):
            return True
    return False


def bare_family_word(name):
    """The family word that ``name`` (a callable's own name, never a module's) is exactly,
    or None: ``attention`` (``torch.onnx.ops.attention``, ONNX Attention's reference: a whole
    multi-head attention), ``gelu``, ``embedding``. ``norm`` is not one: ``torch.norm`` is a
    vector norm. The module ``torch.nn.attention`` is not a callable (see
    :func:`module_in_family`); a learner's own ``attention`` is not torch's."""
    found = _words(name)
    if len(found) == 1 and found[0] in FAMILY_WORDS and found[0] != "norm":
        return found[0]
    return None


def named_by_family_word(name, forbidden_name):
    """Is the callable ``name`` exactly the word of ``forbidden_name``'s family
    (``attention`` for ``scaled_dot_product_attention``)?"""
    fam = bare_family_word(name)
    return fam is not None and fam == family_word(forbidden_name)


# The gelu family's marker for "every op that takes its activation as an argument" (the alias
# table lists them for the static scan, the judged child reads them from torch's schemas).
FUSED_ACTIVATION = "torch.ops.*.fused_activation"
# The argument that names the activation an op applies after its matmul or convolution:
# oneDNN's ``attr``/``unary_attr``/``unary_post_op``/``post_op_name`` ("gelu", "relu" ...),
# ``activation`` (a string), ``use_gelu`` (a flag).
ACTIVATION_ARGUMENTS = {"attr", "unary_attr", "unary_post_op", "post_op_name", "activation",
                        "use_gelu"}


def takes_activation(schema):
    """Does this op schema (a ``torch._C.FunctionSchema``) fuse a chosen activation into a
    matmul or a convolution: an argument of :data:`ACTIVATION_ARGUMENTS` that is a string or a
    flag, and at least two tensors (an input and a weight)? ``export::access_subclass_inner_
    tensor(Tensor, str attr)`` names an attribute of one tensor, and is not."""
    tensors = sum("Tensor" in str(arg.type) for arg in schema.arguments)
    return tensors >= 2 and any(
        arg.name in ACTIVATION_ARGUMENTS and str(arg.type) in ("str", "Optional[str]", "bool")
        for arg in schema.arguments)


def fused_activation_ops(schemas):
    """``{"ns::name": "torch.ops.ns.name"}`` for every op among ``schemas``
    (``torch._C._jit_get_all_schemas()``: every namespace, aten, mkldnn, onednn ...) that
    :func:`takes_activation`: the name the verdict gives, for each."""
    ops = {}
    for schema in schemas:
        if takes_activation(schema):
            space, _, name = schema.name.partition("::")
            ops[schema.name] = f"torch.ops.{space}.{name}"
    return ops
