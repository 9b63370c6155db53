"""Checkpoints committed as one unit: a kill at any moment leaves a run that ``--resume`` continues.

A checkpoint is three files that must belong together — the weights, the optimizer's arrays
and the run state (step, RNG, accumulators). Written side by side, a kill between two of them
would leave a mixture no one can resume. So each checkpoint is a directory of its own, and a
small pointer file says which one is current::

    DIR/checkpoints/step-000400/model.safetensors    weights (mm.save format)
                               train_state.npz      optimizer arrays (np.savez, no pickle)
                               train_state.json     step, RNG, accumulators, config
    DIR/checkpoints/LATEST                          {"step": 400, "dir": "step-000400"}
    DIR/model.safetensors                           the latest weights, for generate/export

Commit protocol (``commit``):

1. write the three files into ``checkpoints/.tmp-step-000400-<pid>/`` (each fsynced);
2. rename that directory to ``checkpoints/step-000400`` (atomic on one file system);
3. replace ``LATEST`` atomically — *this* is the commit point;
4. publish the weights as ``DIR/model.safetensors`` (hard link + atomic rename, else a copy);
5. delete older checkpoint directories and any leftover temporary ones.

A kill before step 3 leaves ``LATEST`` naming the previous complete checkpoint; after it, the
new one. Leftovers are removed by the next commit (or :func:`sweep`). A kill after step 3 of
the run's last checkpoint leaves a run whose checkpoint is final but whose published model,
plot and summary may be missing or stale: ``--resume`` publishes and finishes it
(``Trainer.run``). The tests kill the commit between every two steps.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_bytes, atomic_write_json, fsync_dir
from minimodel.messages import PhraseError, phrase
from minimodel.training.config import TrainConfig
from minimodel.training.state import rng_from_json

CHECKPOINTS = "checkpoints"
LATEST = "LATEST"
STATE_JSON = "train_state.json"
STATE_NPZ = "train_state.npz"
MODEL_FILE = "model.safetensors"
STATE_VERSION = 2


def step_dir_name(step: int) -> str:
    return f"step-{step:06d}"


def commit(out_dir: Path, step: int, optimizer_sd: dict[str, Any], info: dict[str, Any],
           save_model: Callable[[Path], Any]) -> Path:
    """Write a checkpoint for ``step`` and make it the current one (see the module docstring).

    ``save_model(path)`` writes the weights to ``path``. Returns the checkpoint directory.
    """
    root = out_dir / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    name = step_dir_name(step)
    tmp = root / f".tmp-{name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        arrays, meta = optimizer_state_to_files(optimizer_sd)
        arrays["step"] = np.array(step, dtype=np.int64)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        atomic_write_bytes(tmp / STATE_NPZ, buffer.getvalue())
        save_model(tmp / MODEL_FILE)
        atomic_write_json(tmp / STATE_JSON, {"version": STATE_VERSION, "step": step, **info,
                                             "optimizer": meta}, indent=1)
        final = root / name
        if final.exists():  # a checkpoint of this step from a run cut short before LATEST
            shutil.rmtree(final)
        os.replace(tmp, final)
        fsync_dir(root)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename and str(tmp) in str(exc.filename):
            # Name the file where it was going, not the staging folder that no longer exists.
            exc.filename = str(exc.filename).replace(str(tmp), str(root / name))
        raise
    atomic_write_json(root / LATEST, {"step": step, "dir": name})  # the commit point
    publish_model(final / MODEL_FILE, out_dir / MODEL_FILE)
    sweep(out_dir)
    return final


def publish_model(source: Path, target: Path) -> None:
    """Make ``target`` the same file as ``source``, atomically (link, else copy, then rename)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        try:
            os.link(source, tmp)
        except OSError:  # no hard links here (another file system, Windows shares)
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def latest(out_dir: Path) -> Path | None:
    """The current checkpoint directory, or None when the run has none."""
    pointer = out_dir / CHECKPOINTS / LATEST
    if not pointer.is_file():
        return None
    try:
        data = json.loads(pointer.read_text(encoding="utf-8"))
        folder = out_dir / CHECKPOINTS / str(data["dir"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{pointer} is damaged ({exc}); it names the current checkpoint of "
                         f"the run in {out_dir}. Restore it or start the run again with "
                         "--force") from None
    if not folder.is_dir():
        raise ValueError(f"{pointer} names {folder}, which does not exist; the run's "
                         "checkpoints were moved or deleted. Start the run again with --force")
    return folder


def sweep(out_dir: Path) -> None:
    """Remove every checkpoint directory but the current one, and temporary leftovers."""
    root = out_dir / CHECKPOINTS
    if not root.is_dir():
        return
    try:
        keep = latest(out_dir)
    except ValueError:
        return  # never delete anything next to a damaged pointer
    for child in root.iterdir():
        if child.is_dir() and child != keep and (child.name.startswith(("step-", ".tmp-"))):
            shutil.rmtree(child, ignore_errors=True)
    for child in out_dir.glob(f".{MODEL_FILE}.*.tmp"):
        child.unlink(missing_ok=True)


def read(out_dir: Path) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """(run info, optimizer state_dict, weights file) of the current checkpoint.

    Runs written before checkpoints had directories (state files beside model.safetensors)
    are read too.
    """
    folder = latest(out_dir)
    if folder is None:
        if (out_dir / STATE_JSON).is_file():  # the layout of minimodel <= 0.1
            return _read_files(out_dir, accept_versions=(1,)) + (out_dir / MODEL_FILE,)
        raise PhraseError(phrase("train.nothing_to_resume_no_checkpoint", out=out_dir))
    return _read_files(folder, accept_versions=(STATE_VERSION,)) + (folder / MODEL_FILE,)


def read_step(folder: Path) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """(run info, optimizer state_dict, weights file) of one checkpoint directory
    (``DIR/checkpoints/step-000400``), whichever checkpoint ``LATEST`` names."""
    return _read_files(folder, accept_versions=(STATE_VERSION,)) + (folder / MODEL_FILE,)


def _read_files(folder: Path, accept_versions: tuple[int, ...]
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    json_path, npz_path = folder / STATE_JSON, folder / STATE_NPZ
    for path in (json_path, npz_path, folder / MODEL_FILE):
        if not path.is_file():
            raise ValueError(f"the checkpoint in {folder} is incomplete: {path.name} is "
                             "missing; the run cannot be resumed (start it again with --force)")
    try:
        info = json.loads(json_path.read_text(encoding="utf-8"))
        if not isinstance(info, dict):
            raise ValueError("not a JSON object")
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{json_path} is damaged ({exc}); the run cannot be resumed") from None
    if info.get("version") not in accept_versions:
        raise ValueError(f"{json_path} has state version {info.get('version')!r}; this "
                         f"minimodel resumes version {accept_versions[-1]}")
    missing = [k for k in ("step", "config", "rng", "accumulators", "elapsed", "optimizer")
               if k not in info]
    if missing:
        raise ValueError(f"{json_path} is damaged: it lacks {', '.join(missing)}")
    problem = run_state_problem(info)
    if problem:
        raise ValueError(f"{json_path} is damaged: {problem}; the run cannot be resumed (nothing "
                         "was changed)")
    try:
        with np.load(npz_path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except Exception as exc:  # noqa: BLE001 - zipfile/numpy raise many kinds for a bad file
        raise ValueError(f"{npz_path} is damaged ({exc}); the run cannot be resumed") from None
    if int(arrays.get("step", -1)) != info["step"]:
        raise ValueError(f"{npz_path} is from step {int(arrays.get('step', -1))} but "
                         f"{json_path} from step {info['step']}; the checkpoint is damaged")
    return info, optimizer_state_from_files(arrays, info.pop("optimizer"))


ACCUMULATORS = ("loss_sum", "loss_n", "tokens", "compute_s", "total_tokens", "total_compute_s")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def run_state_problem(info: dict[str, Any]) -> str | None:
    """What is wrong with the types and ranges of a run state, or None. Checked when the state
    is read, before a resume writes anything (a string ``steps`` once surfaced as a TypeError
    deep in the loop, after run.json had been rewritten)."""
    step = info["step"]
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        return f"'step' must be an integer >= 0, got {step!r}"
    if not isinstance(info["config"], dict):
        return f"'config' must be an object, got {type(info['config']).__name__}"
    try:
        config = TrainConfig.from_dict(info["config"])
        config._validate()
    except (TypeError, ValueError) as exc:
        return f"its config is invalid ({exc})"
    if step > config.steps:
        return f"'step' is {step}, beyond the run's {config.steps} steps"
    try:
        rng_from_json(info["rng"])
    except ValueError as exc:
        return str(exc).removesuffix("; the run state is damaged")
    acc = info["accumulators"]
    if not isinstance(acc, dict) or any(not _is_number(acc.get(k)) for k in ACCUMULATORS):
        return f"'accumulators' must hold the numbers {', '.join(ACCUMULATORS)}"
    if not _is_number(info["elapsed"]) or info["elapsed"] < 0:
        return f"'elapsed' must be a number of seconds >= 0, got {info['elapsed']!r}"
    return None


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
    try:
        state: dict[int, dict[str, Any]] = {int(i): dict(s) for i, s in meta["scalars"].items()}
        for key, value in arrays.items():
            if not key.startswith("opt."):
                continue
            _, index, name = key.split(".", 2)
            state.setdefault(int(index), {})[name] = value
        groups = [{k: (tuple(v) if k == "betas" else v) for k, v in g.items()}
                  for g in meta["param_groups"]]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"the saved optimizer state is damaged ({exc!r})") from None
    return {"state": state, "param_groups": groups}
