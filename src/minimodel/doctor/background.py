"""Ask transformers in a child process, while the doctor reads the model and runs its checks.

Asking transformers (:mod:`.architecture`) the first time on a config costs seconds of imports
(torch, then the model's modeling code) spent on one core; reading the files, the tokenizer and
the expensive checks need none of it. So :class:`Question` starts a child process running
:func:`.architecture.answer_on_stdout` as soon as the config is read, and the doctor works
meanwhile::

    main   config ─ start child ─ headers, E, W, tokenizer, checks on a guess ─ wait ─ checks
    child                import torch, transformers ─ build on meta ─ (keys) ─ answer

The child gets the config (first line of its stdin) at once and the stored keys (second line)
once the main process knows them (after the headers, or the pickles), and prints the
:class:`~.architecture.Architecture` as JSON. It never writes a file: the main process stores
the answer in the cache (:mod:`.arch_cache`), atomically, so an interruption leaves none half
written. A child that crashes, prints nothing readable or runs past :data:`TIMEOUT_S` is killed
and the built-in table names the tensors, the report saying why (:attr:`Question.failure`), as
without transformers; that answer is not cached. On Ctrl-C the child is killed too.

``overlap=False`` asks in this process instead (the serial path, one answer for the same
config and keys); so does a process that has imported transformers already, or torch to read
a pytorch_model.bin (one NumPy cannot map, :mod:`.torch_pickle`): the child would only cost
more (memory above all: two processes holding torch).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from minimodel.doctor import arch_cache, architecture
from minimodel.doctor.architecture import (
    Architecture,
    ask_transformers,
    available,
    installed_version,
)

TIMEOUT_S = 300.0  # a child still importing after this long is hung: the table answers
# The child runs architecture.py alone (it imports nothing of minimodel): run_path, unlike
# ``python FILE``, does not put the doctor's folder on sys.path, whose module names could
# shadow the ones torch and transformers import.
CHILD_CODE = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
CHILD = [sys.executable, "-c", CHILD_CODE, architecture.__file__]


def transformers_imported() -> bool:
    """Has this process imported transformers already (a test session, a notebook)? Then
    asking here costs little, and no child is started."""
    return "transformers" in sys.modules


class Question:
    """transformers' answer about one config, asked once (in a child, or here when serial)."""

    def __init__(self, overlap: bool = True) -> None:
        self.overlap = overlap
        self.config: dict[str, Any] | None = None
        self.folder: Path | None = None
        self.path: Path | None = None        # the cache entry of (versions, config)
        self.entry: dict[str, Any] | None = None
        self.child: subprocess.Popen | None = None
        # why the child gave no answer (None: it did): {"kind": "timeout", "seconds": ...} or
        # {"kind": "crashed", "code": its exit code, "message": its last line on stderr}
        self.failure: dict[str, Any] | None = None

    def start(self, config: dict[str, Any], folder: Path | None,
              torch_read: bool = False) -> None:
        """Note the config; start the child now unless the cache already knows the config, there
        is no transformers to ask, or asking here is cheaper: this process has imported
        transformers already, or has imported torch to read the weights (``torch_read``: a
        pytorch_model.bin NumPy cannot map; a child would import torch a second time, in as
        much time and memory)."""
        version = installed_version()
        if self.config is not None or not isinstance(config.get("model_type"), str) or \
                version is None or not available():
            return
        self.config, self.folder = config, folder
        self.path = arch_cache.entry_path(version, config)
        self.entry = arch_cache.load(self.path)
        self.overlap = self.overlap and not torch_read
        if self.entry is None and self.overlap and not transformers_imported():
            self._spawn()

    @property
    def waiting(self) -> bool:
        """Is a child at work (so the main process has time for checks on a guess)?"""
        return self.child is not None and self.child.poll() is None

    def answer(self, keys: list[str]) -> Architecture | None:
        """The architecture with the stored ``keys`` renamed, as :func:`describe` gives
        it: from the cache when it holds the config and every key, else asked (the child
        started at :meth:`start`, or one started now), then stored with the keys known so far."""
        if self.config is None:
            return None
        entry = self.entry
        if entry is not None and (entry["architecture"] is None or
                                  all(k in entry["keys"] for k in keys)):
            self.stop()
            found = entry["architecture"]
            return None if found is None else Architecture.from_dict(found, entry["keys"])
        if not self.overlap or (self.child is None and transformers_imported()):
            arch = ask_transformers(self.config, self.folder, lambda: keys)
        else:
            if self.child is None:  # the cache knew the config but not these keys
                self._spawn()
            arch = self._wait(keys)
            if self.failure is not None:
                return None  # not cached: the next run asks again
        known = dict(entry["keys"]) if entry is not None else {}
        known.update(arch.keys if arch is not None else {})
        arch_cache.store(self.path, None if arch is None else arch.to_dict(), known)
        if arch is not None:
            arch.keys = known
        return arch

    def stop(self) -> None:
        """Kill the child if it still runs (an answer no longer needed, an error, Ctrl-C)."""
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait()

    def _spawn(self) -> None:
        self.child = subprocess.Popen(CHILD, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, encoding="utf-8")
        first = {"config": self.config, "folder": None if self.folder is None else
                 str(self.folder)}
        try:
            self.child.stdin.write(json.dumps(first, default=str) + "\n")
            self.child.stdin.flush()
        except OSError:  # the child died at once: _wait says why
            pass

    def _wait(self, keys: list[str]) -> Architecture | None:
        """Send the keys, read the answer; on any failure note why in ``failure``."""
        try:
            out, err = self.child.communicate(json.dumps(keys) + "\n", timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.stop()
            self.failure = {"kind": "timeout", "seconds": TIMEOUT_S}
            return None
        finally:
            self.stop()  # Ctrl-C (KeyboardInterrupt) lands here too: no child outlives us
        lines = out.strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if self.child.returncode == 0 and lines else None
            if answer is None or "architecture" not in answer:
                raise ValueError
        except ValueError:
            last = (err.strip().splitlines() or ["-"])[-1]
            self.failure = {"kind": "crashed", "code": self.child.returncode,
                            "message": last[:200]}
            return None
        found = answer["architecture"]
        return None if found is None else Architecture.from_dict(found, answer["keys"])


def describe(config: dict[str, Any], folder: Path | None = None,
             keys: list[str] | tuple[str, ...] = ()) -> Architecture | None:
    """transformers' answer about ``config`` (read by transformers itself from ``folder`` when
    given) and the stored ``keys``, through the cache, asked in this process when needed."""
    question = Question(overlap=False)
    question.start(config, folder)
    return question.answer(list(keys))
