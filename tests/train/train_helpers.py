"""Helpers for the training tests (imported by name; conftest.py holds the fixtures)."""

from __future__ import annotations

from pathlib import Path


def current_checkpoint(out: Path) -> Path:
    """The directory of a run's current checkpoint (checkpoints/step-NNNNNN)."""
    from minimodel.training import checkpoint

    folder = checkpoint.latest(Path(out))
    assert folder is not None, f"{out} has no checkpoint"
    return folder
