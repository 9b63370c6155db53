"""The *family* half of the forbidden-API rule: a name with the same words is the same
computation.

``torch.embedding`` is ``torch.nn.functional.embedding`` under another name, the C binding
``torch._C._nn.cross_entropy_loss`` is ``torch.nn.functional.cross_entropy``, and a private
fused op holding all the words (``torch._native_multi_head_attention``) is
``torch.nn.MultiheadAttention``. Names are compared by their words, ignoring case, the
words ``native``, ``fused``, ``loss``, ``forward``, ``impl`` and ``nd``, and a dimension
suffix (``nll_loss2d``, ``BatchNorm1d``); an abbreviation is read as its words
(``LRN`` is ``local response norm``: ``CrossMapLRN2d``, ``_cross_map_lrn2d``).

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
    if len(found) > 2 and found[-1] == "d" and found[-2].isdigit():
        found = found[:-2]  # a dimension suffix: nll_loss2d, BatchNorm1d
    spelled = [part for w in found for part in ABBREVIATIONS.get(w, (w,))]
    return tuple(w for w in spelled if w not in NOISE_WORDS)


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
    if "".join(mine) == "".join(theirs):
        return True
    return name.startswith("_") and ("".join(theirs) in "".join(mine)
                                     or set(theirs) <= set(mine))
