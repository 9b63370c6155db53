"""End-to-end effect of each prototype in proto.py on the minimodel step (fresh subprocess each).

    PYTHONPATH=src python benchmarks/scratch/ablation.py [--config large] [--threads 1]
        [--rounds 3] [--steps 10] [--variants base,linear,...,all]
With --threads 1 the CPU-time column is immune to other load on the machine.
"""
import argparse, os, statistics, sys
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from bench_step import run_worker  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--config", default="large")
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--alloc", default="std")
ap.add_argument("--variants", default="base,linear,head,attention,gelu,layernorm,ce,leafcopy,adamw,all")
args = ap.parse_args()
variants = args.variants.split(",")
res = {v: [] for v in variants}
for _ in range(args.rounds):
    for v in variants:
        argv = ["--worker", "minimodel", "--config", args.config, "--alloc", args.alloc,
                "--steps", str(args.steps)] + ([] if v == "base" else ["--proto", v.replace("+", ",")])
        res[v].append(run_worker(argv, args.threads))
b_cpu = statistics.median(r["cpu_median_s"] for r in res["base"])
b_min = min(r["min_s"] for r in res["base"])
print(f"config={args.config} threads={args.threads} alloc={args.alloc} rounds={args.rounds} "
      f"steps={args.steps}  load now {os.getloadavg()[0]:.1f}")
print(f"{'variant':<34} {'cpu ms':>8} {'saved':>7} {'x':>6} {'wall min':>9} {'x':>6} {'wall med':>9}")
for v in variants:
    cpu = statistics.median(r["cpu_median_s"] for r in res[v])
    mn = min(r["min_s"] for r in res[v])
    med = statistics.median(t for r in res[v] for t in r["times_s"])
    print(f"{v:<34} {1e3 * cpu:8.1f} {1e3 * (b_cpu - cpu):7.1f} {b_cpu / cpu:6.3f} "
          f"{1e3 * mn:9.1f} {b_min / mn:6.3f} {1e3 * med:9.1f}")
