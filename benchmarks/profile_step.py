"""Where does a minimodel training step spend its time?  (d=256, V=8192 by default)

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/profile_step.py [--config large]
        [--steps 5] [--alloc std|none] [--cprofile] [--clock cpu|wall]

Monkeypatches (in this process only) every ``Function`` subclass's forward/backward, the
engine helpers (``_topological_order``, ``_unbroadcast``, ``Tensor._accumulate_grad``) and the
optimizer, and accumulates time per primitive and per operand-shape signature. The default
clock is this thread's CPU time (``time.thread_time``): with OPENBLAS_NUM_THREADS=1 all work
runs on the main thread, so the numbers do not move when other processes share the cores.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _alloc import page_faults, tune  # noqa: E402


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def _sig(arrays) -> str:
    return " x ".join("x".join(map(str, a.shape)) for a in arrays if hasattr(a, "shape"))


class Timers:
    def __init__(self, clock):
        self.clock = clock
        self.tot = collections.defaultdict(float)
        self.cnt = collections.defaultdict(int)

    def add(self, key, dt):
        self.tot[key] += dt
        self.cnt[key] += 1


def instrument(T: Timers):
    import minimodel.autograd as ag
    import minimodel.tensor as tn
    from minimodel import fused, ops, optim  # noqa: F401  (register the subclasses)

    clock = T.clock
    for cls in list(_all_subclasses(ag.Function)):
        name = cls.__name__
        fwd, bwd = cls.__dict__.get("forward"), cls.__dict__.get("backward")
        if fwd is not None:
            f = fwd.__func__ if isinstance(fwd, staticmethod) else fwd

            def tf(ctx, *arrays, __f=f, __n=name, **kw):
                t0 = clock()
                out = __f(ctx, *arrays, **kw)
                dt = clock() - t0
                ctx._prof_sig = _sig(arrays)
                T.add(("fwd", __n, ""), dt)
                T.add(("fwd", __n, ctx._prof_sig), dt)
                return out

            cls.forward = staticmethod(tf)
        if bwd is not None:
            b = bwd.__func__ if isinstance(bwd, staticmethod) else bwd

            def tb(ctx, g, __b=b, __n=name):
                t0 = clock()
                out = __b(ctx, g)
                dt = clock() - t0
                T.add(("bwd", __n, ""), dt)
                T.add(("bwd", __n, getattr(ctx, "_prof_sig", "")), dt)
                return out

            cls.backward = staticmethod(tb)

    def wrap(owner, attr, key):
        orig = getattr(owner, attr)

        def w(*a, **k):
            t0 = clock()
            out = orig(*a, **k)
            T.add(key, clock() - t0)
            return out

        setattr(owner, attr, w)

    wrap(ag, "_topological_order", ("engine", "_topological_order", ""))
    wrap(ag, "_unbroadcast", ("inner", "_unbroadcast", ""))
    import minimodel.ops as opsmod
    opsmod._unbroadcast = ag._unbroadcast  # ops imported the name directly
    wrap(tn.Tensor, "_accumulate_grad", ("engine", "Tensor._accumulate_grad", ""))
    wrap(ag, "backward", ("phase", "autograd.backward (total)", ""))
    wrap(optim.AdamW, "step", ("phase", "AdamW.step", ""))
    wrap(optim.Optimizer, "zero_grad", ("phase", "zero_grad", ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="large")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--alloc", default="std")
    ap.add_argument("--clock", default="cpu", choices=["cpu", "wall"])
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--head-loss", default="ce", choices=["ce", "chunked"])
    ap.add_argument("--shapes", type=int, default=30, help="rows of the per-shape table")
    args = ap.parse_args()
    tune(args.alloc)

    from _models import get_cfg, minimodel_step_fn

    cfg = get_cfg(args.config)
    step, model, opt = minimodel_step_fn(cfg, head_loss=args.head_loss)
    for _ in range(3):
        step()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter

    if args.cprofile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        for _ in range(args.steps):
            step()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
        return

    # Un-instrumented reference, same clock
    t0 = clock()
    for _ in range(args.steps):
        step()
    plain = (clock() - t0) / args.steps

    T = Timers(clock)
    instrument(T)
    from minimodel import autograd as ag

    import minimodel.functional as F

    # time the forward (model call) separately from the rest
    x_fwd = []
    orig_call = type(model).__call__

    def timed_call(self, *a, **k):
        t0 = clock()
        out = orig_call(self, *a, **k)
        x_fwd.append(clock() - t0)
        return out

    type(model).__call__ = timed_call
    f0 = page_faults()[0]
    t0 = clock()
    for _ in range(args.steps):
        step()
    total = (clock() - t0) / args.steps
    faults = (page_faults()[0] - f0) / args.steps
    n = args.steps

    def ms(key):
        return 1e3 * T.tot[key] / n

    fwd_prim = sum(v for k, v in T.tot.items() if k[0] == "fwd" and k[2] == "") / n
    bwd_prim = sum(v for k, v in T.tot.items() if k[0] == "bwd" and k[2] == "") / n
    fwd_total = sum(x_fwd) / n
    bwd_total = T.tot[("phase", "autograd.backward (total)", "")] / n
    print(f"config {args.config} {cfg}; alloc={args.alloc}; clock={args.clock}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}")
    print(f"step (un-instrumented) {1e3 * plain:8.1f} ms   instrumented {1e3 * total:8.1f} ms   "
          f"minor faults/step {faults:.0f}")
    print(f"  forward  (model call)        {1e3 * fwd_total:8.1f} ms   of which primitives "
          f"{1e3 * fwd_prim:7.1f}  -> python/module overhead {1e3 * (fwd_total - fwd_prim):6.1f}")
    print(f"  backward (autograd.backward) {1e3 * bwd_total:8.1f} ms   of which primitives "
          f"{1e3 * bwd_prim:7.1f}  -> engine (sort, grad sums, accumulate) "
          f"{1e3 * (bwd_total - bwd_prim):6.1f}")
    print(f"      engine: _topological_order {ms(('engine', '_topological_order', '')):.1f} ms, "
          f"Tensor._accumulate_grad {ms(('engine', 'Tensor._accumulate_grad', '')):.1f} ms; "
          f"inside primitives: _unbroadcast {ms(('inner', '_unbroadcast', '')):.1f} ms")
    print(f"  AdamW.step                   {ms(('phase', 'AdamW.step', '')):8.1f} ms")
    print(f"  zero_grad                    {ms(('phase', 'zero_grad', '')):8.1f} ms")
    rest = total - fwd_total - bwd_total - (T.tot[("phase", "AdamW.step", "")]
                                           + T.tot[("phase", "zero_grad", "")]) / n
    print(f"  other (loss.item etc)        {1e3 * rest:8.1f} ms")
    print()
    print(f"{'primitive':<16} {'fwd ms':>8} {'bwd ms':>8} {'sum':>8} {'%step':>6} {'calls/step':>10}")
    names = sorted({k[1] for k in T.tot if k[0] in ("fwd", "bwd")},
                   key=lambda nm: -(T.tot[("fwd", nm, "")] + T.tot[("bwd", nm, "")]))
    for nm in names:
        f, b = ms(("fwd", nm, "")), ms(("bwd", nm, ""))
        print(f"{nm:<16} {f:8.1f} {b:8.1f} {f + b:8.1f} {100 * (f + b) / (1e3 * total):6.1f} "
              f"{T.cnt[('fwd', nm, '')] / n:10.0f}")
    print()
    print(f"{'top primitive x operand shapes':<64} {'fwd ms':>8} {'bwd ms':>8} {'calls':>6}")
    sigs = {(k[1], k[2]) for k in T.tot if k[0] in ("fwd", "bwd") and k[2]}
    sigs = sorted(sigs, key=lambda s: -(T.tot[("fwd", *s)] + T.tot[("bwd", *s)]))
    for nm, sg in sigs[: args.shapes]:
        print(f"{(nm + ' ' + sg)[:64]:<64} {ms(('fwd', nm, sg)):8.1f} {ms(('bwd', nm, sg)):8.1f} "
              f"{T.cnt[('fwd', nm, sg)] / n:6.0f}")


if __name__ == "__main__":
    main()
