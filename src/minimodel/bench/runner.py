"""The driver of ``minimodel bench``: runs every measurement in a fresh worker process, on a
quiet machine, in interleaved rounds, and keeps the raw results.

Nothing is timed in this process. Before every worker it waits (up to ``max_wait`` seconds)
for the machine to be quiet; while the worker runs it measures how much CPU other processes
took, and a disturbed measurement is repeated (``retries``), keeping the least disturbed
attempt. With ``rounds`` > 1, the whole list of measurements of a case runs once per round
(implementation A, B, C, then A, B, C again...), so a machine that drifts slower over minutes
slows every implementation alike; a row reports the median of its round medians.

What is measured per case, how it becomes table rows, and the whole run (:func:`run_all`) are
in :mod:`minimodel.bench.cases`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from minimodel.bench import machine, spec
from minimodel.bench.spec import Shape
from minimodel.bench.worker import RESULT_PREFIX

WORKER = Path(__file__).resolve().with_name("worker.py")
WORKER_TIMEOUT_S = 1800
FOREIGN_LIMIT = 0.25  # other processes' cores during a measurement above this -> measure again


@dataclass(frozen=True)
class Variant:
    """One way of running minimodel: fast kernels on/off (``MINIMODEL_KERNELS``), allocator
    tuning on/off (``MINIMODEL_TUNE_MALLOC``), and which checkout (``src``; None = this one)."""

    kernels: str = "on"
    allocator: str = "on"
    src: str | None = None
    src_label: str = ""

    def __post_init__(self) -> None:
        for name in ("kernels", "allocator"):
            value = getattr(self, name)
            if value not in ("on", "off"):
                raise ValueError(f"Variant({name}={value!r}): use 'on' or 'off'")

    @property
    def label(self) -> str:
        parts = ["minimodel" + (f" @ {self.src_label}" if self.src else "")]
        if self.kernels == "off":
            parts.append("kernels off")
        # Allocator off is what `import minimodel` gives (library defaults, the issue's
        # target); on is the glibc tuning `minimodel train` applies to its own process.
        if self.allocator == "on":
            parts.append("train's malloc tuning")
        return ", ".join(parts)

    def env(self) -> dict[str, str]:
        return {"MINIMODEL_KERNELS": "1" if self.kernels == "on" else "0",
                "MINIMODEL_TUNE_MALLOC": "1" if self.allocator == "on" else "0"}


@dataclass
class Options:
    cases: tuple[str, ...] = spec.CASES
    configs: tuple[str, ...] = ("small", "large")
    steps: int = 10
    warmup: int = 3
    threads: int = 2
    quick: bool = False
    size: str = "full"  # "tiny": toy shapes for smoke tests
    peers: bool = True
    compile: bool = True  # torch.compile as a step peer (compiles for ~30 s per process)
    max_wait: float = 60.0
    retries: int = 2
    rounds: int = 1
    kernels: tuple[str, ...] = ("on",)
    allocator: tuple[str, ...] = ("off", "on")  # first = primary: the library defaults
    against: str | None = None  # another checkout's src/, measured alongside (step, mlm)
    baseline: str | None = None  # a saved --json result to compare with
    tolerance_pct: float = 3.0
    command: str = ""
    log: Callable[[str], None] = field(default=print, repr=False)

    def variants(self) -> list[Variant]:
        """The minimodel variants of the step case; the first is the primary one (compared
        with the peers and the targets, and the one the mlm case runs). Another checkout
        (``against``) runs with the primary variant's switches."""
        out = [Variant(k, a) for k in self.kernels for a in self.allocator]
        if self.against:
            state = machine.source_state(self.against)
            label = self.against + ("" if state.startswith("unknown") else f" ({state})")
            out.append(Variant(out[0].kernels, out[0].allocator, self.against, label))
        return out


def worker_env(threads: int, src: str | None = None,
               switches: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a worker: thread counts, minimodel switches, which ``src`` to test."""
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env.update(switches or Variant().env())
    env["PYTHONPATH"] = os.pathsep.join([src or machine.harness_src()]
                                        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    return env


def run_worker(task: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Run one task in a fresh worker process; its result, or ``{"error": ...}``."""
    try:
        proc = subprocess.run([sys.executable, str(WORKER), json.dumps(task)], env=env,
                              capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {WORKER_TIMEOUT_S} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
    return {"error": f"worker exited {proc.returncode}: " + " | ".join(tail)}


def combine_rounds(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from the same measurement's rounds: the median of the round medians (one
    disturbed round cannot move it), the fastest step, and the spread between rounds."""
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    if len(runs) == 1:
        return {**runs[0], "rounds": 1}
    medians = [r["median_s"] for r in runs]
    out = dict(runs[0])  # first loss, optimizer, setup... are the same in every round
    out.update(median_s=statistics.median(medians), min_s=min(r["min_s"] for r in runs),
               max_s=max(r["max_s"] for r in runs),
               times_s=[t for r in runs for t in r["times_s"]],
               cpu_median_s=statistics.median(r["cpu_median_s"] for r in runs),
               minor_faults_per_step=statistics.median(r["minor_faults_per_step"]
                                                       for r in runs),
               max_rss_mib=max(r.get("max_rss_mib", 0) for r in runs),
               foreign_cores=max(r.get("foreign_cores", 0.0) for r in runs),
               round_medians_s=medians, rounds=len(runs),
               spread_pct=100 * (max(medians) - min(medians)) / statistics.median(medians))
    return out


class Bench:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        off = "disabled (--no-peers)"
        self.peers = (machine.peers_available() if opts.peers
                      else {"torch": off, "transformers": off})
        self.results: dict[str, Any] = {"cases": {}, "targets": [], "ceiling": None}
        self.errors: list[str] = []
        self.variants = opts.variants()

    # ---- helpers used by the cases
    def shape(self, shape: Shape) -> Shape:
        return spec.tiny(shape) if self.opts.size == "tiny" else shape

    def measure(self, label: str, task: dict[str, Any],
                variant: Variant | None = None) -> dict[str, Any]:
        """Run ``task`` in a fresh worker once the machine is quiet.

        The CPU time other processes used while the worker ran ("foreign cores": all busy CPU
        time of the machine minus the worker's own, per second of wall time) is measured too;
        above FOREIGN_LIMIT the measurement is repeated (``retries`` times at most) and the
        least disturbed attempt is kept.
        """
        o = self.opts
        variant = variant or Variant()
        task = {"threads": o.threads, "warmup": o.warmup, "steps": o.steps, **task}
        env = worker_env(o.threads, variant.src, variant.env())
        best = None
        for attempt in range(1 + max(0, o.retries)):
            seen = machine.wait_quiet(o.max_wait, label, o.log)
            o.log(f"  measuring {label} (load {seen['loadavg']:.2f}"
                  + (f", attempt {attempt + 1}" if attempt else "") + ")")
            b0, c0, t0 = machine.busy_seconds(), machine.children_cpu_seconds(), time.monotonic()
            out = run_worker(task, env)
            wall = time.monotonic() - t0
            own = machine.children_cpu_seconds() - c0
            foreign = max(0.0, (machine.busy_seconds() - b0) - own) / max(wall, 1e-9)
            out.update(wall_s=wall, load_before=seen, foreign_cores=foreign, attempt=attempt + 1,
                       variant=asdict(variant))
            if "error" in out:
                self.errors.append(f"{label}: {out['error']}")
                o.log(f"  ERROR {label}: {out['error']}")
                return out
            if best is None or foreign < best["foreign_cores"]:
                best = out
            if foreign <= FOREIGN_LIMIT:
                break
            o.log(f"  other processes used {foreign:.2f} cores during {label}"
                  + ("; measuring again" if attempt < o.retries else "; keeping the least "
                     "disturbed attempt"))
        best["attempts"] = attempt + 1
        return best

    def measure_rounds(self, jobs: list[tuple[str, dict[str, Any], Variant | None]]
                       ) -> list[dict[str, Any]]:
        """Measure every ``(label, task, variant)`` job ``opts.rounds`` times, interleaved:
        all jobs once, then all jobs again... One combined result per job."""
        n = max(1, self.opts.rounds)
        runs: list[list[dict[str, Any]]] = [[] for _ in jobs]
        for r in range(n):
            for i, (label, task, variant) in enumerate(jobs):
                runs[i].append(self.measure(label + (f" [round {r + 1}/{n}]" if n > 1 else ""),
                                            task, variant))
        return [combine_rounds(rs) for rs in runs]

    def target(self, case: str, metric: str, value: float | None, op: str, bound: float,
               detail: str = "") -> dict[str, Any]:
        met = None if value is None else (value <= bound if op == "<=" else value >= bound)
        unsupported = self.verdict_unsupported()
        if unsupported and met is not None:
            # A smoke run measures too little to judge a target: report the number, no verdict.
            met, detail = None, f"no verdict: {unsupported}" + (f"; {detail}" if detail else "")
        t = {"case": case, "metric": metric, "value": value, "op": op, "bound": bound,
             "met": met, "detail": detail}
        self.results["targets"].append(t)
        return t

    def verdict_unsupported(self) -> str:
        """Why this run cannot support a met/not-met verdict ("" when it can)."""
        if self.opts.size == "tiny":
            return "tiny toy shapes"
        if self.opts.quick:
            return "--quick measures too few steps (rerun without --quick)"
        return ""

    def torch_ok(self) -> bool:
        return self.peers["torch"] is None

    def hf_ok(self) -> bool:
        return self.peers["torch"] is None and self.peers["transformers"] is None

    def peer_note(self) -> list[str]:
        if not self.torch_ok():
            return [f"PyTorch peers skipped: torch {self.peers['torch']}."]
        if not self.hf_ok():
            return [f"transformers peers skipped: transformers {self.peers['transformers']}."]
        return []

    def ceiling_gflops(self) -> float | None:
        c = self.results.get("ceiling")
        return c.get("ceiling_gflops") if c and "error" not in c else None
