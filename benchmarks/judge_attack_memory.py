"""What the judge returns, and how much memory its own process takes, under each attack on it.

The attacks are the ones ``tests/lab/test_judge_channel.py`` runs (its ``ATTACKS``: an .npz
bomb left in place of the outputs, a .npy header declaring 10^13 elements, 256 MiB printed as
one line, 32 MiB of events on the report pipe), plus the honest gelu as a baseline. Each runs
the judge (gelu-tanh, seed 5) in a fresh interpreter on a copy of the package, and the
interpreter reads its own peak resident memory (``VmHWM`` from /proc/self/status; the
parent's size at fork, which ``ru_maxrss`` would include, is not counted) before and after
the check.

Modes: ``full`` (bubblewrap and a cgroup), ``rlimit`` (bubblewrap, no cgroup: a learner who is
not root), ``partial`` (no bubblewrap, run without capabilities). A mode this machine cannot
give is reported as skipped.

    python benchmarks/judge_attack_memory.py
    python benchmarks/judge_attack_memory.py --modes full --json attacks.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
TESTS = ROOT / "tests" / "lab" / "test_judge_channel.py"


def _attack_module():
    """tests/lab/test_judge_channel.py, loaded by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location("judge_attacks", TESTS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(modes: list[str]) -> list[dict]:
    attacks = _attack_module()
    rows = []
    for name, parts in [("honest", {})] + list(attacks.ATTACKS.items()):
        for mode in modes:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    result = attacks.judge_in_copy(Path(tmp), attacks.solution(**parts), mode)
                except BaseException as exc:  # noqa: BLE001 - pytest's skip is a BaseException
                    if type(exc).__name__ not in ("Skipped", "Failed"):
                        raise
                    rows.append({"attack": name, "mode": mode, "status": "skipped",
                                 "message": str(exc)[:200]})
                    continue
            rows.append({"attack": name, "mode": mode, "status": result.get("status"),
                         "message": result.get("message", "")[:200],
                         "peak_mib": round(result["peak_mib"], 1),
                         "growth_mib": round(result["growth_mib"], 1)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="full,rlimit,partial",
                        help="comma-separated: full, rlimit, partial")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = run(args.modes.split(","))
    print(f"\n{'attack':<12} {'mode':<8} {'status':<8} {'peak MiB':>9} {'growth MiB':>11}  message")
    for row in rows:
        print(f"{row['attack']:<12} {row['mode']:<8} {row['status']:<8} "
              f"{row.get('peak_mib', float('nan')):>9.1f} {row.get('growth_mib', float('nan')):>11.1f}"
              f"  {row['message'][:70]}")
    if args.json:
        tmp = f"{args.json}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
        os.replace(tmp, args.json)  # written whole or not at all
    return 0


if __name__ == "__main__":
    sys.exit(main())
