"""``minimodel bench``: the performance targets of the "Performance" issue, measured side by side.

Cases (``--cases``, default all):

  step      GPT training step, minimodel vs PyTorch eager (nanoGPT-style, SDPA, fused AdamW) and
            transformers' GPT2LMHeadModel (eager and sdpa attention), configs small / large
  memory    peak memory growth of a step with a tied head + cross-entropy at V=50257
  mlm       MaskedLM: project only the masked rows vs every position
  util      whole-step utilisation of the measured fp32 GEMM ceiling; embedding-backward and
            AdamW shares of the step
  generate  time per new token with the KV cache at prompt lengths 16 and 256 (and without)

Every implementation runs in a fresh worker process (:mod:`minimodel.bench.worker`), started by
:mod:`minimodel.bench.runner`; :mod:`minimodel.bench.report` prints Rich tables and writes
BENCHMARKS.md; shapes, FLOP formulas and targets are in :mod:`minimodel.bench.spec`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from minimodel.bench import spec

EPILOG = """\
examples:
  minimodel bench                                   # every case, default steps (~10 min)
  minimodel bench --cases step --configs large --steps 20
  minimodel bench --quick                           # smoke run: fewer steps and tokens
  minimodel bench --json bench.json --write-md      # also write BENCHMARKS.md
"""


def _csv(choices: tuple[str, ...], what: str):
    def parse(text: str) -> tuple[str, ...]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        if items == ["all"]:
            return tuple(choices)
        bad = [s for s in items if s not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad) or '(none)'}; "
                                              f"choose from {', '.join(choices)} or all")
        return tuple(c for c in choices if c in items)
    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", type=_csv(spec.CASES, "case"), default=spec.CASES,
                        metavar="LIST", help=f"comma list of {','.join(spec.CASES)}, or all "
                                             "(default all)")
    parser.add_argument("--configs", type=_csv(tuple(spec.STEP_CONFIGS), "config"),
                        default=tuple(spec.STEP_CONFIGS), metavar="LIST",
                        help="step case sizes: small (d=128 V=512), large (d=256 V=8192)")
    parser.add_argument("--steps", type=int, default=None, metavar="N",
                        help="timed steps per measurement, median reported (default 10; "
                             "--quick 3)")
    parser.add_argument("--warmup", type=int, default=None, metavar="N",
                        help="untimed warm-up steps (default 3; --quick 1)")
    parser.add_argument("--threads", type=int, default=2, metavar="N",
                        help="BLAS threads for NumPy and torch.set_num_threads for the peers "
                             "(default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: fewer steps and tokens, MLM at V=8192 only")
    parser.add_argument("--json", metavar="FILE", help="write every raw result to FILE")
    parser.add_argument("--write-md", nargs="?", const="BENCHMARKS.md", default=None,
                        metavar="FILE", help="write the report as Markdown (default file "
                                             "BENCHMARKS.md)")
    parser.add_argument("--no-peers", dest="peers", action="store_false",
                        help="skip the PyTorch / transformers peers (minimodel only)")
    parser.add_argument("--max-wait", type=float, default=60.0, metavar="SECONDS",
                        help="before each measurement, wait up to SECONDS for a quiet machine: "
                             "< 0.3 cores busy over 1 s (default 60; 0 = never wait)")
    parser.add_argument("--retries", type=int, default=2, metavar="N",
                        help="measure again (at most N times) when other processes used more "
                             "than 0.25 cores during a measurement (default 2)")
    parser.add_argument("--size", choices=("full", "tiny"), default="full",
                        help="tiny: toy shapes for smoke tests (the numbers mean nothing)")


def options_from_args(args: argparse.Namespace, command: str = ""):
    from minimodel.bench.runner import Options

    steps = args.steps if args.steps is not None else (3 if args.quick else 10)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    if steps < 1 or warmup < 0 or args.threads < 1:
        raise ValueError(f"need --steps >= 1, --warmup >= 0 and --threads >= 1, got "
                         f"{steps}, {warmup}, {args.threads}")
    return Options(cases=tuple(args.cases), configs=tuple(args.configs), steps=steps,
                   warmup=warmup, threads=args.threads, quick=args.quick, size=args.size,
                   peers=args.peers, max_wait=args.max_wait, retries=args.retries,
                   command=command)


def run(args: argparse.Namespace, command: str | None = None) -> int:
    """Run the benchmark described by parsed ``args``; 0, or 1 when a measurement failed."""
    from rich.console import Console

    from minimodel.bench import report
    from minimodel.bench.runner import Bench, command_line

    console = Console(width=None if sys.stdout.isatty() else 200)
    opts = options_from_args(args, command or command_line())
    opts.log = lambda text: console.print(text, highlight=False, markup=False)
    results = Bench(opts).run()
    console.print()
    report.print_tables(results, console)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n",
                                   encoding="utf-8")
        console.print(f"wrote {args.json}")
    if args.write_md:
        Path(args.write_md).write_text(report.markdown(results), encoding="utf-8")
        console.print(f"wrote {args.write_md}")
    return 1 if results["errors"] else 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (benchmarks/run_all.py): same options as ``minimodel bench``."""
    parser = argparse.ArgumentParser(prog="minimodel bench", epilog=EPILOG,
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
