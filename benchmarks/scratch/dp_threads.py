"""Upper-bound experiment: 2-way data parallelism in Python threads with single-threaded BLAS.

Two replicas of the benchmark model share their parameter ARRAYS (AdamW updates p.data in
place, so both see the update) but keep separate .grad. Each thread runs forward + backward on
half of the batch; the main thread averages the gradients into the master, runs AdamW and
zero_grad. Compared with the normal step (whole batch, OpenBLAS 2 threads).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/scratch/dp_threads.py [small|large]
(the reference step runs in a subprocess with OPENBLAS_NUM_THREADS=2). Needs idle cores.
"""
import copy
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from _alloc import page_faults, tune  # noqa: E402

ALLOC = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--alloc=")), "std")
tune(ALLOC)
import numpy as np  # noqa: E402

from _models import build_minimodel, get_cfg, make_batch  # noqa: E402
from minimodel import optim  # noqa: E402

name = next((a for a in sys.argv[1:] if not a.startswith("--")), "large")
cfg = get_cfg(name)
x, y = make_batch(cfg)
master = build_minimodel(cfg)
replica = copy.deepcopy(master)
mp, rp = list(master.parameters()), list(replica.parameters())
for a, b in zip(mp, rp):
    b.data = a.data  # one array, two Parameter objects
opt = optim.AdamW(mp, lr=1e-3)
pool = ThreadPoolExecutor(2)
h = cfg.B // 2


def half(model, sl):
    loss = model(x[sl], y[sl])
    loss.backward()
    return float(loss.item())


def step():
    f1 = pool.submit(half, master, slice(0, h))
    f2 = pool.submit(half, replica, slice(h, None))
    loss = 0.5 * (f1.result() + f2.result())
    for a, b in zip(mp, rp):
        a.grad += b.grad
        a.grad *= 0.5
    opt.step()
    master.zero_grad()
    replica.zero_grad()
    return loss


losses = [step() for _ in range(3)]
ts = []
f0 = page_faults()[0]
for _ in range(10):
    t0 = time.perf_counter()
    losses.append(step())
    ts.append(time.perf_counter() - t0)
faults = (page_faults()[0] - f0) / 10
print(f"{name}: 2 Python threads x half batch, BLAS 1 thread: median {1e3 * statistics.median(ts):.1f} ms, "
      f"min {1e3 * min(ts):.1f} ms; loss {losses[0]:.4f} -> {losses[-1]:.4f}; alloc={ALLOC}, "
      f"{faults:.0f} faults/step")
if "--result" in sys.argv:  # machine-readable, for dp_compare.py
    import json  # noqa: E402
    print("RESULT " + json.dumps({"median_s": statistics.median(ts), "min_s": min(ts),
                                  "times_s": ts, "loss_last": losses[-1]}))
    sys.exit(0)
env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
out = subprocess.run([sys.executable, os.path.join(HERE, "bench_step.py"), "--worker", "minimodel",
                      "--config", name, "--alloc", "std", "--steps", "10"], env=env,
                     capture_output=True, text=True).stdout
import json  # noqa: E402
r = json.loads(out.split("RESULT ", 1)[1])
print(f"{name}: normal step, BLAS 2 threads:                     median {1e3 * r['median_s']:.1f} ms, "
      f"min {1e3 * r['min_s']:.1f} ms; loss {r['loss_first']:.4f} -> {r['loss_last']:.4f}")
