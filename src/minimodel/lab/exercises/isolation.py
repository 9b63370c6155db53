"""How far the judge can fence a solution in on this machine, and the command that does it.

Full isolation (Linux with bubblewrap and user namespaces: the CI machine and most laptops):

* own user, PID, mount, network, IPC and UTS namespaces (``bwrap --unshare-*``): no network,
  no other process in sight, and every process of the sandbox dies with it;
* a file system built from read-only mounts of only what Python needs: the system's
  ``/usr`` and libraries, a few loader files of ``/etc``, and the interpreter's real prefixes
  (a venv under ``/tmp``, ``$HOME`` or anywhere works). The learner's home, the lab's
  progress, the user's files and the minimodel package (references, cases) are simply not
  there; ``/tmp`` is a private tmpfs with a size; no host folder is writable (results come
  back through a pipe, :mod:`minimodel.lab.exercises.channel`);
* in a NumPy-only exercise torch's package folder is replaced by a module that raises
  ImportError, so no Python trick can import it;
* process-count and memory limits that do not depend on the solution's words: a cgroup (v2,
  or v1's ``pids`` and ``memory``) when one can be made, else ``RLIMIT_NPROC`` and
  ``RLIMIT_AS``; a scrubbed environment (``--clearenv``); all capabilities dropped.

Without bubblewrap (or user namespaces) the isolation is *partial*: the child is a separate
process with a scrubbed environment and the same resource limits, and nothing more. What then
still holds and what does not is listed in ``docs/judge.md``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from minimodel.messages import say

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

PACKAGE_DIR = Path(__file__).resolve().parents[2]  # .../minimodel
MAX_PROCESSES = 64  # torch starts a few threads (threads count as tasks for pids.max)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
             "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group")
# Sizes of the sandbox's tmpfs mounts: without them a tmpfs may take half the host's memory
# (a cgroup would charge it to the sandbox, but a learner who is not root has no cgroup).
TMP_BYTES = 64 * 1024**2       # /tmp: a solution needs none; libraries may write a little
DEV_BYTES = 64 * 1024          # /dev: read-only, device nodes only
STAND_IN_BYTES = 64 * 1024     # the empty read-only folders standing in for hidden packages
DEVICES = ("null", "zero", "full", "random", "urandom")
TORCH_HIDDEN = 'raise ImportError("torch is not available here: this exercise is NumPy-only")\n'


@dataclass
class Isolation:
    """What the judge can use here. ``level`` is "full" or "partial" (with ``reason``)."""

    level: str
    reason: str
    bwrap: str | None = None
    cgroup: "CgroupLimits | None" = None

    def as_dict(self) -> dict[str, str]:
        return {"isolation": self.level, "isolation_reason": self.reason}


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.lru_cache(maxsize=1)
def probe() -> Isolation:
    """Find out once per process which facilities work (the real sandbox is tried)."""
    if not sys.platform.startswith("linux") or resource is None:
        return Isolation("partial", _reason("partial", why=_reason("not_linux",
                                                                   platform=sys.platform)))
    cgroup = CgroupLimits.create_probe()
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Isolation("partial", _reason("partial", why=_reason("bwrap_missing")),
                         cgroup=cgroup)
    if not _works([bwrap, "--unshare-user", "--ro-bind", "/", "/", "true"]):
        return Isolation("partial", _reason("partial", why=_reason("no_user_namespaces")),
                         cgroup=cgroup)
    trial = Isolation("full", "", bwrap=bwrap)
    if not _works(sandbox_command(trial, [sys.executable, "-I", "-c", "import numpy"],
                                  Path("/nonexistent-scratch"), {}, bind_scratch=False)):
        return Isolation("partial", _reason("partial", why=_reason("bwrap_broken")),
                         cgroup=cgroup)
    if cgroup is None and os.geteuid() == 0:
        return Isolation("partial", _reason("root_without_cgroup"), bwrap=bwrap)
    return Isolation("full", _reason("full", limits="cgroup" if cgroup else "rlimit"),
                     bwrap=bwrap, cgroup=cgroup)


def _reason(key: str, **values: str) -> str:
    """The English reason (the JSON keeps it; the text output translates it on display)."""
    return say(f"isolation.{key}", "en", **values)


def python_roots() -> list[str]:
    """Folders the interpreter and its packages live in (real paths, outermost only)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    for name in ("numpy", "torch"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found.add(os.path.dirname(list(spec.submodule_search_locations)[0]))
    found |= {os.path.realpath(p) for p in found}
    roots = sorted(p for p in found if p and os.path.isdir(p))
    return [p for p in roots if not any(p.startswith(q.rstrip("/") + "/") for q in roots
                                        if q != p)]


def torch_folder() -> str | None:
    spec = importlib.util.find_spec("torch")
    return list(spec.submodule_search_locations)[0] if spec and spec.submodule_search_locations \
        else None


def sandbox_command(iso: Isolation, argv: list[str], scratch: Path, env: dict[str, str], *,
                    hide_torch: bool = False, bind_scratch: bool = True) -> list[str]:
    """``argv`` wrapped in bubblewrap when ``iso`` has it (else as it is).

    ``scratch`` is visible read-only and nothing of the host is writable: results go back
    through a pipe. Every writable place is a tmpfs with a size (``/tmp``), so the sandbox
    cannot fill the host's memory even without a cgroup; ``/dev`` is a small read-only tmpfs
    holding only the usual character devices; the folders that stand in for the package and
    for torch (``hide_torch``: the file ``scratch/torch_hidden.py`` is torch's ``__init__``)
    are read-only."""
    if not iso.bwrap:
        return list(argv)
    cmd = [iso.bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
           "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--cap-drop", "ALL", "--clearenv", "--proc", "/proc",
           "--size", str(DEV_BYTES), "--tmpfs", "/dev"]
    for device in DEVICES:
        cmd += ["--dev-bind", f"/dev/{device}", f"/dev/{device}"]
    for link, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        cmd += ["--symlink", target, f"/dev/{link}"]
    cmd += ["--remount-ro", "/dev", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):  # merged /usr: /lib -> usr/lib
            cmd += ["--symlink", os.readlink(path), path]
        else:
            cmd += ["--ro-bind-try", path, path]
    for path in ETC_FILES:
        cmd += ["--ro-bind-try", path, path]
    for root in python_roots():
        cmd += ["--ro-bind", root, root]
    if str(PACKAGE_DIR).startswith(tuple(r + "/" for r in python_roots())):
        # an installed (not editable) minimodel: an empty read-only folder in its place
        cmd += ["--size", str(STAND_IN_BYTES), "--tmpfs", str(PACKAGE_DIR),
                "--remount-ro", str(PACKAGE_DIR)]
    torch_dir = torch_folder()
    if hide_torch and torch_dir:
        cmd += ["--size", str(STAND_IN_BYTES), "--tmpfs", torch_dir,
                "--ro-bind", str(scratch / "torch_hidden.py"),
                os.path.join(torch_dir, "__init__.py"), "--remount-ro", torch_dir]
    if bind_scratch:
        cmd += ["--ro-bind", str(scratch), str(scratch), "--chdir", str(scratch)]
    cmd += ["--remount-ro", "/"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    return cmd + ["--", *argv]


class CgroupLimits:
    """A throwaway cgroup per run: ``pids.max`` and a memory limit (v2 or v1 controllers)."""

    def __init__(self, dirs: dict[str, Path], version: int) -> None:
        self.dirs, self.version = dirs, version

    @staticmethod
    def _roots() -> list[tuple[int, dict[str, Path]]]:
        base = Path("/sys/fs/cgroup")
        found = []
        unified = base if (base / "cgroup.controllers").is_file() else base / "unified"
        if (unified / "cgroup.controllers").is_file():
            controllers = (unified / "cgroup.controllers").read_text().split()
            if "pids" in controllers and "memory" in controllers:
                found.append((2, {"all": unified / _own_cgroup(2)}))
        if all((base / name).is_dir() for name in ("pids", "memory")):
            found.append((1, {name: base / name / _own_cgroup(1, name)
                              for name in ("pids", "memory")}))
        return found

    @classmethod
    def create_probe(cls) -> "CgroupLimits | None":
        """A CgroupLimits template if a cgroup can be made and removed here, else None.
        Empty cgroups of judges that were killed before they could clean up go first."""
        for version, parents in cls._roots():
            limits = cls(parents, version)
            limits.sweep()
            try:
                limits.start(MAX_PROCESSES, 2**30).close()
                return limits
            except OSError:
                continue
        return None

    def sweep(self, min_age: float = 60.0) -> None:
        """Remove judge cgroups whose judge process is gone (rmdir fails on a non-empty one;
        ``min_age`` seconds spare one that another judge is still setting up)."""
        for parent in self.dirs.values():
            for stale in parent.glob("minimodel-judge-*"):
                pid = stale.name.split("-")[2]
                try:
                    old = time.time() - stale.stat().st_mtime >= min_age
                except OSError:
                    continue
                if old and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                    try:
                        stale.rmdir()
                    except OSError:
                        pass

    def start(self, max_processes: int, memory_bytes: int) -> "ActiveCgroup":
        name = f"minimodel-judge-{os.getpid()}-{secrets.token_hex(4)}"
        active = ActiveCgroup({key: parent / name for key, parent in self.dirs.items()})
        try:
            for d in active.dirs.values():
                d.mkdir()
            if self.version == 2:
                (active.dirs["all"] / "pids.max").write_text(str(max_processes))
                (active.dirs["all"] / "memory.max").write_text(str(memory_bytes))
                if (active.dirs["all"] / "memory.swap.max").exists():
                    (active.dirs["all"] / "memory.swap.max").write_text("0")
            else:
                (active.dirs["pids"] / "pids.max").write_text(str(max_processes))
                (active.dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
        except OSError:
            active.close()  # never leave a half-made cgroup behind
            raise
        return active


class ActiveCgroup:
    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs

    def join(self) -> None:
        """Put the calling process in the cgroup (runs in the child, before exec)."""
        for d in self.dirs.values():
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def oom_killed(self) -> bool:
        for d in self.dirs.values():
            events = d / "memory.events"
            if events.is_file() and any(line.startswith("oom_kill ") and line.split()[1] != "0"
                                        for line in events.read_text().splitlines()):
                return True
            failcnt = d / "memory.failcnt"
            if failcnt.is_file() and failcnt.read_text().strip() not in ("", "0"):
                return True
        return False

    def close(self) -> None:
        """Kill whatever is left inside, then remove the cgroup (waiting for the kernel to
        let the dead processes go: rmdir fails with EBUSY until it has)."""
        for d in self.dirs.values():
            if not d.is_dir():
                continue
            try:
                (d / "cgroup.kill").write_text("1")
            except OSError:
                pass  # v1, or an older kernel: kill them one by one
            _rmdir(d)


def _rmdir(d: Path) -> None:
    for _ in range(100):
        try:
            for pid in (d / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def _own_cgroup(version: int, controller: str = "") -> str:
    """Our cgroup's path relative to the hierarchy root (from /proc/self/cgroup)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            num, controllers, path = line.split(":", 2)
            if version == 2 and num == "0":
                return path.lstrip("/")
            if version == 1 and controller in controllers.split(","):
                return path.lstrip("/")
    except OSError:
        pass
    return ""


def resource_limits(cpu_seconds: int, memory_bytes: int | None, file_bytes: int,
                    cgroup: ActiveCgroup | None, nproc: int | None) -> Callable[[], None]:
    """The preexec function: join the cgroup, then set the rlimits (in the child, pre-exec)."""
    limits = [(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
              (resource.RLIMIT_FSIZE, file_bytes, file_bytes), (resource.RLIMIT_CORE, 0, 0)]
    if memory_bytes is not None:
        limits.append((resource.RLIMIT_AS, memory_bytes, memory_bytes))
    if nproc is not None:
        limits.append((resource.RLIMIT_NPROC, nproc, nproc))

    def apply() -> None:
        if cgroup is not None:
            cgroup.join()
        for which, soft, hard in limits:
            try:
                _, current_hard = resource.getrlimit(which)
                if current_hard != resource.RLIM_INFINITY:  # never try to raise a hard limit
                    soft, hard = min(soft, current_hard), min(hard, current_hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass
    return apply


def processes_of_user(uid: int) -> int:
    """How many processes ``uid`` runs now (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count
