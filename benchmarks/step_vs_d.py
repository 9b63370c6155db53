"""GPT training-step time against the model width d: minimodel, PyTorch eager and transformers.

    python benchmarks/step_vs_d.py                          # d = 64..384, 1 round
    python benchmarks/step_vs_d.py --widths 128,256,384 --rounds 3 --json steps.json

B=16, T=128, 4 layers, 4 heads, AdamW, 2 threads, minimodel as a plain import (no malloc tuning); V grows with d as in the issue's configs
(d=128: V=512, d=256: V=8192, d=384: V=16384; other widths take V = 32·d). Each
implementation runs in its own process (``minimodel bench``'s workers, the same step code),
alternating, median of the timed steps, median over rounds. ``scripts/make_results_data.py
--steps FILE`` puts the table into the site's Measured page, which plots it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from minimodel._fileio import atomic_write_json
from minimodel.commands._argtypes import at_least

VOCAB = {128: 512, 256: 8192, 384: 16384}
IMPLS = ("minimodel", "nanogpt", "hf-sdpa")
WORKER = "--worker"
HEADS = 4  # the benchmark model's heads: a width must split evenly between them


def widths(text: str) -> tuple[int, ...]:
    """An argparse ``type``: comma-separated widths, each a positive multiple of HEADS."""
    try:
        values = tuple(int(w) for w in text.split(",") if w.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma list of integers, e.g. "
                                         "128,256") from None
    bad = [d for d in values if d <= 0 or d % HEADS]
    if bad or not values:
        raise argparse.ArgumentTypeError(f"widths {bad or '(none)'}: each must be a positive "
                                         f"multiple of {HEADS} (the model's heads)")
    return values


def worker(impl: str, d: int, vocab: int, steps: int) -> dict:
    from minimodel.bench.spec import Shape
    from minimodel.bench.steps import MINIMODEL_IMPLS, build_step, setup_for, setup_minimodel
    from minimodel.bench.steps import time_steps

    # minimodel as a plain `import minimodel` leaves the process (no malloc tuning): the
    # library defaults the performance targets are about.
    setup_minimodel(2, allocator=False) if impl in MINIMODEL_IMPLS else setup_for(impl, 2)
    step, _ = build_step(impl, Shape(d=d, V=vocab))
    return time_steps(step, 2, steps)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        out = worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        print(json.dumps({"ms": 1000 * out["median_s"]}))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=widths, default=(64, 128, 192, 256, 384),
                        help="comma list of model widths d to time (default 64,...,384)")
    parser.add_argument("--rounds", type=at_least(1), default=1,
                        help="interleaved fresh-process rounds, median reported (default 1)")
    parser.add_argument("--steps", type=at_least(1), default=5, help="timed steps per measurement")
    parser.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    args = parser.parse_args()
    rows = []
    for d in args.widths:
        vocab = VOCAB.get(d, 32 * d)
        times: dict[str, list[float]] = {impl: [] for impl in IMPLS}
        for round_ in range(args.rounds):
            for impl in IMPLS if round_ % 2 == 0 else IMPLS[::-1]:
                done = subprocess.run([sys.executable, __file__, WORKER, impl, str(d), str(vocab),
                                       str(args.steps)], capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{impl} d={d} failed:\n{done.stderr[-2000:]}")
                times[impl].append(json.loads(done.stdout.strip().splitlines()[-1])["ms"])
        row = {"d": d, "V": vocab, **{impl: statistics.median(v) for impl, v in times.items()}}
        row["ratio_to_best_peer"] = row["minimodel"] / min(row["nanogpt"], row["hf-sdpa"])
        rows.append(row)
        print(f"d={d:<4} V={vocab:<6} minimodel {row['minimodel']:7.1f} ms  PyTorch eager "
              f"{row['nanogpt']:7.1f} ms  transformers {row['hf-sdpa']:7.1f} ms  "
              f"ratio {row['ratio_to_best_peer']:.2f}", flush=True)
    if args.json:
        atomic_write_json(args.json, rows)  # never a half-written file


if __name__ == "__main__":
    main()
