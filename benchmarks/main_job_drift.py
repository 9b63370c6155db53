"""The README's main-job figures under other CPUs' BLAS kernels.

    python benchmarks/main_job_drift.py [--cores own Haswell Sandybridge ...] [--steps N]

Runs ``minimodel train`` (the README's main job, default settings) once per
``OPENBLAS_CORETYPE`` (each name first asked, with threadpoolctl, which kernels it really runs;
a kernel set is run once) and prints its validation loss, unigram baseline and ln V beside the
README's: the measurement behind the tolerance the README declares for the validation loss.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lesson_drift import kernels_run  # noqa: E402  (the same probe of what really runs)

README_FIGURES = {"val_loss": 4.2177, "unigram_baseline": 5.8291, "uniform_baseline": 6.9315}


def run_main_job(core: str, steps: int | None) -> dict:
    """``summary.json`` of ``minimodel train`` run with ``OPENBLAS_CORETYPE=core``."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("MINIMODEL_KERNELS", None)
    if core != "own":
        env["OPENBLAS_CORETYPE"] = core
    with tempfile.TemporaryDirectory(prefix="minimodel-main-job-") as tmp:
        command = [sys.executable, "-m", "minimodel", "train", "--out", f"{tmp}/run"]
        command += ["--steps", str(steps)] if steps else []
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        return json.loads(Path(f"{tmp}/run/summary.json").read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", nargs="+",
                        default=["own", "Haswell", "Sandybridge", "Nehalem", "Prescott"])
    parser.add_argument("--steps", type=int, default=None, help="default: the main job's")
    args = parser.parse_args()
    seen: dict[str, dict] = {}
    print("| OPENBLAS_CORETYPE | runs | val loss | unigram baseline | ln V |")
    print("|---|---|---|---|---|")
    print(f"| README | | {README_FIGURES['val_loss']:.4f} | "
          f"{README_FIGURES['unigram_baseline']:.4f} | {README_FIGURES['uniform_baseline']:.4f} |")
    for core in args.cores:
        arch = kernels_run(core)
        if arch is None:
            print(f"| {core} | cannot run on this CPU | | | |", flush=True)
            continue
        if arch not in seen:
            seen[arch] = run_main_job(core, args.steps)
        s = seen[arch]
        print(f"| {core} | {arch} | {s['val_loss']:.6f} | {s['unigram_baseline']:.4f} | "
              f"{s['uniform_baseline']:.4f} |", flush=True)
    losses = [s["val_loss"] for s in seen.values()]
    print(f"\nval loss: spread {max(losses) - min(losses):.2g} across {len(seen)} kernel sets; "
          f"largest |README - measured| "
          f"{max(abs(v - README_FIGURES['val_loss']) for v in losses):.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
