"""Checkpoints: built-in models saved as safetensors, with ties preserved.

File layout (one ``.safetensors`` file):

* tensors: ``model.state_dict()``, so a tied matrix is stored once (no head key);
* metadata (strings): ``minimodel.model`` (class name), ``minimodel.config`` (JSON),
  ``minimodel.tie_groups`` (JSON list of name groups, for people and other tools),
  ``minimodel.format`` (version).

Loading rebuilds the model from its config, which re-creates the tie structurally, then copies
the arrays in. A file that carries both names of a tied matrix (e.g. written by another tool)
re-ties when the two arrays are equal and is refused, with the largest difference, when not.
safetensors holds raw arrays and JSON only, so loading a file never executes code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from minimodel._fileio import atomic_write_bytes
from minimodel.nn import Module

FORMAT_VERSION = "1"


def _model_classes() -> dict[str, tuple[type, type]]:
    from minimodel.models import MODEL_CLASSES

    return MODEL_CLASSES


def save(model: Module, path: str | os.PathLike, extra_metadata: dict[str, str] | None = None
         ) -> Path:
    """Write ``model`` (GPT, MaskedLM or CBOW) to ``path`` atomically; returns the path."""
    from safetensors.numpy import save as st_save

    classes = _model_classes()
    name = type(model).__name__
    if name not in classes or not hasattr(model, "config"):
        raise TypeError(f"mm.save handles the built-in models {sorted(classes)}, got {name}; "
                        "for another Module save model.state_dict() yourself")
    model.check_tie_matches_config()  # the config is what loading will rebuild
    tensors = {k: np.ascontiguousarray(v) for k, v in model.state_dict().items()}
    metadata = {
        "minimodel.format": FORMAT_VERSION,
        "minimodel.model": name,
        "minimodel.config": json.dumps(model.config.to_dict()),
        "minimodel.tie_groups": json.dumps(model.tie_groups()),
    }
    metadata.update(extra_metadata or {})
    return atomic_write_bytes(path, st_save(tensors, metadata=metadata))


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The metadata of a minimodel checkpoint, refusing missing, corrupt or foreign files."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        with safe_open(str(path), framework="np") as handle:
            metadata = handle.metadata() or {}
    except Exception as exc:  # safetensors raises its own error types for bad headers
        raise ValueError(f"{path} is not a readable safetensors file ({exc}); is it corrupt or "
                         "truncated?") from None
    if "minimodel.model" not in metadata or "minimodel.config" not in metadata:
        raise ValueError(f"{path} is a safetensors file but not a minimodel checkpoint (no "
                         "minimodel.model/minimodel.config metadata); for a Hugging Face GPT-2 "
                         "folder use `minimodel import-hf`")
    return metadata


def load(path: str | os.PathLike) -> Module:
    """Rebuild the model saved at ``path`` (ties re-created, values loaded, eval mode off)."""
    from safetensors.numpy import load_file

    metadata = read_metadata(path)
    classes = _model_classes()
    name = metadata["minimodel.model"]
    if name not in classes:
        raise ValueError(f"{path} holds a {name!r} model; this minimodel knows {sorted(classes)}")
    model_cls, config_cls = classes[name]
    try:
        config = config_cls(**json.loads(metadata["minimodel.config"]))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: the stored {name} config is invalid ({exc})") from None
    tensors = load_file(str(path))
    model = model_cls(config)
    # dtype follows the file (a float64 checkpoint loads as float64).
    own = model.state_dict()
    for key, value in tensors.items():
        if key in own and own[key].dtype != value.dtype:
            _param_by_name(model, key).data = value.copy()
    model.load_state_dict(tensors, strict=True)
    return model


def _param_by_name(model: Module, name: str) -> Any:
    return dict(model.named_parameters())[name]
