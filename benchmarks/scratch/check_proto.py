"""Correctness of the prototypes: float64 loss, gradients and one AdamW update vs. minimodel."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np
from _models import get_cfg, build_minimodel, make_batch
from minimodel import optim

cfg = get_cfg(sys.argv[1] if len(sys.argv) > 1 else "small")
x, y = make_batch(cfg)

def run():
    m = build_minimodel(cfg, seed=0)
    for p in m.parameters():
        p.data = p.data.astype(np.float64)
    loss = m(x, y)
    loss.backward()
    grads = {n: p.grad.copy() for n, p in m.named_parameters()}
    opt = optim.AdamW(m.parameters(), lr=1e-3)
    opt.step(); opt.step()
    return float(loss.item()), grads, {n: p.data.copy() for n, p in m.named_parameters()}

l0, g0, p0 = run()
import proto
proto.install(proto.PROPOSALS)
l1, g1, p1 = run()
print(f"loss {l0:.12f} vs {l1:.12f}")
worst = max(np.abs(g0[n] - g1[n]).max() / (np.abs(g0[n]).max() + 1e-30) for n in g0)
worstp = max(np.abs(p0[n] - p1[n]).max() for n in p0)
print(f"max relative grad difference over {len(g0)} params: {worst:.2e}; "
      f"max |param diff| after 2 AdamW steps: {worstp:.2e}")
assert abs(l0 - l1) < 1e-10 and worst < 1e-9 and worstp < 1e-9
print("OK")
