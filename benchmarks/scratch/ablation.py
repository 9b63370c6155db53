"""End-to-end effect of each prototype (proto.py, proto2.py) or allocator preset on the
minimodel step, each variant in a fresh subprocess, rounds interleaved; a run during which
other processes used the cores is repeated (up to 3 times).

    PYTHONPATH=src python benchmarks/scratch/ablation.py [--config large] [--threads 1]
        [--rounds 3] [--steps 10] [--variants base,ln-gemv,all2,base@none,...] [--wait-quiet S]
With --threads 1 the CPU-time column is immune to other load on the machine.
"""
import argparse, os, statistics, sys
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from bench_step import cpu_busy, run_worker  # noqa: E402
import time

ap = argparse.ArgumentParser()
ap.add_argument("--config", default="large")
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--alloc", default="std")
ap.add_argument("--wait-quiet", type=float, default=0.0, help="wait up to S s for idle cores")
ap.add_argument("--variants", default="base,ln-gemv,attn-gemv,ce-gemv,all2",
                help="comma list: base | a proto.py / proto2.py name | names joined by + | all | all2;"
                     " append @preset to pick the allocator preset (e.g. base@none)")
args = ap.parse_args()
variants = args.variants.split(",")
res = {v: [] for v in variants}
for _ in range(args.rounds):
    for v in variants:  # "name" or "name@allocpreset"; name "base" = no prototype
        name, _, alloc = v.partition("@")
        argv = ["--worker", "minimodel", "--config", args.config, "--alloc", alloc or args.alloc,
                "--steps", str(args.steps)] + ([] if name == "base" else ["--proto", name.replace("+", ",")])
        for attempt in range(4):  # rerun when other processes shared the cores
            deadline = time.time() + args.wait_quiet
            while args.wait_quiet and cpu_busy() > 0.15 and time.time() < deadline:
                time.sleep(5)
            r = run_worker(argv, args.threads)
            if r["other_cores"] <= 0.15:
                break
        r["busy"] = r["other_cores"]
        res[v].append(r)
b_cpu = statistics.median(r["cpu_median_s"] for r in res[variants[0]])
b_min = min(r["min_s"] for r in res[variants[0]])
print(f"config={args.config} threads={args.threads} alloc={args.alloc} rounds={args.rounds} "
      f"steps={args.steps}  load now {os.getloadavg()[0]:.1f}")
print(f"{'variant':<34} {'cpu ms':>8} {'saved':>7} {'x':>6} {'wall min':>9} {'x':>6} {'wall med':>9} "
      f"{'faults':>7} {'rss MiB':>8} {'other':>5}")
for v in variants:
    cpu = statistics.median(r["cpu_median_s"] for r in res[v])
    mn = min(r["min_s"] for r in res[v])
    med = statistics.median(t for r in res[v] for t in r["times_s"])
    print(f"{v:<34} {1e3 * cpu:8.1f} {1e3 * (b_cpu - cpu):7.1f} {b_cpu / cpu:6.3f} "
          f"{1e3 * mn:9.1f} {b_min / mn:6.3f} {1e3 * med:9.1f} "
          f"{statistics.mean(r['minor_faults_per_step'] for r in res[v]):7.0f} "
          f"{max(r['max_rss_mib'] for r in res[v]):8.0f} {max(r['busy'] for r in res[v]):5.2f}")
