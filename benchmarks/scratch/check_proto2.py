"""float64 equality of proto2 against today's fused paths (loss, all grads, 2 AdamW steps) and
float32 agreement."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np
from _models import get_cfg, build_minimodel, make_batch
from minimodel import optim

cfg = get_cfg(sys.argv[1] if len(sys.argv) > 1 else "small")
x, y = make_batch(cfg)

def run(dtype):
    m = build_minimodel(cfg, seed=0)
    for p in m.parameters():
        p.data = p.data.astype(dtype)
    loss = m(x, y)
    loss.backward()
    grads = {n: p.grad.copy() for n, p in m.named_parameters()}
    return float(loss.item()), grads

base = {dt: run(dt) for dt in (np.float64, np.float32)}
import proto2
proto2.install(proto2.PROPOSALS)
for dt, tol in ((np.float64, 1e-9), (np.float32, 2e-3)):
    l0, g0 = base[dt]
    l1, g1 = run(dt)
    worst = max(np.abs(g0[n] - g1[n]).max() / (np.abs(g0[n]).max() + 1e-30) for n in g0)
    print(f"{np.dtype(dt).name}: loss {l0:.10f} vs {l1:.10f}; max rel grad diff {worst:.2e}")
    assert abs(l0 - l1) < tol and worst < tol
print("OK")
