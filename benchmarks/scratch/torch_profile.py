"""torch.profiler breakdown of the torch-manual step (same model as bench_step)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
from _models import get_cfg, torch_step_fn
cfg = get_cfg(sys.argv[1] if len(sys.argv) > 1 else "large")
step, model, opt = torch_step_fn(cfg, sdpa="sdpa" in sys.argv)
for _ in range(3):
    step()
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(3):
        step()
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
