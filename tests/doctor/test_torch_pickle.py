"""pytorch_model.bin read with NumPy (doctor.torch_pickle): the values torch.load gives, shared
storages seen, anything but plain tensors refused (and then read by torch, or refused)."""

from __future__ import annotations

import pickle
import zipfile

import numpy as np
import pytest

from minimodel.doctor.tensors import open_model
from minimodel.doctor.torch_pickle import NotPlain, read_pickled

torch = pytest.importorskip("torch")


def _as_numpy(t):
    return t.float().numpy() if t.is_floating_point() else t.numpy()


def test_the_values_are_torch_loads(tmp_path):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(6, 4, generator=g)
    state = {"f32": base, "f64": torch.randn(3, 2, dtype=torch.float64, generator=g),
             "f16": base.half(), "bf16": base.bfloat16(), "ids": torch.arange(5),
             "transposed": base.t(),            # (4, 6), stride (1, 4): not contiguous
             "rows": base[2:5],                 # a storage offset of 8 elements
             "tied": base, "scalar": torch.tensor(3.5)}
    path = tmp_path / "pytorch_model.bin"
    torch.save(state, path)
    read = read_pickled(path)
    assert sorted(read) == sorted(state)
    for name, tensor in state.items():
        got = read[name].read()
        want = _as_numpy(tensor)
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert (read["rows"].offset, read["transposed"].stride) == (8, (1, 4))
    assert read["tied"].storage == read["f32"].storage != read["f64"].storage
    files = open_model(tmp_path)  # a folder with only the pickle: read without torch
    assert files.shares_storage("tied", "f32") and not files.shares_storage("f32", "f16")


class Evil:
    def __reduce__(self):
        return (print, ("ran code from the file",))


@pytest.mark.parametrize("make", ["global", "legacy", "compressed"])
def test_anything_but_plain_zip_tensors_is_left_to_torch(tmp_path, capsys, make):
    path = tmp_path / "pytorch_model.bin"
    state = {"w": torch.ones(2, 3)}
    if make == "global":
        state["x"] = Evil()
        torch.save(state, path)
    elif make == "legacy":
        torch.save(state, path, _use_new_zipfile_serialization=False)
    else:
        torch.save(state, tmp_path / "plain.bin")
        with zipfile.ZipFile(tmp_path / "plain.bin") as src, \
                zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info))
    with pytest.raises(NotPlain):
        read_pickled(path)
    assert "ran code" not in capsys.readouterr().out
    if make == "global":  # torch.load(weights_only=True) refuses it too: the doctor says so
        with pytest.raises(ValueError, match="refusing to load"):
            open_model(tmp_path)
    elif make == "legacy":
        files = open_model(tmp_path)
        assert "torch.load" in files.note
        np.testing.assert_array_equal(files.read("w"), np.ones((2, 3), np.float32))


def test_a_pickle_that_is_not_a_dict_of_tensors_is_refused(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    torch.save([torch.ones(2)], path)
    with pytest.raises(NotPlain):
        read_pickled(path)
    with zipfile.ZipFile(path, "a") as archive:  # a second data.pkl: which one is meant?
        archive.writestr("other/data.pkl", pickle.dumps({}))
    with pytest.raises(NotPlain):
        read_pickled(path)


@pytest.mark.parametrize("offset, shape, stride", [
    (0, (2, 3), (3, -1)),      # a negative stride walks before the storage
    (-4, (2,), (1,)),          # a negative offset
    (4, (2, 3), (3, 1)),       # the last element past the storage's 6
    (0, (7,), (1,)),           # more elements than the storage holds
    (0, (2, 3), (3,)),         # a stride per axis missing
])
def test_a_view_outside_its_storage_is_refused(tmp_path, offset, shape, stride):
    """A crafted data.pkl whose tensor would read outside its storage (outside the mapped
    file) is refused before any array is made."""
    import collections
    import io

    path = tmp_path / "pytorch_model.bin"
    torch.save({"w": torch.ones(2, 3)}, path)
    storage = object()

    class Crafted:
        def __reduce__(self):
            return (torch._utils._rebuild_tensor_v2,
                    (storage, offset, shape, stride, False, collections.OrderedDict()))

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return ("storage", torch.FloatStorage, "0", "cpu", 6) if obj is storage else None

    crafted = io.BytesIO()
    Pickler(crafted, protocol=2).dump({"w": Crafted()})
    with zipfile.ZipFile(path) as src:
        entries = [(info, src.read(info)) for info in src.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as dst:
        for info, data in entries:
            dst.writestr(info, crafted.getvalue() if info.filename.endswith("data.pkl")
                         else data)
    with pytest.raises(NotPlain):
        read_pickled(path)
