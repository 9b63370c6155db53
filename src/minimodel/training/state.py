"""The training-state files that make ``--resume`` exact.

A run directory holds, besides ``model.safetensors``:

* ``train_state.npz``: the optimizer's arrays (AdamW's exp_avg / exp_avg_sq per parameter),
  written with ``np.savez`` and read with ``allow_pickle=False``;
* ``train_state.json``: step, the batch sampler's RNG state (PCG64: two big integers),
  optimizer scalars and hyper-parameters, running loss sums, elapsed time and the config.

Resuming from these reproduces the uninterrupted run bit for bit: the weights, the optimizer
moments, the step counter (hence the learning rate) and the next batch are all restored.

Write order: npz, then the model, then the JSON *last*. Each file is written atomically and
all three carry the step, so a crash between two writes is detected on resume instead of
silently mixing states.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_bytes, atomic_write_json

STATE_JSON = "train_state.json"
STATE_NPZ = "train_state.npz"
STATE_VERSION = 1


def optimizer_state_to_files(sd: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Split ``Optimizer.state_dict()`` into arrays (for npz) and JSON-ready scalars."""
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for index, entry in sd["state"].items():
        for name, value in entry.items():
            if isinstance(value, np.ndarray):
                arrays[f"opt.{index}.{name}"] = value
            else:
                scalars.setdefault(str(index), {})[name] = value
        scalars.setdefault(str(index), {})
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()}
              for g in sd["param_groups"]]
    return arrays, {"scalars": scalars, "param_groups": groups}


def optimizer_state_from_files(arrays: dict[str, np.ndarray], meta: dict[str, Any]
                               ) -> dict[str, Any]:
    """Inverse of :func:`optimizer_state_to_files`."""
    state: dict[int, dict[str, Any]] = {int(i): dict(s) for i, s in meta["scalars"].items()}
    for key, value in arrays.items():
        if not key.startswith("opt."):
            continue
        _, index, name = key.split(".", 2)
        state.setdefault(int(index), {})[name] = value
    groups = [{k: (tuple(v) if k == "betas" else v) for k, v in g.items()}
              for g in meta["param_groups"]]
    return {"state": state, "param_groups": groups}


def write_checkpoint(out_dir: Path, step: int, optimizer_sd: dict[str, Any],
                     info: dict[str, Any], save_model: Callable[[], Any]) -> None:
    """Write the npz, then the model (``save_model()``), then the JSON marking step done."""
    arrays, meta = optimizer_state_to_files(optimizer_sd)
    arrays["step"] = np.array(step, dtype=np.int64)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(out_dir / STATE_NPZ, buffer.getvalue())
    save_model()
    payload = {"version": STATE_VERSION, "step": step, **info, "optimizer": meta}
    atomic_write_json(out_dir / STATE_JSON, payload, indent=1)


def read_state(out_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(info from the JSON, optimizer state_dict), checking the files belong together."""
    json_path, npz_path = out_dir / STATE_JSON, out_dir / STATE_NPZ
    if not json_path.is_file() or not npz_path.is_file():
        raise ValueError(f"nothing to resume in {out_dir}: {STATE_JSON} / {STATE_NPZ} are "
                         "missing (start the run without --resume, or point --out at the "
                         "directory of an interrupted run)")
    try:
        info = json.loads(json_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{json_path} is corrupt ({exc}); the run cannot be resumed") from None
    if info.get("version") != STATE_VERSION:
        raise ValueError(f"{json_path} has state version {info.get('version')!r}; this "
                         f"minimodel resumes version {STATE_VERSION}")
    with np.load(npz_path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    if int(arrays.get("step", -1)) != info["step"]:
        raise ValueError(f"{npz_path} is from step {int(arrays.get('step', -1))} but "
                         f"{json_path} from step {info['step']}: the last save was cut short; "
                         "start the run again without --resume")
    return info, optimizer_state_from_files(arrays, info.pop("optimizer"))


def rng_state_to_json(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's full state (PCG64 integers are exact in JSON)."""
    return rng.bit_generator.state


def rng_from_json(state: dict[str, Any]) -> np.random.Generator:
    name = state.get("bit_generator")
    if name != "PCG64":
        raise ValueError(f"saved RNG is {name!r}; expected PCG64")
    bitgen = np.random.PCG64()
    bitgen.state = state
    return np.random.Generator(bitgen)
