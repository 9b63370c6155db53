"""Which of NumPy's OpenBLAS kernel sets can run on this CPU, asked by running them.

    python scripts/blas_core_types.py                      # every candidate: what it runs here
    python scripts/blas_core_types.py --pick 2             # two kernel sets other than this CPU's

NumPy's OpenBLAS picks its kernels by CPU at run time, and ``OPENBLAS_CORETYPE`` forces another
CPU's. It does not check that this CPU can execute them: on an AMD Zen 3 (AVX2, no AVX-512),
``OPENBLAS_CORETYPE=SkylakeX`` makes threadpoolctl report ``SkylakeX`` and the first float32
matrix product dies of SIGILL (illegal instruction). So a kernel set is only counted as
runnable here when a child process, forced to it, multiplies float32 and float64 matrices and
vectors, gets the same numbers as the plain sum it checks them against, and exits cleanly.

``--pick N`` prints (one per line, for a shell loop) the first N candidates, in the order given,
whose kernel sets run here, differ from each other and differ from the kernels the test suite
already runs: this environment's (the CPU's own, or the set an ``OPENBLAS_CORETYPE`` already
exported forces: a machine image may export one, and then the CPU's own set is one to check);
when fewer exist, the suite's kernels fill in, and a note on stderr says so. CI's lesson and
notebook passes use it (``.ci/run``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CANDIDATES = ["SkylakeX", "Haswell", "Sandybridge", "Nehalem", "Prescott"]

# The child: the BLAS calls the lessons make (matrix products, matrix-vector, dot) in both
# precisions, checked against a loop-free sum that does not call BLAS, then the kernel's name.
PROBE = """
import numpy as np, threadpoolctl
rng = np.random.default_rng(0)
for dtype in (np.float32, np.float64):
    a = rng.standard_normal((96, 80)).astype(dtype)
    b = rng.standard_normal((80, 72)).astype(dtype)
    plain = (a[:, :, None] * b[None, :, :]).sum(axis=1)
    assert np.allclose(a @ b, plain, rtol=1e-4, atol=1e-4)
    assert np.allclose(a @ b[:, 0], plain[:, 0], rtol=1e-4, atol=1e-4)
    assert np.isclose(a[0] @ a[1], (a[0] * a[1]).sum(), rtol=1e-4, atol=1e-4)
info = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
print(info[0]["architecture"] if info else "none")
"""


def kernels_run(core: str | None, inherit: bool = False) -> str | None:
    """The kernel set OpenBLAS runs with ``OPENBLAS_CORETYPE=core`` (``None``: not forced; with
    ``inherit``, whatever this environment forces), or ``None`` when the child fails (an
    instruction this CPU lacks, or wrong numbers)."""
    env = dict(os.environ)
    if not inherit:
        env.pop("OPENBLAS_CORETYPE", None)
    if core is not None:
        env["OPENBLAS_CORETYPE"] = core
    child = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                           text=True)
    if child.returncode != 0:
        return None
    return child.stdout.strip() or None


def pick(count: int, candidates: list[str]) -> list[str]:
    """Up to ``count`` candidates with distinct runnable kernel sets other than the suite's (this
    environment's); the suite's kernels (by the first candidate running them) fill in when too
    few."""
    own = kernels_run(None, inherit=True)
    chosen, seen, own_name = [], {own}, None
    for core in candidates:
        arch = kernels_run(core)
        print(f"OPENBLAS_CORETYPE={core}: "
              + (f"runs {arch}" if arch else "cannot run on this CPU (skipped)"), file=sys.stderr)
        if arch == own and own_name is None:
            own_name = core
        if arch and arch not in seen and len(chosen) < count:
            chosen.append(core)
            seen.add(arch)
    if len(chosen) < count:
        print(f"note: only {len(chosen)} kernel set(s) other than this CPU's own ({own}) run "
              "here; its own fills in", file=sys.stderr)
        if own_name:
            chosen.append(own_name)
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cores", nargs="*", default=CANDIDATES,
                        help=f"OPENBLAS_CORETYPE names to try, in order (default: "
                             f"{' '.join(CANDIDATES)})")
    parser.add_argument("--pick", type=int, metavar="N",
                        help="print N runnable core types with kernels other than this CPU's")
    args = parser.parse_args()
    if args.pick is not None:
        print("\n".join(pick(args.pick, args.cores)))
        return 0
    print(f"not forced: runs {kernels_run(None)}")
    if os.environ.get("OPENBLAS_CORETYPE"):
        print(f"this environment (OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}): runs "
              f"{kernels_run(None, inherit=True)}")
    for core in args.cores:
        print(f"OPENBLAS_CORETYPE={core}: {kernels_run(core) or 'cannot run on this CPU'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
