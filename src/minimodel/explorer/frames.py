"""What the explorer shows of one run: its snapshots, aligned, with their measurements.

A run trained with snapshots (``DIR/snapshots/``, see :mod:`minimodel.training.snapshots`)
gives one frame per snapshot; an older run, or a bare checkpoint file, gives one frame: its
final matrices. Frames are aligned to each other and projected to 2-D
(:func:`~minimodel.explorer.geometry.aligned_coordinates`), then packed compactly for the
page: coordinates as int16 (a shared scale per matrix) and, for the neighbour search, the
vectors of every frame as float16 (evenly spaced frames, the first and last always among them,
when all of them would make the page too large), both base64-encoded.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file

import minimodel as mm
from minimodel.data import load_corpus
from minimodel.data.cbow import words
from minimodel.explorer.geometry import aligned_coordinates, neighbour_churn, tsne
from minimodel.interop._files import resolve_checkpoint
from minimodel.training.snapshots import FOLDER, frequency_buckets
from minimodel.training.tasks import load_any_tokenizer

MAX_POINTS = 100_000          # WebGL draws this many points per panel smoothly
SEARCH_VECTORS = 4_000_000    # float16 numbers of vectors a panel carries (8 MB) at most


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"))
                            .tobytes()).decode("ascii")


def search_frames(frames: list[np.ndarray]) -> list[int]:
    """The frames whose vectors go into the page for the neighbour search: all of them when
    they fit in :data:`SEARCH_VECTORS`, else evenly spaced ones with the first and the last;
    none when one frame alone is too large."""
    per_frame = frames[-1].size
    fit = min(len(frames), SEARCH_VECTORS // per_frame)
    if fit == 0:
        return []
    return sorted({int(round(k)) for k in np.linspace(0, len(frames) - 1, fit)})


def token_labels(tokenizer_file: Path | None, vocab: int) -> list[str]:
    """A readable label per id (``<id>`` where the tokenizer has none)."""
    labels: list[str] = []
    if tokenizer_file is not None and tokenizer_file.is_file():
        tok = load_any_tokenizer(tokenizer_file)
        labels = (list(tok.itos) if hasattr(tok, "itos")
                  else [tok.id_to_token_str(i) for i in range(tok.vocab_size)])
    return (labels + [f"<{i}>" for i in range(len(labels), vocab)])[:vocab]


def token_counts(run_dir: Path, tokenizer_file: Path | None, vocab: int) -> np.ndarray:
    """How often each id occurs in the run's corpus (zeros when it cannot be read)."""
    try:
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        tok = load_any_tokenizer(tokenizer_file)
        text = load_corpus(info.get("config", {}).get("corpus"))
        ids = (tok.encode_words(words(text)) if hasattr(tok, "itos")
               else np.asarray(tok.encode(text, allowed_special=False)))
        return np.bincount(ids, minlength=vocab)[:vocab]
    except (OSError, ValueError, KeyError, TypeError):
        return np.zeros(vocab, dtype=np.int64)  # colours then say "unknown frequency"


def load_frames(path: str | Path) -> tuple[Path, list[dict[str, Any]], dict[str, list[np.ndarray]]]:
    """``(run folder, index rows, {"E": [frame, ...], "W": [...]})`` of a run or checkpoint."""
    path = Path(path)
    index = path / FOLDER / "index.jsonl"
    if path.is_dir() and index.is_file():
        rows = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        rows = [r for r in rows if (path / FOLDER / r["file"]).is_file()]
        if rows:
            matrices: dict[str, list[np.ndarray]] = {}
            for row in rows:
                for key, value in load_file(str(path / FOLDER / row["file"])).items():
                    matrices.setdefault(key, []).append(value.astype(np.float32))
            return path, rows, matrices
    weights, _ = resolve_checkpoint(path)
    model = mm.load(weights)
    embedding, head = model.get_input_embeddings(), model.lm_head
    matrices = {"E": [np.asarray(embedding.weight.data, np.float32)]}
    if head.weight is not embedding.weight:
        matrices["W"] = [np.asarray(head.weight.data, np.float32)]
    row = {"step": None, "tied": head.weight is embedding.weight}
    return (path if path.is_dir() else weights.parent), [row], matrices


def expand_runs(paths: list[str | Path]) -> list[Path]:
    """The run folders to show: a ``minimodel compare`` folder stands for its ``tied`` and
    ``untied`` runs (the twins), any other path for itself."""
    runs: list[Path] = []
    for path in map(Path, paths):
        twins = [path / name for name in ("tied", "untied") if (path / name).is_dir()]
        own = (path / "model.safetensors").is_file() or (path / "snapshots").is_dir()
        runs.extend(twins if path.is_dir() and twins and not own else [path])
    return runs


def _share(part: float, other: float) -> float | None:
    return part / (part + other) if part + other > 0 else None


def _metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-frame series the page plots (absent ones are left out)."""
    series: dict[str, Any] = {}
    for key in ("probe_loss", "erank_E", "erank_W"):
        if any(key in r for r in rows):
            series[key] = [r.get(key) for r in rows]
    if any("ledger" in r for r in rows):
        ledgers = [r.get("ledger") or {} for r in rows]
        series["lookup_share"] = [_share(g.get("lookup", 0), g.get("head", 0)) for g in ledgers]
        series["lookup_share_by_bucket"] = [
            [_share(a or 0, b or 0) for a, b in zip(g.get("lookup_by_bucket", []),
                                                     g.get("head_by_bucket", []))]
            for g in ledgers]
    for key in ("norm_E", "norm_W"):
        if any(key in r for r in rows):
            series[key] = [r.get(key) for r in rows]
    return series


def run_data(path: str | Path, with_tsne: bool = False) -> dict[str, Any]:
    """Everything the page needs about one run (see the module docstring)."""
    run_dir, rows, matrices = load_frames(path)
    vocab, d = matrices["E"][-1].shape
    if vocab > MAX_POINTS:
        raise ValueError(f"{path}: {vocab} tokens are more than the explorer draws "
                         f"({MAX_POINTS}); use `minimodel export --format projector`")
    tokenizer = run_dir / "tokenizer.json"
    tokenizer = tokenizer if tokenizer.is_file() else None
    counts = token_counts(run_dir, tokenizer, vocab)
    tied = bool(rows[-1].get("tied", "W" not in matrices))
    try:
        model_name = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["config"]["model"]
    except (OSError, ValueError, KeyError):
        model_name = "model"
    metrics = _metrics(rows)
    panels = []
    for key, frames in matrices.items():
        coords = aligned_coordinates(frames)                      # (F, V, 2)
        scale = float(np.abs(coords).max()) / 32767 or 1.0
        panel: dict[str, Any] = {
            "key": key, "frames": len(frames), "d": int(d),
            "coords": _b64(np.rint(coords / scale).astype(np.int16)), "scale": scale,
            "vectors": [{"frame": k, "data": _b64(frames[k].astype(np.float16))}
                        for k in search_frames(frames)]}
        if with_tsne:
            panel["tsne"] = _b64(tsne(frames[-1]).astype(np.float32))
        if len(frames) > 1:
            metrics[f"churn_{key}"] = neighbour_churn(frames)
        panels.append(panel)
    return {"run": run_dir.name, "model": model_name, "tied": tied,
            "tokens": token_labels(tokenizer, vocab), "counts": counts.tolist(),
            "buckets": frequency_buckets(counts).tolist(),
            "steps": [r.get("step") for r in rows], "metrics": metrics, "panels": panels}
