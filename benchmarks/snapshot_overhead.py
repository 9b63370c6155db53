"""What the training snapshots cost: the share of a run's time spent taking them, and the folder.

    python benchmarks/snapshot_overhead.py                 # the main job: minimodel train defaults
    python benchmarks/snapshot_overhead.py --steps 300 --json overhead.json

Runs ``minimodel train`` (defaults: the tied GPT on the bundled corpus) in this process and
times every snapshot (the matrices written in float16 plus the probe batch's forward and
backward for the gradient ledger) against the whole run. Both clocks run in the same process
on the same machine, so the ratio holds on a busy machine where absolute times do not. Also
prints the size of ``DIR/snapshots/`` and the number of frames.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from minimodel._fileio import atomic_write_json
from minimodel.commands._argtypes import at_least
from minimodel.runtime import configure
from minimodel.training import TrainConfig, train
from minimodel.training.snapshots import Snapshots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=at_least(2), default=None,
                        help="training steps (default: the main job's, 1000)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()

    spent = {"s": 0.0, "frames": 0}
    take_if_due = Snapshots.take_if_due

    def timed(self, model, step):
        t0 = time.perf_counter()
        taken = take_if_due(self, model, step)
        spent["s"] += time.perf_counter() - t0
        spent["frames"] += taken
        return taken

    Snapshots.take_if_due = timed
    print(configure("auto"))    # the speed settings `minimodel train` applies
    with tempfile.TemporaryDirectory(prefix="minimodel-snapshots-") as tmp:
        out = Path(tmp) / "run"
        t0 = time.perf_counter()
        train(TrainConfig(steps=args.steps), out)
        total = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in (out / "snapshots").iterdir())
    figures = {"total_s": round(total, 2), "snapshots_s": round(spent["s"], 3),
               "share_percent": round(100 * spent["s"] / total, 2), "frames": spent["frames"],
               "folder_MiB": round(size / 2**20, 2)}
    print(f"{spent['frames']} snapshots took {spent['s']:.2f} s of a {total:.1f} s run: "
          f"{figures['share_percent']:.2f} % (target < 3 %); snapshots/ holds "
          f"{figures['folder_MiB']:.2f} MiB")
    if args.json:
        atomic_write_json(args.json, figures)


if __name__ == "__main__":
    main()
