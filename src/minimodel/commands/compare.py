"""``minimodel compare``: the same model trained tied and untied, same budget and seed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from minimodel.commands._exit import FAILED, INTERRUPTED, OK, guarded
from minimodel.commands._run_guards import run_guards
from minimodel.commands._train_options import (add_train_options, clamp_threads,
                                               config_from_args, explicit_options)

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
           ("train_time_s", "step time (s)")]  # in training steps: less than the elapsed time


def register(subparsers) -> None:
    parser = subparsers.add_parser("compare", help="tied vs untied with the same budget and seed",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_train_options(parser, tie_flags=False)
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output directory (default runs/compare-<model>)")
    parser.add_argument("--resume", action="store_true",
                        help="finish an interrupted comparison with its saved settings: "
                             "completed runs are kept, an interrupted one is resumed")
    parser.add_argument("--force", action="store_true",
                        help="start over in a DIR that holds a comparison (each earlier run "
                             "is moved to its previous/ folder)")
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
        from minimodel.training.report import format_perplexity

        return format_perplexity(value)
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
                "val_ppl": (untied["val_ppl"] - tied["val_ppl"]
                            if untied["val_ppl"] is not None and tied["val_ppl"] is not None
                            else None)}}


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
        f"parameters, val loss {d['val_loss']:+.4f}, val ppl "
        f"{'-' if d['val_ppl'] is None else format(d['val_ppl'], '+.2f')}.", ""])


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


SETTINGS_FILE = "compare_config.json"


def comparison_settings(args: argparse.Namespace, out: Path) -> "TrainConfig":
    """The settings both runs share: typed (new comparison) or saved (``--resume``).

    A comparison is only meaningful at one budget, so ``--resume`` continues with the saved
    settings and refuses typed options that differ, and a DIR already holding a comparison is
    refused without ``--resume`` or ``--force``.
    """
    from minimodel.training import TrainConfig
    from minimodel.training.config import explicit_differences

    saved_path = out / SETTINGS_FILE
    if args.resume:
        if not saved_path.is_file():
            raise ValueError(f"nothing to resume in {out}: no comparison was started there "
                             f"({SETTINGS_FILE} is missing). Run `minimodel compare --out {out}` "
                             "without --resume")
        try:
            saved = TrainConfig.from_dict(json.loads(saved_path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{saved_path} is damaged ({exc}); start the comparison again "
                             "with --force") from None
        typed = {k: v for k, v in explicit_options(args).items() if k != "tied"}
        diffs = explicit_differences(saved, typed)
        if diffs:
            raise ValueError("--resume continues the comparison with its saved settings, but "
                             "these options differ: " + "; ".join(map(str, diffs)) + ". Drop "
                             "them, or start a new comparison with --force or another --out")
        return saved
    if saved_path.is_file() and not args.force:
        raise ValueError(f"{out} already holds a comparison; finish it with --resume, start "
                         "over with --force (earlier runs move to their previous/ folders), or "
                         "choose another --out")
    return config_from_args(args).resolved()


def run(args: argparse.Namespace) -> int:
    from minimodel._fileio import atomic_write_json
    from minimodel.training.report import configure_run

    out = Path(args.out) if args.out else Path("runs") / f"compare-{args.model or 'gpt'}"
    base = comparison_settings(args, out)  # validated once, up front
    threads, note = clamp_threads(args.threads)
    for line in ([note] if note else []) + [configure_run(threads)]:
        print(line, file=sys.stderr if args.json else sys.stdout)
    atomic_write_json(out / SETTINGS_FILE, {k: v for k, v in base.to_dict().items()
                                            if k != "tied"})
    resume_command = f"minimodel compare --resume --out {out}"
    try:
        with run_guards():
            summaries = _train_both(args, out, base, resume_command)
    except KeyboardInterrupt:  # outside a training loop: the tokenizer, the final evaluation
        print(f"\ninterrupted; finish the comparison with:  {resume_command}", file=sys.stderr)
        return INTERRUPTED
    if summaries is None:  # a run was interrupted and said how to finish the comparison
        return INTERRUPTED
    report_comparison(args, out, base, summaries)
    ok = all(math.isfinite(s["val_loss"]) for s in summaries.values())
    return OK if ok else FAILED


def _train_both(args: argparse.Namespace, out: Path, base: Any, resume_command: str
                ) -> dict[str, dict] | None:
    """Train (or keep, or resume) the tied and the untied run; None when one was interrupted."""
    from minimodel.training import checkpoint, make_reporter, train
    from minimodel.training.report import PlainReporter
    from minimodel.training.run_files import read_summary

    summaries: dict[str, dict] = {}
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
        has_checkpoint = (run_dir / checkpoint.CHECKPOINTS / checkpoint.LATEST).is_file() or \
            (run_dir / checkpoint.STATE_JSON).is_file()
        resume = args.resume and has_checkpoint
        cfg = type(base).from_dict({**base.to_dict(), "tied": tied})
        result = train(cfg, run_dir, resume=resume, reporter=reporter,
                       explicit={k: v for k, v in cfg.to_dict().items() if k != "eval_batches"},
                       force=args.force or (args.resume and not has_checkpoint),
                       resume_command=resume_command)
        if result.interrupted:
            return None
        summaries[label] = result.summary
    return summaries


def report_comparison(args: argparse.Namespace, out: Path, base: Any,
                      summaries: dict[str, dict]) -> None:
    """compare.json, compare.md, compare.png and the table, from the two runs' summaries."""
    from minimodel._fileio import atomic_write_json, atomic_write_text
    from minimodel.plotting import plot_compare
    from minimodel.training.run_files import read_metrics

    steps = {label: s.get("steps") for label, s in summaries.items()}
    if len(set(steps.values())) != 1:  # never declare a winner across different budgets
        raise ValueError(f"the runs in {out} were trained for different numbers of steps "
                         f"({steps}); a comparison needs one budget. Start over with --force")
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
