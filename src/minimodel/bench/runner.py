"""The driver of ``minimodel bench``: plans the measurements, runs each in a fresh worker
process, and turns the raw results into table rows and target verdicts.

Nothing is timed in this process. Before every worker it waits (up to ``max_wait`` seconds)
for the machine to be quiet (see :func:`wait_quiet`: the 1-minute load average and a direct
sample of busy cores). While the worker runs it measures how much CPU other processes took;
a disturbed measurement is repeated (``retries``) and the least disturbed attempt is kept.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import importlib.util
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from minimodel.bench import spec
from minimodel.bench.spec import Shape

STEP_IMPLS = ("minimodel", "nanogpt", "hf-eager", "hf-sdpa")
PEER_LABELS = {"nanogpt": "PyTorch eager (nanoGPT, SDPA)", "hf-eager": "HF GPT2LMHeadModel eager",
               "hf-sdpa": "HF GPT2LMHeadModel sdpa", "minimodel": "minimodel"}
WORKER_TIMEOUT_S = 1800
QUIET_CORES = 0.3  # "quiet": fewer cores than this busy
FOREIGN_LIMIT = 0.25  # other processes' cores during a measurement above this -> measure again


@dataclass
class Options:
    cases: tuple[str, ...] = spec.CASES
    configs: tuple[str, ...] = ("small", "large")
    steps: int = 10
    warmup: int = 3
    threads: int = 2
    quick: bool = False
    size: str = "full"  # "tiny": toy shapes for smoke tests
    peers: bool = True
    max_wait: float = 60.0
    retries: int = 2
    command: str = ""
    log: Callable[[str], None] = field(default=print, repr=False)


# --------------------------------------------------------------------------- environment
def peers_available() -> dict[str, str | None]:
    """{'torch': reason-or-None, 'transformers': ...}: None when importable."""
    out = {}
    for name in ("torch", "transformers"):
        out[name] = None if importlib.util.find_spec(name) is not None else "not installed"
    return out


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


def _numpy_blas() -> str:
    try:
        import numpy as np

        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
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


def source_state() -> str:
    """Which minimodel was measured: git commit of the checkout and whether src/ has local
    changes (read-only git queries; "unknown" outside a git checkout)."""
    root = Path(_src_dir()).parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "--", "src"],
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
        "cpu": _cpu_model(), "cores": os.cpu_count(), "mem_gib": _mem_total_gib(),
        "python": platform.python_version(), "platform": platform.platform(),
        "numpy": _version("numpy"), "torch": _version("torch"),
        "transformers": _version("transformers"), "numpy_blas": _numpy_blas(),
        "minimodel_source": source_state(),
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "loadavg_start": list(load),
    }


def _busy_seconds() -> float:
    """CPU-seconds all cores have spent busy since boot (/proc/stat, steal included)."""
    with open("/proc/stat", encoding="ascii") as fh:
        vals = [int(v) for v in fh.readline().split()[1:]]
    return (sum(vals[:8]) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_busy(seconds: float = 1.0) -> float:
    """Cores busy over ``seconds`` (this process sleeps meanwhile), from /proc/stat."""
    try:
        b0, t0 = _busy_seconds(), time.monotonic()
        time.sleep(seconds)
        return max(0.0, _busy_seconds() - b0) / max(time.monotonic() - t0, 1e-9)
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_quiet(opts: Options, what: str) -> dict[str, Any]:
    """Wait (at most ``opts.max_wait`` s) until the machine is quiet; return what was seen.

    Quiet = fewer than 0.3 cores busy over a one-second sample of /proc/stat. The 1-minute
    load average is recorded but does not decide: it still counts the previous worker for a
    minute after it ended, and on a machine shared with another benchmark that waits for
    quiet too, waiting on it lets the other side take every idle gap.
    """
    start = time.monotonic()
    while True:
        load = os.getloadavg()[0]
        if opts.max_wait <= 0:
            return {"loadavg": load, "busy_cores": None, "waited_s": 0.0, "quiet": None}
        busy = cpu_busy(1.0)
        waited = time.monotonic() - start
        if busy < QUIET_CORES:
            return {"loadavg": load, "busy_cores": busy, "waited_s": waited, "quiet": True}
        if waited >= opts.max_wait:
            opts.log(f"  note: machine not quiet after {waited:.0f} s (load average {load:.2f}, "
                     f"{busy:.2f} cores busy); measuring {what} anyway")
            return {"loadavg": load, "busy_cores": busy, "waited_s": waited, "quiet": False}
        time.sleep(0.5)


def _src_dir() -> str:
    import minimodel

    return str(Path(minimodel.__file__).resolve().parent.parent)


def run_worker(task: dict[str, Any], threads: int) -> dict[str, Any]:
    """Run one task in a fresh ``python -m minimodel.bench.worker`` process."""
    from minimodel.bench.worker import RESULT_PREFIX

    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join([_src_dir()] + ([env["PYTHONPATH"]]
                                                        if env.get("PYTHONPATH") else []))
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    cmd = [sys.executable, "-m", "minimodel.bench.worker", json.dumps(task)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {WORKER_TIMEOUT_S} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
    return {"error": f"worker exited {proc.returncode}: " + " | ".join(tail)}


# --------------------------------------------------------------------------- the run
class Bench:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        off = "disabled (--no-peers)"
        self.peers = peers_available() if opts.peers else {"torch": off, "transformers": off}
        self.results: dict[str, Any] = {"cases": {}, "targets": [], "ceiling": None}
        self.errors: list[str] = []

    # ---- helpers
    def shape(self, shape: Shape) -> Shape:
        return spec.tiny(shape) if self.opts.size == "tiny" else shape

    def measure(self, label: str, task: dict[str, Any]) -> dict[str, Any]:
        """Run ``task`` in a fresh worker once the machine is quiet.

        The CPU time other processes used while the worker ran ("foreign cores": all busy
        CPU time of the machine minus the worker's own, per second of wall time) is measured
        too; above FOREIGN_LIMIT the measurement is repeated (``retries`` times at most) and the
        least disturbed attempt is kept.
        """
        o = self.opts
        task = {"threads": o.threads, "warmup": o.warmup, "steps": o.steps, **task}
        best = None
        for attempt in range(1 + max(0, o.retries)):
            seen = wait_quiet(o, label)
            o.log(f"  measuring {label} (load {seen['loadavg']:.2f}"
                  + (f", attempt {attempt + 1}" if attempt else "") + ")")
            b0, c0, t0 = _busy_seconds(), _children_cpu(), time.monotonic()
            out = run_worker(task, o.threads)
            wall = time.monotonic() - t0
            foreign = max(0.0, (_busy_seconds() - b0) - (_children_cpu() - c0)) / max(wall, 1e-9)
            out.update(wall_s=wall, load_before=seen, foreign_cores=foreign, attempt=attempt + 1)
            if "error" in out:
                self.errors.append(f"{label}: {out['error']}")
                o.log(f"  ERROR {label}: {out['error']}")
                return out
            if best is None or foreign < best["foreign_cores"]:
                best = out
            if foreign <= FOREIGN_LIMIT:
                break
            o.log(f"  other processes used {foreign:.2f} cores during {label}"
                  + ("; measuring again" if attempt < o.retries else "; keeping the least "
                     "disturbed attempt"))
        best["attempts"] = attempt + 1
        return best

    def target(self, case: str, metric: str, value: float | None, op: str, bound: float,
               detail: str = "") -> dict[str, Any]:
        met = None if value is None else (value <= bound if op == "<=" else value >= bound)
        t = {"case": case, "metric": metric, "value": value, "op": op, "bound": bound,
             "met": met, "detail": detail}
        self.results["targets"].append(t)
        return t

    def torch_ok(self) -> bool:
        return self.peers["torch"] is None

    def hf_ok(self) -> bool:
        return self.peers["torch"] is None and self.peers["transformers"] is None

    def peer_note(self) -> list[str]:
        notes = []
        if not self.torch_ok():
            notes.append(f"PyTorch peers skipped: torch {self.peers['torch']}.")
        elif not self.hf_ok():
            notes.append(f"transformers peers skipped: transformers {self.peers['transformers']}.")
        return notes

    # ---- cases
    def run(self) -> dict[str, Any]:
        o = self.opts
        self.results["meta"] = {**machine_info(), "command": o.command,
                                "options": {k: v for k, v in asdict(o).items() if k != "log"},
                                "peers": self.peers}
        if o.steps < 10 and not o.quick:
            o.log(f"note: --steps {o.steps} < 10: the medians are a smoke run, not a measurement")
        if "step" in o.cases or "util" in o.cases:
            o.log("ceiling: NumPy fp32 GEMMs of the model's shapes")
            self.results["ceiling"] = self.measure(
                "GEMM ceiling", {"task": "ceiling", "shape": self.shape(spec.UTIL_SHAPE).to_dict(),
                                 "seconds_per_gemm": 0.15 if o.quick else 0.6})
        for case in spec.CASES:
            if case in o.cases:
                o.log(f"case {case}")
                getattr(self, f"case_{case}")()
        self.results["meta"]["finished"] = _dt.datetime.now().astimezone().isoformat(
            timespec="seconds")
        self.results["errors"] = self.errors
        return self.results

    def ceiling_gflops(self) -> float | None:
        c = self.results.get("ceiling")
        return c.get("ceiling_gflops") if c and "error" not in c else None

    def _step_row(self, shape: Shape, impl: str, r: dict[str, Any], flops: float) -> dict:
        ceil = self.ceiling_gflops()
        row = {"config": shape.label, "impl": PEER_LABELS.get(impl, impl), "key": impl,
               "load": r["load_before"]["loadavg"], "other": r.get("foreign_cores")}
        if "error" in r:
            return {**row, "note": "error: " + r["error"][:200]}
        gflops = flops / r["median_s"] / 1e9
        row.update(ms=1e3 * r["median_s"], ms_min=1e3 * r["min_s"],
                   tok_s=shape.tokens / r["median_s"], gflops=gflops,
                   util_pct=100 * gflops / ceil if ceil else None, mem_mib=r.get("max_rss_mib"),
                   loss0=r.get("loss_first"), cpu_wall=r["cpu_median_s"] / r["median_s"],
                   note=(r.get("optimizer", "") if impl != "minimodel" else ""))
        return row

    def case_step(self) -> None:
        o = self.opts
        case = {"rows": [], "raw": {}, "notes": self.peer_note()}
        impls = ["minimodel"] + (["nanogpt"] if self.torch_ok() else []) + (
            ["hf-eager", "hf-sdpa"] if self.hf_ok() else [])
        for name in o.configs:
            shape = self.shape(spec.step_shape(name))
            flops = shape.flops()["total"]
            raw = {impl: self.measure(f"step {name} {impl}", {"task": "step", "impl": impl,
                                                              "shape": shape.to_dict()})
                   for impl in impls}
            case["raw"][name] = raw
            rows = [self._step_row(shape, impl, raw[impl], flops) for impl in impls]
            peers = [r for r in rows if r["key"] != "minimodel" and "ms" in r]
            best = min(peers, key=lambda r: r["ms"]) if peers else None
            mm = rows[0]
            for r in rows:
                if best and "ms" in r:
                    r["ratio"] = r["ms"] / best["ms"]
            bound = spec.STEP_TARGET.get(name, 1.0)
            peer = best["impl"] if best else "-"
            t = self.target("step", f"{shape.label}: minimodel / best peer ({peer})",
                            mm.get("ratio"), "<=", bound, "" if best else "no peer measured")
            mm.update(target=f"<= {bound:.2f}x", met=t["met"])
            case["rows"] += rows
        case["notes"].append(
            "One step = forward + loss, backward, AdamW step, zero_grad on B x T tokens; "
            "ms = median wall time of the timed steps after warm-up; ratio = time / best peer's "
            "time; minimodel runs GPT.forward(idx, targets, return_logits=False) (chunked tied "
            "head + loss) with its mallopt allocator tuning and BLAS threads as `minimodel train` "
            "sets them; all implementations start from the same weights (equal loss0).")
        self.results["cases"]["step"] = case

    def case_memory(self) -> None:
        case = {"rows": [], "raw": {}, "notes": self.peer_note()}
        shape = self.shape(spec.MEMORY_SHAPE)
        impls = ["minimodel"] + (["nanogpt"] if self.torch_ok() else [])
        reps = 1 if self.opts.quick else 3
        for impl in impls:
            mem = self.measure(f"memory {impl}", {"task": "memory", "impl": impl,
                                                  "shape": shape.to_dict(), "reps": reps})
            tim = self.measure(f"memory-shape step time {impl}",
                               {"task": "step", "impl": impl, "shape": shape.to_dict()})
            case["raw"][impl] = {"memory": mem, "time": tim}
            row = self._step_row(shape, impl, tim, shape.flops()["total"])
            row.pop("util_pct", None)
            row["growth_mib"] = mem.get("growth_mib")
            row["tracemalloc_mib"] = mem.get("tracemalloc_peak_mib")
            if impl == "nanogpt":
                row["impl"] = "PyTorch eager (nanoGPT, full logits + F.cross_entropy)"
            if "error" in mem:
                row["note"] = "memory error: " + mem["error"][:200]
            case["rows"].append(row)
        mm = case["rows"][0]
        if len(case["rows"]) > 1:
            pt = case["rows"][1]
            mem_ratio = (mm["growth_mib"] / pt["growth_mib"]
                         if mm.get("growth_mib") is not None and pt.get("growth_mib") else None)
            time_ratio = mm["ms"] / pt["ms"] if "ms" in mm and "ms" in pt else None
            mm.update(mem_ratio=mem_ratio, ratio=time_ratio)
            t1 = self.target("memory", f"{shape.label}: peak growth minimodel / torch", mem_ratio,
                             "<=", spec.MEMORY_TARGET)
            t2 = self.target("memory", f"{shape.label}: step time minimodel / torch", time_ratio,
                             "<=", 1.0)
            both = None if None in (t1["met"], t2["met"]) else t1["met"] and t2["met"]
            mm.update(target=f"mem <= {spec.MEMORY_TARGET}x, time <= 1.0x", met=both)
        method = case["raw"]["minimodel"]["memory"].get("method", "?")
        case["notes"].append(
            f"Peak growth = {method}, measured after one warm-up step (optimizer state already "
            "allocated), with glibc set to map every block >= 128 KiB separately and trim at once, "
            "so RSS follows live memory in both processes; the largest of "
            f"{reps} step(s). tracemalloc = NumPy's own allocation peak over one step (minimodel "
            "only, cross-check). Time columns come from a separate fresh process per "
            "implementation with normal allocator settings.")
        self.results["cases"]["memory"] = case

    def case_mlm(self) -> None:
        case = {"rows": [], "raw": {}, "notes": []}
        shapes = spec.MLM_SHAPES[:1] if self.opts.quick else spec.MLM_SHAPES
        labels = {"masked": "masked rows only (return_logits=False)",
                  "full": "every position: (B,T,V) logits + cross_entropy(-100)",
                  "full-chunked": "every position, chunked head (contrast)"}
        for shape in dict.fromkeys(self.shape(s) for s in shapes):  # tiny: one shape
            raw = {}
            for variant in ("masked", "full", "full-chunked"):
                raw[variant] = self.measure(f"mlm V={shape.V} {variant}",
                                            {"task": "mlm", "impl": variant,
                                             "shape": shape.to_dict()})
            case["raw"][str(shape.V)] = raw
            m_rows = raw["masked"].get("masked_rows", round(spec.MASK_PROB * shape.tokens))
            rows = []
            for variant, r in raw.items():
                head_rows = m_rows if variant == "masked" else shape.tokens
                row = self._step_row(shape, variant, r, shape.flops(head_rows)["total"])
                row.pop("util_pct", None)
                row["impl"] = labels[variant]
                row["note"] = f"head on {head_rows} rows" if "ms" in row else row.get("note")
                rows.append(row)
            masked, full = rows[0], rows[1]
            bound_flops = shape.flops()["total"] / shape.flops(m_rows)["total"]
            for r in rows:
                if "ms" in r and "ms" in masked:
                    r["ratio"] = r["ms"] / masked["ms"]
            speedup = full.get("ratio")
            t = self.target("mlm", f"{shape.label}: full-projection time / masked-rows time",
                            speedup, ">=", spec.MLM_TARGET,
                            f"FLOP-model bound for this shape: {bound_flops:.2f}x "
                            f"(trunk unchanged, head on {m_rows} of {shape.tokens} rows)")
            full.update(target=f">= {spec.MLM_TARGET:.1f}x", met=t["met"])
            case["rows"] += rows
        case["notes"].append(
            "ratio = time / masked-rows time (so the 'every position' row's ratio is the speed-up "
            f"of projecting only the masked rows). {int(spec.MASK_PROB * 100)} % BERT masking "
            "(minimodel.data.masking.mask_tokens). The FLOP-model bound on the speed-up is "
            "(trunk + head on all rows) / (trunk + head on masked rows): the trunk is not "
            "affected by masking.")
        self.results["cases"]["mlm"] = case

    def case_util(self) -> None:
        case = {"rows": [], "raw": {}, "notes": []}
        shape = self.shape(spec.UTIL_SHAPE)
        r = self.measure("util (instrumented minimodel step)",
                         {"task": "util", "shape": shape.to_dict()})
        case["raw"]["util"] = r
        fl = shape.flops()
        row = self._step_row(shape, "minimodel", r, fl["total"])
        if "ms" in row:
            row.update(emb_pct=r["embedding_share_pct"], adam_pct=r["adamw_share_pct"],
                       emb_ms=1e3 * r["embedding_backward_median_s"],
                       adam_ms=1e3 * r["adamw_step_median_s"])
        t1 = self.target("util", f"{shape.label}: utilisation of the fp32 GEMM ceiling (%)",
                         row.get("util_pct"), ">=", spec.UTIL_TARGET)
        t2 = self.target("util", f"{shape.label}: embedding backward share of the step (%)",
                         row.get("emb_pct"), "<=", spec.EMBEDDING_SHARE_TARGET)
        t3 = self.target("util", f"{shape.label}: AdamW.step share of the step (%)",
                         row.get("adam_pct"), "<=", spec.ADAMW_SHARE_TARGET)
        row.update(target=f"util >= {spec.UTIL_TARGET:.0f}%, emb <= "
                          f"{spec.EMBEDDING_SHARE_TARGET:g}%, "
                          f"adamw <= {spec.ADAMW_SHARE_TARGET:g}%",
                   met=None if None in (t1["met"], t2["met"], t3["met"])
                   else t1["met"] and t2["met"] and t3["met"])
        case["rows"].append(row)
        c = self.results.get("ceiling") or {}
        case["gemms"] = c.get("gemms", [])
        case["notes"].append(
            f"FLOPs/step = 6*P_non-embedding*tokens ({fl['dense'] / 1e9:.1f} G) + head "
            f"6*d*V*tokens ({fl['head'] / 1e9:.1f} G) + attention 12*L*T*d*tokens "
            f"({fl['attention'] / 1e9:.1f} G) = {fl['total'] / 1e9:.1f} G. Ceiling = best "
            "single-run GFLOP/s over the model-shaped NumPy fp32 GEMMs below, same thread count, "
            "measured in this run. Shares: time inside the embedding Lookup.backward (token + position "
            "tables) and inside AdamW.step, per step, median over the timed steps.")
        self.results["cases"]["util"] = case

    def case_generate(self) -> None:
        o = self.opts
        case = {"rows": [], "raw": {}, "notes": []}
        shape = self.shape(spec.GENERATE_SHAPE)
        prompts = (4, 16) if o.size == "tiny" else spec.GENERATE_PROMPTS
        n_new = 8 if (o.quick or o.size == "tiny") else 32
        n_plain = 4 if (o.quick or o.size == "tiny") else 16
        r = self.measure("generate", {"task": "generate", "shape": shape.to_dict(),
                                      "prompts": list(prompts), "new_tokens": n_new,
                                      "nocache_tokens": n_plain, "repeats": 1 if o.quick else 2})
        case["raw"]["generate"] = r
        if "error" in r:
            case["rows"].append({"config": shape.label, "impl": "GPT.generate",
                                 "note": "error: " + r["error"][:200]})
        else:
            for plen in prompts:
                p = r["prompts"][str(plen)]
                case["rows"].append({
                    "config": f"d={shape.d} V={shape.V} L={shape.L} B={shape.B} prompt={plen}",
                    "impl": "GPT.generate (KV cache)",
                    "ms": p["cache_ms_per_token"], "ms_min": p["cache_ms_min"],
                    "tok_s": 1e3 / p["cache_ms_per_token"],
                    "gflops": p["decode_gflop_per_token"] / (p["cache_ms_per_token"] / 1e3),
                    "nocache_ms": p["nocache_ms_per_token"], "prefill_ms": p["prefill_ms"],
                    "mem_mib": r.get("max_rss_mib"), "load": r["load_before"]["loadavg"],
                    "other": r.get("foreign_cores"),
                    "note": f"{p['decode_steps']} decode steps, greedy, B=1"})
            lo, hi = (r["prompts"][str(p)] for p in (prompts[0], prompts[-1]))
            ratio = hi["cache_ms_per_token"] / lo["cache_ms_per_token"]
            predicted = hi["decode_gflop_per_token"] / lo["decode_gflop_per_token"]
            bound = predicted * spec.GENERATE_NOISE
            plain_ratio = hi["nocache_ms_per_token"] / lo["nocache_ms_per_token"]
            t = self.target("generate", f"d={shape.d} V={shape.V}: per-token time prompt "
                            f"{prompts[-1]} / prompt {prompts[0]} (KV cache)", ratio, "<=", bound,
                            f"attention-term FLOP ratio {predicted:.3f} x {spec.GENERATE_NOISE} "
                            f"noise allowance; without cache the ratio is {plain_ratio:.2f}")
            last = case["rows"][-1]
            last.update(ratio=ratio, nocache_ratio=plain_ratio, target=f"<= {bound:.2f}x",
                        met=t["met"])
            case["notes"].append(
                f"ms = median time per generated token over the decode steps of "
                f"GPT.generate(prompt, {n_new}, temperature=0) (between successive "
                "hidden_states calls; the prompt's prefill is reported apart). no-cache = one "
                "model(ids) forward over the whole context per token (full logits), median of "
                f"{n_plain} tokens. GFLOP/s uses 2*(12*L*d^2 + d*V) + 4*L*context*d per token at "
                f"the mean context. Target: the cached per-token time grows at most like the "
                f"attention term, i.e. ratio <= FLOP ratio ({predicted:.3f}) x "
                f"{spec.GENERATE_NOISE}.")
        self.results["cases"]["generate"] = case


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
