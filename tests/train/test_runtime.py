"""minimodel.runtime: BLAS threads through threadpoolctl, the glibc allocator presets, and the
promise that ``import minimodel`` leaves the process alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from minimodel import runtime
from minimodel.messages import say

SRC = Path(__file__).resolve().parents[2] / "src"


def _blas_threads_seen_by_threadpoolctl() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.fixture
def restore_blas_threads():
    before = runtime.blas_threads()
    yield before
    if before is not None:
        runtime.set_blas_threads(before)


def test_set_blas_threads_changes_what_threadpoolctl_reports(restore_blas_threads):
    if restore_blas_threads is None:
        pytest.skip("NumPy was built without a BLAS threadpoolctl can see")
    for n in (2, 1):  # two values, so the test also fails on a machine whose default is 1
        assert runtime.set_blas_threads(n) is True
        assert _blas_threads_seen_by_threadpoolctl() == {n}
        assert runtime.blas_threads() == n
    a = np.ones((64, 64), dtype=np.float32)
    assert float((a @ a)[0, 0]) == 64.0  # BLAS still works after the change


def _said(note: tuple[str, dict], lang: str = "en") -> str:
    """configure's note (what it chose, and the figures) as a run prints it."""
    choice, fields = note
    return say(f"runtime.threads_{choice}", lang, **fields)


def test_configure_with_a_number_sets_it_and_says_so(restore_blas_threads):
    if restore_blas_threads is None:
        pytest.skip("NumPy was built without a BLAS threadpoolctl can see")
    assert _said(runtime.configure(3)) == "BLAS threads: 3"
    assert _blas_threads_seen_by_threadpoolctl() == {3}


def test_configure_auto_uses_one_thread_when_the_cores_are_busy(monkeypatch,
                                                               restore_blas_threads):
    if restore_blas_threads is None:
        pytest.skip("NumPy was built without a BLAS threadpoolctl can see")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.9, 1.0, 1.0))
    runtime.set_blas_threads(2)
    note = _said(runtime.configure("auto"))
    assert note.startswith("BLAS threads: 1 (auto: load average 1.9 on 2 cores")
    assert _blas_threads_seen_by_threadpoolctl() == {1}
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 1.0, 1.0))
    runtime.set_blas_threads(2)
    assert _said(runtime.configure("auto")) == ("BLAS threads: 2 (auto: load average 0.2 on 2 "
                                                "cores)")
    assert _said(runtime.configure("auto"), "es") == ("hilos de BLAS: 2 (auto: carga media 0.2 "
                                                      "en 2 núcleos)")


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (2.5, TypeError),
                                        ("2", TypeError), (True, TypeError)])
def test_bad_thread_counts_are_refused_with_the_value(bad, error):
    with pytest.raises(error, match=repr(bad) if error is TypeError else str(bad)):
        runtime.set_blas_threads(bad)


def test_allocator_presets_and_opt_out(monkeypatch):
    monkeypatch.setenv(runtime.TUNE_MALLOC_ENV, "0")
    assert runtime.tune_allocator() is False  # opted out: nothing changed
    monkeypatch.delenv(runtime.TUNE_MALLOC_ENV)
    glibc = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION")
    assert runtime.tune_allocator("speed") is bool(glibc)
    assert runtime.malloc_trim() is bool(glibc)
    with pytest.raises(ValueError, match="'huge'.*speed, strict"):
        runtime.tune_allocator("huge")


def test_import_minimodel_changes_no_process_state():
    """Importing the library (and the commands) must leave BLAS threads and malloc alone; only
    the command handlers call minimodel.runtime's setters (the kernels' threads import it for
    its BLAS controller, which changes nothing)."""
    code = """
import json, sys
import numpy
from threadpoolctl import threadpool_info
before = [p["num_threads"] for p in threadpool_info()]
setters = {"configure", "tune_allocator", "set_blas_threads"}
called = []
def watch(frame, event, arg):
    code = frame.f_code
    if event == "call" and code.co_name in setters and code.co_filename.endswith("runtime.py"):
        called.append(code.co_name)
sys.setprofile(watch)
import minimodel, minimodel.models, minimodel.training, minimodel.cli
minimodel.cli.build_parser()
sys.setprofile(None)
after = [p["num_threads"] for p in threadpool_info()]
print(json.dumps({"before": before, "after": after, "runtime_setters_called": called}))
"""
    env = dict(os.environ, PYTHONPATH=str(SRC), OPENBLAS_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["before"] == seen["after"]
    assert seen["runtime_setters_called"] == []


def test_the_thread_count_does_not_change_what_is_trained(tiny_corpus, tmp_path):
    """--threads 1 runs the two halves of each batch one after the other, --threads 2 at the
    same time (kernels/batch_split.py): the weights trained are the same bits. The batch
    (12 x 128 tokens) is large enough to be cut in two.

    A claim about the split, so the runs use kernels even in CI's composites-only pass: the
    composites never cut the batch, and BLAS on 2 threads may then round differently (OpenBLAS
    on an AMD EPYC splits the long sum of a weight-gradient product across its threads)."""
    from safetensors.numpy import load_file

    from minimodel.kernels import batch_split

    assert 12 * 128 >= batch_split.PARTS * batch_split.MIN_TOKENS_PER_PART
    trained = []
    for threads in ("1", "2"):
        out = tmp_path / f"threads-{threads}"
        args = ["train", "--corpus", str(tiny_corpus), "--tokenizer", "byte", "--d-model", "16",
                "--n-layer", "1", "--n-head", "2", "--block-size", "128", "--batch-size", "12",
                "--steps", "3", "--eval-interval", "3", "--eval-batches", "1",
                "--threads", threads, "--quiet", "--out", str(out)]
        done = subprocess.run([sys.executable, "-m", "minimodel", *args], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "MINIMODEL_KERNELS": "1"})
        assert done.returncode == 0, done.stderr
        trained.append(load_file(str(out / "model.safetensors")))
    assert trained[0].keys() == trained[1].keys()
    for name in trained[0]:
        assert np.array_equal(trained[0][name], trained[1][name]), name
