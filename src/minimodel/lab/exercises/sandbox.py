"""Run a learner's solution in a separate, limited process.

Why a process and not ``exec``: a solution may loop forever, eat memory, print gigabytes or
call ``sys.exit``; none of that may take the judge (or the learner's terminal) down with it.

The child is ``python -I _child.py config.json`` in a fresh temp dir with a scrubbed
environment (no PYTHONPATH, one BLAS thread, HOME and TMPDIR in the temp dir) and ``setrlimit``
limits on CPU seconds, address space, file size and core dumps. Starting it in its own process
group, the wall-clock limit that kills that group and the output capture are
:func:`minimodel.lab.subprocess_runner.run_child`'s. Inputs travel as ``.npz`` files and come
back the same way, read with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_bytes, atomic_write_json, atomic_write_text
from minimodel.lab.exercises.cases import Case
from minimodel.lab.subprocess_runner import clean_env, run_child

try:  # POSIX only; elsewhere the wall-clock timeout is the only limit
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

GIB = 1024**3
AS_LIMIT = 4 * GIB            # plenty for NumPy on small cases
AS_LIMIT_TORCH = 16 * GIB     # torch maps large virtual regions at import time
FSIZE_LIMIT = 256 * 1024**2   # caps files the solution writes (its prints: run_child keeps a tail)
CHILD_SOURCE = Path(__file__).with_name("_child.py")


@dataclass
class ChildRun:
    """What came back from one run of the child."""

    events: list[dict[str, Any]]
    outputs: dict[int, list[np.ndarray]]
    returncode: int | None
    timed_out: bool
    duration: float
    stderr_tail: list[str] = field(default_factory=list)
    hung_at: list[str] = field(default_factory=list)


def _limits(cpu_seconds: int, address_space: int | None):
    limits = [(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
              (resource.RLIMIT_FSIZE, FSIZE_LIMIT, FSIZE_LIMIT), (resource.RLIMIT_CORE, 0, 0)]
    if address_space is not None:
        limits.append((resource.RLIMIT_AS, address_space, address_space))

    def apply() -> None:  # runs in the child between fork and exec
        for which, soft, hard in limits:
            try:
                _, current_hard = resource.getrlimit(which)
                if current_hard != resource.RLIM_INFINITY:  # never try to raise a hard limit
                    soft, hard = min(soft, current_hard), min(hard, current_hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):  # e.g. RLIMIT_AS on macOS: keep the other limits
                pass
    return apply


def _read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by the kill
    return events


def _hung_at(stderr: str, child_solution: str, shown_as: str) -> list[str]:
    """Frames of the faulthandler dump that point into the solution, innermost first."""
    pattern = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
    frames = [m for m in pattern.finditer(stderr) if m.group(1) == child_solution]
    return [f"{shown_as}, line {m.group(2)} in {m.group(3)}" for m in frames]


def _count_cases(events: Path) -> int:
    """Cases the child has finished so far (it appends one event line per case)."""
    try:
        return events.read_text(encoding="utf-8", errors="replace").count('"event": "case"')
    except OSError:
        return 0


def run_solution(source: str, shown_as: str, function: str, cases: list[Case], n_outputs: int,
                 forbidden: list[str], timeout: float,
                 progress: Callable[[int, int, float, float], None] | None = None) -> ChildRun:
    """Run ``function`` from ``source`` on every case in a limited child process.

    Args:
        source: the learner's file content (copied into the temp dir as ``solution.py``).
        shown_as: the learner's path, used in reports instead of the temp copy's.
        function: name of the function to call.
        cases: inputs; array arguments go through ``.npz``, scalars through JSON.
        n_outputs: how many outputs the function returns (a tuple when > 1).
        forbidden: dotted names blocked by the runtime tripwires.
        timeout: wall-clock seconds for the whole run (start-up included).
        progress: optional ``progress(cases_done, cases_total, elapsed_s, timeout_s)``, called
            a few times a second while the child runs.
    """
    tmp = Path(tempfile.mkdtemp(prefix="minimodel-judge-"))
    try:
        solution = tmp / "solution.py"
        atomic_write_text(solution, source)
        atomic_write_bytes(tmp / "_child.py", CHILD_SOURCE.read_bytes())
        manifest = []
        for i, case in enumerate(cases):
            arrays = {k: v for k, v in case.args.items() if isinstance(v, np.ndarray)}
            scalars = {k: v for k, v in case.args.items() if not isinstance(v, np.ndarray)}
            inputs = tmp / f"in_{i:03d}.npz"
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            atomic_write_bytes(inputs, buffer.getvalue())
            manifest.append({"inputs": str(inputs), "outputs": str(tmp / f"out_{i:03d}.npz"),
                             "scalars": scalars, "order": list(case.args)})
        margin = min(1.0, 0.25 * timeout)
        config = {"solution": str(solution), "shown_as": shown_as, "function": function,
                  "forbidden": forbidden,
                  "events": str(tmp / "events.jsonl"), "cases": manifest,
                  "n_outputs": n_outputs, "dump_after": max(0.1, timeout - margin)}
        atomic_write_json(tmp / "config.json", config)

        uses_torch = "torch" in source
        preexec = None
        if resource is not None:
            preexec = _limits(math.ceil(timeout) + 2, AS_LIMIT_TORCH if uses_torch else AS_LIMIT)
        events_path = tmp / "events.jsonl"
        watch = None
        if progress is not None:
            def watch(elapsed: float) -> None:
                progress(_count_cases(events_path), len(cases), elapsed, timeout)
        # -I: isolated mode (no user site, no PYTHON* variables, no script dir on sys.path).
        done = run_child([sys.executable, "-I", tmp / "_child.py", tmp / "config.json"],
                         cwd=tmp, env=clean_env(HOME=str(tmp), TMPDIR=str(tmp)),
                         timeout=timeout, poll=watch, preexec=preexec)

        events = _read_events(events_path)
        outputs = {}
        for ev in events:
            if ev.get("event") == "case" and ev.get("ok"):
                path = Path(manifest[ev["index"]]["outputs"])
                try:
                    with np.load(path, allow_pickle=False) as data:
                        outputs[ev["index"]] = [data[f"out_{j}"] for j in range(ev["n"])]
                except (OSError, ValueError, KeyError) as exc:  # the solution touched our files
                    ev.update(ok=False, type=type(exc).__name__,
                              message=f"unreadable output file: {exc}", where=[])
        # SIGXCPU means the CPU limit fired before the wall clock: a timeout as well.
        timed_out = done.timed_out or done.returncode == -signal.SIGXCPU
        return ChildRun(events, outputs, done.returncode, timed_out, done.seconds,
                        done.stderr_tail(12), _hung_at(done.stderr, str(solution), shown_as))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
