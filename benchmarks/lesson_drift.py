"""How much each lesson block's printed numbers move from one CPU kernel to another.

    python benchmarks/lesson_drift.py [--cores own Haswell SkylakeX ...] [--lang en] [NN ...]
    python benchmarks/lesson_drift.py --from drift.json        # the table again, no re-run

NumPy's OpenBLAS picks its kernels by CPU; ``OPENBLAS_CORETYPE`` forces another CPU's kernels
on this one (only those the bundled OpenBLAS has, and only those this CPU can run: a name it
does not know, or cannot run here, falls back to another, so every name is first asked what it
really runs, with threadpoolctl, and each distinct kernel set is measured once). Every lesson
runs under each, as ``minimodel lab check-lessons`` runs it, and the script prints, per
block whose output is not identical everywhere or that declares a tolerance, the largest
deviation from the written numbers (absolute and relative) over all kernels, and the
tolerance the block declares: the table behind every ``rtol=``/``atol=`` mark in the lessons.
The rule for choosing one: about three times the largest relative deviation measured, rounded
up (a margin for the CPUs not measured here: ARM's NEON, Apple's Accelerate, MKL), plus an
``atol`` of one unit of the last printed digit where values near zero are printed with few
digits. Exit 1 when a block moves beyond what it declares.
``--json FILE`` keeps every printed text, ``--from FILE`` prints the table from it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import blas_core_types  # noqa: E402  (the probe that runs a kernel set before trusting it)
from minimodel.lab.lessons import LANGS, check_lessons, code_blocks, find_lesson, load_lessons
from minimodel.lab.output_check import compare, parse_mark, split_numbers

CORES = ["own", "Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen", "Sandybridge",
         "Nehalem", "Prescott"]


def kernels_run(core: str) -> str | None:
    """The kernel set NumPy runs with ``OPENBLAS_CORETYPE=core`` (``own``: not forced), or
    ``None`` when this CPU cannot run it (scripts/blas_core_types.py runs it to find out)."""
    return blas_core_types.kernels_run(None if core == "own" else core)


def measure(cores: list[str], paths: list[Path]) -> dict:
    """``{"cores": {name: arch}, "printed": {arch: {file: [printed per block]}}}``."""
    arch_of = {core: kernels_run(core) for core in cores}
    printed: dict[str, dict[str, list[str | None]]] = {}
    for core, arch in arch_of.items():
        print(f"OPENBLAS_CORETYPE={core}: "
              + (f"runs {arch}" if arch else "cannot run on this CPU (skipped)"), file=sys.stderr)
        if arch is None or arch in printed:
            continue
        os.environ.pop("OPENBLAS_CORETYPE", None)
        if core != "own":
            os.environ["OPENBLAS_CORETYPE"] = core
        printed[arch] = {}
        for path, result in check_lessons(paths):
            printed[arch][str(path)] = [r.printed if r.error is None else None
                                        for r in result.runs]
            print(f"  {path.name}: {len(result.problems)} problem(s), "
                  f"{len(result.drifts)} drift(s)", file=sys.stderr)
    os.environ.pop("OPENBLAS_CORETYPE", None)
    return {"cores": {c: a for c, a in arch_of.items() if a}, "printed": printed}


def block_rows(data: dict) -> list[dict]:
    """One row per block that is not printed identically to its ``output`` block under every
    kernel, or that declares a mark: the largest deviations and the declared tolerance."""
    rows = []
    files = sorted({f for per_arch in data["printed"].values() for f in per_arch})
    for file in files:
        blocks = code_blocks(Path(file).read_text(encoding="utf-8"))
        for k, block in enumerate(blocks):
            if block.expected is None:
                continue
            outs = {arch: per_arch[file][k] if k < len(per_arch[file]) else None
                    for arch, per_arch in data["printed"].items()}
            mark = parse_mark(block.mark)
            kinds = {arch: "error" if out is None else compare(block.expected, out).kind
                     for arch, out in outs.items()}
            if mark.exact and set(kinds.values()) == {"ok"}:
                continue
            worst_abs = worst_rel = 0.0
            for out in outs.values():
                verdict = compare(block.expected, out) if out is not None else None
                for d in (verdict.deviations if verdict else []):
                    worst_abs, worst_rel = max(worst_abs, d.absolute), max(worst_rel, d.relative)
            differing = sorted(a for a, kind in kinds.items() if kind != "ok")
            changed = "text" if "content" in kinds.values() or "error" in kinds.values() \
                else "numbers" if differing else "-"
            rows.append({"block": f"{Path(file).name}:{block.line}", "mark": block.mark or "exact",
                         "numbers": len(split_numbers(block.expected)[1]),
                         "max_abs": worst_abs, "max_rel": worst_rel, "differs_on": differing,
                         "changed": changed,
                         "kinds": kinds,
                         "covered": all(out is not None and compare(block.expected, out,
                                                                    mark).kind == "ok"
                                        for out in outs.values())})
    return rows


def table(data: dict) -> str:
    cores = ", ".join(f"{c} -> {a}" for c, a in data["cores"].items())
    lines = [f"kernels measured (OPENBLAS_CORETYPE -> what OpenBLAS runs): {cores}", "",
             "| block | declared | what differs | max abs deviation | max rel deviation | "
             "differs under | all within the declared? |", "|---|---|---|---|---|---|---|"]
    for row in block_rows(data):
        lines.append(f"| {row['block']} | {row['mark']} | {row['changed']} | {row['max_abs']:.3g} | "
                     f"{100 * row['max_rel']:.2g} % | {', '.join(row['differs_on']) or '-'} | "
                     f"{'yes' if row['covered'] else 'NO'} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lessons by number or slug (default: all)")
    parser.add_argument("--cores", nargs="+", default=CORES,
                        help="OPENBLAS_CORETYPE values ('own': not forced)")
    parser.add_argument("--lang", choices=LANGS, action="append", help="default: en")
    parser.add_argument("--json", type=Path, help="write every printed text here")
    parser.add_argument("--from", dest="source", type=Path, help="print the table of a --json")
    args = parser.parse_args()
    if args.source:
        data = json.loads(args.source.read_text(encoding="utf-8"))
    else:
        lessons = [find_lesson(k) for k in args.lessons] if args.lessons else load_lessons()
        paths = [lesson.path(lang) for lesson in lessons for lang in (args.lang or ["en"])
                 if lesson.path(lang).is_file()]
        data = measure(args.cores, paths)
        if args.json:
            args.json.write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                 encoding="utf-8")
    print(table(data))
    return 0 if all(row["covered"] for row in block_rows(data)) else 1


if __name__ == "__main__":
    sys.exit(main())
