"""Loss-curve plots (PNG) for ``minimodel train`` and ``minimodel compare``.

Uses matplotlib's object API with the Agg canvas directly (no ``pyplot``), so plotting never
switches the backend of a notebook or GUI that imported minimodel, and needs no display.
Files are written atomically.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_bytes


def _new_figure(width: float = 7.0, height: float = 4.2):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str | os.PathLike) -> Path:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return atomic_write_bytes(path, buffer.getvalue())


def plot_losses(metrics: Sequence[Mapping[str, Any]], path: str | os.PathLike,
                title: str = "training", baseline: float | None = None) -> Path:
    """Train and validation loss (nats/token) against the step; ``baseline`` as a dashed line."""
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    steps = [row["step"] for row in metrics]
    if metrics:
        ax.plot(steps, [row["train_loss"] for row in metrics], marker=".", label="train")
        ax.plot(steps, [row["val_loss"] for row in metrics], marker=".", label="validation")
    if baseline is not None:
        ax.axhline(baseline, linestyle="--", color="grey", linewidth=1,
                   label=f"unigram baseline {baseline:.3f}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _save(fig, path)


def plot_compare(runs: Mapping[str, Sequence[Mapping[str, Any]]], path: str | os.PathLike,
                 title: str = "tied vs untied", baseline: float | None = None) -> Path:
    """Validation-loss curves of several runs (label -> metrics rows) on one axis."""
    fig = _new_figure()
    ax = fig.add_subplot(1, 1, 1)
    for label, rows in runs.items():
        ax.plot([r["step"] for r in rows], [r["val_loss"] for r in rows], marker=".",
                label=f"{label} (val)")
    if baseline is not None:
        ax.axhline(baseline, linestyle="--", color="grey", linewidth=1,
                   label=f"unigram baseline {baseline:.3f}")
    ax.set_xlabel("step")
    ax.set_ylabel("validation cross-entropy (nats/token)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _save(fig, path)
