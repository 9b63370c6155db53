"""Contention-robust micro-benchmark helper: interleaved candidates, min over repeats.

CPU time of this thread (time.thread_time) is used when BLAS runs single-threaded
(OPENBLAS_NUM_THREADS=1), wall time otherwise; each candidate's best of ``reps`` is reported.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _alloc import tune  # noqa: E402

SINGLE = (os.environ.get("OPENBLAS_NUM_THREADS") == "1"
          and os.environ.get("TIMING_CLOCK", "cpu") != "wall")  # TIMING_CLOCK=wall forces wall
clock = time.thread_time if SINGLE else time.perf_counter


def compare(cands: dict, reps: int = 15, inner: int = 1, base: str | None = None,
            flops: float | None = None, title: str = "") -> dict:
    """cands: name -> zero-arg callable. Prints ms (best of reps, interleaved) and speed-up."""
    for f in cands.values():
        f()
    best = {k: float("inf") for k in cands}
    for _ in range(reps):
        for k, f in cands.items():
            t0 = clock()
            for _ in range(inner):
                f()
            best[k] = min(best[k], (clock() - t0) / inner)
    base = base or next(iter(cands))
    print(f"-- {title}  [{'cpu, 1 thread' if SINGLE else 'wall'}]")
    for k, t in best.items():
        extra = f"  {flops / t / 1e9:6.1f} GFLOP/s" if flops else ""
        print(f"   {k:<52} {1e3 * t:8.2f} ms  x{best[base] / t:5.2f}{extra}")
    return best
