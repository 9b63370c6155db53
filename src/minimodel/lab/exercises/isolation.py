"""How far the judge can fence a solution in on this machine, and the command that does it.

Full isolation (Linux with bubblewrap and user namespaces, the CI machine and most laptops):

* its own user, PID, mount, network, IPC and UTS namespaces (``bwrap --unshare-*``): no
  network, the judge's processes and their ``/proc`` entries out of sight, and when the
  sandbox's first process ends the kernel kills every process left in it;
* a read-only view of the file system with one private writable scratch folder, and the
  minimodel package itself (the references) hidden under an empty tmpfs;
* a process-count and a memory limit that do not depend on the solution's words: a cgroup
  (v2, or v1's ``pids`` and ``memory`` controllers) when one can be created, else
  ``RLIMIT_NPROC`` (which binds only non-root users) and ``RLIMIT_AS``;
* a scrubbed environment (``--clearenv``) and all capabilities dropped.

Anything missing makes the isolation *partial*, with the reason: then the in-process guards
(``_child.py``: the audit hook and the attribute guard) still refuse writes outside the scratch
folder, processes, sockets and forbidden APIs, and the resource limits still apply.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from minimodel.lab.i18n import ISOLATION_REASONS, translate

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

PACKAGE_DIR = Path(__file__).resolve().parents[2]  # .../minimodel
MAX_PROCESSES = 64  # torch starts a few threads (threads count as tasks for pids.max)


@dataclass
class Isolation:
    """What the judge can use here. ``level`` is "full" or "partial" (with ``reason``)."""

    level: str
    reason: str
    bwrap: str | None = None
    unshare: str | None = None
    cgroup: "CgroupLimits | None" = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, str]:
        return {"isolation": self.level, "isolation_reason": self.reason}


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.lru_cache(maxsize=1)
def probe() -> Isolation:
    """Find out once per process which facilities work (each is tried for real)."""
    if not sys.platform.startswith("linux") or resource is None:
        return Isolation("partial", _reason("not_linux", platform=sys.platform))
    bwrap = shutil.which("bwrap")
    usable_bwrap = bwrap if bwrap and _works(
        [bwrap, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--unshare-net",
         "--unshare-ipc", "--proc", "/proc", "--dev", "/dev", "--die-with-parent", "true"]) else None
    cgroup = CgroupLimits.create_probe()
    nproc_binds = os.geteuid() != 0
    if usable_bwrap:
        if cgroup is not None or nproc_binds:
            return Isolation("full", _reason("full", limits="cgroup" if cgroup else "rlimit"),
                             bwrap=usable_bwrap, cgroup=cgroup)
        return Isolation("partial", _reason("root_without_cgroup"), bwrap=usable_bwrap)
    unshare = shutil.which("unshare")
    if unshare and _works([unshare, "--user", "--map-root-user", "--pid", "--fork", "--net",
                           "--ipc", "--mount", "--mount-proc", "true"]):
        why = _reason("bwrap_missing" if not bwrap else "bwrap_broken")
        return Isolation("partial", _reason("unshare", why=why), unshare=unshare, cgroup=cgroup)
    return Isolation("partial", _reason("no_user_namespaces"), cgroup=cgroup)


def _reason(key: str, **values: str) -> str:
    """The English reason (the JSON keeps it; the text output translates it on display)."""
    return translate(ISOLATION_REASONS, key, "en", **values)


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
        v1 = {name: base / name / _own_cgroup(1, name) for name in ("pids", "memory")}
        if all((base / name).is_dir() for name in ("pids", "memory")):
            found.append((1, v1))
        return found

    @classmethod
    def create_probe(cls) -> "CgroupLimits | None":
        """A CgroupLimits template if a cgroup can be made and removed here, else None."""
        for version, parents in cls._roots():
            made = []
            try:
                for parent in parents.values():
                    probe_dir = parent / f"minimodel-probe-{os.getpid()}"
                    probe_dir.mkdir()
                    made.append(probe_dir)
                return cls(parents, version)
            except OSError:
                continue
            finally:
                for d in made:
                    try:
                        d.rmdir()
                    except OSError:
                        pass
        return None

    def start(self, max_processes: int, memory_bytes: int) -> "ActiveCgroup":
        name = f"minimodel-judge-{os.getpid()}-{secrets.token_hex(4)}"
        dirs = {key: parent / name for key, parent in self.dirs.items()}
        for d in dirs.values():
            d.mkdir()
        if self.version == 2:
            (dirs["all"] / "pids.max").write_text(str(max_processes))
            (dirs["all"] / "memory.max").write_text(str(memory_bytes))
            if (dirs["all"] / "memory.swap.max").exists():
                (dirs["all"] / "memory.swap.max").write_text("0")
        else:
            (dirs["pids"] / "pids.max").write_text(str(max_processes))
            (dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
        return ActiveCgroup(dirs)


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
        """Kill whatever is left inside, then remove the cgroup."""
        for d in self.dirs.values():
            if (d / "cgroup.kill").exists():
                try:
                    (d / "cgroup.kill").write_text("1")
                except OSError:
                    pass
            for _ in range(50):
                try:
                    pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            try:
                d.rmdir()
            except OSError:
                pass


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


def sandbox_command(iso: Isolation, argv: list[str], scratch: Path,
                    env: dict[str, str]) -> list[str]:
    """``argv`` wrapped in the namespaces ``iso`` allows (bwrap, unshare, or as it is)."""
    if iso.bwrap:
        cmd = [iso.bwrap, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid",
               "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
               "--tmpfs", "/tmp", "--tmpfs", str(PACKAGE_DIR), "--bind", str(scratch),
               str(scratch), "--chdir", str(scratch), "--cap-drop", "ALL", "--clearenv"]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        return cmd + ["--", *argv]
    if iso.unshare:
        return [iso.unshare, "--user", "--map-root-user", "--pid", "--fork", "--net", "--ipc",
                "--mount", "--mount-proc", "--kill-child", "--", *argv]
    return list(argv)


def resource_limits(cpu_seconds: int, memory_bytes: int | None, file_bytes: int,
                    cgroup: ActiveCgroup | None, nproc: int | None
                    ) -> Callable[[], None]:
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
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count
