"""The cases of ``minimodel bench``: which measurements each one makes, and how the raw worker
results become table rows and target verdicts.

    step      GPT training step: minimodel (and its variants: kernels off, plain import vs malloc tuning,
              another checkout) vs PyTorch eager (nanoGPT-style) and transformers' GPT-2
    memory    peak memory growth of a step with a tied head + cross-entropy at V=50257
    mlm       MaskedLM: project only the masked rows vs every position
    util      whole-step utilisation of the measured fp32 GEMM ceiling; embedding-backward
              and AdamW shares of the step
    generate  time per new token with the KV cache at prompt lengths 16 and 256 (and without)

Each ``case_*`` takes the :class:`~minimodel.bench.runner.Bench` and returns
``{"rows": [...], "raw": {...}, "notes": [...]}``; :func:`run_all` runs the selected ones.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict
from typing import Any

from minimodel.bench import compare, machine, spec
from minimodel.bench.runner import Bench, Options, Variant
from minimodel.bench.spec import Shape

PEER_LABELS = {"nanogpt": "PyTorch eager (nanoGPT, SDPA)",
               "torch-compile": "torch.compile (the same nanoGPT)",
               "hf-eager": "HF GPT2LMHeadModel eager",
               "hf-sdpa": "HF GPT2LMHeadModel sdpa", "minimodel": "minimodel"}


def step_row(b: Bench, shape: Shape, impl: str, r: dict[str, Any], flops: float) -> dict:
    """One table row from a step-like result (median wall time per step and friends)."""
    ceil = b.ceiling_gflops()
    variant = r.get("variant") or {}
    row = {"config": shape.label, "impl": PEER_LABELS.get(impl, impl), "key": impl,
           "kernels": variant.get("kernels", "on"), "allocator": variant.get("allocator", "on"),
           "src": variant.get("src"), "load": (r.get("load_before") or {}).get("loadavg"),
           "other": r.get("foreign_cores")}
    if "error" in r:
        return {**row, "note": "error: " + r["error"][:200]}
    gflops = flops / r["median_s"] / 1e9
    row.update(ms=1e3 * r["median_s"], ms_min=1e3 * r["min_s"], cpu_ms=1e3 * r["cpu_median_s"],
               tok_s=shape.tokens / r["median_s"], gflops=gflops,
               util_pct=100 * gflops / ceil if ceil else None, mem_mib=r.get("max_rss_mib"),
               loss0=r.get("loss_first"), faults=r.get("minor_faults_per_step"),
               spread_pct=r.get("spread_pct"), rounds=r.get("rounds", 1),
               note=(r.get("optimizer", "") if impl != "minimodel" else ""))
    return row


def _is_primary(row: dict, primary: Variant) -> bool:
    return (row["key"] == "minimodel" and row["kernels"] == primary.kernels
            and row["allocator"] == primary.allocator and not row["src"])


def case_step(b: Bench) -> dict[str, Any]:
    """Every minimodel variant and every peer, per config, in interleaved rounds."""
    o = b.opts
    case: dict[str, Any] = {"rows": [], "raw": {}, "notes": b.peer_note(), "variant_ratios": {}}
    peers = (["nanogpt"] if b.torch_ok() else []) + (
        ["torch-compile"] if b.torch_ok() and o.compile else []) + (
        ["hf-eager", "hf-sdpa"] if b.hf_ok() else [])
    primary = b.variants[0]
    jobs, where = [], []
    for name in o.configs:
        shape = b.shape(spec.step_shape(name))
        task = {"task": "step", "shape": shape.to_dict()}
        for v in b.variants:
            jobs.append((f"step {name} {v.label}", {**task, "impl": "minimodel"}, v))
            where.append((name, "minimodel", v.label))
            if v.src:  # another checkout: its `minimodel train` step and its plain loop
                jobs.append((f"step {name} {v.label}, plain loop",
                             {**task, "impl": "minimodel-plain"}, v))
                where.append((name, "minimodel", f"{v.label}, plain loop"))
        for impl in peers:
            jobs.append((f"step {name} {impl}", {**task, "impl": impl}, None))
            where.append((name, impl, impl))
    results = b.measure_rounds(jobs)
    for name in o.configs:
        shape = b.shape(spec.step_shape(name))
        flops = shape.flops()["total"]
        mine = [(impl, label, r) for (n, impl, label), r in zip(where, results) if n == name]
        case["raw"][name] = {label: r for _, label, r in mine}
        rows = []
        for impl, label, r in mine:
            row = step_row(b, shape, impl, r, flops)
            if impl == "minimodel":
                row["impl"] = label
            rows.append(row)
        _step_ratios(b, case, name, shape, rows, primary)
        case["rows"] += rows
    case["notes"].append(
        "One step = forward + loss, backward, AdamW step, zero_grad on B x T tokens; "
        "ms = median wall time of the timed steps after warm-up (with several rounds: the "
        "median of the round medians); x best peer = time / best peer's time; x minimodel = "
        "time / the first minimodel row's time (for 'kernels off' that is the off/on ratio). "
        "minimodel runs the step of `minimodel train`, which is a learner's plain loop "
        "(loss = model.loss(idx, targets); loss.backward(); opt.step(); opt.zero_grad(): "
        "the chunked tied head + loss, the batch's halves in two threads by the kernel of "
        "F.batch_loss with kernels on) with 2 BLAS threads; the 'minimodel' row is that loop "
        "as a plain `import minimodel` leaves the process (a learner's own loop, the target "
        "row), 'train's malloc tuning' adds the glibc settings `minimodel train` applies to "
        "its own process (the main job's step); all implementations start from the same "
        "weights (equal loss0).")
    for name, ratios in case["variant_ratios"].items():
        case["notes"].append(f"{name}: " + "; ".join(
            f"{label} / {primary.label}: {ratio:.2f}x" for label, ratio in ratios.items()))
    return case


def _step_ratios(b: Bench, case: dict, name: str, shape: Shape, rows: list[dict],
                 primary: Variant) -> None:
    """Ratios to the best peer and to the primary minimodel row; the step target."""
    peers = [r for r in rows if r["key"] != "minimodel" and "ms" in r]
    best = min(peers, key=lambda r: r["ms"]) if peers else None
    mm = next((r for r in rows if _is_primary(r, primary)), rows[0])
    for r in rows:
        if best and "ms" in r:
            r["ratio"] = r["ms"] / best["ms"]
        if r["key"] == "minimodel" and r is not mm and "ms" in r and "ms" in mm:
            r["vs_primary"] = r["ms"] / mm["ms"]
            case["variant_ratios"].setdefault(name, {})[r["impl"]] = r["vs_primary"]
    bound = spec.STEP_TARGET.get(name, 1.0)
    peer = best["impl"] if best else "-"
    t = b.target("step", f"{shape.label}: minimodel / best peer ({peer})", mm.get("ratio"),
                 "<=", bound, "" if best else "no peer measured")
    mm.update(target=f"<= {bound:.2f}x", met=t["met"])


def case_mlm(b: Bench) -> dict[str, Any]:
    case: dict[str, Any] = {"rows": [], "raw": {}, "notes": []}
    shapes = spec.MLM_SHAPES[:1] if b.opts.quick else spec.MLM_SHAPES
    labels = {"masked": "masked rows only (model.loss)",
              "full": "every position: (B,T,V) logits + cross_entropy(-100)",
              "full-chunked": "every position, chunked head (contrast)"}
    variants = ("masked", "full", "full-chunked")
    primary = b.variants[0]
    for shape in dict.fromkeys(b.shape(s) for s in shapes):  # tiny: one shape
        results = b.measure_rounds([(f"mlm V={shape.V} {v}", {"task": "mlm", "impl": v,
                                                               "shape": shape.to_dict()},
                                     primary) for v in variants])
        raw = dict(zip(variants, results))
        case["raw"][str(shape.V)] = raw
        m_rows = raw["masked"].get("masked_rows", round(spec.MASK_PROB * shape.tokens))
        rows = []
        for variant, r in raw.items():
            head_rows = m_rows if variant == "masked" else shape.tokens
            row = step_row(b, shape, variant, r, shape.flops(head_rows)["total"])
            row.pop("util_pct", None)
            row["impl"] = labels[variant]
            row["note"] = f"head on {head_rows} rows" if "ms" in row else row.get("note")
            rows.append(row)
        masked, full = rows[0], rows[1]
        bound_flops = shape.flops()["total"] / shape.flops(m_rows)["total"]
        for r in rows:
            if "ms" in r and "ms" in masked:
                r["ratio"] = r["ms"] / masked["ms"]
        t = b.target("mlm", f"{shape.label}: full-projection time / masked-rows time",
                     full.get("ratio"), ">=", spec.MLM_TARGET,
                     f"FLOP-model bound for this shape: {bound_flops:.2f}x "
                     f"(trunk unchanged, head on {m_rows} of {shape.tokens} rows)")
        full.update(target=f">= {spec.MLM_TARGET:.1f}x", met=t["met"])
        case["rows"] += rows
    case["notes"].append(
        "ratio = time / masked-rows time (so the 'every position' row's ratio is the speed-up "
        f"of projecting only the masked rows). {int(spec.MASK_PROB * 100)} % BERT masking "
        "(minimodel.data.masking.mask_tokens). The FLOP-model bound on the speed-up is "
        "(trunk + head on all rows) / (trunk + head on masked rows): the trunk is not "
        "affected by masking.")
    return case


def case_memory(b: Bench) -> dict[str, Any]:
    case = {"rows": [], "raw": {}, "notes": b.peer_note()}
    shape = b.shape(spec.MEMORY_SHAPE)
    impls = ["minimodel", "minimodel-default"] + (["nanogpt"] if b.torch_ok() else [])
    reps = 1 if b.opts.quick else 3
    for impl in impls:
        mem = b.measure(f"memory {impl}", {"task": "memory", "impl": impl,
                                           "shape": shape.to_dict(), "reps": reps})
        tim = b.measure(f"memory-shape step time {impl}",
                        {"task": "step", "impl": impl, "shape": shape.to_dict()})
        case["raw"][impl] = {"memory": mem, "time": tim}
        row = step_row(b, shape, impl, tim, shape.flops()["total"])
        row.pop("util_pct", None)
        row["growth_mib"] = mem.get("growth_mib")
        row["tracemalloc_mib"] = mem.get("tracemalloc_peak_mib")
        if impl == "nanogpt":
            row["impl"] = "PyTorch eager (nanoGPT, full logits + F.cross_entropy)"
        elif impl == "minimodel-default":
            row["impl"] = "minimodel, logits, loss = model(x, y) (logits kept, as torch's)"
        if "error" in mem:
            row["note"] = "memory error: " + mem["error"][:200]
        case["rows"].append(row)
    pt = next((r for r in case["rows"] if r["impl"].startswith("PyTorch")), None)
    # The target is for the loss without logits (model.loss, what training runs); the
    # (logits, loss) call is reported beside it, like torch's, without a target.
    for mm, label in ((case["rows"][0], ""),):
        if pt is None:
            break
        mem_ratio = (mm["growth_mib"] / pt["growth_mib"]
                     if mm.get("growth_mib") is not None and pt.get("growth_mib") else None)
        time_ratio = mm["ms"] / pt["ms"] if "ms" in mm and "ms" in pt else None
        mm.update(mem_ratio=mem_ratio, ratio=time_ratio)
        t1 = b.target("memory", f"{shape.label}: {label}peak growth minimodel / torch",
                      mem_ratio, "<=", spec.MEMORY_TARGET)
        t2 = b.target("memory", f"{shape.label}: {label}step time minimodel / torch",
                      time_ratio, "<=", 1.0)
        both = None if None in (t1["met"], t2["met"]) else t1["met"] and t2["met"]
        mm.update(target=f"mem <= {spec.MEMORY_TARGET}x, time <= 1.0x", met=both)
    method = case["raw"]["minimodel"]["memory"].get("method", "?")
    case["notes"].append(
        f"Peak growth = {method}, measured after one warm-up step (optimizer state already "
        "allocated), with glibc set to map every block >= 128 KiB separately and trim at once, "
        "so RSS follows live memory in both processes; the largest of "
        f"{reps} step(s). tracemalloc = NumPy's own allocation peak over one step (minimodel "
        "only, cross-check). Time columns come from a separate fresh process per "
        "implementation with normal allocator settings.")
    return case


def case_util(b: Bench) -> dict[str, Any]:
    case = {"rows": [], "raw": {}, "notes": []}
    shape = b.shape(spec.UTIL_SHAPE)
    r = b.measure("util (instrumented minimodel step)",
                  {"task": "util", "shape": shape.to_dict()})
    case["raw"]["util"] = r
    fl = shape.flops()
    row = step_row(b, shape, "minimodel", r, fl["total"])
    if "ms" in row:
        row.update(emb_pct=r["embedding_share_pct"], adam_pct=r["adamw_share_pct"],
                   emb_ms=1e3 * r["embedding_backward_median_s"],
                   adam_ms=1e3 * r["adamw_step_median_s"])
    t1 = b.target("util", f"{shape.label}: utilisation of the fp32 GEMM ceiling (%)",
                  row.get("util_pct"), ">=", spec.UTIL_TARGET)
    t2 = b.target("util", f"{shape.label}: embedding backward share of the step (%)",
                  row.get("emb_pct"), "<=", spec.EMBEDDING_SHARE_TARGET)
    t3 = b.target("util", f"{shape.label}: AdamW.step share of the step (%)",
                  row.get("adam_pct"), "<=", spec.ADAMW_SHARE_TARGET)
    row.update(target=f"util >= {spec.UTIL_TARGET:.0f}%, emb <= "
                      f"{spec.EMBEDDING_SHARE_TARGET:g}%, "
                      f"adamw <= {spec.ADAMW_SHARE_TARGET:g}%",
               met=None if None in (t1["met"], t2["met"], t3["met"])
               else t1["met"] and t2["met"] and t3["met"])
    case["rows"].append(row)
    c = b.results.get("ceiling") or {}
    case["gemms"] = c.get("gemms", [])
    case["notes"].append(
        f"FLOPs/step = 6*P_non-embedding*tokens ({fl['dense'] / 1e9:.1f} G) + head "
        f"6*d*V*tokens ({fl['head'] / 1e9:.1f} G) + attention 12*L*T*d*tokens "
        f"({fl['attention'] / 1e9:.1f} G) = {fl['total'] / 1e9:.1f} G. Ceiling = best "
        "single-run GFLOP/s over the model-shaped NumPy fp32 GEMMs below, same thread count, "
        "measured in this run. Shares: time inside the embedding Functions' backward (token + "
        "position tables) and inside AdamW.step, per step, median over the timed steps.")
    return case


def case_generate(b: Bench) -> dict[str, Any]:
    o = b.opts
    case = {"rows": [], "raw": {}, "notes": []}
    shape = b.shape(spec.GENERATE_SHAPE)
    prompts = (4, 16) if o.size == "tiny" else spec.GENERATE_PROMPTS
    n_new = 8 if (o.quick or o.size == "tiny") else 32
    n_plain = 4 if (o.quick or o.size == "tiny") else 16
    r = b.measure("generate", {"task": "generate", "shape": shape.to_dict(),
                               "prompts": list(prompts), "new_tokens": n_new,
                               "nocache_tokens": n_plain, "repeats": 1 if o.quick else 2})
    case["raw"]["generate"] = r
    if "error" in r:
        case["rows"].append({"config": shape.label, "impl": "GPT.generate",
                             "note": "error: " + r["error"][:200]})
    else:
        for plen in prompts:
            p = r["prompts"][str(plen)]
            case["rows"].append({
                "config": f"d={shape.d} V={shape.V} L={shape.L} B={shape.B} prompt={plen}",
                "impl": "GPT.generate (KV cache)",
                "ms": p["cache_ms_per_token"], "ms_min": p["cache_ms_min"],
                "tok_s": 1e3 / p["cache_ms_per_token"],
                "gflops": p["decode_gflop_per_token"] / (p["cache_ms_per_token"] / 1e3),
                "nocache_ms": p["nocache_ms_per_token"], "prefill_ms": p["prefill_ms"],
                "mem_mib": r.get("max_rss_mib"), "load": r["load_before"]["loadavg"],
                "other": r.get("foreign_cores"),
                "note": f"{p['decode_steps']} decode steps, greedy, B=1"})
        lo, hi = (r["prompts"][str(p)] for p in (prompts[0], prompts[-1]))
        ratio = hi["cache_ms_per_token"] / lo["cache_ms_per_token"]
        predicted = hi["decode_gflop_per_token"] / lo["decode_gflop_per_token"]
        bound = predicted * spec.GENERATE_NOISE
        plain_ratio = hi["nocache_ms_per_token"] / lo["nocache_ms_per_token"]
        t = b.target("generate", f"d={shape.d} V={shape.V}: per-token time prompt "
                     f"{prompts[-1]} / prompt {prompts[0]} (KV cache)", ratio, "<=", bound,
                     f"attention-term FLOP ratio {predicted:.3f} x {spec.GENERATE_NOISE} "
                     f"noise allowance; without cache the ratio is {plain_ratio:.2f}")
        last = case["rows"][-1]
        last.update(ratio=ratio, nocache_ratio=plain_ratio, target=f"<= {bound:.2f}x",
                    met=t["met"])
        case["notes"].append(
            f"ms = median time per generated token over the decode steps of "
            f"GPT.generate(prompt, {n_new}, temperature=0) (between successive "
            "hidden_states calls; the prompt's prefill is reported apart). no-cache = one "
            "model(ids) forward over the whole context per token (full logits), median of "
            f"{n_plain} tokens. GFLOP/s uses 2*(12*L*d^2 + d*V) + 4*L*context*d per token at "
            f"the mean context. Target: the cached per-token time grows at most like the "
            f"attention term, i.e. ratio <= FLOP ratio ({predicted:.3f}) x "
            f"{spec.GENERATE_NOISE}.")
    return case


CASES = {"step": case_step, "memory": case_memory, "mlm": case_mlm, "util": case_util,
         "generate": case_generate}


def run_all(opts: Options) -> dict[str, Any]:
    """Measure the GEMM ceiling and every selected case; compare with ``opts.baseline``.

    Returns ``{"meta", "ceiling", "cases": {name: {"rows", "raw", "notes"}}, "targets",
    "baseline"?, "errors"}`` (what ``--json`` writes).
    """
    b = Bench(opts)
    options = {k: v for k, v in asdict(opts).items() if k != "log"}
    b.results["meta"] = {**machine.machine_info(), "command": opts.command, "options": options,
                         "peers": b.peers}
    meta = b.results["meta"]
    load = meta.get("loadavg_start") or [float("nan")]
    opts.log(f"CPU: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores; load average "
             f"{load[0]:.2f}")
    opts.log(f"kernels picked: NumPy's {meta.get('blas_kernels', '?')}; torch: "
             f"{meta.get('torch_kernels') or 'not installed'}")
    if opts.steps < 10 and not opts.quick:
        opts.log(f"note: --steps {opts.steps} < 10: the medians are a smoke run, not a "
                 "measurement")
    if "step" in opts.cases or "util" in opts.cases:
        opts.log("ceiling: NumPy fp32 GEMMs of the model's shapes")
        b.results["ceiling"] = b.measure(
            "GEMM ceiling", {"task": "ceiling", "shape": b.shape(spec.UTIL_SHAPE).to_dict(),
                             "seconds_per_gemm": 0.15 if opts.quick else 0.6})
    for name, case in CASES.items():
        if name in opts.cases:
            opts.log(f"case {name}")
            b.results["cases"][name] = case(b)
    if opts.baseline:
        b.results["baseline"] = compare.against_baseline(b, opts.baseline, opts.tolerance_pct)
    b.results["meta"]["finished"] = _dt.datetime.now().astimezone().isoformat(
        timespec="seconds")
    b.results["errors"] = b.errors
    return b.results
