"""The measurements a benchmark worker can make, one function per ``task`` (see
:mod:`minimodel.bench.worker`). Each returns a JSON-ready dict; the runner turns those into
table rows (:mod:`minimodel.bench.cases`).
"""

from __future__ import annotations

import gc
import resource
import statistics
import time
from typing import Any

from minimodel.bench.steps import (LR, SEED, WEIGHT_DECAY, batch, build_step, gpt_loss,
                                   loss_and_backward,
                                   kernel_state, minimodel_gpt, setup_for, setup_minimodel,
                                   setup_torch, shape_of, time_steps)


def _proc_status() -> dict[str, int]:
    """VmRSS / VmHWM of this process in KiB (Linux)."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                out[key] = int(value.split()[0])
    return out


def _reset_hwm() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def task_step(task: dict) -> dict:
    """Time a GPT training step of implementation ``impl`` (minimodel, nanogpt, hf-*)."""
    setup = setup_for(task["impl"], task["threads"])
    step, info = build_step(task["impl"], shape_of(task))
    out = time_steps(step, task["warmup"], task["steps"])
    out.update(info, setup=setup)
    if task["impl"] == "minimodel":
        out["kernels"] = kernel_state()
    return out


def _release_pool() -> None:
    """Empty minimodel's buffer pool (:mod:`minimodel.kernels.buffers`, formerly
    ``minimodel.workspace``), so that the memory a step needs is allocated, and counted, inside
    the step rather than kept from the warm-up (a checkout older than the pool has none)."""
    try:
        from minimodel.kernels import buffers as pool
    except ImportError:
        try:
            from minimodel import workspace as pool
        except ImportError:
            return
    pool.clear()


def task_memory(task: dict) -> dict:
    """Peak RSS growth of one training step, after one warm-up step (optimizer state exists).

    RSS is made to follow live memory (allocator preset "strict" of :mod:`minimodel.runtime`),
    minimodel's buffer pool is emptied and the heap trimmed, VmHWM is reset to the current RSS through /proc/self/clear_refs, one
    step runs, and the growth is VmHWM - RSS before the step. The largest of ``reps`` such steps is reported. minimodel
    also reports tracemalloc's peak over a step (NumPy registers its buffers with tracemalloc),
    an allocator-level cross-check that torch has no equivalent of on CPU.
    """
    from minimodel.runtime import malloc_trim, tune_allocator

    strict = tune_allocator("strict")
    impl, threads = task["impl"], task["threads"]
    setup = (setup_minimodel(threads, allocator=False) if impl.startswith("minimodel")
             else setup_torch(threads))
    step, info = build_step(impl, shape_of(task))
    losses = [step()]  # warm-up: optimizer state, lazily built buffers, thread pools
    growth, method = [], "VmHWM - VmRSS over one step (VmHWM reset via /proc/self/clear_refs)"
    base_rss = _proc_status()["VmRSS"]
    for _ in range(task.get("reps", 3)):
        gc.collect()
        _release_pool()
        malloc_trim()
        before = _proc_status()["VmRSS"]
        if not _reset_hwm():
            method = "unavailable: /proc/self/clear_refs not writable"
            break
        losses.append(step())
        growth.append((_proc_status()["VmHWM"] - before) / 1024)
    out = {"growth_mib": max(growth) if growth else None, "growth_all_mib": growth,
           "method": method, "strict_allocator": strict, "rss_before_mib": base_rss / 1024,
           "loss_first": float(losses[0]), "setup": setup, **info}
    if impl.startswith("minimodel"):
        import tracemalloc

        gc.collect()
        _release_pool()
        tracemalloc.start()
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        step()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["tracemalloc_peak_mib"] = (peak - start) / 2**20
    return out


def task_mlm(task: dict) -> dict:
    """MaskedLM step: ``masked`` (gather the ~15 % masked rows, then the chunked tied head),
    ``full`` (logits for every position (B, T, V), then cross_entropy with -100 labels) or
    ``full-chunked`` (every position through the chunked head: separates gather from chunking)."""
    import numpy as np

    import minimodel.functional as F
    from minimodel import optim
    from minimodel.bench.spec import MASK_PROB
    from minimodel.data.masking import mask_tokens
    from minimodel.models import MaskedLM, MLMConfig

    setup = setup_minimodel(task["threads"])
    shape, variant = shape_of(task), task["impl"]
    model = MaskedLM(MLMConfig(vocab_size=shape.V, block_size=shape.T, n_layer=shape.L,
                               n_head=shape.H, d_model=shape.d),
                     rng=np.random.default_rng(SEED))
    opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    ids = np.random.default_rng(SEED).integers(0, shape.V - 1, size=(shape.B, shape.T))
    inputs, labels = mask_tokens(ids, mask_id=shape.V - 1, vocab_size=shape.V, rng=SEED,
                                 mask_prob=MASK_PROB)
    masked_rows = int((labels != -100).sum())

    def loss_of() -> Any:
        h = model.hidden_states(inputs)  # (B, T, d)
        if variant == "full":
            return F.cross_entropy(model.lm_head(h), labels)  # (B, T, V) logits held
        if variant == "full-chunked":
            return F.linear_cross_entropy(h, model.lm_head.weight, labels)
        raise ValueError(f"unknown MLM variant {variant!r}")

    def step() -> float:
        if variant == "masked":  # as `minimodel train` runs it: model.loss, halves in threads
            value = loss_and_backward(model, inputs, labels)
        else:
            loss = loss_of()
            loss.backward()
            value = float(loss.item())
        opt.step()
        opt.zero_grad()
        return value

    out = time_steps(step, task["warmup"], task["steps"])
    out.update(masked_rows=masked_rows, setup=setup)
    return out


def task_util(task: dict) -> dict:
    """minimodel GPT step with two timers: the embedding backward and ``AdamW.step``.

    The embedding backward is the lookup primitive's (``nn.embedding.Lookup``; "Embedding" in
    older checkouts), token and position tables, timed through
    :func:`minimodel.bench.profiler.instrument`.
    """
    from minimodel import optim
    from minimodel.bench.profiler import Timers, instrument

    setup = setup_minimodel(task["threads"])
    shape = shape_of(task)
    x, y = batch(shape)
    model = minimodel_gpt(shape)
    opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    timers = Timers()
    instrument(timers, select=lambda name: name.lower() in ("lookup", "embedding"))
    embedding_functions: list[str] = []  # the Function classes that actually ran
    rows: list[dict[str, float]] = []

    def step() -> float:
        timers.reset()
        t0 = time.perf_counter()
        loss = gpt_loss(model, x, y)
        loss.backward()
        t_opt = time.perf_counter()
        opt.step()
        adamw = time.perf_counter() - t_opt
        opt.zero_grad()
        value = float(loss.item())
        embedding = sum(v for k, v in timers.seconds.items() if k[0] == "bwd")
        embedding_functions.extend(k[1] for k in timers.seconds)
        rows.append({"total_s": time.perf_counter() - t0, "embedding_backward": embedding,
                     "adamw_step": adamw})
        return value

    out = time_steps(step, task["warmup"], task["steps"])
    timed = rows[task["warmup"]:]

    def median(fn) -> float:
        return statistics.median(fn(r) for r in timed)

    found = sorted(set(embedding_functions))
    out.update(setup=setup, embedding_functions=found,
               embedding_backward_median_s=median(lambda r: r["embedding_backward"]),
               adamw_step_median_s=median(lambda r: r["adamw_step"]),
               embedding_share_pct=(100 * median(lambda r: r["embedding_backward"]
                                                 / r["total_s"]) if found else None),
               adamw_share_pct=100 * median(lambda r: r["adamw_step"] / r["total_s"]))
    return out


def task_ceiling(task: dict) -> dict:
    """NumPy fp32 GEMM throughput on the model's shapes: best and median of repeats."""
    import numpy as np

    from minimodel.bench.spec import ceiling_gemms

    setup = setup_minimodel(task["threads"])
    rng = np.random.default_rng(SEED)
    budget = task.get("seconds_per_gemm", 0.6)
    rows = []
    for name, sa, sb in ceiling_gemms(shape_of(task)):
        a = rng.standard_normal(sa, dtype=np.float32)
        b = rng.standard_normal(sb, dtype=np.float32)
        out = np.empty((sa[0], sb[1]), np.float32)
        flops = 2 * sa[0] * sa[1] * sb[1]
        np.matmul(a, b, out=out)  # warm-up
        times: list[float] = []
        deadline = time.perf_counter() + budget
        while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 200):
            t0 = time.perf_counter()
            np.matmul(a, b, out=out)
            times.append(time.perf_counter() - t0)
        rows.append({"gemm": name, "reps": len(times), "gflops_best": flops / min(times) / 1e9,
                     "gflops_median": flops / statistics.median(times) / 1e9})
    best = max(rows, key=lambda r: r["gflops_best"])
    return {"gemms": rows, "ceiling_gflops": best["gflops_best"], "ceiling_gemm": best["gemm"],
            "setup": setup}


def task_generate(task: dict) -> dict:
    """Greedy generation, B=1: per-token time with the KV cache (``GPT.generate``) and without.

    With the cache, ``GPT.generate`` calls ``model.hidden_states`` once per new token (the
    first call is the prompt's prefill); the time between two successive calls is one whole
    decode step (new position through the blocks, head on the last row, arg-max, append), and
    the median over the decode steps is the per-token time. Without a cache, each token is one
    ``model(ids)`` forward over the whole context (full logits), then the arg-max.
    """
    import numpy as np

    from minimodel.autograd import no_grad

    setup = setup_minimodel(task["threads"])
    shape, n_new, n_plain = shape_of(task), task["new_tokens"], task["nocache_tokens"]
    prompts = task["prompts"]
    model = minimodel_gpt(shape, block_size=max(prompts) + n_new + 8)
    model.eval()
    rng = np.random.default_rng(SEED)
    stamps: list[float] = []
    original = model.hidden_states

    def stamped(*args, **kwargs):
        stamps.append(time.perf_counter())
        return original(*args, **kwargs)

    model.hidden_states = stamped  # an instance attribute: generate() calls self.hidden_states
    results = {}
    for plen in prompts:
        prompt = rng.integers(0, shape.V, size=(1, plen), dtype=np.int64)
        model.generate(prompt, min(4, n_new), temperature=0)  # warm-up
        per_token, prefill = [], []
        for _ in range(task.get("repeats", 2)):
            stamps.clear()
            t0 = time.perf_counter()
            out = model.generate(prompt, n_new, temperature=0)
            t_end = time.perf_counter()
            assert out.shape == (1, plen + n_new)
            prefill.append(stamps[1] - stamps[0] if len(stamps) > 1 else t_end - t0)
            if len(stamps) > 1:  # decode steps: between successive calls, and the last one
                per_token += list(np.diff(stamps[1:])) + [t_end - stamps[-1]]
        plain = []
        ids = prompt.copy()
        with no_grad():
            model(ids)  # warm-up
            for _ in range(n_plain):
                t0 = time.perf_counter()
                logits, _ = model(ids)  # full forward over the whole context
                nxt = logits.data[:, -1, :].argmax(axis=-1)
                ids = np.concatenate([ids, nxt[:, None]], axis=1)
                plain.append(time.perf_counter() - t0)
        results[str(plen)] = {
            "cache_ms_per_token": 1e3 * statistics.median(per_token),
            "cache_ms_min": 1e3 * min(per_token), "decode_steps": len(per_token),
            "prefill_ms": 1e3 * statistics.median(prefill),
            "nocache_ms_per_token": 1e3 * statistics.median(plain),
            "mean_context": plen + n_new / 2,
            "decode_gflop_per_token": shape.decode_flops(int(plen + n_new / 2)) / 1e9,
        }
    return {"prompts": results, "new_tokens": n_new, "setup": setup,
            "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


TASKS = {"step": task_step, "memory": task_memory, "mlm": task_mlm, "util": task_util,
         "ceiling": task_ceiling, "generate": task_generate}
