"""Time one training step of a GPT-shaped stack: minimodel vs PyTorch eager.

    PYTHONPATH=src python benchmarks/bench_step.py                      # both configs, full table
    PYTHONPATH=src python benchmarks/bench_step.py --configs large --steps 20 --json out.json
    PYTHONPATH=src python benchmarks/bench_step.py --no-mallopt         # only the untuned allocator

One step = forward + cross-entropy, backward, AdamW step, zero_grad, on B=16 x T=128 tokens of a
4-layer, 4-head model with a tied head (configs: small d=128 V=512, large d=256 V=8192).
Every implementation runs in a fresh subprocess (this script re-invokes itself with
``--worker``): 3 warm-up steps, then the median of ``--steps`` timed steps. PyTorch runs with
2 threads. The same run measures NumPy's fp32 GEMM ceiling on model-shaped matrices and turns
the model's FLOPs per step into a utilisation figure. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(ROOT, "src")
WARMUP = 3


# --------------------------------------------------------------------------- workers
def _busy_jiffies() -> tuple[float, float]:
    """(seconds all cores were busy, seconds this process ran) since boot, from /proc."""
    try:
        with open("/proc/stat") as fh:
            vals = [int(v) for v in fh.readline().split()[1:]]
        hz = os.sysconf("SC_CLK_TCK")
        busy = (sum(vals) - vals[3] - vals[4]) / hz
    except (OSError, ValueError):
        busy = 0.0
    t = os.times()
    return busy, t.user + t.system


def _time_steps(step, steps: int) -> dict:
    from _alloc import page_faults

    losses = [step() for _ in range(WARMUP)]
    times, cpu = [], []
    f0 = page_faults()[0]
    b0, own0 = _busy_jiffies()
    w0 = time.perf_counter()
    for _ in range(steps):
        c0, t0 = time.process_time(), time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    f1 = page_faults()[0]
    b1, own1 = _busy_jiffies()
    other = max(0.0, ((b1 - b0) - (own1 - own0)) / (time.perf_counter() - w0))
    import resource

    return {"other_cores": other,
            "median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "cpu_median_s": statistics.median(cpu), "cpu_min_s": min(cpu),
            "times_s": times, "loss_first": losses[0], "loss_last": losses[-1],
            "minor_faults_per_step": (f1 - f0) / steps,
            "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def worker_minimodel(args) -> dict:
    from _alloc import tune

    alloc = tune(args.alloc)  # before NumPy allocates anything big
    import numpy as np

    if args.proto:  # prototypes of proposed engine changes (benchmarks/scratch/proto.py)
        sys.path.insert(0, os.path.join(HERE, "scratch"))
        import proto
        import proto2

        names = {"all": list(proto.PROPOSALS), "all2": list(proto2.PROPOSALS)}.get(
            args.proto, args.proto.split(","))
        for n in names:
            (proto2 if n in proto2.PROPOSALS else proto).install([n])

    from _models import get_cfg, minimodel_step_fn

    cfg = get_cfg(args.config)
    if args.dp:
        from _models import minimodel_dp_step_fn

        step, _, _ = minimodel_dp_step_fn(cfg, workers=args.dp)
    else:
        step, _, _ = minimodel_step_fn(cfg, head_loss=args.head_loss)
    out = _time_steps(step, args.steps)
    out.update(impl="minimodel", alloc=alloc, numpy=np.__version__)
    return out


def worker_torch(args) -> dict:
    import torch

    torch.set_num_threads(args.threads)
    from _models import get_cfg, torch_step_fn

    cfg = get_cfg(args.config)
    step, _, opt = torch_step_fn(cfg, sdpa=args.attn == "sdpa", adamw=args.adamw)
    out = _time_steps(step, args.steps)
    out.update(impl=f"torch-{args.attn}", torch=torch.__version__, threads=torch.get_num_threads(),
               adamw=args.adamw, adamw_foreach=opt.defaults.get("foreach"))
    return out


# (M, K) @ (K, N) shapes of the step's GEMMs at d=256, V=8192, N=B*T=2048.
GEMMS = [
    ("head fwd  (2048x256)@(256x8192)", (2048, 256), (256, 8192)),
    ("head dW   (8192x2048)@(2048x256)", (8192, 2048), (2048, 256)),
    ("head dh   (2048x8192)@(8192x256)", (2048, 8192), (8192, 256)),
    ("c_attn    (2048x256)@(256x768)", (2048, 256), (256, 768)),
    ("c_fc      (2048x256)@(256x1024)", (2048, 256), (256, 1024)),
]


def worker_ceiling(args) -> dict:
    from _alloc import tune

    tune(args.alloc)
    import numpy as np

    rng = np.random.default_rng(0)
    rows = []
    for name, sa, sb in GEMMS:
        a = rng.standard_normal(sa, dtype=np.float32)
        b = rng.standard_normal(sb, dtype=np.float32)
        out = np.empty((sa[0], sb[1]), np.float32)
        flops = 2 * sa[0] * sa[1] * sb[1]
        reps = max(3, int(2e10 / flops))
        np.matmul(a, b, out=out)
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            np.matmul(a, b, out=out)
            ts.append(time.perf_counter() - t0)
        rows.append({"gemm": name, "gflops": flops / statistics.median(ts) / 1e9,
                     "gflops_best": flops / min(ts) / 1e9})
    return {"impl": "ceiling", "gemms": rows,
            "ceiling_gflops": max(r["gflops"] for r in rows[:1] + rows[3:4])}


def cpu_busy(seconds: float = 2.0) -> float:
    """Fraction of all cores busy over ``seconds`` (this process is idle meanwhile): other load."""
    def sample():
        with open("/proc/stat") as fh:
            vals = [int(v) for v in fh.readline().split()[1:]]
        return sum(vals), vals[3] + vals[4]  # total, idle + iowait

    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except OSError:
        return 0.0
    return 1.0 - (i1 - i0) / max(t1 - t0, 1)


def run_worker(argv: list[str], threads: int) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join([SRC, HERE] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), *argv], env=env,
                          capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"worker {argv} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


# --------------------------------------------------------------------------- driver
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="small,large", help="comma list of: small, large")
    ap.add_argument("--steps", type=int, default=10, help="timed steps after 3 warm-up steps (>= 10)")
    ap.add_argument("--json", metavar="FILE", help="write all results to FILE")
    ap.add_argument("--mallopt", action=argparse.BooleanOptionalAction, default=None,
                    help="run minimodel only with (--mallopt) or only without (--no-mallopt) the "
                         "glibc malloc tuning; default: both")
    ap.add_argument("--alloc-preset", default="std",
                    help="tuning preset from benchmarks/_alloc.py used by --mallopt (default std)")
    ap.add_argument("--threads", type=int, default=2,
                    help="BLAS / torch threads (default 2). With 1, the 'cpu ms' column (process "
                         "CPU time) is immune to other processes sharing the cores")
    ap.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                    help="before each subprocess wait up to SECONDS until other processes use "
                         "< 15%% of the cores (sampled from /proc/stat)")
    ap.add_argument("--retries", type=int, default=3,
                    help="rerun a subprocess (up to N times) when other processes used more than "
                         "0.15 cores during its timed steps")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat every subprocess R times, interleaved (robust to a busy machine); "
                         "the table pools all timed steps")
    ap.add_argument("--with-chunked", action="store_true",
                    help="add a row: minimodel with F.linear_cross_entropy (chunked tied head + "
                         "loss, as `minimodel train` uses) instead of TiedHead + F.cross_entropy")
    ap.add_argument("--with-proto", metavar="NAMES", default="",
                    help="add a row: minimodel with prototypes from benchmarks/scratch/proto*.py "
                         "monkeypatched in (e.g. all2 = the gemv/einsum reductions of proto2.py)")
    ap.add_argument("--with-dp", action="store_true",
                    help="add a row: the 2-thread data-parallel experiment (batch halves in 2 "
                         "Python threads, OpenBLAS 1 thread; _models.minimodel_dp_step_fn)")
    ap.add_argument("--no-sdpa", action="store_true", help="skip the torch SDPA variant")
    ap.add_argument("--torch-adamw", default="default", choices=["default", "foreach", "fused"])
    # worker mode (internal)
    ap.add_argument("--worker", choices=["minimodel", "torch", "ceiling"], help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument("--alloc", default="none", help=argparse.SUPPRESS)
    ap.add_argument("--attn", default="manual", help=argparse.SUPPRESS)
    ap.add_argument("--adamw", default="default", help=argparse.SUPPRESS)
    ap.add_argument("--proto", default="", help=argparse.SUPPRESS)
    ap.add_argument("--head-loss", default="ce", help=argparse.SUPPRESS)
    ap.add_argument("--dp", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        fn = {"minimodel": worker_minimodel, "torch": worker_torch, "ceiling": worker_ceiling}
        print("RESULT " + json.dumps(fn[args.worker](args)), flush=True)
        return

    if args.steps < 10:
        ap.error("--steps must be >= 10 (the median needs enough samples)")
    sys.path.insert(0, HERE)
    from _models import get_cfg

    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    allocs = {None: ["std_preset", "none"], True: ["std_preset"], False: ["none"]}[args.mallopt]
    allocs = [args.alloc_preset if a == "std_preset" else a for a in allocs]
    steps = ["--steps", str(args.steps)]

    def wait_quiet() -> None:
        deadline = time.time() + args.wait_quiet
        while args.wait_quiet and cpu_busy() > 0.15 and time.time() < deadline:
            time.sleep(5)

    wait_quiet()
    ceiling = run_worker(["--worker", "ceiling", "--alloc", args.alloc_preset], args.threads)
    ceil = ceiling["ceiling_gflops"]
    results = {"ceiling": ceiling, "configs": {}, "argv": sys.argv[1:]}
    jobs = []  # (config, label, argv[, BLAS threads override])
    for name in configs:
        for attn in ["manual"] + ([] if args.no_sdpa else ["sdpa"]):
            jobs.append((name, f"torch-{attn}", ["--worker", "torch", "--config", name, "--attn",
                                                 attn, "--adamw", args.torch_adamw, *steps]))
        for alloc in allocs:
            label = f"minimodel[{'mallopt:' + alloc if alloc != 'none' else 'no-mallopt'}]"
            jobs.append((name, label, ["--worker", "minimodel", "--config", name, "--alloc", alloc,
                                       *steps]))
        if args.with_chunked:
            jobs.append((name, f"minimodel[{allocs[0]}]+chunked-CE",
                         ["--worker", "minimodel", "--config", name, "--alloc", allocs[0],
                          "--head-loss", "chunked", *steps]))
        if args.with_proto:
            jobs.append((name, f"minimodel[{allocs[0]}]+{args.with_proto}",
                         ["--worker", "minimodel", "--config", name, "--alloc", allocs[0],
                          "--proto", args.with_proto, *steps]))
        if args.with_dp:
            jobs.append((name, f"minimodel[{allocs[0]}] dp2-threads",
                         ["--worker", "minimodel", "--config", name, "--alloc", allocs[0],
                          "--dp", "2", *steps], 1))
    runs: dict = {}
    for rnd in range(args.rounds):
        for name, label, argv, *blas in jobs:
            for attempt in range(args.retries + 1):
                wait_quiet()
                r = run_worker(argv, blas[0] if blas else args.threads)
                if r["other_cores"] <= 0.15:
                    break
            r["attempts"] = attempt + 1
            runs.setdefault((name, label), []).append(r)
    for name in configs:
        cfg = get_cfg(name)
        fl = cfg.flops()
        rows = []
        for (cname, label), rs in runs.items():
            if cname != name:
                continue
            times = [t for r in rs for t in r["times_s"]]
            cpu_med = statistics.median(x["cpu_median_s"] for x in rs)
            r = dict(rs[0])
            r.update(impl=label, times_s=times, median_s=statistics.median(times), min_s=min(times),
                     round_medians_s=[x["median_s"] for x in rs], cpu_median_s=cpu_med,
                     minor_faults_per_step=statistics.mean(x["minor_faults_per_step"] for x in rs),
                     max_other=max(x["other_cores"] for x in rs))
            r["tokens_per_s"] = cfg.tokens / r["median_s"]
            r["gflops"] = fl["total"] / r["median_s"] / 1e9
            r["util_pct"] = 100 * r["gflops"] / ceil
            rows.append(r)
        results["configs"][name] = {"cfg": cfg.__dict__, "flops": fl, "rows": rows}

    # ---- table
    print(f"NumPy fp32 GEMM ceiling ({args.threads} thread(s), median of reps):")
    for g in ceiling["gemms"]:
        print(f"  {g['gemm']:<36} {g['gflops']:7.1f} GFLOP/s  (best {g['gflops_best']:.1f})")
    print(f"  -> ceiling used for utilisation: {ceil:.1f} GFLOP/s\n")
    hdr = (f"{'config':<20} {'implementation':<28} {'ms/step':>8} {'min':>7} {'cpu ms':>7} "
           f"{'tok/s':>7} {'GFLOP/s':>7} {'util%':>5} {'x torch':>7} {'(min)':>5} {'(cpu)':>5} "
           f"{'x sdpa':>6} {'faults':>7} {'loss0':>6} {'other':>5}")
    print(hdr)
    print("-" * len(hdr))
    for name, res in results["configs"].items():
        c, rows = res["cfg"], res["rows"]
        by = {r["impl"]: r for r in rows}
        tm = by["torch-manual"]
        label = f"{name} d={c['d']} V={c['V']}"
        for r in rows:
            x_s = (f"{r['median_s'] / by['torch-sdpa']['median_s']:6.2f}" if "torch-sdpa" in by
                   else "     -")
            print(f"{label:<20} {r['impl']:<28} {1e3 * r['median_s']:8.1f} {1e3 * r['min_s']:7.1f} "
                  f"{1e3 * r['cpu_median_s']:7.1f} {r['tokens_per_s']:7.0f} {r['gflops']:7.1f} "
                  f"{r['util_pct']:5.1f} {r['median_s'] / tm['median_s']:7.2f} "
                  f"{r['min_s'] / tm['min_s']:5.2f} {r['cpu_median_s'] / tm['cpu_median_s']:5.2f} "
                  f"{x_s} {r['minor_faults_per_step']:7.0f} {r['loss_first']:6.3f} "
                  f"{r['max_other']:5.2f}")
            label = ""
        fl = res["flops"]
        print(f"{'':<20} FLOPs/step {fl['total'] / 1e9:.1f} G = 6*matmul-params*tokens "
              f"{fl['dense'] / 1e9:.1f} G + attention 12*L*T*d*tokens {fl['attention'] / 1e9:.1f} G")
    print(f"threads={args.threads}, steps={args.steps} x rounds={args.rounds} after {WARMUP} warm-up. "
          "ms/step: median wall time; x torch: ratio to torch-manual by median / min / CPU time; "
          "x sdpa: ratio to torch SDPA (median); faults: minor page faults per step; other: "
          "cores used by OTHER processes during the timed steps (worst round; > 0.15 means the "
          "cores were shared: trust 'min', or rerun with --threads 1 and read the cpu column)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
