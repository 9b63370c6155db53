"""Collect the measured results the site's "Measured" page is built from: docs/measured.json.

    minimodel compare --out runs/compare-gpt                       # ~5 min on 2 cores
    minimodel bench --cases step --json bench.json                 # ~4 min
    python benchmarks/cbow_vs_gensim.py --json cbow.json           # ~1 min
    python benchmarks/step_vs_d.py --json steps.json               # ~2 min
    python scripts/make_results_data.py --compare runs/compare-gpt --bench bench.json \\
        --cbow cbow.json --steps steps.json
    python scripts/make_results_data.py --bench bench.json    # refresh one part, keep the rest

The docs build renders the page (English and Spanish) and its figures from this file, so the
page can never disagree with the data; this script only gathers the data from real runs and
records the machine they ran on. Runs are long, so the data file is committed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "measured.json"


def machine() -> dict[str, Any]:
    import numpy as np

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = None
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = round(pages / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    blas = None
    try:
        from threadpoolctl import threadpool_info

        info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        blas = f"{info[0]['internal_api']} {info[0].get('version')}" if info else None
    except ImportError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": memory,
            "python": platform.python_version(), "numpy": np.__version__, "blas": blas,
            "date": dt.date.today().isoformat()}


def _run(folder: Path) -> dict[str, Any]:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()
            if line.strip()]
    keep = ("step", "train_loss", "val_loss", "erank_embedding", "erank_head")
    return {"summary": {k: summary.get(k) for k in (
                "parameters", "val_loss", "val_ppl", "erank_embedding", "erank_head",
                "pr_embedding", "tokens_per_s", "steps", "vocab_size", "d_model")},
            "curve": [{k: row.get(k) for k in keep if row.get(k) is not None} for row in rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", metavar="DIR",
                        help="a `minimodel compare --out DIR` folder (tied/ and untied/); "
                             "without it the other parts replace theirs in the existing file")
    parser.add_argument("--bench", metavar="FILE", help="`minimodel bench --json FILE` output")
    parser.add_argument("--cbow", metavar="FILE", help="cbow_vs_gensim.py --json output")
    parser.add_argument("--steps", metavar="FILE", help="benchmarks/step_vs_d.py --json output")
    parser.add_argument("--out", default=str(OUT), help=f"default {OUT.relative_to(REPO)}")
    args = parser.parse_args()
    if args.compare is None:
        update(Path(args.out), args)
        return
    folder = Path(args.compare)
    for part in ("tied", "untied"):
        if not (folder / part / "summary.json").is_file():
            sys.exit(f"{folder / part} has no summary.json: give a finished `minimodel compare` "
                     "folder")
    config = json.loads((folder / "tied" / "run.json").read_text(encoding="utf-8"))["config"]
    data: dict[str, Any] = {
        "machine": machine(),
        "compare": {"command": "minimodel compare",  # the settings are in "config"
                    "config": {k: config[k] for k in ("model", "d_model", "n_layer", "n_head",
                                                      "block_size", "batch_size", "steps",
                                                      "lr", "seed", "tokenizer", "vocab_size")},
                    "tied": _run(folder / "tied"), "untied": _run(folder / "untied")}}
    if args.bench:
        data["bench"] = json.loads(Path(args.bench).read_text(encoding="utf-8"))
    if args.cbow:
        data["cbow"] = json.loads(Path(args.cbow).read_text(encoding="utf-8"))
    if args.steps:
        data["steps"] = json.loads(Path(args.steps).read_text(encoding="utf-8"))
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


def update(out: Path, args: argparse.Namespace) -> None:
    """Replace the given parts (bench, cbow, steps) of an existing file, keeping the others."""
    parts = {name: getattr(args, name) for name in ("bench", "cbow", "steps")
             if getattr(args, name)}
    if not parts:
        sys.exit("give --compare DIR for a new file, or at least one of --bench, --cbow, --steps "
                 "to refresh that part of the existing one")
    if not out.is_file():
        sys.exit(f"{out} does not exist yet: make it with --compare DIR first")
    data = json.loads(out.read_text(encoding="utf-8"))
    for name, path in parts.items():
        data[name] = json.loads(Path(path).read_text(encoding="utf-8"))
    data.setdefault("updated", {}).update({name: machine()["date"] for name in parts})
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"updated {', '.join(parts)} in {out}")


if __name__ == "__main__":
    main()
