"""File plumbing for the Hugging Face bridge: atomic folders, weight files, checkpoints.

Why a staging folder: an export is several files (config, weights, tokenizer) that only make
sense together. They are written into a hidden sibling folder, then renamed into place, so a
crash or Ctrl-C never leaves ``OUT`` with a new config next to old weights.

Reading never executes code: ``.safetensors`` is raw arrays plus JSON, and the legacy
``pytorch_model.bin`` (a pickle) is opened with ``torch.load(weights_only=True)``, which only
rebuilds tensors and refuses any other object.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from safetensors.numpy import load_file
from safetensors.numpy import save as st_save

from minimodel._fileio import atomic_write_bytes, make_parent, plain_reason, require_file
from minimodel.data import check_vocab_match, load_tokenizer
from minimodel.interop.tokenizer_export import export_tokenizer
from minimodel.io import not_safetensors_kind
from minimodel.messages import MissingFileError, PhraseError, phrase

# Files an export writes; an existing OUT holding only these is a previous export and may be
# replaced without --force.
EXPORT_FILES = frozenset({
    "config.json", "generation_config.json", "model.safetensors", "vocab.json", "merges.txt",
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
})


@contextlib.contextmanager
def staged_dir(out_dir: str | os.PathLike, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; on success it replaces ``out_dir`` in one rename.

    ``out_dir`` may be missing, empty, or hold only files of a previous export
    (:data:`EXPORT_FILES`); anything else is refused unless ``overwrite`` (so a typo cannot
    wipe an unrelated folder). On error the staging folder is removed and ``out_dir`` is
    left as it was.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is a file; give a folder path for the export")
    if out.is_dir() and not overwrite:
        foreign = sorted(p.name for p in out.iterdir() if p.name not in EXPORT_FILES)
        if foreign:
            # One message for both readers: CLI users and to_hf() callers.
            raise ValueError(f"{out} already exists and holds files an export does not write "
                             f"({', '.join(foreign[:5])}); choose another folder or use "
                             "--force (overwrite=True in Python) to replace it")
    make_parent(out)  # a file in the way is named as such ("x is a file, not a folder")
    # A plain mkdir (not tempfile.mkdtemp, which makes the folder private, mode 0700) so the
    # renamed export gets the same permissions as any folder the user creates.
    stage = out.parent / f".{out.name}.{secrets.token_hex(6)}.tmp"
    try:
        stage.mkdir()
    except OSError as exc:
        # The staging name is ours, not the user's: say which folder could not be created.
        raise type(exc)(exc.errno, f"cannot create the export folder {out} "
                                   f"({plain_reason(exc)})") from None
    try:
        yield stage
        _fsync_tree(stage)
        if out.is_dir():
            # Two renames: the old folder moves aside, the new one takes its name. In between
            # (microseconds) OUT is absent, never half-written.
            old = out.parent / f".{out.name}.{secrets.token_hex(6)}.old"
            os.replace(out, old)
            os.replace(stage, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(stage, out)
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename and str(stage) in str(exc.filename):
            exc.filename = str(exc.filename).replace(str(stage), str(out))  # the real target
        raise


def _fsync_tree(folder: Path) -> None:
    """Flush every file to disk and give it ordinary permissions.

    Why chmod: ``mkstemp`` (atomic writes) and safetensors create files readable by their
    owner only (0600); an export folder is meant to be shared like any saved model.
    """
    mask = os.umask(0)
    os.umask(mask)
    for path in folder.iterdir():
        os.chmod(path, 0o666 & ~mask)
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())


def write_json(path: Path, obj: Any) -> None:
    """JSON with a trailing newline, UTF-8, non-ASCII kept readable."""
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path, what: str) -> dict[str, Any]:
    """Parse a JSON object file, with errors that name the file and what it is
    (``file_kind.<what>``), said in the reader's language."""
    kind = phrase(f"file_kind.{what}")
    if not path.is_file():
        raise MissingFileError(phrase("json_file.missing", what=kind, path=path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PhraseError(phrase("json_file.invalid", what=kind, path=path, error=exc)) from None
    if not isinstance(data, dict):
        raise PhraseError(phrase("json_file.not_object", what=kind, path=path,
                                 got=type(data).__name__))
    return data


def _is_number(value: Any) -> bool:
    # bool is a subclass of int in Python: JSON true must not pass for 1.
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


# What each kind of config.json field must hold (kind -> test); the kind is said in messages.
_KIND_TESTS = {
    "positive integer": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
    "positive number": lambda v: _is_number(v) and v > 0,
    "number in [0, 1)": lambda v: _is_number(v) and 0 <= v < 1,
    "boolean (true or false)": lambda v: isinstance(v, bool),
}


def config_setting(config: dict[str, Any], key: str, default: Any) -> Any:
    """``config[key]``, or ``default`` when the key is missing or null (as Hugging Face's
    ``PretrainedConfig`` reads an absent setting)."""
    value = config.get(key, default)
    return default if value is None else value


def config_value_problems(config: dict[str, Any], kinds: dict[str, str]) -> list[str]:
    """One "field must be a KIND, got VALUE" per field of ``config`` whose value has the wrong
    type or range; ``kinds`` maps field -> a key of :data:`_KIND_TESTS`. Missing or null
    fields are left to the caller's defaults.

    Why first: the later checks compute with these values ("abc" * 4 is a string, not an
    error), so a wrong type must be refused before anything uses it.
    """
    problems = []
    for key, kind in kinds.items():
        value = config.get(key)
        if value is not None and not _KIND_TESTS[kind](value):
            shown = json.dumps(value) if isinstance(value, bool) else repr(value)
            problems.append(f"{key} must be a {kind}, got {shown}")
    return problems


def tokenizer_for_export(tokenizer: Any, vocab_size: int) -> Any:
    """The tokenizer object (a path is loaded), refused when its size is not the model's."""
    if isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = load_tokenizer(tokenizer)
    if tokenizer is not None:
        check_vocab_match(vocab_size, tokenizer.vocab_size, where="to_hf")
    return tokenizer


def write_hf_folder(out_dir: str | os.PathLike, config: dict[str, Any],
                    tensors: dict[str, np.ndarray], tokenizer: Any, max_length: int,
                    overwrite: bool) -> Path:
    """config.json, model.safetensors and (optionally) the tokenizer files, as one unit."""
    with staged_dir(out_dir, overwrite=overwrite) as stage:
        write_json(stage / "config.json", config)
        # format=pt: transformers refuses safetensors files without this metadata entry.
        # Serialised in memory, then written by Python: a write error is an OSError that
        # names the file (safetensors' own writer raises its own error type).
        atomic_write_bytes(stage / "model.safetensors", st_save(tensors, metadata={"format": "pt"}))
        if tokenizer is not None:
            export_tokenizer(tokenizer, stage, model_max_length=max_length)
    return Path(out_dir)


# ----------------------------------------------------------------------------- weights in
# Integer tensors a checkpoint may carry that are not weights: the causal-mask buffers of old
# GPT-2 files and BERT's position ids. They are dropped by the converters; any other integer
# tensor is where a weight should be, and minimodel's weights are floating point.
INTEGER_BUFFERS = ("attn.bias", "attn.masked_bias", "position_ids", "token_type_ids")


class HFWeights(dict):
    """The tensors of a Hugging Face folder by name, with ``notes`` about what reading them
    changed (half precision widened to float32, per file)."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[str] = []


def _to_float_array(value: Any, name: str, path: Path, widened: list[str]) -> np.ndarray:
    """numpy array from a numpy/torch tensor; half precision widened to float32 (its name goes
    into ``widened``); an integer weight or a NaN/Inf value refused, naming file and tensor."""
    dtype = str(getattr(value, "dtype", "")).removeprefix("torch.")
    if hasattr(value, "detach"):  # a torch tensor
        import torch  # heavy optional dependency: only for torch tensors

        if value.dtype in (torch.float16, torch.bfloat16):
            value = value.float()
            widened.append(f"{name} ({dtype})")
        value = value.detach().cpu().numpy()
    arr = np.asarray(value)
    if arr.dtype.kind != "f":
        if name.endswith(INTEGER_BUFFERS):
            return arr  # a mask or position-id buffer: inspected, then dropped
        raise ValueError(f"{path}: tensor {name!r} has dtype {arr.dtype}; minimodel's weights "
                         "are floating point (float32 or float64), so this checkpoint cannot be "
                         "imported. Convert that tensor to float32 first")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{path}: tensor {name!r} holds NaN or Inf values; the weights are "
                         "unusable")
    if arr.dtype.itemsize < 4:
        widened.append(f"{name} ({arr.dtype})")
        return arr.astype(np.float32)
    return arr


def _read_tensors(path: Path, raw: dict[str, Any], into: HFWeights) -> None:
    widened: list[str] = []
    into.update({k: _to_float_array(v, k, path, widened) for k, v in raw.items()})
    if widened:
        into.notes.append(f"{path.name}: {len(widened)} half-precision tensor(s) widened to "
                          f"float32 (exactly: every half value is a float32 value), e.g. "
                          f"{widened[0]}")


def _load_safetensors(path: Path, into: HFWeights) -> None:
    try:
        raw = load_file(str(path))
    except Exception as exc:  # bfloat16 has no NumPy dtype: go through torch if available
        kind = not_safetensors_kind(path)
        if kind is not None:  # e.g. a Git LFS pointer left by a clone without `git lfs pull`
            raise ValueError(f"{path} is not a safetensors file ({kind})") from None
        try:
            from safetensors.torch import load_file as load_torch  # needs torch (optional)
        except ImportError:
            raise ValueError(f"cannot read {path} ({exc}); bfloat16 weights need torch "
                             "installed") from None
        try:
            raw = load_torch(str(path))
        except Exception as exc2:
            raise ValueError(f"{path} is not a readable safetensors file ({exc2})") from None
    _read_tensors(path, raw, into)


def read_torch_bin(path: Path, mmap: bool = False) -> dict[str, Any]:
    """The tensors of a ``pytorch_model.bin`` (torch tensors by name), read with
    ``weights_only=True``: any pickled object other than tensors is refused.

    ``mmap=True`` maps the file instead of reading it: a tensor's bytes are read from disk
    only when used, so a caller that needs two matrices of a 500 MB file pays for those two.
    (Files in torch's legacy, non-zip format cannot be mapped and are read whole.)
    """
    try:
        import torch  # heavy optional dependency: only for pytorch_model.bin
    except ImportError:
        raise ImportError(f"{path} is a PyTorch pickle and torch is not installed; install "
                          "torch, or convert the folder to model.safetensors") from None
    try:
        with warnings.catch_warnings():  # torch's notes on pickles are not the user's business
            warnings.simplefilter("ignore")
            try:
                raw = torch.load(str(path), map_location="cpu", weights_only=True, mmap=mmap)
            except RuntimeError:
                if not mmap:
                    raise
                raw = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ValueError(f"refusing to load {path}: it is not a plain tensor file ({exc})"
                         ) from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path} holds a {type(raw).__name__}, expected a state dict")
    return raw


def _load_bin(path: Path, into: HFWeights) -> None:
    try:
        raw = read_torch_bin(path)
    except ImportError as exc:  # import-hf reports every unreadable input as a ValueError
        raise ValueError(str(exc)) from None
    _read_tensors(path, raw, into)


def load_hf_weights(folder: Path) -> HFWeights:
    """All tensors of a Hugging Face model folder, by name, each checked in its own file
    (floating point, finite: an error names the file and the tensor), with notes.

    Looks for, in order: ``model.safetensors``, ``model.safetensors.index.json`` (shards),
    ``pytorch_model.bin``, ``pytorch_model.bin.index.json``.
    """
    tensors = HFWeights()
    for index_name, loader in (("model.safetensors", _load_safetensors),
                               ("pytorch_model.bin", _load_bin)):
        single = folder / index_name
        if single.is_file():
            loader(single, tensors)
            return tensors
        index = folder / f"{index_name}.index.json"
        if index.is_file():
            weight_map = read_json(index, "weight index").get("weight_map", {})
            for shard in sorted(set(weight_map.values())):
                loader(folder / shard, tensors)
            return tensors
    present = ", ".join(sorted(p.name for p in folder.iterdir())) or "nothing"
    raise FileNotFoundError(f"{folder} has no model weights (looked for model.safetensors and "
                            f"pytorch_model.bin, with or without an .index.json); it holds: "
                            f"{present}")


def check_layers_and_values(hf: dict[str, np.ndarray], layer_prefix: str, n_layer: int,
                            config_key: str, where: str) -> None:
    """Before anything is sized by config.json: its layer count against the layers the weights
    hold (``layer_prefix`` + index, e.g. ``transformer.h.``), and every float tensor finite."""
    pattern = re.compile(re.escape(layer_prefix) + r"(\d+)\.")
    layers = {int(m.group(1)) for key in hf for m in [pattern.match(key)] if m}
    if layers != set(range(n_layer)):
        raise ValueError(f"{where}: config.json says {config_key}={n_layer} but the weights "
                         f"hold {len(layers)} layer(s); the folder is inconsistent")
    for key, value in hf.items():
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise ValueError(f"{where}: tensor {key!r} holds NaN or Inf values; the weights "
                             "are unusable")


def build_with_state(model_cls: Any, config: Any, state: dict[str, np.ndarray]) -> Any:
    """``model_cls(config)`` holding exactly ``state``; float64 weights stay float64,
    so a converted checkpoint is not silently narrowed."""
    model = model_cls(config, rng=np.random.default_rng(0))
    params = dict(model.named_parameters())
    for name, value in state.items():
        if params[name].data.dtype != value.dtype:
            params[name].data = value.copy()
    model.load_state_dict(state, strict=True)
    return model


# ----------------------------------------------------------------------------- checkpoints
def resolve_checkpoint(path: str | os.PathLike) -> tuple[Path, Path | None]:
    """(weights file, tokenizer file or None) for a checkpoint file or a run folder.

    A run folder (``minimodel train --out DIR``) holds ``model.safetensors`` and
    ``tokenizer.json`` (minimodel's own tokenizer format). As in ``minimodel generate``, the
    tokenizer of a checkpoint file is the ``tokenizer.json`` beside it, if there is one.
    """
    path = Path(path)
    if path.is_dir():
        weights = path / "model.safetensors"
        if not weights.is_file():
            present = ", ".join(sorted(p.name for p in path.iterdir())) or "nothing"
            hint = (" (it looks like a Hugging Face folder: use `minimodel import-hf`)"
                    if (path / "config.json").is_file() else "")
            raise FileNotFoundError(f"run folder {path} has no model.safetensors{hint}; it "
                                    f"holds: {present}")
    else:
        weights = require_file(path, "checkpoint")
    tok = weights.parent / "tokenizer.json"
    return weights, tok if tok.is_file() else None
