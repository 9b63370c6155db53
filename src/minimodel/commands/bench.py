"""``minimodel bench``: performance targets measured side by side (see minimodel.bench)."""

from __future__ import annotations

import argparse

from minimodel.commands._exit import guarded

ORDER = 60

DESCRIPTION = """\
Measure minimodel against PyTorch eager and Hugging Face transformers on the same machine,
in the same run: training-step time (step), peak memory of a tied head + cross-entropy
(memory), masked-rows MLM head (mlm), utilisation of the fp32 GEMM ceiling (util) and
per-token generation time with the KV cache (generate). Each implementation runs in a fresh
process; the median of the timed steps after warm-up is reported, with the target of each
case and whether it is met. Missing peers (torch, transformers) are skipped with a note."""


def register(subparsers) -> None:
    from minimodel.bench import EPILOG, add_arguments

    parser = subparsers.add_parser("bench", help="benchmark minimodel against PyTorch / HF",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(func=guarded(_run))


def _run(args: argparse.Namespace) -> int:
    from minimodel.bench import run

    return run(args)
