"""How fast could the training step be, if everything but its matrix products cost nothing?

    python benchmarks/gemm_floor.py                                  # small and large, 10 steps
    python benchmarks/gemm_floor.py --bench-json bench.json          # + the peers' steps from
                                                                     #   `minimodel bench --json`

The step is the one ``minimodel bench --cases step`` times for minimodel, kernels on (what ``minimodel
train`` and a learner's two-line loop run: the batch's halves in two threads, each with one
BLAS thread). While it runs, every ``np.matmul`` call (all of the step's GEMMs: the linear
layers, the head's three products per chunk, attention's batched products) is timed in the
thread that makes it. The two halves run at the same time, so the step cannot be shorter than
the busier thread's time inside ``np.matmul``: that is the **GEMM floor**, what the step would
take on this machine with this BLAS if every other operation (softmax, GELU, LayerNorm, AdamW,
Python) were free. (Measured inside the real step, the GEMMs share the memory system with the
other half's other work; alone they would be a little faster.) Not counted: the few ``a @ ones`` matrix-vector products the kernels use
for row sums (memory-bound reductions, not GEMMs).

Printed first, for scale: one of the step's product shapes on one BLAS thread, alone and
while a second thread runs the same product at the same time (the two cores share the memory
system and the chip's power budget, so a core's GEMM rate in the split step is below its rate
alone).

With ``--bench-json`` (a file written by ``minimodel bench --cases step --json FILE``) the floor
is set beside the best peer's step of that run: the 0.8x target of the step benchmark leaves
``0.8 * peer - floor`` milliseconds for all the other work, printed beside what that work takes
now (step - floor).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Self

import numpy as np

from minimodel._fileio import atomic_write_json
from minimodel.bench.machine import blas_kernels, cpu_description
from minimodel.bench.spec import STEP_CONFIGS, STEP_TARGET, Shape
from minimodel.bench.steps import build_step, setup_minimodel
from minimodel.commands._argtypes import at_least
from minimodel.dispatch import kernels


class MatmulClock:
    """``np.matmul`` wrapped: the seconds spent inside it by the calling thread (half 0 of the
    batch) and by worker threads (half 1: the split runs one job at a time in its pool, though
    not always in the same worker), inside the ``with`` block."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()
        self._matmul = np.matmul

    def __enter__(self) -> Self:
        matmul = self._matmul

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return matmul(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                me = "caller" if threading.current_thread() is threading.main_thread() \
                    else "workers"
                with self._lock:
                    self.seconds[me] = self.seconds.get(me, 0.0) + spent

        np.matmul = timed  # the kernels call np.matmul through the module: they get this one
        return self

    def __exit__(self, *exc) -> None:
        np.matmul = self._matmul

    def take(self) -> list[float]:
        """The seconds of each side since the last take, busiest first."""
        with self._lock:
            found, self.seconds = sorted(self.seconds.values(), reverse=True), {}
        return found


def measure(name: str, steps: int, warmup: int) -> dict:
    """The step's wall time and its time inside np.matmul, with kernels on whatever
    MINIMODEL_KERNELS says (the composites multiply with ``@``, which this clock cannot see)."""
    with kernels(True):
        return _measure(name, steps, warmup)


def _measure(name: str, steps: int, warmup: int) -> dict:
    shape = Shape(**STEP_CONFIGS[name], name=name)
    step, _ = build_step("minimodel", shape)
    for _ in range(warmup):
        step()
    plain = []
    for _ in range(steps):  # the step as it runs, nothing wrapped
        t0 = time.perf_counter()
        step()
        plain.append(time.perf_counter() - t0)
    walls, floors, totals = [], [], []
    with MatmulClock() as clock:
        for _ in range(steps):
            clock.take()
            t0 = time.perf_counter()
            step()
            walls.append(time.perf_counter() - t0)
            per_thread = clock.take()
            floors.append(per_thread[0])
            totals.append(sum(per_thread))
    flops = shape.flops()["total"]
    return {"config": shape.label, "step_ms": 1e3 * statistics.median(plain),
            "timed_step_ms": 1e3 * statistics.median(walls),
            "floor_ms": 1e3 * statistics.median(floors),
            "gemm_thread_ms": 1e3 * statistics.median(totals),
            "threads": len(per_thread), "gflop": flops / 1e9}


def solo_and_paired(m: int, k: int, n: int, reps: int = 100) -> tuple[float, float]:
    """GFLOP/s of one (m, k) @ (k, n) float32 GEMM on one BLAS thread: alone, and per thread
    while a second thread runs the same product at the same time (as the two halves do)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    operands = [(rng.standard_normal((m, k), dtype=np.float32),
                 rng.standard_normal((k, n), dtype=np.float32),
                 np.empty((m, n), np.float32)) for _ in range(2)]
    seconds = [0.0, 0.0]

    def run(i: int) -> None:
        a, b, out = operands[i]
        start = time.perf_counter()
        for _ in range(reps):
            np.matmul(a, b, out=out)
        seconds[i] = time.perf_counter() - start

    flop = 2.0 * m * k * n * reps
    with threadpool_limits(1):
        run(0)  # warm-up
        run(0)
        alone = flop / seconds[0] / 1e9
        other = threading.Thread(target=run, args=(1,))
        other.start()
        run(0)
        other.join()
    return alone, flop / max(seconds) / 1e9


def best_peers(path: str) -> dict[str, tuple[str, float]]:
    """{config label: (peer name, ms)} from a ``minimodel bench --json`` file's step rows."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["cases"]["step"]["rows"]
    best: dict[str, tuple[str, float]] = {}
    for row in rows:
        if row.get("key", "").startswith("minimodel") or "ms" not in row:
            continue
        if row["config"] not in best or row["ms"] < best[row["config"]][1]:
            best[row["config"]] = (row["impl"], row["ms"])
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="small,large", help="comma list of small,large")
    parser.add_argument("--steps", type=at_least(1), default=10, help="timed steps (median)")
    parser.add_argument("--warmup", type=at_least(0), default=3)
    parser.add_argument("--threads", type=at_least(1), default=2, help="BLAS threads (as bench)")
    parser.add_argument("--bench-json", metavar="FILE", help="peers' steps from minimodel bench")
    parser.add_argument("--json", metavar="FILE", help="also write the figures")
    args = parser.parse_args()
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in STEP_CONFIGS]
    if unknown:
        parser.error(f"unknown config(s) {', '.join(unknown)}: choose from "
                     f"{', '.join(STEP_CONFIGS)}")
    peers = best_peers(args.bench_json) if args.bench_json else {}
    print(f"CPU: {cpu_description()}")
    print(f"setup: {setup_minimodel(args.threads, allocator=False)}; kernels: {blas_kernels()}")
    m, k, n = 1024, 256, 1024  # one half's MLP product at d=256
    alone, paired = solo_and_paired(m, k, n)
    print(f"one BLAS thread, ({m}x{k}) @ ({k}x{n}) float32: {alone:.0f} GFLOP/s alone, "
          f"{paired:.0f} per thread with a second thread doing the same at once")
    table = []
    for name in names:
        r = measure(name, args.steps, args.warmup)
        table.append(r)
        print(f"\n{r['config']}: step {r['step_ms']:.1f} ms (median of {args.steps}; "
              f"{r['timed_step_ms']:.1f} ms with np.matmul timed)")
        print(f"  GEMM floor (the busier half inside np.matmul): "
              f"{r['floor_ms']:.1f} ms = {r['floor_ms'] / r['step_ms']:.0%} of the step; "
              f"{r['gemm_thread_ms']:.1f} thread-ms in all, "
              f"{r['gflop'] / (r['gemm_thread_ms'] / 1e3):.0f} GFLOP/s per thread "
              f"(model FLOPs / GEMM time)")
        others = r["step_ms"] - r["floor_ms"]
        print(f"  everything else (step - floor): {others:.1f} ms")
        if r["config"] in peers:
            impl, ms = peers[r["config"]]
            target = STEP_TARGET[name] * ms
            print(f"  best peer in {args.bench_json}: {impl} {ms:.1f} ms; the floor is "
                  f"{r['floor_ms'] / ms:.2f}x of it; the {STEP_TARGET[name]}x target "
                  f"({target:.1f} ms) leaves {target - r['floor_ms']:.1f} ms for everything "
                  f"else, which takes {others:.1f} ms now "
                  f"({(target - r['floor_ms']) / others:.0%} of it)")
            r.update(peer=impl, peer_ms=ms, budget_ms=target - r["floor_ms"])
    if args.json:
        atomic_write_json(args.json, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
