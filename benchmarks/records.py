"""The speed and memory records behind every published figure, and the tables made from them.

A record is one JSON file in ``docs/results/records/``: one run of
``minimodel bench --cases step ...`` on one machine, naming the CPU, the kernels its BLAS
libraries picked, the date, the exact command, how busy the machine was and where the figures
come from (``source``). Two kinds:

* ``bench-json``: made by ``add`` from the file ``minimodel bench --json FILE`` wrote;
* ``transcribed``: typed from a report whose JSON is not in the repository (its ``source``
  says which report); nothing here pretends it was produced by a script.

    python benchmarks/records.py add bench.json --machine "AMD EPYC, Zen 5" --note "..."
    python benchmarks/records.py render          # rewrite the tables between the markers
    python benchmarks/records.py render --check  # exit 1 when a table is out of date

``render`` writes the same table (one row per record) into docs/results.md,
docs/results.es.md and BENCHMARKS.md between ``<!-- records:begin -->`` and
``<!-- records:end -->``; ``tests/bench/test_records.py`` checks that the committed pages
equal what the records give, and that every ratio the README cites is in a record.

A step ratio is minimodel's step time over the best peer's (the fastest of PyTorch eager,
torch.compile and transformers' GPT-2 that the run measured): below 1 minimodel is faster.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RECORDS_DIR = REPO / "docs" / "results" / "records"
PAGES = {"en": REPO / "docs" / "results.md", "es": REPO / "docs" / "results.es.md"}
BENCHMARKS_MD = REPO / "BENCHMARKS.md"
BEGIN, END = "<!-- records:begin -->", "<!-- records:end -->"
CONFIGS = {"small": "d=128, V=512", "large": "d=256, V=8192"}
KINDS = ("bench-json", "transcribed")
NOT_RECORDED = "not recorded by this run"

WORDS = {
    "en": {
        "head": ("| machine | conditions | step d=128, V=512 | step d=256, V=8192 | "
                 "memory of `model.loss`, V=50,257 |"),
        "head2": "| machine | CPU | kernels picked (NumPy / torch) | date | record |",
        "quiet": "quiet", "loaded": "**loaded**", "load": "load average",
        "vs": "vs", "not_measured": "not measured", "not_recorded": NOT_RECORDED,
        "bench-json": "`minimodel bench --json`", "transcribed": "transcribed",
        "intro": ("Each figure is minimodel's time (or peak memory) divided by the best "
                  "PyTorch peer's in the same run: below 1x minimodel is faster (smaller). "
                  "Generated from the records by `python benchmarks/records.py render`; "
                  "do not edit by hand."),
        "commands": "Where each row was measured, and how:",
    },
    "es": {
        "head": ("| máquina | condiciones | paso d=128, V=512 | paso d=256, V=8192 | "
                 "memoria de `model.loss`, V=50 257 |"),
        "head2": "| máquina | CPU | núcleos elegidos (NumPy / torch) | fecha | registro |",
        "quiet": "en reposo", "loaded": "**cargada**", "load": "carga media",
        "vs": "frente a", "not_measured": "no medida",
        "not_recorded": "no registrados en esta ejecución",
        "bench-json": "`minimodel bench --json`", "transcribed": "transcrito",
        "intro": ("Cada cifra es el tiempo (o la memoria máxima) de minimodel dividido por el "
                  "del mejor par de PyTorch en la misma ejecución: por debajo de 1x minimodel es "
                  "más rápido (gasta menos). Generada a partir de los registros con "
                  "`python benchmarks/records.py render`; no se edita a mano."),
        "commands": "Dónde se midió cada fila, y cómo:",
    },
}

REQUIRED = ("machine", "cpu", "kernels", "date", "command", "conditions", "source",
            "source_kind", "step")


def load_records(folder: Path = RECORDS_DIR) -> list[dict[str, Any]]:
    """Every record, sorted by date then machine, each with its file name under ``_file``."""
    records = []
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        missing = [key for key in REQUIRED if key not in record]
        if missing:
            raise ValueError(f"{path.name}: missing {', '.join(missing)}")
        if record["source_kind"] not in KINDS:
            raise ValueError(f"{path.name}: source_kind {record['source_kind']!r} is not one "
                             f"of {KINDS}")
        record["_file"] = path.name
        records.append(record)
    return sorted(records, key=lambda r: (r["date"], r["machine"]))


def step_ratio(step: dict[str, Any]) -> float:
    """minimodel's step time over the best peer's: the figure a row shows."""
    return step["minimodel_ms"] / step["best_peer_ms"]


def memory_ratio(memory: dict[str, Any]) -> float:
    """minimodel's peak memory growth over torch eager's (given directly when a report gave
    only the ratio)."""
    if "ratio" in memory:
        return memory["ratio"]
    return memory["minimodel_mib"] / memory["torch_mib"]


def ratios(record: dict[str, Any]) -> list[float]:
    """Every ratio a record gives: its step sizes and its memory figure."""
    found = [step_ratio(step) for step in record["step"].values()]
    if record.get("memory"):
        found.append(memory_ratio(record["memory"]))
    return found


def _num(value: float, digits: int, lang: str) -> str:
    text = f"{value:,.{digits}f}"
    if lang == "es":   # Spanish: decimal comma, thin-space thousands
        text = text.replace(",", " ").replace(".", ",")
    return text


def _conditions(record: dict[str, Any], lang: str) -> str:
    words = WORDS[lang]
    cond = record["conditions"]
    state = words["quiet"] if cond["quiet"] else words["loaded"]
    load = cond.get("load_average")
    return state + (f" ({words['load']} {_num(load, 1, lang)})" if load is not None else "")


def _kernels(kernels: dict[str, str], lang: str) -> str:
    """The kernels as code (library names, not prose), or that the run did not record them."""
    named = [WORDS[lang]["not_recorded"] if k == NOT_RECORDED else f"`{k}`"
             for k in (kernels["numpy"], kernels["torch"])]
    return named[0] if named[0] == named[1] else " / ".join(named)


def _step_cell(step: dict[str, Any] | None, lang: str, quiet: bool) -> str:
    """The ratio (bold only when the machine was quiet: a loaded ratio is no figure to cite)."""
    if not step:
        return WORDS[lang]["not_measured"]
    ratio = f"{_num(step_ratio(step), 2, lang)}x"
    return (f"{f'**{ratio}**' if quiet else ratio} ({_num(step['minimodel_ms'], 1, lang)} "
            f"{WORDS[lang]['vs']} {_num(step['best_peer_ms'], 1, lang)} ms, `{step['best_peer']}`)")


def _memory_cell(memory: dict[str, Any] | None, lang: str) -> str:
    if not memory:
        return WORDS[lang]["not_measured"]
    if "ratio" in memory:
        return f"**{_num(memory['ratio'], 2, lang)}x** `torch eager`"
    return (f"**{_num(memory_ratio(memory), 3, lang)}x** ({_num(memory['minimodel_mib'], 1, lang)} "
            f"{WORDS[lang]['vs']} {_num(memory['torch_mib'], 1, lang)} MiB)")


def render_table(records: list[dict[str, Any]], lang: str, link_prefix: str) -> str:
    """The records as Markdown in ``lang``: the figures (one row per record), then where and how
    each was measured (CPU, kernels, date, record file, command); links to the record files
    start with ``link_prefix``."""
    words = WORDS[lang]
    lines = [words["intro"], "", words["head"], "|" + "---|" * 5]
    for r in records:
        lines.append(" | ".join([
            f"| {r['machine']}", _conditions(r, lang), _step_cell(r["step"].get("small"), lang, r["conditions"]["quiet"]),
            _step_cell(r["step"].get("large"), lang, r["conditions"]["quiet"]), _memory_cell(r.get("memory"), lang)])
            + " |")
    lines += ["", words["commands"], "", words["head2"], "|" + "---|" * 5]
    for r in records:
        link = f"[{r['_file']}]({link_prefix}{r['_file']})"
        lines.append(" | ".join([f"| {r['machine']}", f"`{r['cpu']}`", _kernels(r["kernels"], lang),
                                 r["date"], f"{link} ({words[r['source_kind']]}) |"]))
    lines.append("")
    for r in records:
        lines.append(f"- {r['machine']}, {r['date']}: `{r['command']}`")
        if r.get("memory", {}).get("command"):
            lines.append(f"  (memory: `{r['memory']['command']}`)" if lang == "en"
                         else f"  (memoria: `{r['memory']['command']}`)")
    return "\n".join(lines)


def replace_between(text: str, table: str, where: str) -> str:
    """``text`` with what lies between the two markers replaced by ``table``."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{where}: needs one {BEGIN} followed by one {END}")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def targets(records: list[dict[str, Any]]) -> dict[Path, str]:
    """Each page the tables go to, with its text as ``render`` would write it."""
    out = {}
    for lang, page in PAGES.items():
        out[page] = replace_between(page.read_text(encoding="utf-8"),
                                    render_table(records, lang, "results/records/"), page.name)
    out[BENCHMARKS_MD] = replace_between(BENCHMARKS_MD.read_text(encoding="utf-8"),
                                         render_table(records, "en", "docs/results/records/"),
                                         BENCHMARKS_MD.name)
    return out


def record_from_bench(results: dict[str, Any], machine: str, note: str) -> dict[str, Any]:
    """A record from the dict ``minimodel bench --json`` wrote: its meta (CPU, kernels, date,
    command, load) and, per step size, minimodel's plain-import row beside the fastest peer."""
    meta = results["meta"]
    step = {}
    for name in CONFIGS:
        rows = [r for r in results["cases"]["step"]["rows"] if r["config"].startswith(name)]
        ours = [r for r in rows if r["impl"] == "minimodel" and not r.get("src")]
        peers = [r for r in rows if not r["key"].startswith("minimodel")]
        if ours and peers:
            best = min(peers, key=lambda r: r["ms"])
            step[name] = {"config": CONFIGS[name], "minimodel_ms": round(ours[0]["ms"], 1),
                          "best_peer": best["impl"], "best_peer_ms": round(best["ms"], 1)}
    record: dict[str, Any] = {
        "machine": machine, "cpu": f"{meta['cpu']}, {meta['cores']} cores",
        "kernels": {"numpy": meta.get("blas_kernels") or NOT_RECORDED,
                    "torch": meta.get("torch_kernels") or NOT_RECORDED},
        "date": meta["date"][:10], "command": meta["command"],
        "conditions": {"quiet": max(meta["loadavg_start"][0], 0) < 2.0,
                       "load_average": round(meta["loadavg_start"][0], 2), "note": note},
        "source": f"minimodel bench --json of {meta['date']} (finished "
                  f"{meta.get('finished', '?')}), converted by benchmarks/records.py add",
        "source_kind": "bench-json", "step": step,
    }
    memory = [r for r in results["cases"].get("memory", {}).get("rows", [])]
    ours = [r for r in memory if r["key"] == "minimodel"]
    torch = [r for r in memory if r["key"] == "nanogpt"]
    if ours and torch:
        record["memory"] = {"config": "d=128, V=50,257, B=8",
                            "minimodel_mib": round(ours[0]["growth_mib"], 1),
                            "torch_mib": round(torch[0]["growth_mib"], 1)}
    return record


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="make a record from a `minimodel bench --json` file")
    add.add_argument("bench_json", type=Path)
    add.add_argument("--machine", required=True, help='short label, e.g. "AMD EPYC, Zen 5"')
    add.add_argument("--note", default="", help="how busy the machine was, and anything else")
    render = sub.add_parser("render", help="rewrite the tables between the markers")
    render.add_argument("--check", action="store_true", help="exit 1 when a table is stale")
    args = parser.parse_args(argv)
    if args.command == "add":
        try:
            results = json.loads(args.bench_json.read_text(encoding="utf-8"))
            results = results.get("bench", results)   # docs/measured.json holds one as "bench"
            record = record_from_bench(results, args.machine, args.note)
        except (OSError, ValueError, KeyError) as exc:
            print(f"error: {args.bench_json} is not a `minimodel bench --json` file ({exc})",
                  file=sys.stderr)
            return 2
        path = RECORDS_DIR / f"{_slug(args.machine)}-{record['date']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}; now run: python benchmarks/records.py render")
        return 0
    stale = []
    for page, text in targets(load_records()).items():
        if page.read_text(encoding="utf-8") != text:
            stale.append(page.relative_to(REPO).as_posix())
            if not args.check:
                page.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run: python benchmarks/records.py render",
              file=sys.stderr)
        return 1
    print("rewrote " + ", ".join(stale) if stale else "every table is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
