"""``minimodel bench``: performance targets measured side by side (see minimodel.bench)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from minimodel.bench import spec
from minimodel.commands._argtypes import comma_choices
from minimodel.commands._exit import EPILOG as EXIT_CODES
from minimodel.commands._exit import FAILED, OK, guarded

ORDER = 60

DESCRIPTION = """\
Measure minimodel against PyTorch eager and Hugging Face transformers on the same machine,
in the same run: training-step time (step), peak memory of a tied head + cross-entropy
(memory), masked-rows MLM head (mlm), utilisation of the fp32 GEMM ceiling (util) and
per-token generation time with the KV cache (generate). Each implementation runs in a fresh
process; the median of the timed steps after warm-up is reported (with --rounds R: the median
of R interleaved rounds), with the target of each case and whether it is met. Missing peers
(torch, transformers) are skipped with a note."""

EPILOG = """\
examples:
  minimodel bench                                   # every case, default steps (~10 min)
  minimodel bench --cases step --configs large --steps 20
  minimodel bench --quick                           # smoke run: fewer steps and tokens
  minimodel bench --json bench.json --write-md      # also write bench-report.md
  minimodel bench --cases step --rounds 3 --kernels both --no-peers   # kernels off/on ratio
  minimodel bench --cases step --rounds 3 --json after.json --baseline before.json
  minimodel bench --cases step --rounds 3 --against ../main/src   # another checkout, interleaved
""" + EXIT_CODES + "\n"


def _switch(text: str) -> tuple[str, ...]:
    return {"on": ("on",), "off": ("off",), "both": ("off", "on")}[text]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", type=comma_choices(spec.CASES, "case"), default=spec.CASES,
                        metavar="LIST", help=f"comma list of {','.join(spec.CASES)}, or all "
                                             "(default all)")
    parser.add_argument("--configs", type=comma_choices(tuple(spec.STEP_CONFIGS), "config"),
                        default=tuple(spec.STEP_CONFIGS), metavar="LIST",
                        help="step case sizes: small (d=128 V=512), large (d=256 V=8192)")
    parser.add_argument("--steps", type=int, default=None, metavar="N",
                        help="timed steps per measurement, median reported (default 10; "
                             "--quick 3)")
    parser.add_argument("--warmup", type=int, default=None, metavar="N",
                        help="untimed warm-up steps (default 3; --quick 1)")
    parser.add_argument("--rounds", type=int, default=1, metavar="R",
                        help="step and mlm cases: measure every implementation R times in "
                             "interleaved fresh-process rounds and report the median of the "
                             "round medians (default 1; use >= 3 to compare versions)")
    parser.add_argument("--kernels", choices=("on", "off", "both"), default="on",
                        help="minimodel with fast kernels on, off (MINIMODEL_KERNELS=0, the "
                             "readable composites) or both, reporting the off/on ratio "
                             "(default on)")
    parser.add_argument("--allocator", choices=("on", "off", "both"), default="both",
                        help="minimodel as a plain `import minimodel` leaves the process (off: "
                             "the library defaults the targets are about), with the glibc "
                             "tuning `minimodel train` applies (on), or both (default both; "
                             "the plain import is the primary row)")
    parser.add_argument("--against", metavar="SRC", default=None,
                        help="also measure the minimodel in another checkout's src/ folder, in "
                             "the same interleaved rounds (e.g. the commit before a change)")
    parser.add_argument("--baseline", metavar="FILE", default=None,
                        help="compare with a saved --json result: change per row, and a target "
                             "that minimodel's step time is within --tolerance of it")
    parser.add_argument("--tolerance", type=float, default=3.0, metavar="PERCENT",
                        help="allowed slow-down against --baseline (default 3)")
    parser.add_argument("--threads", type=int, default=2, metavar="N",
                        help="BLAS threads for NumPy and torch.set_num_threads for the peers "
                             "(default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: fewer steps and tokens, MLM at V=8192 only")
    parser.add_argument("--json", metavar="FILE", help="write every raw result to FILE")
    parser.add_argument("--write-md", nargs="?", const="bench-report.md", default=None,
                        metavar="FILE", help="write the report as Markdown (default file "
                                             "bench-report.md; the published figures are "
                                             "records: benchmarks/records.py)")
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="leave torch.compile out of the step peers (it compiles for about "
                             "30 s in every worker process)")
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
    """Check the parsed options (ValueError naming the bad value) and build the Options."""
    from minimodel._fileio import require_writable
    from minimodel.bench.compare import load_baseline
    from minimodel.bench.runner import Options

    steps = args.steps if args.steps is not None else (3 if args.quick else 10)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    if steps < 1 or warmup < 0 or args.threads < 1 or args.rounds < 1:
        raise ValueError(f"need --steps >= 1, --warmup >= 0, --threads >= 1 and --rounds >= 1, "
                         f"got {steps}, {warmup}, {args.threads} and {args.rounds}")
    against = None
    if args.against:
        against = str(Path(args.against).resolve())
        if not (Path(against) / "minimodel" / "__init__.py").is_file():
            raise ValueError(f"--against {args.against}: no minimodel package there; give the "
                             "src/ folder of another checkout (the one holding minimodel/)")
    if args.baseline:
        load_baseline(args.baseline)  # a bad file fails now, not after the measurements
    for option, value in (("--json", args.json), ("--write-md", args.write_md)):
        if value:
            require_writable(value, option)  # likewise an output that cannot be written
    return Options(cases=tuple(args.cases), configs=tuple(args.configs), steps=steps,
                   warmup=warmup, threads=args.threads, quick=args.quick, size=args.size,
                   peers=args.peers, compile=args.compile, max_wait=args.max_wait, retries=args.retries,
                   rounds=args.rounds, kernels=_switch(args.kernels),
                   allocator=_switch(args.allocator), against=against,
                   baseline=args.baseline, tolerance_pct=args.tolerance, command=command)


def register(subparsers) -> None:
    parser = subparsers.add_parser("bench", help="benchmark minimodel against PyTorch / HF",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(func=guarded(run))


def run(args: argparse.Namespace) -> int:
    """Run the benchmark described by ``args``; 0, or 1 when a measurement failed."""
    from minimodel._console import Console

    from minimodel._fileio import atomic_write_text
    from minimodel.bench import report
    from minimodel.bench.machine import command_line
    from minimodel.bench.cases import run_all

    console = Console(width=None if sys.stdout.isatty() else 200)
    opts = options_from_args(args, command_line())
    opts.log = lambda text: console.print(text, highlight=False, markup=False)
    results = run_all(opts)
    console.print()
    report.print_tables(results, console)
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1, default=str) + "\n")
        console.print(f"wrote {args.json}")
    if args.write_md:
        atomic_write_text(args.write_md, report.markdown(results))
        console.print(f"wrote {args.write_md}")
    return FAILED if results["errors"] else OK
