"""Process-wide speed settings: BLAS threads and the glibc allocator — in one place.

Nothing here runs on ``import minimodel``: a library must not change the state of the process
that imports it. A program that owns its process (the command line's training runs, a benchmark
worker) calls :func:`configure` (or the two setters below) explicitly.

BLAS threads. A GPT step is hundreds of small matrix products (per-head attention, B*H of them
per layer). OpenBLAS wakes and joins its threads for each one; when another process already
occupies the cores, every join waits for the scheduler, and a step gets many times slower
with 2 threads than with 1 on a busy 2-core machine (figures: docs/results.md). ``threads="auto"`` keeps the
library default on an idle machine and drops to one thread when the 1-minute load average says
the cores are busy. The thread count does not change results: OpenBLAS splits a product by
output blocks, each computed by the same kernel. The threads are set through ``threadpoolctl``,
which finds whichever BLAS NumPy loaded (OpenBLAS, MKL, BLIS...) and calls its own setter.
The same count decides whether jobs in threads (the two halves of a training batch, of an
AdamW update) run at the same time (2+ threads) or one after the other (1 thread), with the
same numbers either way.

Allocator. NumPy gets its buffers from ``malloc``. glibc serves requests above
``M_MMAP_THRESHOLD`` with a fresh ``mmap`` and unmaps them on ``free``, so every page of such a
buffer page-faults again on first touch — and a training step allocates and frees the same
few-MiB temporaries hundreds of times. Pinning the threshold at its 32 MiB maximum keeps them
in the heap (page faults cost a large share of a step: BENCHMARKS.md). Linux/glibc only;
elsewhere :func:`tune_allocator` returns False and changes nothing. Opt out with the
environment variable ``MINIMODEL_TUNE_MALLOC=0``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

import numpy  # noqa: F401  (loaded first: threadpoolctl can only see a BLAS already loaded)
from threadpoolctl import ThreadpoolController

TUNE_MALLOC_ENV = "MINIMODEL_TUNE_MALLOC"

# glibc mallopt() parameter numbers (malloc.h).
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
MIB = 1 << 20

ALLOCATOR_PRESETS: dict[str, tuple[tuple[int, int], ...]] = {
    # What `minimodel train` uses: temporaries below 32 MiB stay in the heap, and free() does
    # not hand the top of the heap back to the kernel after every step.
    "speed": ((M_MMAP_THRESHOLD, 32 * MIB), (M_TRIM_THRESHOLD, 512 * MIB), (M_TOP_PAD, 64 * MIB)),
    # For measuring memory: every block >= 128 KiB is its own mapping and is given back at
    # once, so the resident set size follows live memory.
    "strict": ((M_MMAP_THRESHOLD, 128 * 1024), (M_TRIM_THRESHOLD, 128 * 1024), (M_TOP_PAD, 0)),
}


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def tune_allocator(preset: str = "speed") -> bool:
    """Apply a glibc ``mallopt`` preset (see ``ALLOCATOR_PRESETS``); True when glibc took it.

    The "speed" preset is skipped (False, nothing changed) when ``MINIMODEL_TUNE_MALLOC=0``.
    """
    if preset not in ALLOCATOR_PRESETS:
        raise ValueError(f"unknown allocator preset {preset!r}; choose one of "
                         f"{', '.join(ALLOCATOR_PRESETS)}")
    if preset == "speed" and os.environ.get(TUNE_MALLOC_ENV, "1").strip() == "0":
        return False
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):  # not glibc (macOS, musl, Windows)
        return False
    # mallopt returns 1 on success, 0 when it refuses a value.
    return all(libc.mallopt(ctypes.c_int(param), ctypes.c_int(value)) == 1
               for param, value in ALLOCATOR_PRESETS[preset])


def malloc_trim() -> bool:
    """Give free heap memory back to the kernel now (glibc only); True when it ran."""
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True


def blas_libraries() -> ThreadpoolController:
    """threadpoolctl's controller of the BLAS libraries NumPy loaded (made once; the one place
    that asks threadpoolctl, for :func:`set_blas_threads` and for jobs that share the threads)."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController().select(user_api="blas")
    return _controller


_controller: ThreadpoolController | None = None


def blas_threads() -> int | None:
    """Threads NumPy's BLAS uses now; None when no BLAS library was found."""
    libraries = blas_libraries().lib_controllers
    return max(lib.num_threads for lib in libraries) if libraries else None


def set_blas_threads(n: int) -> bool:
    """Use ``n`` BLAS threads from now on; False when no BLAS library was found."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"the BLAS thread count must be an int, got {type(n).__name__} {n!r}")
    if n < 1:
        raise ValueError(f"the BLAS thread count must be at least 1, got {n}; "
                         "use --threads N with N >= 1, or --threads auto")
    if not blas_libraries().lib_controllers:
        return False
    # Used as a plain call (not a `with` block), the limit stays for the rest of the process.
    blas_libraries().limit(limits=n)
    return True


def configure(threads: str | int | None = "auto") -> tuple[str, dict[str, object]]:
    """Apply a run's speed settings (allocator + BLAS threads); what was chosen, for the log:
    ``(choice, fields)``, said as the catalogue's ``runtime.threads_<choice>`` (this module
    sits below ``minimodel.messages``: see ``training.report.configure_run``).

    Args:
        threads: "auto" (or None) chooses 1 thread when the 1-minute load average is at least
            ``cores - 0.5`` and keeps the library default otherwise; an int sets exactly that.
    """
    tune_allocator("speed")
    cores = os.cpu_count() or 1
    if threads in (None, "auto"):
        try:
            load = os.getloadavg()[0]
        except OSError:  # not available on this platform
            load = 0.0
        if cores > 1 and load >= cores - 0.5:
            set_blas_threads(1)
            return "auto_busy", {"load": load, "cores": cores}
        return "auto", {"threads": blas_threads() or "?", "load": load, "cores": cores}
    n = int(threads)
    found = set_blas_threads(n)
    return ("set" if found else "no_blas"), {"threads": n}
