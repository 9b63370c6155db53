"""The TensorFlow Embedding Projector's file pair: ``vectors.tsv`` + ``metadata.tsv``.

Load both at https://projector.tensorflow.org ("Load" -> choose the two files) to explore an
embedding matrix in 2-D/3-D (PCA, t-SNE, UMAP) with labels.

Format (the projector's own): ``vectors.tsv`` has one row per point, the values separated by
tabs, no header. ``metadata.tsv`` has one row per point in the same order; with a single
column it has no header, with several the first row names the columns. A label can contain
neither a tab nor a line break (they would shift every following row), so control characters
and line separators are written as visible escapes (``\\t``, ``\\n``, ``\\x00``). The projector
shows labels as they are, never unescaping, so a backslash is left alone.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from minimodel._fileio import atomic_write_text
from minimodel.data._tokenizer_base import visible


def _cell(value: Any) -> str:
    return "".join(visible(ch) for ch in str(value))


def export_projector(vectors: Any, labels: Sequence[Any], out_dir: str | os.PathLike,
                     extra_columns: Mapping[str, Sequence[Any]] | None = None,
                     prefix: str = "") -> tuple[Path, Path]:
    """Write ``{prefix}vectors.tsv`` and ``{prefix}metadata.tsv`` into ``out_dir``.

    Args:
        vectors: (N, d) array (e.g. an embedding matrix, one row per token).
        labels: N labels (the token strings); the first metadata column, named "label".
        extra_columns: more metadata columns of N values each (e.g. {"count": [...]}).
        prefix: file-name prefix, e.g. "tied_" to keep several pairs in one folder.

    Returns:
        The two paths written (each atomically).
    """
    matrix = np.asarray(getattr(vectors, "data", vectors), dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(f"vectors must be a non-empty 2-D (N, d) matrix, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("vectors contain NaN or Inf; the projector cannot place those points")
    n = matrix.shape[0]
    columns = {"label": list(labels), **{k: list(v) for k, v in (extra_columns or {}).items()}}
    for name, values in columns.items():
        if len(values) != n:
            raise ValueError(f"metadata column {name!r} has {len(values)} values for {n} vectors")
    out = Path(out_dir)
    body = io.StringIO()
    np.savetxt(body, matrix, delimiter="\t", fmt="%.7g")
    vectors_path = atomic_write_text(out / f"{prefix}vectors.tsv", body.getvalue())
    rows = ["\t".join(_cell(columns[name][i]) for name in columns) for i in range(n)]
    if len(columns) > 1:
        rows.insert(0, "\t".join(_cell(name) for name in columns))
    metadata_path = atomic_write_text(out / f"{prefix}metadata.tsv", "\n".join(rows) + "\n")
    return vectors_path, metadata_path
