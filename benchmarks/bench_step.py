"""Time one GPT training step: minimodel against PyTorch eager and transformers' GPT-2.

A thin entry point to ``minimodel bench --cases step`` (src/minimodel/bench) with the defaults
for comparing versions: 3 interleaved fresh-process rounds, median of the round medians.
Configs small (d=128, V=512) and large (d=256, V=8192); B=16, T=128, 4 layers, 4 heads, AdamW.

    python benchmarks/bench_step.py                              # both configs, peers, 3 rounds
    python benchmarks/bench_step.py --kernels both --no-peers    # + the kernels off/on ratio
    python benchmarks/bench_step.py --json before.json           # save a result ...
    python benchmarks/bench_step.py --baseline before.json       # ... and compare with it later
    python benchmarks/bench_step.py --against ../old/src         # another checkout, same rounds
    python benchmarks/bench_step.py --allocator both --threads 1 # allocator tuning, CPU-time view

Any option of ``minimodel bench`` works (see ``--help``); later options override the defaults.
"""

from __future__ import annotations

import os
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, SRC)

from minimodel.cli import main  # noqa: E402

DEFAULTS = ["--cases", "step", "--rounds", "3"]

if __name__ == "__main__":
    sys.exit(main(["bench", *DEFAULTS, *sys.argv[1:]]))
