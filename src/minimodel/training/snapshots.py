r"""Snapshots of the token matrices during training, for watching a tie learn.

At a schedule that is dense early and sparse late (log-spaced steps: most of the geometry
forms in the first few hundred steps), the run folder gets ``snapshots/step-NNNNNN.safetensors``
holding E — and for an untied model the head's W — in float16, and one line of
``snapshots/index.jsonl`` with what was measured on a fixed probe batch at that step:

- the probe loss (the validation split's first sequences, the same at every snapshot);
- the effective rank of each matrix;
- the mean row norm of each matrix by token-frequency bucket (never seen / rare / middle /
  frequent in the training split);
- the **gradient ledger**: how much of E's gradient came from the lookup and how much from
  the head. In a tied model E is used twice, so

      dL/dE = scatter_add(ids, dL/dx)   (the lookup: only rows of tokens in the batch)
            + dlogits.T @ h             (the head: every row)

  and the two terms are measured apart by pointing the head at a twin of E that holds the
  same numbers but is a separate leaf: one backward pass then returns both terms
  (:func:`gradient_ledger`). An untied model's E gets only the lookup term and W only the
  head term.

The folder is bounded: at most ``MAX_FRAMES`` snapshots, fewer when the matrices are large, so
that all of them fit in ``budget_bytes`` (64 MiB by default) for any number of steps. Taking
a snapshot changes nothing in training: no optimizer state, no ``.grad``, no random numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save as safetensors_bytes

from minimodel import autograd
from minimodel._fileio import atomic_write_bytes, atomic_write_text
from minimodel.diagnostics import effective_rank
from minimodel.nn import Embedding, Parameter
from minimodel.runtime import blas_libraries

MAX_FRAMES = 32
BUDGET_BYTES = 64 * 2**20
PROBE_ROWS = 4             # sequences (or examples) of the probe batch: a quarter of a step
BUCKETS = ("unseen", "rare", "middle", "frequent")
FOLDER = "snapshots"


def snapshot_steps(total_steps: int, frames: int) -> list[int]:
    """Log-spaced steps from 0 (the initialisation) to ``total_steps``, at most ``frames``."""
    if frames <= 2 or total_steps < 1:
        return sorted({0, max(total_steps, 0)})
    spaced = np.geomspace(1, total_steps, frames - 1)       # frames - 1 steps from 1 to the end
    return sorted({0, *np.rint(spaced).astype(int).tolist()})


def frequency_buckets(counts: np.ndarray) -> np.ndarray:
    """Bucket of every token id: 0 never seen, then 1-3 for the thirds of the seen tokens
    ordered by how often they occur (rare, middle, frequent)."""
    buckets = np.zeros(len(counts), dtype=np.int64)
    seen = np.flatnonzero(counts > 0)
    order = seen[np.argsort(counts[seen], kind="stable")]      # seen ids, rarest first
    for k, part in enumerate(np.array_split(order, 3), start=1):
        buckets[part] = k
    return buckets


def _by_bucket(values: np.ndarray, buckets: np.ndarray, reduce: str) -> list[float | None]:
    """Per bucket: the mean (``"mean"``) or the root of the sum of squares (``"norm"``)."""
    out: list[float | None] = []
    for k in range(len(BUCKETS)):
        part = values[buckets == k]
        if part.size == 0:
            out.append(None)
        elif reduce == "mean":
            out.append(float(part.mean()))
        else:
            out.append(float(np.sqrt(np.square(part).sum())))
    return out


def token_matrices(model: Any) -> tuple[Embedding, Any]:
    """``(the input Embedding, the output head)`` of a GPT, MaskedLM or CBOW."""
    embedding = model.get_input_embeddings()
    return embedding, model.lm_head


def gradient_ledger(model: Any, batch: tuple[np.ndarray, ...]) -> tuple[float, np.ndarray, np.ndarray]:
    """``(loss, lookup term, head term)`` of the gradient of the loss on ``batch``.

    Tied: the head is pointed at a twin Embedding whose weight is a *separate* leaf holding
    the same numbers, so ``autograd.grad`` returns the two uses of E apart; their sum is the
    tied gradient. Untied: E's gradient (lookup) and W's (head). Nothing is stored in
    ``.grad``; the head is pointed back at E before returning.
    """
    embedding, head = token_matrices(model)
    tied = head.weight is embedding.weight
    with model.evaluating():                            # no dropout: the same probe each time
        try:
            if tied:
                twin = Embedding(embedding.vocab_size, embedding.d_model)
                twin.weight = Parameter(embedding.weight.data)   # same numbers, its own leaf
                head.embedding = twin
            loss = model.loss(*batch)                # the head's loss, no (N, V) logits
            lookup, from_head = autograd.grad(loss, [embedding.weight, head.weight])  # (V, d)
        finally:
            if tied:
                head.embedding = embedding
    return float(loss.data), lookup, from_head


@dataclass
class Snapshots:
    """Takes the snapshots of one run (see the module docstring)."""

    folder: Path
    steps: list[int]
    probe: tuple[np.ndarray, ...]
    buckets: np.ndarray

    @classmethod
    def for_run(cls, out_dir: Path, model: Any, task: Any, total_steps: int,
                budget_bytes: int = BUDGET_BYTES) -> "Snapshots":
        embedding, head = token_matrices(model)
        matrices = 1 if head.weight is embedding.weight else 2
        frame_bytes = matrices * embedding.weight.data.size * 2      # float16
        frames = int(np.clip(budget_bytes // max(frame_bytes, 1), 2, MAX_FRAMES))
        first = next(iter(task.eval_batches(1)))
        probe = tuple(np.asarray(part)[:PROBE_ROWS] for part in first)
        counts = np.bincount(np.asarray(task.train_ids).reshape(-1),
                             minlength=embedding.vocab_size)[:embedding.vocab_size]
        return cls(Path(out_dir) / FOLDER, snapshot_steps(total_steps, frames), probe,
                   frequency_buckets(counts))

    def index_path(self) -> Path:
        return self.folder / "index.jsonl"

    def read_index(self) -> list[dict[str, Any]]:
        if not self.index_path().is_file():
            return []
        return [json.loads(line) for line in
                self.index_path().read_text(encoding="utf-8").splitlines() if line.strip()]

    def forget_after(self, step: int) -> None:
        """Drop frames past ``step`` (a run resumed from an earlier checkpoint retakes them)."""
        rows = self.read_index()
        kept = [r for r in rows if r["step"] <= step]
        if len(kept) != len(rows):
            self._write_index(kept)

    def _write_index(self, rows: list[dict[str, Any]]) -> None:
        atomic_write_text(self.index_path(), "".join(json.dumps(r) + "\n" for r in rows))

    def take_if_due(self, model: Any, step: int) -> bool:
        """Take the snapshot of ``step`` if the schedule has one there and it is not taken."""
        if step not in self.steps:
            return False
        embedding, head = token_matrices(model)
        if not (np.isfinite(embedding.weight.data).all() and np.isfinite(head.weight.data).all()):
            return False   # a diverged run: no frame; the training loop says what happened
        rows = self.read_index()
        if any(r["step"] == step for r in rows):
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        # One BLAS thread: the probe batch is a few sequences, too small for two threads to
        # help, and on a busy machine two threads waiting for each other cost 5x.
        with blas_libraries().limit(limits=1):
            rows.append(self.take(model, step))
        self._write_index(rows)
        return True

    def take(self, model: Any, step: int) -> dict[str, Any]:
        """Write the matrices of ``step`` and return its index row."""
        embedding, head = token_matrices(model)
        tied = head.weight is embedding.weight
        matrices = {"E": embedding.weight.data}
        if not tied:
            matrices["W"] = head.weight.data
        name = f"step-{step:06d}.safetensors"
        atomic_write_bytes(self.folder / name, safetensors_bytes(
            {k: np.ascontiguousarray(v, dtype=np.float16) for k, v in matrices.items()}))
        loss, lookup, from_head = gradient_ledger(model, self.probe)
        row: dict[str, Any] = {"step": step, "file": name, "tied": tied, "probe_loss": loss,
                               "buckets": list(BUCKETS)}
        for key, matrix in matrices.items():
            row[f"erank_{key}"] = effective_rank(matrix)
            row[f"norm_{key}"] = _by_bucket(np.linalg.norm(matrix, axis=1), self.buckets, "mean")
        # The ledger: E's lookup term, and the head's term (on E itself when tied, W if not).
        lookup_rows = np.linalg.norm(lookup, axis=1)            # (V,)
        head_rows = np.linalg.norm(from_head, axis=1)           # (V,)
        row["ledger"] = {"lookup": float(np.linalg.norm(lookup_rows)),
                         "head": float(np.linalg.norm(head_rows)),
                         "lookup_by_bucket": _by_bucket(lookup_rows, self.buckets, "norm"),
                         "head_by_bucket": _by_bucket(head_rows, self.buckets, "norm")}
        return row
