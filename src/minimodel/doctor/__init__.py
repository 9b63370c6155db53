"""The tie doctor: check the weight tie of any model, not only minimodel's.

``minimodel doctor PATH`` (or :func:`diagnose` from Python) reads a model's embedding E and
output head W — memory-mapped, without torch for safetensors — and its tokenizer, and checks:

* claimed vs stored (:mod:`.check_tie`): the config's tie flags against the file;
* sizes (:mod:`.check_sizes`): tokenizer, embedding, head and config vocabulary sizes;
* under-trained rows (:mod:`.check_rows`);
* unreachable tokens (:mod:`.reachability`): rows inside the convex hull of the others;
* for minimodel runs, the training state (:mod:`.check_training`): the optimizer holds the
  tied matrix once, and the gradient ledger (:mod:`.ledger`).

Where the tensors are found: :mod:`.tensors` (files) and :mod:`.names` (which tensor is E).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Finding", "Report", "diagnose", "print_report"]
_HOME = {"diagnose": "report", "print_report": "report", "Report": "report",
         "Finding": "findings"}


def __getattr__(name: str) -> Any:
    """The public names, imported when first used: a program that needs one module of the
    doctor (its cache, its architecture reader) then imports none of the checks."""
    if name not in _HOME:
        raise AttributeError(f"module 'minimodel.doctor' has no attribute {name!r}")
    return getattr(importlib.import_module(f"minimodel.doctor.{_HOME[name]}"), name)
