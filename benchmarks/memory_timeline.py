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
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys

import minimodel
from minimodel import autograd
from minimodel.bench.spec import MEMORY_SHAPE
from minimodel.bench.steps import build_step, shape_of
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
    args = ap.parse_args()

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


if __name__ == "__main__":
    sys.exit(main())
