"""float64: gradients of the 2-thread data-parallel step (halves, backward seeded with 1/2,
replica grads summed) equal the full-batch gradients."""
import copy, os, sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np
from _models import build_minimodel, get_cfg, make_batch

cfg = get_cfg(sys.argv[1] if len(sys.argv) > 1 else "small")
x, y = make_batch(cfg)
full = build_minimodel(cfg)
for p in full.parameters():
    p.data = p.data.astype(np.float64)
a, b = copy.deepcopy(full), copy.deepcopy(full)
loss = full(x, y); loss.backward()
h = cfg.B // 2
seed = np.asarray(0.5)
def part(m, sl):
    l = m(x[sl], y[sl]); l.backward(seed); return float(l.item())
with ThreadPoolExecutor(2) as pool:
    l1, l2 = pool.map(lambda args: part(*args), [(a, slice(0, h)), (b, slice(h, None))])
worst = max(np.abs(pf.grad - (pa.grad + pb.grad)).max() / np.abs(pf.grad).max()
            for pf, pa, pb in zip(full.parameters(), a.parameters(), b.parameters()))
print(f"loss {float(loss.item()):.12f} vs {(l1 + l2) / 2:.12f}; max relative grad diff {worst:.2e}")
assert abs(float(loss.item()) - (l1 + l2) / 2) < 1e-12 and worst < 1e-12
print("OK")
