"""Where the memory of one training step goes: RSS before and after every autograd Function.

    PYTHONPATH=src python benchmarks/memory_timeline.py                 # the bench's memory shape
    PYTHONPATH=/tmp/old/src python benchmarks/memory_timeline.py       # another checkout
    python benchmarks/memory_timeline.py --min-mib 1 --json /tmp/timeline.json

The step is ``minimodel bench --cases memory``'s (a tied GPT, d=128, V=50,257, B=8, T=128,
AdamW, ``model.loss(x, y).backward()``), measured as that case measures it: glibc set to map
every block of 128 KiB or more on its own and to trim at once (so RSS follows live memory),
one warm-up step, then minimodel's buffer pool emptied and the heap trimmed. First the case's
own figure (``task_memory``: VmHWM - VmRSS over a step, and tracemalloc's peak); then one more
step in which every Function's ``forward`` and ``backward`` is wrapped: RSS before, the high
-water mark inside (VmHWM, reset before each call) and RSS after, relative to the start of the
step. Calls whose high-water mark grew by at least ``--min-mib`` are printed, with the largest.

``--time N --threads T`` instead times N steps of the same case after one warm-up (process CPU
and wall time per step, BLAS at T threads; T=1 makes the CPU time the work done, with no
thread spinning for a partner on a busy machine), for paired runs of two checkouts.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
import time

import minimodel
from minimodel import autograd
from minimodel.bench.spec import MEMORY_SHAPE
from minimodel.bench.steps import build_step, setup_minimodel, shape_of
from minimodel.bench.tasks import _proc_status, _release_pool, _reset_hwm, task_memory
from minimodel.runtime import malloc_trim


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-mib", type=float, default=2.0,
                    help="print calls whose peak grew by at least this much (default 2)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--time", type=int, default=0, metavar="N",
                    help="only time N steps of the case (CPU and wall per step)")
    ap.add_argument("--threads", type=int, default=2, help="BLAS threads for --time")
    args = ap.parse_args()
    if args.time:
        return time_steps(args.time, args.threads)

    task = {"impl": "minimodel", "threads": 2, "shape": dataclasses.asdict(MEMORY_SHAPE),
            "reps": 3}
    case = task_memory(task)  # also sets the strict allocator for this process
    print(f"minimodel: {minimodel.__file__}")
    print(f"case memory: peak growth {case['growth_mib']:.1f} MiB "
          f"(steps: {', '.join(f'{g:.1f}' for g in case['growth_all_mib'])}), "
          f"tracemalloc peak {case['tracemalloc_peak_mib']:.1f} MiB")

    def mib() -> tuple[float, float]:
        status = _proc_status()
        _reset_hwm()
        return status["VmRSS"] / 1024, status["VmHWM"] / 1024

    step, _ = build_step("minimodel", shape_of(task))
    step()
    events: list[tuple[str, float, float, float]] = []
    for cls in set(_subclasses(autograd.Function)):
        for name in ("forward", "backward"):
            if name not in cls.__dict__:
                continue
            fn = cls.__dict__[name].__func__ if isinstance(cls.__dict__[name], staticmethod) \
                else cls.__dict__[name]

            def timed(*a, __fn=fn, __label=f"{cls.__name__}.{name}", **k):
                before, _ = mib()
                out = __fn(*a, **k)
                after, peak = mib()
                events.append((__label, before, peak, after))
                return out

            setattr(cls, name, staticmethod(timed))
    gc.collect()
    _release_pool()
    malloc_trim()
    start, _ = mib()
    step()
    _, peak = mib()
    rows = [(label, b - start, p - start, a - start) for label, b, p, a in events]
    print(f"timeline step: peak growth {peak - start:.1f} MiB; calls whose peak grew by "
          f">= {args.min_mib} MiB (MiB from the start of the step):")
    print(f"{'call':<32}{'before':>9}{'peak':>9}{'after':>9}")
    for label, b, p, a in rows:
        if p - b >= args.min_mib or p >= max(r[2] for r in rows) - 0.5:
            print(f"{label:<32}{b:9.1f}{p:9.1f}{a:9.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"case": {k: case[k] for k in ("growth_mib", "growth_all_mib",
                                                     "tracemalloc_peak_mib")},
                       "timeline": rows}, fh, indent=1)
    return 0


def time_steps(steps: int, threads: int) -> int:
    setup_minimodel(threads, allocator=False)  # a plain import, BLAS at `threads`
    step, _ = build_step("minimodel", MEMORY_SHAPE)
    step()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(steps):
        step()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(f"minimodel: {minimodel.__file__}\nmemory-case step, {threads} BLAS thread(s): "
          f"CPU {cpu / steps * 1000:.1f} ms, wall {wall / steps * 1000:.1f} ms per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
