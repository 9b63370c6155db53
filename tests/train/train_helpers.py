"""Helpers for the training tests (imported by name; conftest.py holds the fixtures)."""

from __future__ import annotations

from pathlib import Path


def current_checkpoint(out: Path) -> Path:
    """The directory of a run's current checkpoint (checkpoints/step-NNNNNN)."""
    from minimodel.training import checkpoint

    folder = checkpoint.latest(Path(out))
    assert folder is not None, f"{out} has no checkpoint"
    return folder


# The options of the `tiny` fixture (conftest.py), for module-scoped fixtures that cannot use it.
TINY_ARGS = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
             "--block-size", "16", "--batch-size", "4", "--steps", "20", "--eval-interval", "5",
             "--eval-batches", "2", "--lr", "1e-2", "--threads", "1", "--quiet"]
