"""One measurement in a fresh process: ``python .../minimodel/bench/worker.py '<json task>'``.

The runner (:mod:`minimodel.bench.runner`) starts one worker per implementation, case and
round, with the thread counts (``OPENBLAS_NUM_THREADS``...) and switches
(``MINIMODEL_KERNELS``, ``MINIMODEL_TUNE_MALLOC``) already in its environment, so nothing
measured shares a heap, a BLAS thread pool or a warm cache with anything else. The worker
prints one line ``RESULT {json}`` at the end; anything else on stdout/stderr is diagnostics.

Which minimodel is measured: the one on ``PYTHONPATH`` — this checkout's by default, or another
checkout's ``src`` (``--against``). The harness itself (``minimodel.bench``, and
``minimodel.runtime`` for the process settings) always comes from the folder this file is in,
so two versions of the library are measured by exactly the same code.

Tasks (``task`` key): step, memory, mlm, util, ceiling, generate; see
:mod:`minimodel.bench.tasks`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

RESULT_PREFIX = "RESULT "
HERE = Path(__file__).resolve().parent  # .../minimodel/bench


def _load_as(name: str, path: Path, package_dir: Path | None = None):
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(package_dir)] if package_dir else None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def use_this_harness() -> None:
    """Make ``minimodel.bench`` and ``minimodel.runtime`` the files beside this one, whatever
    ``minimodel`` the PYTHONPATH holds (the code under test)."""
    # Run as a script, Python put this folder first on sys.path: drop it, or `profiler`,
    # `spec`... would shadow top-level modules.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    import minimodel

    if Path(minimodel.__file__).resolve().parent == HERE.parent:
        return  # measuring this checkout: nothing to redirect
    minimodel.runtime = _load_as("minimodel.runtime", HERE.parent / "runtime.py")
    minimodel.bench = _load_as("minimodel.bench", HERE / "__init__.py", HERE)


def main(argv: list[str] | None = None) -> int:
    from minimodel.bench.tasks import TASKS

    argv = sys.argv[1:] if argv is None else argv
    task = json.loads(argv[0])
    load0 = os.getloadavg()[0]
    out = TASKS[task["task"]](task)
    import minimodel

    out.update(task=task["task"], impl=task.get("impl"), pid=os.getpid(),
               loadavg_start=load0, loadavg_end=os.getloadavg()[0],
               minimodel_dir=str(Path(minimodel.__file__).resolve().parent),
               harness_dir=str(Path(sys.modules["minimodel.bench"].__file__).resolve().parent),
               env={k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                    "MINIMODEL_KERNELS",
                                                    "MINIMODEL_TUNE_MALLOC")})
    print(RESULT_PREFIX + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    use_this_harness()
    sys.exit(main())
