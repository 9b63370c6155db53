"""Process-level speed settings for a training run: BLAS threads and the glibc allocator.

BLAS threads. A GPT step is hundreds of small matrix products (per-head attention, B*H of
them per layer). OpenBLAS wakes and joins its threads for each one; when another process
already occupies the cores, every join waits for the scheduler and a step got 10-20x slower
with 2 threads than with 1 on our 2-core machine (docs/results.md). ``threads="auto"`` keeps
the library default on an idle machine and drops to one thread when the 1-minute load average
says the cores are busy. Thread count does not change the results: OpenBLAS splits a product
by output blocks, each computed by the same kernel.

Allocator. NumPy temporaries above glibc's mmap threshold are fresh mappings that page-fault
on first touch; pinning the threshold at 32 MiB keeps them in the heap (DESIGN.md section 7:
page faults cost 19-52 % of a step). Linux/glibc only; elsewhere both are no-ops. Opt out
with the environment variable ``MINIMODEL_TUNE_MALLOC=0``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")


def _openblas() -> ctypes.CDLL | None:
    """The OpenBLAS that NumPy loaded, found in this process's memory map (Linux)."""
    import numpy  # noqa: F401  (make sure it is loaded)

    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps
                     if "openblas" in line.lower() and line.split()[-1].startswith("/")}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def blas_threads() -> int | None:
    lib = _openblas()
    for name in _GETTERS:
        if lib is not None and hasattr(lib, name):
            return int(getattr(lib, name)())
    return None


def set_blas_threads(n: int) -> bool:
    """Set OpenBLAS's thread count; False when no OpenBLAS setter is found."""
    if n < 1:
        raise ValueError(f"--threads must be at least 1, got {n}")
    lib = _openblas()
    for name in _SETTERS:
        if lib is not None and hasattr(lib, name):
            getattr(lib, name)(ctypes.c_int(n))
            return True
    return False


def tune_allocator() -> bool:
    """Keep NumPy's temporaries (< 32 MiB) in the heap instead of fresh mmaps.

    Returns False without changing anything when ``MINIMODEL_TUNE_MALLOC=0`` is set.
    """
    if os.environ.get("MINIMODEL_TUNE_MALLOC", "1").strip() == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim, m_top_pad, m_mmap = -1, -2, -3
        mib = 1 << 20
        return all(libc.mallopt(ctypes.c_int(p), ctypes.c_int(v)) == 1
                   for p, v in ((m_mmap, 32 * mib), (m_trim, 512 * mib), (m_top_pad, 64 * mib)))
    except (OSError, AttributeError):
        return False


def configure(threads: str | int | None = "auto") -> str:
    """Apply the run's speed settings; returns a one-line description for the log."""
    tune_allocator()
    cores = os.cpu_count() or 1
    if threads in (None, "auto"):
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
        if cores > 1 and load >= cores - 0.5:
            set_blas_threads(1)
            return (f"BLAS threads: 1 (auto: load average {load:.1f} on {cores} cores; "
                    "--threads N to override)")
        return (f"BLAS threads: {blas_threads() or '?'} (auto: load average {load:.1f} on "
                f"{cores} cores)")
    n = int(threads)
    ok = set_blas_threads(n)
    return f"BLAS threads: {n}" + ("" if ok else " (no OpenBLAS found; setting ignored)")
