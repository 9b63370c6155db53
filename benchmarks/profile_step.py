"""Where does a minimodel training step spend its time? Per autograd Function and per shape.

    python benchmarks/profile_step.py --threads 1                 # CPU time, d=256 V=8192
    python benchmarks/profile_step.py --threads 2 --clock wall    # with BLAS threads
    python benchmarks/profile_step.py --config small --kernels off

A thin entry point to :func:`minimodel.bench.profiler.profile_step`, which times (in this
process only) the forward and backward of every ``Function`` subclass, the model call,
``Tensor.backward`` and the optimizer. With ``--threads 1`` all work is on the main thread and
the default CPU clock does not move when other processes share the cores.
"""

from __future__ import annotations

import argparse
import os
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, SRC)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=("small", "large"), default="large")
    ap.add_argument("--steps", type=int, default=5, help="profiled steps (default 5)")
    ap.add_argument("--threads", type=int, default=None, help="BLAS threads (default: as is)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: this thread's CPU time (use with --threads 1); wall otherwise")
    ap.add_argument("--kernels", choices=("on", "off"), default="on",
                    help="MINIMODEL_KERNELS for this process (default on)")
    ap.add_argument("--no-allocator", dest="allocator", action="store_false",
                    help="keep glibc's default allocator settings")
    ap.add_argument("--shapes", type=int, default=30, help="rows of the per-shape table")
    args = ap.parse_args()
    os.environ["MINIMODEL_KERNELS"] = "1" if args.kernels == "on" else "0"  # before the import

    from minimodel.bench.profiler import profile_step
    from minimodel.runtime import set_blas_threads

    if args.threads is not None:
        set_blas_threads(args.threads)
    profile_step(args.config, steps=args.steps, clock=args.clock, shapes=args.shapes,
                 allocator=args.allocator)
    return 0


if __name__ == "__main__":
    sys.exit(main())
