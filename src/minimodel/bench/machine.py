"""The machine a benchmark runs on: what it is, and how busy it is.

Nothing here is timed. :func:`machine_info` describes the CPU, libraries and source that were
measured (it goes into the report). :func:`wait_quiet` and :func:`busy_seconds` detect other
processes on the cores: on a shared 2-core machine they distort 2-thread timings badly
(OpenBLAS threads wait for a descheduled partner; 10-25x slowdowns were seen at load 4).
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import importlib.util
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

QUIET_CORES = 0.3  # "quiet": fewer cores than this busy over a one-second sample


def peers_available() -> dict[str, str | None]:
    """{'torch': reason-or-None, 'transformers': ...}: None when importable."""
    return {name: None if importlib.util.find_spec(name) is not None else "not installed"
            for name in ("torch", "transformers")}


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# AMD family 25 (0x19) model ranges -> core generation; a virtual machine often reports only
# "AMD EPYC" as the model name, so the family and model numbers say which CPU it is.
_AMD_CORES = {25: ((0x00, 0x0f, "Zen 3"), (0x10, 0x1f, "Zen 4"), (0x20, 0x5f, "Zen 3"),
                   (0x60, 0xaf, "Zen 4")), 26: ((0x00, 0xff, "Zen 5"),)}
_ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")


def cpu_description() -> str:
    """The CPU as /proc/cpuinfo gives it: model name, vendor family/model/stepping (with the
    core generation for AMD), and the vector instruction sets BLAS kernels can use."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return _cpu_model()
    try:
        family, model = int(fields.get("cpu family", "")), int(fields.get("model", ""))
    except ValueError:
        return _cpu_model()
    core = next((name for lo, hi, name in _AMD_CORES.get(family, ()) if lo <= model <= hi), "")
    if "AMD" not in fields.get("vendor_id", "AMD"):
        core = ""
    flags = set(fields.get("flags", "").split())
    isa = "/".join(f for f in _ISA_FLAGS if f in flags) or "no AVX2"
    return (f"{_cpu_model()} (family {family} model {model} stepping "
            f"{fields.get('stepping', '?')}{', ' + core if core else ''}; {isa})")


def blas_kernels() -> str:
    """The kernel set each BLAS loaded into this process picked at run time (threadpoolctl's
    ``architecture``: OpenBLAS's DYNAMIC_ARCH choice, e.g. SkylakeX or Haswell)."""
    try:
        from threadpoolctl import threadpool_info

        import numpy  # noqa: F401  (threadpoolctl only sees a BLAS already loaded)

        libs = [f"{i['internal_api']} {i.get('version') or ''} kernels "
                f"{i.get('architecture') or '?'}, {i['num_threads']} threads"
                for i in threadpool_info() if i.get("user_api") == "blas"]
        return "; ".join(libs) or "none found"
    except Exception as exc:  # noqa: BLE001 - best effort description
        return f"unknown ({type(exc).__name__})"


_TORCH_PROBE = """
import json, torch
with torch.no_grad():  # one small convolution: oneDNN prints the ISA it dispatches to
    torch.nn.functional.conv2d(torch.randn(2, 16, 16, 16), torch.randn(16, 16, 3, 3))
config = torch.__config__.show()
mkl = [l.split("Math Kernel Library Version", 1)[1].split("-")[0].strip()
       for l in config.splitlines() if "Math Kernel Library" in l]
print("PROBE" + json.dumps({"capability": torch.backends.cpu.get_cpu_capability(),
      "blas": [p.split("=", 1)[1] for p in config.replace(",", " ").split()
               if p.startswith("BLAS_INFO=")][:1], "mkl": mkl[:1],
      "onednn": torch.backends.mkldnn.is_available()}))
"""


def torch_kernels() -> str:
    """What torch dispatches to on this CPU, from a child process (torch stays out of the
    harness): its ATen CPU capability, its BLAS (MKL's version), and the ISA oneDNN picked
    (``ONEDNN_VERBOSE``'s info line). Empty when torch is not installed."""
    if _version("torch") == "not installed":
        return ""
    env = {**os.environ, "ONEDNN_VERBOSE": "1", "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", _TORCH_PROBE], capture_output=True,
                              text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    probe = next((json.loads(line[5:]) for line in done.stdout.splitlines()
                  if line.startswith("PROBE")), None)
    if probe is None:
        return f"unknown (probe exit {done.returncode})"
    isa = next((line.split("isa:", 1)[1].strip() for line in done.stdout.splitlines()
                if "info,cpu,isa:" in line), "not reported")
    blas = (probe["blas"] or ["?"])[0] + (f" {probe['mkl'][0]}" if probe["mkl"] else "")
    return (f"ATen CPU capability {probe['capability']}; BLAS {blas}; oneDNN "
            f"{'ISA ' + isa if probe['onednn'] else 'not available'}")


def _numpy_blas() -> str:
    try:
        import numpy as np

        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        extra = blas.get("openblas configuration", "")
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip() + (
            f" ({extra})" if extra else "")
    except Exception as exc:  # noqa: BLE001 - best effort description
        return f"unknown ({type(exc).__name__})"


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def harness_src() -> str:
    """The ``src`` folder holding the minimodel package this harness belongs to."""
    import minimodel

    return str(Path(minimodel.__file__).resolve().parent.parent)


def source_state(src: str | None = None) -> str:
    """Which minimodel was measured: git commit of the checkout holding ``src`` (default: this
    harness's) and whether its src/ has local changes (read-only git queries)."""
    root = Path(src or harness_src()).resolve()
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "--", "."],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    changed = [line for line in dirty.stdout.splitlines() if line.strip()]
    return head.stdout.strip() + (f" + {len(changed)} modified file(s) under src/" if changed
                                  else " (src/ unmodified)")


def machine_info() -> dict[str, Any]:
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "cpu": cpu_description(), "cores": os.cpu_count(), "mem_gib": _mem_total_gib(),
        "blas_kernels": blas_kernels(), "torch_kernels": torch_kernels(),
        "python": platform.python_version(), "platform": platform.platform(),
        "numpy": _version("numpy"), "torch": _version("torch"),
        "transformers": _version("transformers"), "numpy_blas": _numpy_blas(),
        "minimodel_source": source_state(),
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "loadavg_start": list(load),
    }


def busy_seconds() -> float:
    """CPU-seconds all cores have spent busy since boot (/proc/stat, steal included)."""
    with open("/proc/stat", encoding="ascii") as fh:
        vals = [int(v) for v in fh.readline().split()[1:]]
    return (sum(vals[:8]) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait


def children_cpu_seconds() -> float:
    """CPU-seconds used by this process's finished children (the benchmark workers)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_busy(seconds: float = 1.0) -> float:
    """Cores busy over ``seconds`` (this process sleeps meanwhile), from /proc/stat."""
    try:
        b0, t0 = busy_seconds(), time.monotonic()
        time.sleep(seconds)
        return max(0.0, busy_seconds() - b0) / max(time.monotonic() - t0, 1e-9)
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_quiet(max_wait: float, what: str, log: Callable[[str], None]) -> dict[str, Any]:
    """Wait (at most ``max_wait`` s) until the machine is quiet; return what was seen.

    Quiet = fewer than 0.3 cores busy over a one-second sample of /proc/stat. The 1-minute
    load average is recorded but does not decide: it still counts the previous worker for a
    minute after it ended, and on a machine shared with another benchmark that waits for
    quiet too, waiting on it lets the other side take every idle gap.
    """
    start = time.monotonic()
    while True:
        load = os.getloadavg()[0]
        if max_wait <= 0:
            return {"loadavg": load, "busy_cores": None, "waited_s": 0.0, "quiet": None}
        busy = cpu_busy(1.0)
        waited = time.monotonic() - start
        if busy < QUIET_CORES:
            return {"loadavg": load, "busy_cores": busy, "waited_s": waited, "quiet": True}
        if waited >= max_wait:
            log(f"  note: machine not quiet after {waited:.0f} s (load average {load:.2f}, "
                f"{busy:.2f} cores busy); measuring {what} anyway")
            return {"loadavg": load, "busy_cores": busy, "waited_s": waited, "quiet": False}
        time.sleep(0.5)


def command_line(argv: list[str] | None = None) -> str:
    """The command as typed, with ``python -m minimodel`` / the console script shown as
    ``minimodel`` (the same thing as ``PYTHONPATH=src python -m minimodel`` in a checkout)."""
    argv = list(sys.argv if argv is None else argv)
    head = Path(argv[0]).name if argv else ""
    if head in ("__main__.py", "minimodel", "cli.py"):
        argv[0] = "minimodel"
    elif head.endswith(".py"):
        script = os.path.relpath(argv[0]) if os.path.isabs(argv[0]) else argv[0]
        argv = ["python", script] + argv[1:]
    return " ".join(shlex.quote(a) for a in argv)
