"""No process a solution starts outlives its verdict, with or without bubblewrap.

In full isolation the kernel does it: the sandbox has its own PID namespace and every process
in it dies with it. Without bubblewrap a solution can leave its process group
(``os.setsid()`` in a forked grandchild), so killing the group is not enough. The judge then
makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): an orphaned
descendant is re-parented to the judge instead of to init, so after the run every process the
solution left behind is in the judge's own process tree, where :func:`kill_descendants` finds
and kills it (and reaps it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4

# The judge's children that are runs in progress (several may run at once, in threads): a
# sweep never touches them. Started and swept under LOCK, so none is half-registered.
LOCK = threading.Lock()
RUNNING: set[int] = set()


def started(pid: int) -> None:
    """Record a run's child (called under :data:`LOCK`, right after it was spawned)."""
    RUNNING.add(pid)


def finished(pid: int | None) -> None:
    with LOCK:
        RUNNING.discard(pid)


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); False where impossible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_SEALED = [0, None]  # runs that asked for :func:`sealed`, and the flag to restore after them


def _prctl(option: int, value: int = 0) -> int:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return libc.prctl(option, value, 0, 0, 0)


def seal(on: bool) -> None:
    """While a solution runs without bubblewrap, make this process non-dumpable (Linux):
    then a process of the same user without CAP_SYS_PTRACE can neither open
    ``/proc/<judge>/fd/*`` (a solution wrote a forged ``"passed": true`` into the judge's own
    stdout, which ``--json`` and the tutor's MCP stream are), nor read or write
    ``/proc/<judge>/mem``, nor ptrace it. Nested calls count; the last ``seal(False)``
    restores the flag (a child's exec makes it dumpable again, so nothing else changes)."""
    if not sys.platform.startswith("linux"):
        return
    with LOCK:
        try:
            if on:
                if _SEALED[0] == 0:
                    _SEALED[1] = _prctl(PR_GET_DUMPABLE)
                    _prctl(PR_SET_DUMPABLE, 0)
                _SEALED[0] += 1
            elif _SEALED[0] > 0:
                _SEALED[0] -= 1
                if _SEALED[0] == 0 and _SEALED[1] in (1, 2):
                    _prctl(PR_SET_DUMPABLE, 1)
        except (OSError, AttributeError):
            pass


def _parents() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process in sight."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("latin1")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # the name may hold spaces and parentheses
        if len(fields) >= 2:
            found[int(entry)] = (int(fields[1]), fields[0])
    return found


def descendants(root: int, spare: set[int] = frozenset()) -> list[int]:
    """Living descendants of ``root``, except the trees of the children in ``spare``."""
    table = _parents()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [p for p in children.get(root, []) if p not in spare]
    while todo:
        pid = todo.pop()
        if table.get(pid, (0, "Z"))[1] not in ("Z", "X"):
            found.append(pid)
        todo += children.get(pid, [])
    return found


def children_now() -> set[int]:
    """This process's children now (spared by :func:`kill_descendants`)."""
    me = os.getpid()
    return {pid for pid, (ppid, _) in _parents().items() if ppid == me}


def kill_descendants(spare: set[int] = frozenset(), rounds: int = 200) -> int:
    """SIGKILL every descendant of this process outside the trees of ``spare`` and of the
    runs still in progress (:data:`RUNNING`), until none is left (a process may fork while
    we look); reap the ones that became our children. Returns how many were killed."""
    if not sys.platform.startswith("linux"):
        return 0
    killed = 0
    for _ in range(rounds):
        with LOCK:
            alive = descendants(os.getpid(), set(spare) | RUNNING)
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        _reap(set(spare) | RUNNING)
        if not alive:
            break
        time.sleep(0.01)
    return killed


def _reap(spare: set[int]) -> None:
    for pid in children_now() - set(spare):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
