"""Where a minimodel training step spends its time: per differentiable function, per shape.

:func:`instrument` wraps the ``forward``/``backward`` of every :class:`minimodel.autograd.Function`
subclass (or the ones a predicate selects) with a timer, in this process only, and returns a
function that undoes it. The ``util`` case of ``minimodel bench`` uses it to time the embedding
backward; :func:`profile_step` (``benchmarks/profile_step.py``) prints the whole breakdown.

The default clock is this thread's CPU time (``time.thread_time``): with one BLAS thread all
work runs on the main thread, so the numbers do not move when other processes share the cores.
With several BLAS threads use the wall clock.
"""

from __future__ import annotations

import collections
import os
import time
from typing import Any, Callable

Key = tuple[str, str, str]  # (phase "fwd"/"bwd"/"phase", name, operand shapes or "")


class Timers:
    """Accumulated seconds and call counts per key."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.seconds: dict[Key, float] = collections.defaultdict(float)
        self.calls: dict[Key, int] = collections.defaultdict(int)

    def add(self, key: Key, dt: float) -> None:
        self.seconds[key] += dt
        self.calls[key] += 1

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def function_classes() -> list[type]:
    """Every subclass of minimodel's autograd ``Function`` (after importing the models)."""
    import minimodel.models  # noqa: F401  (defines / imports every Function subclass)
    from minimodel.autograd import Function

    found, todo = [], list(Function.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found), key=lambda c: c.__name__)


def _shapes(arrays: tuple) -> str:
    return " x ".join("x".join(map(str, a.shape)) for a in arrays if hasattr(a, "shape"))


def instrument(timers: Timers, select: Callable[[str], bool] = lambda name: True,
               by_shape: bool = False) -> Callable[[], None]:
    """Time forward and backward of the selected Function classes; returns ``undo()``."""
    clock, undo = timers.clock, []
    for cls in function_classes():
        name = cls.__name__
        if not select(name):
            continue
        for phase, attr in (("fwd", "forward"), ("bwd", "backward")):
            original = cls.__dict__.get(attr)
            if original is None:  # inherited: timed where it is defined
                continue
            fn = original.__func__ if isinstance(original, staticmethod) else original

            def timed(ctx, *args, __fn=fn, __phase=phase, __name=name, **kwargs):
                t0 = clock()
                out = __fn(ctx, *args, **kwargs)
                dt = clock() - t0
                timers.add((__phase, __name, ""), dt)
                if by_shape:
                    if __phase == "fwd":  # backward sees gradients: report the inputs' shapes
                        ctx._profile_shapes = _shapes(args)
                    timers.add((__phase, __name, getattr(ctx, "_profile_shapes", "")), dt)
                return out

            setattr(cls, attr, staticmethod(timed))
            undo.append((cls, attr, original))

    def restore() -> None:
        for cls, attr, original in reversed(undo):
            setattr(cls, attr, original)
    return restore


def _wrap(owner: Any, attr: str, timers: Timers, key: Key) -> None:
    original = getattr(owner, attr)

    def timed(*args, **kwargs):
        t0 = timers.clock()
        try:
            return original(*args, **kwargs)
        finally:
            timers.add(key, timers.clock() - t0)

    setattr(owner, attr, timed)


def profile_step(config: str = "large", steps: int = 5, clock: str = "cpu",
                 shapes: int = 30, allocator: bool = True, print_fn=print) -> dict[str, float]:
    """Print where one training step of the bench GPT (config small|large) spends its time.

    Returns the headline figures in milliseconds per step.
    """
    from minimodel import optim
    from minimodel.bench import spec, steps as bench_steps
    from minimodel.runtime import blas_threads, tune_allocator
    from minimodel.tensor import Tensor

    allocated = tune_allocator("speed") if allocator else False
    shape = spec.step_shape(config)
    model = bench_steps.minimodel_gpt(shape)
    opt = optim.AdamW(model.parameters(), lr=bench_steps.LR,
                      weight_decay=bench_steps.WEIGHT_DECAY)
    x, y = bench_steps.batch(shape)

    def step() -> None:  # the batch whole, in this thread: every function's time is this thread's
        loss = bench_steps.gpt_loss(model, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    for _ in range(3):
        step()
    timers = Timers(time.thread_time if clock == "cpu" else time.perf_counter)
    t0 = timers.clock()
    for _ in range(steps):
        step()
    plain = (timers.clock() - t0) / steps

    instrument(timers, by_shape=True)
    _wrap(type(model), "loss" if hasattr(model, "loss") else "__call__", timers,
          ("phase", "forward (model call)", ""))
    _wrap(Tensor, "backward", timers, ("phase", "backward (Tensor.backward)", ""))
    _wrap(type(opt), "step", timers, ("phase", f"{type(opt).__name__}.step", ""))
    _wrap(type(opt), "zero_grad", timers, ("phase", "zero_grad", ""))
    timers.reset()
    t0 = timers.clock()
    for _ in range(steps):
        step()
    total = (timers.clock() - t0) / steps

    def ms(key: Key) -> float:
        return 1e3 * timers.seconds.get(key, 0.0) / steps

    def prims(phase: str) -> float:
        return sum(v for k, v in timers.seconds.items() if k[0] == phase and not k[2])

    fwd, bwd = ms(("phase", "forward (model call)", "")), ms(("phase", "backward "
                                                               "(Tensor.backward)", ""))
    fwd_prim, bwd_prim = 1e3 * prims("fwd") / steps, 1e3 * prims("bwd") / steps
    opt_ms, zero_ms = ms(("phase", f"{type(opt).__name__}.step", "")), ms(("phase", "zero_grad",
                                                                           ""))
    say = print_fn
    say(f"config {config} ({shape.label}); allocator tuned: {allocated}; clock {clock}; "
        f"BLAS threads {blas_threads()}; MINIMODEL_KERNELS="
        f"{os.environ.get('MINIMODEL_KERNELS', '(unset)')}")
    say(f"step (un-instrumented) {1e3 * plain:8.1f} ms   instrumented {1e3 * total:8.1f} ms")
    say(f"  forward  {fwd:8.1f} ms, of which functions {fwd_prim:7.1f} -> module overhead "
        f"{fwd - fwd_prim:6.1f}")
    say(f"  backward {bwd:8.1f} ms, of which functions {bwd_prim:7.1f} -> engine overhead "
        f"(graph walk, gradient sums) {bwd - bwd_prim:6.1f}")
    say(f"  {type(opt).__name__}.step {opt_ms:8.1f} ms;  zero_grad {zero_ms:6.1f} ms")
    say("")
    say(f"{'function':<24} {'fwd ms':>8} {'bwd ms':>8} {'sum':>8} {'%step':>6} "
        f"{'calls/step':>10}")
    names = sorted({k[1] for k in timers.seconds if k[0] in ("fwd", "bwd")},
                   key=lambda n: -(ms(("fwd", n, "")) + ms(("bwd", n, ""))))
    for name in names:
        f, b = ms(("fwd", name, "")), ms(("bwd", name, ""))
        say(f"{name:<24} {f:8.1f} {b:8.1f} {f + b:8.1f} {100 * (f + b) / (1e3 * total):6.1f} "
            f"{timers.calls[('fwd', name, '')] / steps:10.0f}")
    say("")
    say(f"{'function x operand shapes':<64} {'fwd ms':>8} {'bwd ms':>8} {'calls':>6}")
    pairs = sorted({(k[1], k[2]) for k in timers.seconds if k[0] in ("fwd", "bwd") and k[2]},
                   key=lambda p: -(ms(("fwd", *p)) + ms(("bwd", *p))))
    for name, sig in pairs[:shapes]:
        say(f"{(name + ' ' + sig)[:64]:<64} {ms(('fwd', name, sig)):8.1f} "
            f"{ms(('bwd', name, sig)):8.1f} {timers.calls[('fwd', name, sig)] / steps:6.0f}")
    return {"step_ms": 1e3 * plain, "instrumented_ms": 1e3 * total, "forward_ms": fwd,
            "backward_ms": bwd, "optimizer_ms": opt_ms}
