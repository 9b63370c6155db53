"""Find a model's weight files and read single tensors from them, without loading the rest.

What ``minimodel doctor PATH`` accepts, and where the weights are then looked for:

    a minimodel run folder      DIR/model.safetensors (+ DIR/tokenizer.json, DIR/checkpoints/)
    a minimodel checkpoint      DIR/checkpoints/step-N/ (its tokenizer is the run's, DIR/)
    a Hugging Face folder       DIR/config.json + model.safetensors, or the shards named by
                                model.safetensors.index.json, or pytorch_model.bin(.index.json)
    a safetensors file          the file itself (a minimodel checkpoint when its metadata says so)

safetensors files are opened memory-mapped (``safe_open(framework="numpy")``) and only the
tensors a check asks for are read: the header alone gives every name, dtype and shape, so a
GPT-2-small folder costs its embedding matrix, not its 124 M parameters. NumPy has no
bfloat16, so a BF16 tensor is read as raw 16-bit words and widened: a bfloat16 number is the
top half of a float32, so ``uint32(word) << 16`` viewed as float32 is its exact value.
``pytorch_model.bin`` is a pickle: in torch's zip format it is read without torch, by a
restricted unpickler, its storages memory-mapped (:mod:`.torch_pickle`); any other pickle only
with ``torch.load(weights_only=True)`` (tensors, nothing executable), when torch is installed,
memory-mapped (``mmap=True``). Either way only the tensors a check reads are brought into
memory. A tied model's
``.bin`` lists the embedding under both names but stores its bytes once (one storage): the
doctor checks that with :meth:`ModelFiles.shares_storage`.
"""

from __future__ import annotations

import json
import shlex
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minimodel._fileio import require_file
from minimodel.doctor.torch_pickle import NotPlain, PickledTensor, read_pickled
from minimodel.interop._files import read_json, read_torch_bin
from minimodel.messages import PhraseError, phrase

SAFETENSORS = "model.safetensors"
BIN = "pytorch_model.bin"
CONFIG = "config.json"
MINIMODEL_META = "minimodel.config"
CHECKPOINTS = "checkpoints"  # a run's checkpoint directories: RUN/checkpoints/step-N
# (config.json, its folder, whether torch read the weights: this process has imported torch)
ConfigHook = Callable[[dict[str, Any], Path, bool], None]
TORCH_NOTE = "pytorch_model.bin read with torch.load(mmap=True, weights_only=True)"
PICKLE_NOTE = "pytorch_model.bin read without torch (tensors only, memory-mapped)"
NUMPY_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16}


@dataclass
class TensorInfo:
    """Where one tensor lives and what it is (from the file header; no data read)."""

    file: Path
    dtype: str           # safetensors spelling: F32, BF16, ...
    shape: tuple[int, ...]


@dataclass
class ModelFiles:
    """A model on disk: its kind, its config and an index of its tensors by name."""

    path: Path                      # what the user gave
    folder: Path                    # where the tokenizer and config are looked for
    kind: str                       # "minimodel", "hf" or "safetensors"
    config: dict[str, Any]          # config.json, or a minimodel checkpoint's stored config
    tensors: dict[str, TensorInfo]
    metadata: dict[str, str] = field(default_factory=dict)
    loaded: dict[str, Any] | None = None  # pytorch_model.bin: torch tensors, memory-mapped
    note: str | None = None         # e.g. "read with torch.load(weights_only=True)"

    def read(self, name: str) -> np.ndarray:
        """Tensor ``name`` as a float32 (or float64) array, whatever its stored precision."""
        if self.loaded is not None:
            tensor = self.loaded[name]
            if isinstance(tensor, PickledTensor):
                return tensor.read()
            return tensor.float().numpy() if tensor.is_floating_point() else tensor.numpy()
        return read_tensor(self.tensors[name], name)

    def shares_storage(self, a: str, b: str) -> bool:
        """Are tensors ``a`` and ``b`` one block of bytes in the file (a pickle's shared storage)?"""
        if self.loaded is None:
            return False  # safetensors never shares: two names are two copies
        ta, tb = self.loaded[a], self.loaded[b]
        if isinstance(ta, PickledTensor):
            return (ta.file, ta.storage) == (tb.file, tb.storage)
        return ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()


def read_tensor(info: TensorInfo, name: str) -> np.ndarray:
    from safetensors import safe_open

    if info.dtype == "BF16":
        return _read_bf16(info.file, name)
    if info.dtype not in NUMPY_DTYPES:
        raise PhraseError(phrase("doctor.error.dtype", file=info.file, name=repr(name),
                                 dtype=info.dtype))
    with safe_open(str(info.file), framework="numpy") as handle:
        value = handle.get_tensor(name)
    return value.astype(np.float32) if value.dtype == np.float16 else value


def _read_bf16(path: Path, name: str) -> np.ndarray:
    """A BF16 tensor widened to float32, from the file's bytes (memory-mapped)."""
    header, start = _raw_header(path)
    entry = header[name]
    begin, end = entry["data_offsets"]
    words = np.memmap(path, dtype="<u2", mode="r", offset=start + begin,
                      shape=((end - begin) // 2,))
    widened = (words.astype(np.uint32) << 16).view(np.float32)
    return widened.reshape(entry["shape"])


def _raw_header(path: Path) -> tuple[dict[str, Any], int]:
    """(header JSON, offset of the data) of a safetensors file: 8-byte length, then JSON."""
    with open(path, "rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
    return header, 8 + length


def _index_safetensors(path: Path) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    from safetensors import safe_open

    from minimodel.io import not_safetensors_kind

    out = {}
    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = handle.metadata() or {}
            for key in handle.keys():
                piece = handle.get_slice(key)
                out[key] = TensorInfo(path, piece.get_dtype(), tuple(piece.get_shape()))
    except Exception as exc:  # safetensors raises its own error types for bad headers
        why = not_safetensors_kind(path) or phrase("doctor.error.corrupt", error=exc)
        raise PhraseError(phrase("doctor.error.not_safetensors", path=path, why=why)) from None
    return out, metadata


def _load_bins(paths: list[Path]) -> tuple[dict[str, Any], bool]:
    """(every tensor of the pickles by name, whether torch read them): NumPy maps plain
    zip-format pickles (:mod:`.torch_pickle`); anything else goes to torch.load."""
    loaded: dict[str, Any] = {}
    try:
        for p in paths:
            loaded.update(read_pickled(p))
        return loaded, False
    except NotPlain:
        pass
    for p in paths:  # torch tensors, weights_only, memory-mapped: read when used
        loaded.update(read_torch_bin(p, mmap=True))
    return loaded, True


def _hf_folder(folder: Path, on_config: ConfigHook | None = None) -> ModelFiles:
    config = read_json(folder / CONFIG, "model config") if (folder / CONFIG).is_file() else {}
    hook = on_config or (lambda config, folder, torch_read: None)
    tensors: dict[str, TensorInfo] = {}
    if (folder / SAFETENSORS).is_file():
        hook(config, folder, False)  # before the header: the hook may start slow work
        tensors, _ = _index_safetensors(folder / SAFETENSORS)
        return ModelFiles(folder, folder, "hf", config, tensors)
    index = folder / f"{SAFETENSORS}.index.json"
    if index.is_file():
        hook(config, folder, False)
        weight_map = read_json(index, "shard index").get("weight_map") or {}
        for shard in sorted(set(weight_map.values())):
            found, _ = _index_safetensors(require_file(folder / shard, "shard"))
            tensors.update(found)
        return ModelFiles(folder, folder, "hf", config, tensors, note="sharded safetensors")
    bins = [folder / BIN] if (folder / BIN).is_file() else []
    if not bins and (folder / f"{BIN}.index.json").is_file():
        weight_map = read_json(folder / f"{BIN}.index.json", "shard index").get("weight_map")
        bins = [folder / s for s in sorted(set((weight_map or {}).values()))]
    if bins:
        loaded, torch_read = _load_bins(bins)
        hook(config, folder, torch_read)
        tensors = {k: TensorInfo(bins[0], str(v.dtype), tuple(v.shape)) for k, v in loaded.items()}
        note = TORCH_NOTE if torch_read else PICKLE_NOTE
        return ModelFiles(folder, folder, "hf", config, tensors, loaded=loaded, note=note)
    hook(config, folder, False)
    present = ", ".join(sorted(p.name for p in folder.iterdir())[:12]) or \
        phrase("doctor.error.nothing")
    from minimodel.training.run_files import RUN_FILE  # only here: the doctor imports no training

    if (folder / RUN_FILE).is_file():  # `train | head -3`: stopped before its first checkpoint
        raise PhraseError(phrase("doctor.error.run_never_started", folder=folder, present=present,
                                 command=shlex.join(["minimodel", "train", "--out", str(folder)])))
    raise PhraseError(phrase("doctor.error.no_weights", folder=folder, safetensors=SAFETENSORS,
                             bin=BIN, present=present))


def open_model(path: str | Path, on_config: ConfigHook | None = None) -> ModelFiles:
    """The model at ``path`` (a run folder, a Hugging Face folder or a safetensors file).
    ``on_config(config, folder, torch_read)`` is called with a Hugging Face folder's config.json
    before its weights are read (for pickles, once it is known whether torch must read them:
    ``torch_read``)."""
    path = Path(path)
    if path.is_dir():
        if (path / CONFIG).is_file() or not (path / SAFETENSORS).is_file():
            return _hf_folder(path, on_config)
        weights = path / SAFETENSORS
    else:
        weights = require_file(path, "model file")
        if weights.name == BIN or weights.suffix == ".bin":
            return _hf_folder(weights.parent, on_config)
    tensors, metadata = _index_safetensors(weights)
    if MINIMODEL_META in metadata:
        try:
            config = json.loads(metadata[MINIMODEL_META])
        except json.JSONDecodeError:
            config = {}
        # RUN/checkpoints/step-N/model.safetensors: the tokenizer and corpus are the run's
        folder = weights.parent
        if folder.parent.name == CHECKPOINTS and not (folder / "tokenizer.json").is_file():
            folder = folder.parent.parent
        return ModelFiles(path, folder, "minimodel", config, tensors, metadata)
    config_path = weights.parent / CONFIG
    config = read_json(config_path, "model config") if config_path.is_file() else {}
    return ModelFiles(path, weights.parent, "safetensors", config, tensors, metadata)
