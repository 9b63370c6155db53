"""A ``pytorch_model.bin``'s tensors read with NumPy, memory-mapped, without importing torch.

torch saves a state dict as a zip archive (``torch.save``'s format since torch 1.6)::

    NAME/data.pkl     the pickle: {tensor name: _rebuild_tensor_v2(storage, offset, shape,
                      stride, ...)}, each storage a persistent id
                      ("storage", torch.FloatStorage, key, "cpu", numel)
    NAME/data/KEY     the bytes of storage KEY, stored uncompressed
    NAME/byteorder    "little"

A tensor is then ``storage[offset:]`` viewed with its shape and stride (in elements); two names
that share a storage key share their bytes (a tied model's embedding and head). Reading it
needs no torch: the pickle is read by an unpickler that knows exactly three callables (the
rebuild function, an ``OrderedDict``, the storage types) and refuses anything else, so no code
from the file runs; and each storage is a ``np.memmap`` of the archive at its data's offset, so
only the rows a check touches are read from disk. Anything else (the legacy non-zip format,
compressed entries, another byte order, other objects) raises :class:`NotPlain`, and the caller
reads the file with ``torch.load(weights_only=True)`` instead.
"""

from __future__ import annotations

import collections
import pickle
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# torch's storage type -> the NumPy dtype of its elements ("bf16": raw 16-bit words, widened)
STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
            "BFloat16Storage": "bf16", "LongStorage": np.int64, "IntStorage": np.int32,
            "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
            "BoolStorage": np.bool_}
LOCAL_HEADER = 30  # bytes of a zip entry's local header before its name and extra field


class NotPlain(ValueError):
    """The file is not a zip-format state dict of plain tensors that NumPy can map."""


@dataclass(frozen=True)
class PickledTensor:
    """One tensor of the archive: where its elements are, not the elements."""

    file: Path
    storage: str                 # the storage's key: equal keys, the same bytes
    kind: str                    # the storage type, e.g. "FloatStorage"
    start: int                   # byte offset of the storage's data in the file
    numel: int                   # elements in the storage
    offset: int                  # the tensor's first element in the storage
    shape: tuple[int, ...]
    stride: tuple[int, ...]      # in elements

    @property
    def dtype(self) -> str:
        return self.kind.removesuffix("Storage")

    def is_floating_point(self) -> bool:
        return self.kind in ("FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage")

    def read(self) -> np.ndarray:
        """The tensor as an array, memory-mapped; floating point as float32 (what torch's
        ``tensor.float().numpy()`` gives: the torch path's values exactly)."""
        dtype = STORAGES[self.kind]
        words = np.dtype("<u2") if dtype == "bf16" else np.dtype(dtype).newbyteorder("<")
        flat = np.memmap(self.file, dtype=words, mode="r", offset=self.start,
                         shape=(self.numel,))
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset:], shape=self.shape,
            strides=tuple(s * words.itemsize for s in self.stride), writeable=False)
        if dtype == "bf16":  # a bfloat16 number is the top half of a float32
            return (view.astype(np.uint32) << 16).view(np.float32)
        return view.astype(np.float32) if dtype in (np.float16, np.float64) else view


class _Storage:
    def __init__(self, kind: str, key: str, numel: int) -> None:
        self.kind, self.key, self.numel = kind, key, numel


class _Unpickler(pickle.Unpickler):
    """Knows the rebuild function, OrderedDict and the storage types; refuses every other
    global, so unpickling runs no code named by the file."""

    def __init__(self, handle: Any, path: Path, starts: dict[str, int],
                 sizes: dict[str, int]) -> None:
        super().__init__(handle)
        self.path, self.starts, self.sizes = path, starts, sizes

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self._rebuild
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if module == "torch" and name in STORAGES:
            return name
        raise NotPlain(f"{module}.{name} is not a plain tensor")

    def persistent_load(self, pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and pid[1] in STORAGES and str(pid[2]) in self.starts):
            raise NotPlain(f"unknown storage {pid!r}")
        kind, key, numel = pid[1], str(pid[2]), int(pid[4])
        itemsize = 2 if STORAGES[kind] == "bf16" else np.dtype(STORAGES[kind]).itemsize
        if numel * itemsize > self.sizes[key]:
            raise NotPlain(f"storage {key} is shorter than its {numel} elements")
        return _Storage(kind, key, numel)

    def _rebuild(self, storage: _Storage, offset: int, shape: tuple, stride: tuple,
                 *_: Any) -> PickledTensor:
        if not isinstance(storage, _Storage):
            raise NotPlain("a tensor without a storage")
        # A view outside its storage would read memory outside the mapped file: refuse any
        # negative offset, size or stride, and any last element past the storage's end.
        if len(shape) != len(stride) or offset < 0 or min((*shape, *stride, 0)) < 0:
            raise NotPlain("a tensor with a negative offset, size or stride")
        last = offset + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else offset
        if last >= max(storage.numel, 1) and all(shape):
            raise NotPlain("a tensor beyond its storage")
        return PickledTensor(self.path, storage.key, storage.kind, self.starts[storage.key],
                             storage.numel, int(offset), tuple(map(int, shape)),
                             tuple(map(int, stride)))


def read_pickled(path: Path) -> dict[str, PickledTensor]:
    """The tensors of the zip-format ``torch.save`` file ``path`` by name (raises NotPlain)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise NotPlain(f"not a zip archive ({exc})") from None
    with archive, open(path, "rb") as raw:
        entries = {info.filename: info for info in archive.infolist()}
        pickles = [n for n in entries if n.endswith("/data.pkl")]
        if len(pickles) != 1:
            raise NotPlain("no single data.pkl")
        root = pickles[0][: -len("data.pkl")]
        order = entries.get(f"{root}byteorder")
        if order is not None and archive.read(order).strip() != b"little":
            raise NotPlain("big-endian storages")
        starts, sizes = {}, {}  # storage key -> its data's byte offset in the file, its bytes
        for name, info in entries.items():
            if name.startswith(f"{root}data/"):
                if info.compress_type != zipfile.ZIP_STORED:
                    raise NotPlain(f"{name} is compressed")
                raw.seek(info.header_offset)
                local = raw.read(LOCAL_HEADER)
                name_len, extra_len = struct.unpack("<HH", local[26:30])
                key = name[len(f"{root}data/"):]
                starts[key] = info.header_offset + LOCAL_HEADER + name_len + extra_len
                sizes[key] = info.file_size
        with archive.open(pickles[0]) as handle:
            try:
                state = _Unpickler(handle, path, starts, sizes).load()
            except NotPlain:
                raise
            except Exception as exc:  # noqa: BLE001 - a damaged pickle: torch.load says more
                raise NotPlain(f"unreadable pickle ({exc})") from None
    if not isinstance(state, dict) or \
            not all(isinstance(v, PickledTensor) for v in state.values()):
        raise NotPlain("not a state dict of tensors")
    return state
