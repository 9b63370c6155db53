"""Where a training step spends its time, per op family, minimodel beside PyTorch eager.

    python benchmarks/profile_ops.py                          # both sizes, this checkout + torch
    python benchmarks/profile_ops.py --against /tmp/old/src   # also another checkout's loops
    python benchmarks/profile_ops.py --configs small --steps 5 --json /tmp/prof.json

The step is the bench's (``minimodel bench --cases step``): a GPT with B=16 T=128 L=4 H=4,
AdamW, at d=128/V=512 (small) and d=256/V=8192 (large). Every measurement runs in a fresh
process with 2 threads (BLAS / torch), in interleaved rounds. minimodel's rows:

- ``loop``: a learner's plain step, ``loss = model.loss(x, y); loss.backward(); opt.step()``
- ``train`` (``--against`` checkouts that have ``training/batch_split.py`` only): the step
  ``minimodel train`` ran there (its batch split outside the model call)

Per op family, forward and backward: the wall time inside minimodel's autograd Functions
(``perf_counter`` around every ``forward``/``backward``; with the batch split, the two threads'
times add up, so a family's figure is thread-milliseconds) and inside PyTorch's ATen ops
(``torch.profiler``, self time of each op; the lm_head's products count as "head + loss" at
d=256/V=8192, and as matmul at d=128/V=512, where they have the MLP's shapes).
"python / engine" is what a phase took beyond its ops (module calls, the graph walk, gradient
sums; torch: dispatcher and autograd engine). The step line gives the wall and the process CPU
time (all threads) per step. On a shared machine the wall figures move with the load (printed);
the CPU time and the shares move less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {"small": dict(d=128, V=512), "large": dict(d=256, V=8192)}
B, T, L, H = 16, 128, 4, 4
FAMILIES = ("matmul (linear)", "attention", "gelu", "layer_norm", "head + loss", "embedding",
            "residual add", "other ops", "python / engine")
MM_FAMILY = {"Linear": "matmul (linear)", "SelfAttention": "attention", "GELU": "gelu",
             "LayerNorm": "layer_norm", "LinearCrossEntropy": "head + loss",
             "CrossEntropy": "head + loss", "Lookup": "embedding", "Add": "residual add",
             "AddIntoBuffer": "residual add"}


# --------------------------------------------------------------------------- workers
def _mm_worker(config: str, mode: str, steps: int, warmup: int) -> dict:
    """minimodel, in this process (PYTHONPATH selects the checkout)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    threadpool_limits(2, user_api="blas")
    from minimodel import optim
    from minimodel.autograd import Function
    from minimodel.models import GPT, GPTConfig
    from minimodel.tensor import Tensor

    s = SHAPES[config]
    model = GPT(GPTConfig(vocab_size=s["V"], block_size=T, n_layer=L, n_head=H, d_model=s["d"],
                          tie_embeddings=True, dropout=0.0), rng=np.random.default_rng(0))
    opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    seq = np.random.default_rng(0).integers(0, s["V"], size=(B, T + 1), dtype=np.int64)
    x, y = seq[:, :-1].copy(), seq[:, 1:].copy()
    if mode == "train":
        from minimodel.training.batch_split import loss_and_backward
    else:
        def loss_and_backward(model, x, y):
            loss = model.loss(x, y)
            loss.backward()
            return float(loss.data)

    def step() -> None:
        loss_and_backward(model, x, y)
        opt.step()
        opt.zero_grad()

    for _ in range(warmup):
        step()
    op_ms: dict[str, float] = defaultdict(float)
    phase_ms: dict[str, float] = defaultdict(float)
    state = {"phase": "fwd"}

    classes, todo = [], list(Function.__subclasses__())
    while todo:
        cls = todo.pop()
        classes.append(cls)
        todo.extend(cls.__subclasses__())
    for cls in set(classes):
        for phase, attr in (("fwd", "forward"), ("bwd", "backward")):
            original = cls.__dict__.get(attr)
            if original is None:
                continue
            fn = original.__func__ if isinstance(original, staticmethod) else original
            if cls.__name__ == "JoinedParts":  # holds the parts' whole backward: a phase
                continue

            def timed(ctx, *a, __fn=fn, __key=f"{phase} {MM_FAMILY.get(cls.__name__, 'other ops')}",
                      **k):
                t0 = time.perf_counter()
                try:
                    return __fn(ctx, *a, **k)
                finally:
                    op_ms[__key] += 1e3 * (time.perf_counter() - t0)
            setattr(cls, attr, staticmethod(timed))

    def timed_method(owner, name, key):
        original = getattr(owner, name)

        def run(*a, **k):
            t0 = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                phase_ms[key] += 1e3 * (time.perf_counter() - t0)
        setattr(owner, name, run)

    timed_method(type(opt), "step", "opt")
    walls, cpus = [], []
    op_ms.clear()
    for _ in range(steps):
        c0, t0 = time.process_time(), time.perf_counter()
        step()
        walls.append(1e3 * (time.perf_counter() - t0))
        cpus.append(1e3 * (time.process_time() - c0))
    n = steps
    out = {k: v / n for k, v in op_ms.items()}
    out["opt total"] = phase_ms["opt"] / n
    out["step wall"], out["step cpu"] = statistics.median(walls), statistics.median(cpus)
    return out


def _torch_worker(config: str, steps: int, warmup: int) -> dict:
    """PyTorch eager (the bench's nanoGPT twin, SDPA attention, fused AdamW), torch.profiler."""
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import numpy as np
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from minimodel.bench import peers, spec, steps as bench_steps

    torch.set_num_threads(2)
    shape = spec.step_shape(config)
    model = peers.nanogpt(shape, bench_steps.minimodel_gpt(shape).state_dict())
    opt, _ = peers.adamw(model.parameters(), 1e-3, 0.01)
    x, y = (torch.from_numpy(a) for a in bench_steps.batch(shape))
    V = SHAPES[config]["V"]

    def step(prof_phases: bool) -> None:
        with record_function("phase fwd"):
            loss = model(x, y)
        with record_function("phase bwd"):
            loss.backward()
        with record_function("phase opt"):
            opt.step()
            opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step(False)
    walls, cpus = [], []
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            c0, t0 = time.process_time(), time.perf_counter()
            step(True)
            walls.append(1e3 * (time.perf_counter() - t0))
            cpus.append(1e3 * (time.process_time() - c0))
    out: dict[str, float] = defaultdict(float)
    for ev in prof.events():
        name = ev.name
        if name.startswith("phase "):
            out[f"{name[6:]} total"] += ev.cpu_time_total / 1e3 / steps
            continue
        if ev.cpu_parent is None and not name.startswith("phase"):
            continue
        parent, phase = ev, None
        while parent is not None:
            if parent.name.startswith("phase "):
                phase = parent.name[6:]
            parent = parent.cpu_parent
        if phase is None or not name.startswith("aten::") and "Optimizer" not in name:
            continue
        fam = _torch_family(name, ev.input_shapes, V)
        key = "opt ops" if phase == "opt" else f"{phase} {fam}"
        out[key] += ev.self_cpu_time_total / 1e3 / steps
    out["step wall"], out["step cpu"] = statistics.median(walls), statistics.median(cpus)
    return dict(out)


def _torch_family(name: str, shapes, V: int) -> str:
    op = name.split("::", 1)[-1]
    if op in ("mm", "addmm", "bmm", "matmul", "linear"):
        d = SHAPES[[c for c in SHAPES if SHAPES[c]["V"] == V][0]]["d"]
        if V != 4 * d and any(V in (s or []) for s in shapes or []):  # small: V = 4d, no tell
            return "head + loss"
        return "matmul (linear)"
    if "attention" in op or op in ("softmax", "_softmax", "_softmax_backward_data"):
        return "attention"
    if "gelu" in op:
        return "gelu"
    if "layer_norm" in op:
        return "layer_norm"
    if "log_softmax" in op or "nll_loss" in op or "cross_entropy" in op:
        return "head + loss"
    if "embedding" in op:
        return "embedding"
    if op in ("add", "add_"):
        return "residual add"
    return "other ops"


# --------------------------------------------------------------------------- table
def _table(config: str, rows: dict[str, dict], say) -> None:
    names = list(rows)
    say(f"\n{config}: d={SHAPES[config]['d']} V={SHAPES[config]['V']} B={B} T={T} L={L} H={H}"
        f", ms per step (median over rounds; op families = sum of the op times)")
    head = f"{'':<22}" + "".join(f"{n[:15]:>16}" for n in names)
    say(head)
    for phase in ("fwd", "bwd"):
        for fam in FAMILIES[:-1]:
            vals = [rows[n].get(f"{phase} {fam}", 0.0) for n in names]
            if any(v >= 0.05 for v in vals):
                say(f"{phase + ' ' + fam:<22}" + "".join(f"{v:16.1f}" for v in vals))
    vals = []
    for n in names:
        r = rows[n]
        ops = sum(v for k, v in r.items() if k.split(" ", 1)[0] in ("fwd", "bwd")
                  and k not in ("bwd total", "fwd total"))
        opt = r.get("opt total", r.get("opt ops", 0.0))
        vals.append((ops, opt, r["step wall"], r["step cpu"]))
    say(f"{'ops (fwd + bwd)':<22}" + "".join(f"{v[0]:16.1f}" for v in vals))
    say(f"{'optimizer step':<22}" + "".join(f"{v[1]:16.1f}" for v in vals))
    say(f"{'step wall ms':<22}" + "".join(f"{v[2]:16.1f}" for v in vals))
    say(f"{'step CPU ms (all thr)':<22}" + "".join(f"{v[3]:16.1f}" for v in vals))
    say(f"{'wall - ops - opt':<22}" + "".join(f"{v[2] - v[0] - v[1]:16.1f}" for v in vals)
        + "   (negative: ops overlapped in two threads)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default="small,large")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--against", default=None, help="another checkout's src/ (e.g. before)")
    ap.add_argument("--no-torch", dest="torch", action="store_false")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        config, impl, src = args.worker
        out = (_torch_worker(config, args.steps, args.warmup) if impl == "torch" else
               _mm_worker(config, impl, args.steps, args.warmup))
        print("RESULT" + json.dumps(out))
        return 0

    sys.path.insert(0, os.path.join(ROOT, "src"))
    from minimodel.bench import machine

    print(f"CPU: {machine.cpu_description()}; load average {os.getloadavg()[0]:.2f}")
    print(f"kernels picked: NumPy's {machine.blas_kernels()}; torch: {machine.torch_kernels()}")
    here = os.path.join(ROOT, "src")
    jobs = [("minimodel loop", "loop", here)]
    if args.against:
        jobs += [("before: loop", "loop", args.against)]
        if os.path.exists(os.path.join(args.against, "minimodel", "training", "batch_split.py")):
            jobs += [("before: train", "train", args.against)]
    if args.torch:
        jobs += [("torch eager", "torch", here)]
    results: dict = {}
    for config in args.configs.split(","):
        runs: dict[str, list] = defaultdict(list)
        for r in range(args.rounds):
            for label, impl, src in jobs:
                env = {**os.environ, "PYTHONPATH": src, "OPENBLAS_NUM_THREADS": "2",
                       "OMP_NUM_THREADS": "2", "MINIMODEL_KERNELS": "1"}
                load = os.getloadavg()[0]
                done = subprocess.run([sys.executable, __file__, "--steps", str(args.steps),
                                       "--warmup", str(args.warmup), "--worker", config, impl,
                                       src], capture_output=True, text=True, env=env,
                                      timeout=1800)
                line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT")),
                            None)
                if line is None:
                    print(f"{config} {label}: failed\n{done.stderr[-2000:]}")
                    continue
                runs[label].append(json.loads(line[6:]))
                print(f"  {config} {label} round {r + 1}: step {runs[label][-1]['step wall']:.1f}"
                      f" ms wall, {runs[label][-1]['step cpu']:.1f} ms CPU (load {load:.1f})",
                      flush=True)
        rows = {label: {k: statistics.median(run[k] for run in rs if k in run)
                        for k in set().union(*rs)} for label, rs in runs.items() if rs}
        results[config] = rows
        _table(config, rows, print)
    if args.json:
        with open(args.json + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
        os.replace(args.json + ".tmp", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
