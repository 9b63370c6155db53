"""The embedding explorer: watch a run's token matrices over training, tied beside untied.

    minimodel explore runs/compare-gpt/tied runs/compare-gpt/untied --out explorer.html
    minimodel explore runs/gpt-tied --serve          # while it trains: new frames appear

One page (offline, from ``file://``) shows every matrix that holds token vectors — the tied
model's E, the untied model's E and W — as points moving over the run's snapshots, aligned
frame to frame (:mod:`~minimodel.explorer.geometry`), with the probe loss, effective rank,
gradient ledger, neighbour churn and norms by frequency as small plots linked to the slider,
and a search that shows one token's trail and neighbours in every panel.
"""

from __future__ import annotations

import os
from pathlib import Path

from minimodel._fileio import atomic_write_text
from minimodel.explorer.frames import expand_runs, run_data
from minimodel.explorer.geometry import cosine_neighbours, pca, tsne
from minimodel.explorer.page import explorer_html
from minimodel.explorer.serve import serve

__all__ = ["cosine_neighbours", "expand_runs", "explorer_html", "pca", "run_data", "serve",
           "tsne", "write_explorer"]


def write_explorer(run_dirs: list[str | os.PathLike], out: str | os.PathLike,
                   with_tsne: bool = False, lang: str = "en") -> Path:
    """Build the explorer for ``run_dirs`` into the HTML file ``out`` (atomically)."""
    if not run_dirs:
        raise ValueError("give at least one run folder, e.g. runs/gpt-tied")
    runs = [run_data(d, with_tsne) for d in expand_runs(run_dirs)]
    return atomic_write_text(out, explorer_html(runs, lang))
