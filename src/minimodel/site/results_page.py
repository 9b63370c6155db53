"""The "Measured" page: tied against untied and the benchmarks, from ``docs/measured.json``
(collected by ``scripts/make_results_data.py``), with numbers written the way each language
writes them."""

from __future__ import annotations

from typing import Any

from minimodel.site.words import number
from minimodel.messages import say


# The phrases of the benchmark metric names (recorded in English by `minimodel bench`), each a
# message site.metric.<name>; and the CBOW objectives, site.objective.<name>.
METRIC_PHRASES = ("full_projection", "gemm", "embedding_backward", "adamw", "per_token",
                  "best_peer", "same", "eager", "peak", "step_time", "default_call", "small",
                  "large", "memory", "mlm")
OBJECTIVES = ("negative", "softmax")


def metric_name(metric: str, lang: str) -> str:
    """A benchmark metric's name in ``lang``: each phrase replaced, the longest first (a phrase
    may hold a shorter one)."""
    pairs = sorted(((say(f"site.metric.{name}", "en"), say(f"site.metric.{name}", lang))
                    for name in METRIC_PHRASES), key=lambda pair: -len(pair[0]))
    for english, translated in pairs:
        metric = metric.replace(english, translated)
    return metric


def objective_name(objective: str, lang: str) -> str:
    """A CBOW objective ('negative', 'softmax') in ``lang``; an unknown one as recorded."""
    return say(f"site.objective.{objective}", lang) if objective in OBJECTIVES else objective


def measured_page(data: dict[str, Any], lang: str) -> str:
    """The "Measured" page in ``lang`` from the collected data (see make_results_data.py)."""
    m, cmp = data["machine"], data["compare"]
    tied, untied = cmp["tied"]["summary"], cmp["untied"]["summary"]
    c = cmp["config"]
    lines = [f"# {say('site.title', lang)}", "",
             say("site.intro", lang) + f" {m['cpu']}, {m['cores']} {say('site.cores', lang)}, "
             f"{number(m['memory_gib'], 'g', lang)} GiB, Python {m['python']}, NumPy {m['numpy']}"
             f" ({m['blas']}), {m['date']}.", "", f"## {say('site.compare', lang)}", "",
             f"`{cmp['command']}`: " + say(
                 "site.setup", lang, model=c["model"], d=c["d_model"], layers=c["n_layer"],
                 tok=c["tokenizer"], V=tied["vocab_size"], steps=c["steps"], seed=c["seed"]) + ".",
             "", say("site.row", lang), "|---|---|---|"]

    def row(key: str, field_: str, fmt: str) -> None:
        values = [s.get(field_) for s in (tied, untied)]
        cells = [number(v, fmt, lang) if v is not None else "—" for v in values]
        lines.append(f"| {say(f'site.{key}', lang)} | {cells[0]} | {cells[1]} |")

    row("params", "parameters", ",")
    row("val", "val_loss", ".4f")
    row("ppl", "val_ppl", ".2f")
    row("erank", "erank_embedding", ".1f")
    row("erank_w", "erank_head", ".1f")
    row("speed", "tokens_per_s", ",.0f")
    lines += ["", f"## {say('site.curves', lang)}", "",
              f"![{say('site.curves', lang)}](figures/measured-curves.svg)", ""]
    if data.get("cbow"):
        lines += [f"## {say('site.cbow', lang)}", "", "`python benchmarks/cbow_vs_gensim.py`", "",
                  say("site.cbow_head", lang), "|---|---|---|---|---|"]
        lines += [f"| {objective_name(r['objective'], lang)} | {r['impl']} | "
                  f"{number(r['words_per_s'], ',.0f', lang)} | "
                  f"{number(r['wordsim353'], '.3f', lang)} ({r['wordsim353_coverage']}) | "
                  f"{number(r['simlex999'], '.3f', lang)} ({r['simlex999_coverage']}) |"
                  for r in data["cbow"]]
        lines.append("")
    if data.get("steps"):
        lines += [f"## {say('site.steps', lang)}", "", "`python benchmarks/step_vs_d.py` "
                  f"(B=16, T=128, L=4, H=4, AdamW, 2 {say('site.threads', lang)}; "
                  f"{say('site.plain_import', lang)})", "",
                  f"![{say('site.steps', lang)}](figures/measured-steps.svg)", "",
                  say("site.steps_head", lang), "|---|---|---|---|---|---|"]
        lines += [f"| {r['d']} | {r['V']} | {number(r['minimodel'], '.1f', lang)} | "
                  f"{number(r['nanogpt'], '.1f', lang)} | {number(r['hf-sdpa'], '.1f', lang)} | "
                  f"{number(r['ratio_to_best_peer'], '.2f', lang)} |" for r in data["steps"]]
        lines.append("")
    if data.get("bench"):
        meta = data["bench"].get("meta", {})
        lines += [f"## {say('site.bench', lang)}", "",
                  f"`minimodel bench --cases step`: {meta.get('cpu', '?')}, "
                  f"{meta.get('cores', '?')} {say('site.cores', lang)}, "
                  f"torch {meta.get('torch', '-')}, transformers {meta.get('transformers', '-')}, "
                  f"{str(meta.get('date', ''))[:10]}", "",
                  say("site.bench_head", lang), "|---|---|---|---|"]
        for r in data["bench"].get("targets", []):
            met = ("—" if r.get("met") is None
                   else say("site.yes" if r["met"] else "site.no", lang))
            value = "—" if r.get("value") is None else number(r["value"], ".3g", lang)
            lines.append(f"| {metric_name(r['metric'], lang)} | {value} | {r['op']} "
                         f"{number(r['bound'], '.3g', lang)} | {met} |")
        lines.append("")
    return "\n".join(lines)
