"""Run ``minimodel <args>`` in this process, killed at one point of a checkpoint commit.

    python fault_runner.py <point>[@n] <minimodel arguments...>

The n-th time (default the first) the run reaches ``<point>`` the process ends with
``os._exit(137)``, as SIGKILL would: no ``finally``, no cleanup. The points, in the order one
commit (``training/checkpoint.commit``) and the end of a run pass them:

    npz      train_state.npz written into the staging folder
    model    model.safetensors written into the staging folder
    state    train_state.json written: the staging folder is complete
    rename   the staging folder renamed to checkpoints/step-N, LATEST not yet replaced
    latest   LATEST replaced (the commit point)
    publish  DIR/model.safetensors published, older checkpoints not yet swept
    plot     (end of the run) loss.png written, summary.json not yet

Why a runner rather than a hook in the library: the faults are injected by wrapping the
functions the commit calls, from the test side, so ``minimodel`` carries no test code.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

from minimodel.training import checkpoint, run_files

POINTS = ("npz", "model", "state", "rename", "latest", "publish", "plot")


def install(spec: str) -> None:
    """Wrap the commit's functions so that the process dies at ``spec`` (``point[@n]``)."""
    point, _, nth = spec.partition("@")
    if point not in POINTS:
        raise SystemExit(f"unknown fault point {point!r}; choose one of {', '.join(POINTS)}")
    wanted, seen = int(nth or 1), {"count": 0}

    def reached(name: str) -> None:
        if name == point:
            seen["count"] += 1
            if seen["count"] == wanted:
                os._exit(137)

    def after(fn: Callable[..., Any], name_of: Callable[..., str | None]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            before = name_of(*args, before=True)
            if before:
                reached(before)
            result = fn(*args, **kwargs)
            name = name_of(*args, before=False)
            if name:
                reached(name)
            return result
        return wrapper

    def by_file(path: Any, *_: Any, before: bool) -> str | None:
        name = Path(path).name
        if name == checkpoint.LATEST:
            return "rename" if before else "latest"
        if before:
            return None
        return {checkpoint.STATE_NPZ: "npz", checkpoint.STATE_JSON: "state"}.get(name)

    checkpoint.atomic_write_bytes = after(checkpoint.atomic_write_bytes, by_file)
    checkpoint.atomic_write_json = after(checkpoint.atomic_write_json, by_file)
    checkpoint.publish_model = after(checkpoint.publish_model,
                                     lambda *a, before: None if before else "publish")
    run_files.save_model = after(run_files.save_model,
                                 lambda *a, before: None if before else "model")
    run_files.plot_run = after(run_files.plot_run,
                               lambda *a, before: None if before else "plot")


if __name__ == "__main__":
    from minimodel.cli import main

    install(sys.argv[1])
    sys.exit(main(sys.argv[2:]))
