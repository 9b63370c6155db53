"""Interleaved rounds: torch-manual, minimodel (today, BLAS 2 threads) and the 2-thread
data-parallel experiment (dp_threads.py, BLAS 1 thread), so that drifting machine speed hits
all three alike.  PYTHONPATH=src python benchmarks/scratch/dp_compare.py [--rounds 3]"""
import json, os, statistics, subprocess, sys
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from bench_step import run_worker  # noqa: E402

rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
for name in ("small", "large"):
    res = {"torch-manual": [], "minimodel": [], "minimodel 2-thread data-parallel": []}
    for _ in range(rounds):
        res["torch-manual"].append(run_worker(["--worker", "torch", "--config", name, "--steps", "10"], 2))
        res["minimodel"].append(run_worker(["--worker", "minimodel", "--config", name, "--alloc", "std",
                                            "--steps", "10"], 2))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(HERE), "src"), HERE]))
        out = subprocess.run([sys.executable, os.path.join(HERE, "scratch", "dp_threads.py"), name,
                              "--result"], env=env, capture_output=True, text=True).stdout
        res["minimodel 2-thread data-parallel"].append(json.loads(out.split("RESULT ", 1)[1]))
    base = statistics.median(t for r in res["torch-manual"] for t in r["times_s"])
    for k, rs in res.items():
        med = statistics.median(t for r in rs for t in r["times_s"])
        print(f"{name:<6} {k:<34} median {1e3 * med:7.1f} ms  min {1e3 * min(r['min_s'] for r in rs):7.1f}"
              f"  x torch {med / base:5.2f}  round medians {[round(1e3 * r['median_s']) for r in rs]}")
