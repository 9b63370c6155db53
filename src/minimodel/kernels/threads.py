"""Jobs in threads, one per core, with the BLAS threads shared out between them.

Why threads pay in NumPy: BLAS and NumPy's array loops release Python's GIL, so two threads
doing array work keep two cores busy. Users: the AdamW kernel (:mod:`minimodel.kernels.adamw`,
two halves of the update) and the batch split of a training step (two halves of the batch)
— both only with kernels on.

:func:`run_parts` runs a list of jobs at once when BLAS may use several threads (each job's
BLAS calls then get their share of them, restored afterwards: the library makes no lasting
change to process settings), or one after the other in this thread when it may use one
(``minimodel train --threads 1``, or a BLAS that threadpoolctl cannot limit). Either way the
results are the same; only the time differs.
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterator, TypeVar

from minimodel.autograd import grad_mode
from minimodel.runtime import blas_libraries

R = TypeVar("R")


_pool: ThreadPoolExecutor | None = None
_blas_lock = threading.Lock()
_blas_users = 0  # callers inside _blas_threads_per_call now (models in several user threads)
_blas_limit: Any = None


def _forget_threads_after_fork() -> None:
    """A forked child has none of its parent's threads: start a new pool when needed (the old
    one would wait forever for a worker that does not exist)."""
    global _pool, _blas_users, _blas_limit, _blas_lock
    _pool, _blas_users, _blas_limit, _blas_lock = None, 0, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads_after_fork)


def available_threads() -> int:
    """How many threads this process lets BLAS use: shared out between the parts.

    1 when no BLAS library can be limited (running parts in threads on top of a BLAS that
    threads each call itself would ask for more cores than there are).
    """
    libs = blas_libraries().lib_controllers
    return min(lib.num_threads for lib in libs) if libs else 1


@contextlib.contextmanager
def _blas_threads_per_call(n: int) -> Iterator[None]:
    """BLAS at ``n`` threads per call inside the block, then back to what it was."""
    global _blas_users, _blas_limit
    with _blas_lock:
        if _blas_users == 0:
            _blas_limit = blas_libraries().limit(limits=n)
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def _in_part(job: Callable[[], R]) -> R:
    with grad_mode(True):  # a worker thread records graphs as the caller's does
        return job()


def run_parts(jobs: list[Callable[[], R]]) -> list[R]:
    """Run the jobs, the first in this thread, the others at the same time in worker threads
    when BLAS may use several threads (else here, one after the other); results in order.

    Every job finishes before this returns, even when one fails (no thread keeps working on a
    model after the call); then the first failure, in job order, is raised.
    """
    global _pool
    threads = available_threads()
    if threads < 2:
        outcomes = [_outcome(job) for job in jobs]
        return _results(outcomes)
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(os.cpu_count() or 2, 2),
                                   thread_name_prefix="minimodel-part")
    with _blas_threads_per_call(max(1, threads // len(jobs))):
        work: list[Callable[[], R] | Future] = list(jobs)
        for i in range(1, len(jobs)):
            try:
                work[i] = _pool.submit(_in_part, jobs[i])
            except RuntimeError:  # no thread could be started (a process limit): run it here
                pass
        outcomes = [_outcome(w) for w in work]  # job 0 runs here while the others run there
    return _results(outcomes)


def _results(outcomes: list[tuple[bool, Any]]) -> list[Any]:
    for ok, value in outcomes:
        if not ok:
            raise value
    return [value for _, value in outcomes]


def _outcome(work: Callable[[], R] | Future) -> tuple[bool, Any]:
    """(True, result) or (False, the exception) of a job run here or of a submitted one."""
    try:
        return True, work.result() if isinstance(work, Future) else _in_part(work)
    except Exception as error:  # noqa: BLE001 - re-raised by run_parts, after the others finish
        return False, error
