"""The one way the lab runs a child process: the judge's sandbox, a break's experiment and
checks, and ``patch`` during validation all go through :func:`run_child`.

What every caller needs, done once:

* the child starts in its own session, so it and everything it spawns form one process
  group that can be killed together;
* a wall-clock limit kills that whole group (a solution that forks, or a script that starts
  a worker, cannot outlive its verdict), and so does Ctrl-C in the parent;
* the group is killed after the child exits too: a grandchild left running would keep the
  output pipes open and the parent waiting;
* stdout and stderr are captured (the last ``max_chars`` of each), and stdout lines can be
  passed on live as they arrive;
* :func:`clean_env` builds a small environment instead of inheriting ours.

Each caller keeps its own policy: which interpreter flags, which variables, which resource
limits (``preexec``), what a timeout means for its verdict.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

MAX_CHARS = 4 * 1024 * 1024  # bytes per stream; a runaway print keeps only its tail

# One BLAS thread: the children are small and run on busy machines (see minimodel.runtime).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass
class ChildResult:
    """What came back from one child process."""

    returncode: int          # negative: killed by that signal (-9 after a timeout)
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    truncated: bool = False  # some output was dropped (only the last MAX_CHARS are kept)

    def stderr_tail(self, lines: int = 12) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()][-lines:]


def clean_env(keep: Iterable[str] = ("PATH",), **values: str) -> dict[str, str]:
    """A small environment: the variables in ``keep`` copied from ours (when set), UTF-8,
    one BLAS thread, a fixed hash seed, then ``values`` on top."""
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
                "PYTHONHASHSEED": "0", **ONE_THREAD})
    env.update(values)
    return env


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (the child and everything it started)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # already gone


class _Capture:
    """Reads one pipe in a thread, keeping the last ``limit`` BYTES (a 2 GiB line printed
    without a newline is cut too: the tail is by bytes, not by lines). Memory stays below
    about twice ``limit`` whatever the child prints."""

    CHUNK = 64 * 1024

    def __init__(self, stream, limit: int, on_line: Callable[[str], None] | None) -> None:
        self.tail = bytearray()
        self.limit, self.truncated = limit, False
        self._stream, self._on_line = stream, on_line
        self._pending = bytearray()  # the current line, for on_line (capped at limit too)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        fd = self._stream.fileno()
        while True:
            try:
                chunk = os.read(fd, self.CHUNK)
            except OSError:
                break
            if not chunk:
                break
            self.tail += chunk
            if len(self.tail) > self.limit:
                del self.tail[:len(self.tail) - self.limit]
                self.truncated = True
            if self._on_line is not None:
                self._lines(chunk)
        if self._on_line is not None and self._pending:
            self._on_line(self._pending.decode("utf-8", "replace"))
        self._stream.close()

    def _lines(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, rest = self._pending.split(b"\n")
        for line in lines:
            self._on_line(line.decode("utf-8", "replace"))
        self._pending = bytearray(rest[-self.limit:])

    def text(self) -> str:
        return self.tail.decode("utf-8", "replace")


def run_child(argv: Sequence[str], *, timeout: float, cwd: str | os.PathLike | None = None,
              env: dict[str, str] | None = None, stdin_text: str | None = None,
              on_line: Callable[[str], None] | None = None,
              poll: Callable[[float], None] | None = None,
              preexec: Callable[[], None] | None = None,
              max_chars: int = MAX_CHARS, pass_fds: Sequence[int] = (),
              on_start: Callable[[], None] | None = None,
              on_pid: Callable[[int], None] | None = None,
              spawn_lock: "threading.Lock | None" = None,
              clock_start: Callable[[], float | None] | None = None,
              startup_timeout: float = 0.0) -> ChildResult:
    """Run ``argv`` in its own process group, wait at most ``timeout`` seconds, return what it
    printed. Never raises for the child's own failures.

    Args:
        timeout: wall-clock seconds; then the whole group is killed (``timed_out=True``).
        cwd, env: working folder and environment (see :func:`clean_env`).
        stdin_text: text written to the child's stdin (else stdin is /dev/null).
        on_line: called with each stdout line as soon as the child prints it.
        poll: called with the elapsed seconds about five times a second while the child runs
            (progress displays).
        preexec: run in the child between fork and exec (resource limits).
        max_chars: how much of each stream to keep (the end of it).
        pass_fds: descriptors the child inherits (e.g. a report pipe).
        on_start: called once the child has started (e.g. to close our copy of a pipe end).
        on_pid: called with the child's pid right after it started, under ``spawn_lock``
            (the judge keeps a list of its running children).
        clock_start: when given, ``timeout`` counts from the ``time.monotonic()`` it returns
            (None: not yet; the child is still starting, allowed ``startup_timeout``
            seconds). The judge starts the clock when its harness has imported torch.
    """
    start = time.monotonic()
    with spawn_lock or contextlib.nullcontext():
        proc = subprocess.Popen(
            list(map(str, argv)), cwd=Path(cwd) if cwd is not None else None, env=env,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=preexec, pass_fds=tuple(pass_fds))
        if on_pid is not None:
            on_pid(proc.pid)
    if on_start is not None:
        on_start()
    out = _Capture(proc.stdout, max_chars, on_line)
    err = _Capture(proc.stderr, max_chars, None)
    if stdin_text is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin_text), daemon=True).start()
    timed_out = False
    try:
        while True:
            now = time.monotonic()
            began = clock_start() if clock_start is not None else start
            limit_at = began + timeout if began is not None else start + startup_timeout
            if poll is not None:
                poll(now - began if began is not None else 0.0)
            try:
                proc.wait(timeout=max(0.0, min(0.2, limit_at - now)))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= limit_at:
                    timed_out = True
                    break
    finally:
        kill_group(proc.pid)  # the timeout, Ctrl-C, or grandchildren left behind
        proc.wait()
        for capture in (out, err):
            capture.thread.join(timeout=5)
    return ChildResult(proc.returncode, out.text(), err.text(), time.monotonic() - start,
                       timed_out, out.truncated or err.truncated)


def _feed(stdin, text: str) -> None:
    try:
        stdin.write(text.encode("utf-8"))
        stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the child exited without reading everything
