"""CI's other-CPU passes force only kernel sets this CPU can run (scripts/blas_core_types.py):
OpenBLAS loads whatever OPENBLAS_CORETYPE names, and AVX-512 kernels on a CPU without AVX-512
kill the process with SIGILL while threadpoolctl still reports them."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import blas_core_types  # noqa: E402

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="OpenBLAS's x86 core types")


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    pytest.skip("no CPU flags in /proc/cpuinfo")


def test_skylakex_kernels_are_counted_runnable_exactly_when_the_cpu_has_avx512():
    expected = "SkylakeX" if "avx512f" in cpu_flags() else None
    assert blas_core_types.kernels_run("SkylakeX") == expected


@pytest.mark.parametrize("exported", [None, "Sandybridge"])
def test_pick_gives_two_distinct_kernel_sets_that_run_here_other_than_the_suites(exported,
                                                                                 monkeypatch):
    """The suite's kernels are this environment's: the CPU's own, or those of an
    OPENBLAS_CORETYPE the machine exports (then the CPU's own set is one to check)."""
    if exported is None:
        monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_CORETYPE", exported)
    picked = blas_core_types.pick(2, blas_core_types.CANDIDATES)
    kernels = [blas_core_types.kernels_run(core) for core in picked]
    assert len(picked) == 2 and None not in kernels
    assert len(set(kernels)) == 2
    assert blas_core_types.kernels_run(None, inherit=True) not in kernels
    if exported is not None:
        assert exported not in kernels
        assert blas_core_types.kernels_run(None) in kernels  # the CPU's own set, now checked
