"""Tables of ``minimodel bench``: Rich on the terminal, Markdown for ``--write-md``.

Both render the same column specs, so the file and the screen never disagree.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.table import Table

from minimodel._console import Console

Fmt = Callable[[Any], str]


def _num(digits: int) -> Fmt:
    return lambda v: f"{v:,.{digits}f}"


def _ms(v: float) -> str:
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def _x(v: float) -> str:
    return f"{v:.2f}x"


def _pct(v: float) -> str:
    return f"{v:.1f}%" if v >= 1 else f"{v:.2f}%"


def _met(v: Any) -> str:
    return "-" if v is None else ("yes" if v else "NO")


_MS, _TOK, _GF, _MIB = ("ms", "ms/step", _ms), ("tok_s", "tokens/s", _num(0)), \
    ("gflops", "GFLOP/s", _num(1)), ("mem_mib", "peak RSS MiB", _num(0))
_LOAD, _TARGET, _MET = ("other", "other cores", _num(2)), ("target", "target", str), \
    ("met", "met?", _met)

COLUMNS: dict[str, list[tuple[str, str, Fmt]]] = {
    "step": [("config", "config", str), ("impl", "implementation", str), _MS,
             ("ms_min", "min ms", _ms), ("cpu_ms", "cpu ms", _ms), _TOK, _GF,
             ("util_pct", "util", _pct), ("ratio", "x best peer", _x),
             ("vs_primary", "x minimodel", _x), ("spread_pct", "round spread", _pct),
             ("faults", "faults/step", _num(0)), _MIB, ("loss0", "loss0", _num(4)), _LOAD,
             _TARGET, _MET],
    "memory": [("config", "config", str), ("impl", "implementation", str), _MS, _TOK, _GF,
               ("growth_mib", "peak growth MiB", _num(1)),
               ("tracemalloc_mib", "tracemalloc MiB", _num(1)),
               ("mem_ratio", "mem x torch", _x), ("ratio", "time x torch", _x), _MIB, _LOAD,
               _TARGET, _MET],
    "mlm": [("config", "config", str), ("impl", "head / loss", str), _MS, _TOK, _GF,
            ("ratio", "x masked", _x), _MIB, _LOAD, _TARGET, _MET],
    "util": [("config", "config", str), ("impl", "implementation", str), _MS, _TOK, _GF,
             ("util_pct", "util", _pct), ("emb_ms", "emb bwd ms", _ms),
             ("emb_pct", "emb bwd share", _pct), ("adam_ms", "AdamW ms", _ms),
             ("adam_pct", "AdamW share", _pct), _LOAD, _TARGET, _MET],
    "generate": [("config", "config", str), ("impl", "implementation", str),
                 ("ms", "ms/token", _ms), ("tok_s", "tokens/s", _num(1)), _GF,
                 ("prefill_ms", "prefill ms", _ms), ("nocache_ms", "no-cache ms/token", _ms),
                 ("ratio", "ratio 256/16", _x), ("nocache_ratio", "no-cache ratio", _x), _MIB,
                 _LOAD, _TARGET, _MET],
}
TITLES = {
    "step": "step: GPT training step (fwd + bwd + AdamW + zero_grad), B=16 T=128, "
            "4 layers, 4 heads",
    "memory": "memory: tied head + cross-entropy, one training step at V=50257 d=128 B=8 T=128",
    "mlm": "mlm: MaskedLM step, 15% masking, project masked rows vs every position",
    "util": "util: whole-step utilisation of the fp32 GEMM ceiling, d=256 V=8192",
    "generate": "generate: greedy decoding, B=1, time per new token",
    "baseline": "baseline: this run against a saved one",
}
BASELINE_COLUMNS = [("case", "case", str), ("config", "config", str),
                    ("impl", "implementation", str), ("before_ms", "before ms", _ms),
                    ("ms", "now ms", _ms), ("change_pct", "change", lambda v: f"{v:+.1f}%"),
                    _TARGET, _MET]
GEMM_COLUMNS = [("gemm", "GEMM (model shape)", str), ("gflops_best", "GFLOP/s best", _num(1)),
                ("gflops_median", "GFLOP/s median", _num(1)), ("reps", "reps", str)]
TARGET_COLUMNS = [("case", "case", str), ("metric", "metric", str),
                  ("value", "measured", lambda v: f"{v:.3g}"),
                  ("goal", "target", str), ("met", "met?", _met), ("detail", "detail", str)]


def _cell(row: dict[str, Any], key: str, fmt: Fmt) -> str:
    value = row.get(key)
    if value is None or value == "":
        return "-" if key not in ("target", "note") else ""
    try:
        return fmt(value)
    except (TypeError, ValueError):
        return str(value)


def _target_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**t, "goal": f"{t['op']} {t['bound']:.3g}"} for t in results.get("targets", [])]


def _visible(columns, rows):
    """Drop columns that are empty in every row (e.g. util without a ceiling)."""
    return [c for c in columns if any(r.get(c[0]) not in (None, "") for r in rows)
            or c[0] in ("config", "impl")]


# --------------------------------------------------------------------------- Rich
def print_tables(results: dict[str, Any], console: Any = None) -> None:
    console = console or Console()

    def table(title: str, columns, rows) -> Table:
        t = Table(title=title, title_justify="left", show_lines=False, header_style="bold")
        for key, header, _ in columns:
            t.add_column(header, justify="left" if key in ("config", "impl", "gemm", "case",
                                                           "metric", "detail", "target")
                         else "right", overflow="fold")
        for r in rows:
            cells = [_cell(r, k, f) for k, _, f in columns]
            style = "red" if r.get("met") is False else None
            t.add_row(*cells, style=style)
        return t

    for case, data in results.get("cases", {}).items():
        rows = data["rows"]
        console.print(table(TITLES[case], _visible(COLUMNS[case], rows), rows))
        if case == "util" and data.get("gemms"):
            console.print(table("fp32 GEMM ceiling (NumPy, this run)", GEMM_COLUMNS,
                                data["gemms"]))
        for note in data.get("notes", []):
            console.print(f"[dim]{note}[/dim]", highlight=False)
        console.print()
    base = results.get("baseline")
    if base:
        console.print(table(f"{TITLES['baseline']} ({base['file']}, minimodel "
                            f"{base['source']}, {base['date']})", BASELINE_COLUMNS,
                            base["rows"]))
        console.print()
    if results.get("targets"):
        console.print(table("targets", TARGET_COLUMNS, _target_rows(results)))
    for err in results.get("errors", []):
        console.print(f"[red]error: {err}[/red]", highlight=False)


# --------------------------------------------------------------------------- Markdown
def _md_table(columns, rows) -> str:
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(h for _, h, _ in columns) + " |",
             "|" + "|".join("---" if k in ("config", "impl", "gemm", "case", "metric", "detail",
                                           "target") else "---:" for k, _, _ in columns) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(esc(_cell(r, k, f)) for k, _, f in columns) + " |")
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    m = results["meta"]
    load = ", ".join(f"{x:.2f}" for x in m["loadavg_start"])
    opts = m["options"]
    out = [
        "# minimodel benchmarks",
        "",
        "Written by `minimodel bench --write-md`; rerun the command below to reproduce. Each "
        "implementation ran in a fresh process; times are medians of the timed steps after "
        "warm-up. Targets come from the \"Performance\" issue.",
        "",
        "## Machine and run",
        "",
        f"- command: `{m['command']}`",
        f"- date: {m['date']} (finished {m.get('finished', '?')})",
        f"- CPU: {m['cpu']}, {m['cores']} cores"
        + (f", {m['mem_gib']:.0f} GiB RAM" if m.get("mem_gib") else ""),
        f"- load average at start (1/5/15 min): {load}",
        f"- Python {m['python']}, numpy {m['numpy']}, torch {m['torch']}, transformers "
        f"{m['transformers']} ({m['platform']})",
        f"- NumPy BLAS: {m['numpy_blas']}",
        f"- kernels picked at run time: NumPy's {m.get('blas_kernels', '?')}; torch: "
        f"{m.get('torch_kernels') or 'not installed'}",
        f"- minimodel measured: commit {m.get('minimodel_source', 'unknown')}",
        f"- threads: {opts['threads']} (OPENBLAS/OMP_NUM_THREADS in each worker's environment, "
        f"torch.set_num_threads in the peers); warm-up {opts['warmup']} steps, "
        f"{opts['steps']} timed steps" + (", --quick" if opts.get("quick") else "")
        + (f", size {opts['size']}" if opts.get("size") != "full" else ""),
        "- peers: " + ", ".join(f"{k}: {v or 'ok'}" for k, v in m["peers"].items()),
        f"- rounds: {opts.get('rounds', 1)} (interleaved; a row is the median of the round "
        f"medians); minimodel kernels: {', '.join(opts.get('kernels', ['on']))}; allocator "
        f"tuning: {', '.join(opts.get('allocator', ['on']))}"
        + (f"; also measured: {opts['against']}" if opts.get("against") else ""),
        "",
    ]
    if results.get("targets"):
        out += ["## Targets", "", _md_table(TARGET_COLUMNS, _target_rows(results)), ""]
    for case, data in results.get("cases", {}).items():
        rows = data["rows"]
        out += [f"## {TITLES[case]}", "", _md_table(_visible(COLUMNS[case], rows), rows), ""]
        if case == "util" and data.get("gemms"):
            out += ["fp32 GEMM ceiling (NumPy, this run):", "",
                    _md_table(GEMM_COLUMNS, data["gemms"]), ""]
        notes = list(data.get("notes", []))
        extra = sorted({r["note"] for r in rows if r.get("note")})
        if case in ("step", "memory") and extra:
            notes.append("Peer optimizers: " + "; ".join(extra))
        out += [f"- {n}" for n in notes] + [""]
    base = results.get("baseline")
    if base:
        out += [f"## {TITLES['baseline']}", "",
                f"Saved run: `{base['file']}` (minimodel {base['source']}, {base['date']}); "
                f"change = now / before - 1; minimodel's step may be at most "
                f"{base['tolerance_pct']:g} % slower. The peers' change shows how much the "
                "machine itself drifted between the two runs.", "",
                _md_table(BASELINE_COLUMNS, base["rows"]), ""]
    out += [
        "## Columns",
        "",
        "- ms: median wall time (per step, or per generated token; with several rounds the "
        "median of the round medians); min ms: fastest timed step; cpu ms: process CPU time "
        "per step (all BLAS threads); round spread: (slowest - fastest round median) / ms.",
        "- x minimodel: time / the first minimodel row's (kernels off: the off/on ratio); "
        "faults/step: minor page faults per step (the allocator tuning removes most).",
        "- tokens/s: B*T / ms (training) or 1 / ms (generation).",
        "- GFLOP/s: the model FLOPs of minimodel.bench.spec (6*P_non-embedding*tokens + "
        "6*d*V*head rows + 12*L*T*d*tokens) / time; util: GFLOP/s / the NumPy fp32 GEMM ceiling "
        "measured in this run.",
        "- peak RSS MiB: the worker process's high-water mark (includes the Python / torch "
        "runtime); peak growth MiB: see the memory notes.",
        "- other cores: CPU time used by other processes while the worker ran, in cores (the "
        "machine is shared; above 0.25 the measurement was repeated, up to --retries times, "
        "and the least disturbed attempt kept). The 1-minute load average before each worker "
        "is in the JSON.",
        "",
    ]
    if results.get("errors"):
        out += ["## Errors", ""] + [f"- {e}" for e in results["errors"]] + [""]
    return "\n".join(out)
