"""The doctor's first run on a config three ways, interleaved: serial, a child process, a thread.

    python benchmarks/doctor_first_run_overlap.py FOLDER --rounds 3

A first run must ask transformers (imports of torch and the model's code, most of the run) and
do its own work (headers, E, W, the tokenizer, the expensive checks). Each round runs, each in
a fresh process with an empty cache (``XDG_CACHE_HOME`` a new temporary folder):

* ``serial``: ``diagnose(FOLDER, overlap=False)``, transformers asked in the process;
* ``process``: ``diagnose(FOLDER)``, transformers asked in a child process while the doctor's
  own work runs (what ``minimodel doctor`` does);
* ``thread``: the alternative not taken: the same ``diagnose`` with transformers asked in a
  worker thread of the process instead of a child (imports hold the GIL; NumPy's large
  operations release it).

Printed per mode: the median wall time and CPU time (user + system of the process and its
children) over the rounds, and each round's. FOLDER is e.g. the GPT-2-small folder that
``benchmarks/doctor_gpt2_small.py --keep DIR`` builds.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from minimodel.commands._argtypes import at_least
from minimodel.doctor import architecture, background, diagnose

MODES = ("serial", "process", "thread")


class _ThreadAsChild:
    """Stands for the child process in ``background.Question``: a thread that asks transformers
    in this process (the alternative measured here, not the doctor's way)."""

    def __init__(self, question) -> None:
        self.keys: list[str] = []
        self.ready = threading.Event()
        self.answer = None
        self.thread = threading.Thread(target=self._work, args=(question,))
        self.thread.start()

    def _work(self, question) -> None:
        def keys() -> list[str]:  # sent late, as to the child
            self.ready.wait()
            return self.keys
        self.answer = architecture.ask_transformers(question.config, question.folder, keys)

    def poll(self):
        return None if self.thread.is_alive() else 0

    def kill(self) -> None:
        self.ready.set()  # a stopped question: let the thread finish

    def wait(self) -> None:
        self.thread.join()


def _use_a_thread() -> None:
    def spawn(question) -> None:
        question.child = _ThreadAsChild(question)

    def wait(question, keys):
        child = question.child
        child.keys = keys
        child.ready.set()
        child.thread.join()
        return child.answer

    background.Question._spawn = spawn
    background.Question._wait = wait


def one(mode: str, folder: str) -> None:
    """One first run in this process (called by :func:`run` in a fresh process)."""
    if mode == "thread":
        _use_a_thread()
    report = diagnose(folder, overlap=mode != "serial")
    assert report.subject.roles.source.startswith("transformers"), report.subject.roles.source


def run(mode: str, folder: str) -> tuple[float, float]:
    """(wall s, CPU s) of one fresh process in ``mode`` with an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, __file__, folder, "--one", mode], check=True,
                       env={**os.environ, "XDG_CACHE_HOME": cache}, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="a Hugging Face model folder")
    parser.add_argument("--rounds", type=at_least(1), default=3)
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)  # a run's own process
    args = parser.parse_args()
    if args.one:
        one(args.one, args.folder)
        return 0
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
    for _ in range(args.rounds):  # interleaved: a drift in the machine's load hits every mode
        for mode in MODES:
            times[mode].append(run(mode, args.folder))
    for mode in MODES:
        walls, cpus = zip(*times[mode])
        print(f"{mode:8s} wall {statistics.median(walls):.2f} s, CPU "
              f"{statistics.median(cpus):.2f} s (median of {args.rounds}; walls "
              + ", ".join(f"{w:.2f}" for w in walls) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
