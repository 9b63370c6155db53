"""``minimodel compare``: the same model trained tied and untied, same budget and seed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from minimodel.commands._exit import FAILED, INTERRUPTED, OK, guarded
from minimodel.commands._train_options import (add_train_options, config_from_args,
                                               explicit_options)

ORDER = 11

DESCRIPTION = """\
Train the same model twice, with a tied head (logits = h @ E.T) and with an untied one
(logits = h @ W.T, W its own matrix), from the same seed, data order and step budget, then
compare parameters, losses, perplexity, the effective rank of E (and W) and the participation
ratio (PR) of E's spectrum.

DIR (--out, default runs/compare-<model>) receives tied/ and untied/ (two complete run
directories), compare.json, compare.md and compare.png (validation curves of both)."""

EPILOG = """\
examples:
  minimodel compare                         # GPT on the bundled corpus, two default runs
  minimodel compare --steps 300 --quiet
  minimodel compare --model cbow            # also compares SimLex-999 / WordSim-353
  minimodel compare --resume --out runs/compare-gpt   # after Ctrl-C
"""

COLUMNS = [("parameters", "parameters"), ("train_loss", "train loss"), ("val_loss", "val loss"),
           ("val_ppl", "val ppl"), ("erank_embedding", "erank E"), ("pr_embedding", "PR E"),
           ("erank_head", "erank W"),
           ("train_time_s", "time (s)")]


def register(subparsers) -> None:
    parser = subparsers.add_parser("compare", help="tied vs untied with the same budget and seed",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_train_options(parser, tie_flags=False)
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output directory (default runs/compare-<model>)")
    parser.add_argument("--resume", action="store_true",
                        help="finish an interrupted comparison: completed runs are kept, an "
                             "interrupted one is resumed")
    parser.add_argument("--json", action="store_true", help="print compare.json to stdout")
    parser.set_defaults(func=guarded(run))


def _fmt(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key == "parameters":
        return f"{value:,}"
    if key in ("erank_embedding", "erank_head", "pr_embedding", "train_time_s"):
        return f"{value:.1f}"
    if key == "val_ppl":
        return f"{value:.2f}"
    return f"{value:.4f}"


def _wordsim_columns(runs: dict[str, dict]) -> list[tuple[str, str]]:
    sets = next(iter(runs.values())).get("word_similarity", {}).get("input", {})
    return [(name, f"{name} rho") for name in sets]


def _row(summary: dict, columns: list[tuple[str, str]]) -> list[str]:
    cells = []
    for key, _ in columns:
        if key in ("simlex999", "wordsim353"):
            rho = summary["word_similarity"]["input"][key]["spearman"]
            cells.append("-" if rho is None else f"{rho:+.3f}")
        else:
            cells.append(_fmt(key, summary.get(key)))
    return cells


def build_report(model: str, runs: dict[str, dict], shared: dict[str, Any]) -> dict[str, Any]:
    tied, untied = runs["tied"], runs["untied"]
    return {"model": model, "config": shared, "runs": runs,
            "unigram_baseline": tied["unigram_baseline"],
            "uniform_baseline": tied["uniform_baseline"],
            "difference_untied_minus_tied": {
                "parameters": untied["parameters"] - tied["parameters"],
                "train_loss": untied["train_loss"] - tied["train_loss"],
                "val_loss": untied["val_loss"] - tied["val_loss"],
                "val_ppl": untied["val_ppl"] - tied["val_ppl"]}}


def markdown(report: dict[str, Any], columns: list[tuple[str, str]]) -> str:
    head = "| run | " + " | ".join(label for _, label in columns) + " |"
    rule = "|" + "---|" * (len(columns) + 1)
    rows = [f"| {name} | " + " | ".join(_row(s, columns)) + " |"
            for name, s in report["runs"].items()]
    d = report["difference_untied_minus_tied"]
    return "\n".join([
        f"# Tied vs untied: {report['model']}", "",
        f"Same seed, data order and {report['runs']['tied']['steps']} steps. Losses in "
        "nats/token; validation over the whole validation split.", "",
        head, rule, *rows, "",
        f"Unigram baseline {report['unigram_baseline']:.4f}, uniform ln V "
        f"{report['uniform_baseline']:.4f}. Untied minus tied: {d['parameters']:+,} "
        f"parameters, val loss {d['val_loss']:+.4f}, val ppl {d['val_ppl']:+.2f}.", ""])


def print_table(report: dict[str, Any], columns: list[tuple[str, str]]) -> None:
    from minimodel.training.report import console as make_console
    from rich.table import Table

    table = Table(title=f"tied vs untied ({report['model']}, "
                        f"{report['runs']['tied']['steps']} steps)")
    table.add_column("run")
    for _, label in columns:
        table.add_column(label, justify="right")
    for name, s in report["runs"].items():
        table.add_row(name, *_row(s, columns))
    console = make_console()
    console.print(table)
    d = report["difference_untied_minus_tied"]
    console.print(f"unigram baseline {report['unigram_baseline']:.4f}, uniform ln V "
                  f"{report['uniform_baseline']:.4f}; untied - tied: val loss "
                  f"{d['val_loss']:+.4f}, parameters {d['parameters']:+,}", highlight=False)


def run(args: argparse.Namespace) -> int:
    from minimodel._fileio import atomic_write_json, atomic_write_text
    from minimodel.plotting import plot_compare
    from minimodel.runtime import configure
    from minimodel.training import make_reporter, train
    from minimodel.training.report import PlainReporter
    from minimodel.training.run_files import read_metrics, read_summary
    from minimodel.training.state import STATE_JSON

    base = config_from_args(args).resolved()  # validates the options once, up front
    print(configure(args.threads), file=sys.stderr if args.json else sys.stdout)
    out = Path(args.out) if args.out else Path("runs") / f"compare-{base.model}"
    summaries: dict[str, dict] = {}
    explicit = explicit_options(args)
    for label, tied in (("tied", True), ("untied", False)):
        run_dir = out / label
        # With --json, stdout carries only the JSON; progress goes to stderr.
        reporter = PlainReporter(sys.stderr) if args.json else make_reporter(args.quiet)
        reporter.message(f"== {label} ==")
        done = read_summary(run_dir) if args.resume else {}
        if done and done.get("steps") == base.steps:
            reporter.message(f"{run_dir} is complete; keeping it")
            summaries[label] = done
            continue
        resume = args.resume and (run_dir / STATE_JSON).is_file()
        cfg = config_from_args(args)
        cfg.tied = tied
        result = train(cfg, run_dir, resume=resume, reporter=reporter,
                       explicit={**explicit, "tied": tied})
        if result.interrupted:
            print(f"comparison interrupted; finish it with: minimodel compare --resume "
                  f"--out {out} (same options)")
            return INTERRUPTED
        summaries[label] = result.summary
    shared = {k: v for k, v in base.to_dict().items() if k != "tied"}
    report = build_report(base.model, summaries, shared)
    columns = COLUMNS + _wordsim_columns(summaries)
    atomic_write_json(out / "compare.json", report)
    atomic_write_text(out / "compare.md", markdown(report, columns))
    plot_compare({k: read_metrics(out / k) for k in summaries}, out / "compare.png",
                 title=f"{base.model}: tied vs untied", baseline=report["unigram_baseline"])
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report, columns)
        print(f"saved {out}/compare.json, compare.md, compare.png (runs in {out}/tied, "
              f"{out}/untied)")
    ok = all(math.isfinite(s["val_loss"]) for s in summaries.values())
    return OK if ok else FAILED
