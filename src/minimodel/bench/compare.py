"""Compare a run with a saved one (``--baseline FILE``, a ``--json`` result of an earlier run).

Rows are matched by case, config, implementation and variant (kernels, allocator). For
minimodel's primary step rows (kernels on) the change must stay within ``tolerance`` percent
slower ("within 3 % of before"); faster always passes. The peers' change is shown too: the
same PyTorch code measured twice tells how much the machine itself drifted between the runs.
Times from different sessions drift (up to ~30 % over minutes on a shared machine), so prefer
``--against SRC``, which measures the other checkout in the same interleaved rounds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RowKey = tuple[str, str, str, str, str]


def load_baseline(path: str) -> dict[str, Any]:
    """Read a ``minimodel bench --json`` file; ValueError naming the file when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"--baseline {path} is not JSON ({exc.msg} at line {exc.lineno}); "
                         "give a file written by `minimodel bench --json FILE`") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), dict):
        raise ValueError(f"--baseline {path} has no 'cases': it was not written by "
                         "`minimodel bench --json FILE`")
    return data


def _key(case: str, row: dict[str, Any]) -> RowKey | None:
    if row.get("src") or "ms" not in row:  # another checkout's rows, or failed measurements
        return None
    return (case, row["config"], row.get("key", row["impl"]), row.get("kernels", "on"),
            row.get("allocator", "on"))


def _rows_by_key(results: dict[str, Any]) -> dict[RowKey, dict[str, Any]]:
    out = {}
    for case, data in results.get("cases", {}).items():
        for row in data.get("rows", []):
            key = _key(case, row)
            if key is not None:
                out[key] = row
    return out


def against_baseline(bench: Any, path: str, tolerance_pct: float) -> dict[str, Any]:
    """Rows of the "baseline" table; adds a target per primary minimodel step row."""
    before = load_baseline(path)
    old = _rows_by_key(before)
    rows = []
    for key, row in _rows_by_key(bench.results).items():
        if key not in old:
            continue
        case, config, impl_key, kernels, allocator = key
        change = 100 * (row["ms"] / old[key]["ms"] - 1)
        out = {"case": case, "config": config, "impl": row["impl"],
               "before_ms": old[key]["ms"], "ms": row["ms"], "change_pct": change}
        if case == "step" and impl_key == "minimodel" and kernels == "on":
            t = bench.target("baseline", f"{config}: {row['impl']} step time now / before",
                             row["ms"] / old[key]["ms"], "<=", 1 + tolerance_pct / 100,
                             f"{old[key]['ms']:.1f} ms -> {row['ms']:.1f} ms")
            out.update(target=f"<= +{tolerance_pct:g}%", met=t["met"])
        rows.append(out)
    meta = before.get("meta", {})
    return {"file": str(path), "source": meta.get("minimodel_source", "unknown"),
            "date": meta.get("date", "unknown"), "tolerance_pct": tolerance_pct, "rows": rows,
            "unmatched": len(old) - len(rows)}
