"""glibc malloc tuning for a NumPy process (DESIGN.md section 7).

NumPy gets array buffers from ``malloc``. glibc serves requests above ``M_MMAP_THRESHOLD``
(128 KiB at start, raised dynamically up to 32 MiB) with a fresh ``mmap`` and returns them with
``munmap`` on free; every page of such a buffer then costs a page fault on first touch, and a
training step allocates and frees the same few-MiB temporaries hundreds of times. Pinning the
threshold at its 32 MiB maximum keeps those buffers in the heap, and a large trim threshold
stops ``free`` from handing the top of the heap back to the kernel after every step.

Call :func:`tune` before any large array exists. Linux/glibc only; elsewhere it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4
M_ARENA_MAX = -8

MIB = 1 << 20

# name -> list of (param, value); "std" is the recommendation, the others are for comparison.
PRESETS = {
    "none": [],
    "mmap": [(M_MMAP_THRESHOLD, 32 * MIB)],
    "std": [(M_MMAP_THRESHOLD, 32 * MIB), (M_TRIM_THRESHOLD, 512 * MIB), (M_TOP_PAD, 64 * MIB)],
    "nommap": [(M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, 1024 * MIB), (M_TOP_PAD, 64 * MIB)],
    "std1arena": [(M_MMAP_THRESHOLD, 32 * MIB), (M_TRIM_THRESHOLD, 512 * MIB),
                  (M_TOP_PAD, 64 * MIB), (M_ARENA_MAX, 1)],
}


def tune(preset: str = "std") -> dict:
    """Apply a preset; return {"preset", "ok"} (ok False when glibc is not available)."""
    settings = PRESETS[preset]
    if not settings:
        return {"preset": preset, "ok": True}
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        ok = all(libc.mallopt(ctypes.c_int(p), ctypes.c_int(v)) == 1 for p, v in settings)
    except (OSError, AttributeError):
        ok = False
    return {"preset": preset, "ok": bool(ok)}


def page_faults() -> tuple[int, int]:
    """(minor, major) page faults of this process so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_minflt, ru.ru_majflt
