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

import codecs
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file
from safetensors.numpy import save as st_save

from minimodel._fileio import atomic_write_bytes, require_file
from minimodel.messages import Phrase, phrase
from minimodel.models import MODEL_CLASSES
from minimodel.nn import Module

FORMAT_VERSION = "1"


def serialize(model: Module, extra_metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of ``model``'s checkpoint file (what :func:`save` writes)."""
    classes = MODEL_CLASSES
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
    return st_save(tensors, metadata=metadata)


def save(model: Module, path: str | os.PathLike, extra_metadata: dict[str, str] | None = None
         ) -> Path:
    """Write ``model`` (GPT, MaskedLM or CBOW) to ``path`` atomically; returns the path."""
    return atomic_write_bytes(path, serialize(model, extra_metadata))


# Leading bytes of files people hand over by mistake, and what to call them (looks_like.*).
_MAGIC = ((b"\x89PNG", "png"), (b"PK\x03\x04", "zip"), (b"\x80", "pickle"), (b"\x1f\x8b", "gzip"))


def not_safetensors_kind(path: str | os.PathLike) -> Phrase | None:
    """Why ``path`` is plainly not a safetensors file ("it looks like JSON", a Phrase: English
    in an f-string, the reader's language in an error that says itself), or None when it
    could be one (empty, or the 8-byte little-endian header length followed by ``{``).

    Why: safetensors reads any other file's first 8 bytes as a header length and reports
    "header too large", which sends the user looking for a corrupt download when they simply
    gave the wrong file. Only a file with the real layout is called corrupt or truncated.
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return None  # the caller's own error says what is wrong with the path
    if not head or (len(head) > 8 and head[8:9] == b"{"):
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return phrase(f"looks_like.{kind}")
    try:  # incremental: a character cut at byte 512 is not an error
        text = codecs.getincrementaldecoder("utf-8")().decode(head)
    except UnicodeDecodeError:
        text = ""
    if not text or "\0" in text:
        # Under 9 bytes a binary file may be a checkpoint cut inside its header length.
        return phrase("looks_like.binary") if len(head) > 8 else None
    text = text.lstrip("\ufeff \t\r\n")
    if text.startswith("version https://git-lfs"):
        return phrase("looks_like.lfs")
    if text.startswith(("{", "[")):
        return phrase("looks_like.json")
    return phrase("looks_like.text")


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The metadata of a minimodel checkpoint, refusing missing, corrupt or foreign files."""
    path = require_file(path, "checkpoint")
    try:
        with safe_open(str(path), framework="np") as handle:
            metadata = handle.metadata() or {}
    except Exception as exc:  # safetensors raises its own error types for bad headers
        kind = not_safetensors_kind(path)
        if kind is not None:  # e.g. tokenizer.json given for the checkpoint
            raise ValueError(f"{path} is not a safetensors checkpoint ({kind}); give "
                             "model.safetensors or the run folder") from None
        raise ValueError(f"{path} is not a readable safetensors file ({exc}); is it corrupt or "
                         "truncated?") from None
    if "minimodel.model" not in metadata or "minimodel.config" not in metadata:
        raise ValueError(f"{path} is a safetensors file but not a minimodel checkpoint (no "
                         "minimodel.model/minimodel.config metadata); for a Hugging Face GPT-2 "
                         "folder use `minimodel import-hf`")
    return metadata


# Sizes beyond these are refused before anything is built: no real minimodel checkpoint comes
# near them, and a config claiming them (damaged or hostile) would allocate gigabytes.
LIMITS = {"vocab_size": 10_000_000, "block_size": 1_000_000, "n_layer": 1_000,
          "n_head": 4_096, "d_model": 65_536, "window": 1_000, "mlp_ratio": 64}
FLOAT_DTYPES = {"F32": np.float32, "F64": np.float64}
WIDENED_DTYPES = {"F16": "float16", "BF16": "bfloat16"}


def check_config_bounds(config: Any, where: str) -> None:
    """Refuse a config with a size beyond :data:`LIMITS` (naming the field and the file)."""
    for field, limit in LIMITS.items():
        value = getattr(config, field, None)
        if value is not None and value > limit:
            raise ValueError(f"{where}: the stored config says {field}={value:,}, beyond the "
                             f"limit of {limit:,}; the file is damaged or not a real "
                             "minimodel checkpoint")


def _header(path: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """name -> (dtype, shape) of every tensor, read from the header alone (no data)."""
    out = {}
    with safe_open(str(path), framework="np") as handle:
        for key in handle.keys():
            info = handle.get_slice(key)
            out[key] = (info.get_dtype(), tuple(info.get_shape()))
    return out


def load(path: str | os.PathLike) -> Module:
    """Rebuild the model saved at ``path`` (ties re-created, values loaded).

    The file is checked before it is trusted: the stored config against sane bounds and
    against the tensors' own names and shapes (read from the header, before anything is
    built), dtypes (float32/float64; float16 is widened to float32 with a warning; integers
    are refused) and values (NaN or Inf refused). Every message names the file and tensor.
    """
    path = Path(path)
    metadata = read_metadata(path)
    classes = MODEL_CLASSES
    name = metadata["minimodel.model"]
    if name not in classes:
        raise ValueError(f"{path} holds a {name!r} model; this minimodel knows {sorted(classes)}")
    model_cls, config_cls = classes[name]
    try:
        stored = json.loads(metadata["minimodel.config"])
        if not isinstance(stored, dict):
            raise TypeError(f"expected a JSON object, got {type(stored).__name__}")
        config = config_cls(**stored)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: the stored {name} config is invalid ({exc})") from None
    check_config_bounds(config, str(path))
    expected = model_cls.state_shapes(config)
    header = _header(path)
    aliases = {"lm_head.weight": next(iter(expected))} if config.tie_embeddings else {}
    missing = [k for k in expected if k not in header]
    unexpected = [k for k in header if k not in expected and k not in aliases]
    if missing or unexpected:
        parts = ([f"missing {', '.join(missing[:5])}"] if missing else []) + (
            [f"unexpected {', '.join(unexpected[:5])}"] if unexpected else [])
        raise ValueError(f"{path} does not hold the tensors its config describes ({name}, "
                         f"{config.to_dict()}): {'; '.join(parts)}")
    for key, (dtype, shape) in header.items():
        want = expected.get(key) or expected[aliases[key]]
        if shape != want:
            raise ValueError(f"{path}: tensor {key!r} has shape {shape} but the stored config "
                             f"needs {want}; the file is damaged")
        if dtype not in FLOAT_DTYPES and dtype not in WIDENED_DTYPES:
            raise ValueError(f"{path}: tensor {key!r} has dtype {dtype}; weights must be "
                             "float32 or float64")
    try:
        tensors = load_file(str(path))
    except Exception as exc:  # bfloat16 has no NumPy dtype
        raise ValueError(f"{path}: cannot read the tensors ({exc}); bfloat16 weights can be "
                         "converted with `minimodel import-hf` from a Hugging Face folder"
                         ) from None
    widened = sorted(k for k, v in tensors.items() if v.dtype == np.float16)
    if widened:
        warnings.warn(f"{path}: float16 weights ({', '.join(widened[:3])}"
                      f"{' ...' if len(widened) > 3 else ''}) widened to float32", stacklevel=2)
        tensors = {k: (v.astype(np.float32) if v.dtype == np.float16 else v)
                   for k, v in tensors.items()}
    for key, value in tensors.items():
        if not np.all(np.isfinite(value)):
            bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
            raise ValueError(f"{path}: tensor {key!r} holds {bad} NaN/Inf value(s); the "
                             "weights are unusable (a diverged run?)")
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
