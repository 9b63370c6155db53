"""Shared fixtures for the training / CLI tests: tiny corpora and tiny model options."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.data import load_corpus

from train_helpers import TINY_ARGS

# A model small enough that a 20-step run takes well under a second.
TINY = TINY_ARGS


@pytest.fixture
def tiny() -> list[str]:
    """Command-line options of a tiny byte-level GPT run (20 steps)."""
    return list(TINY)


@pytest.fixture(scope="session")
def corpus_text() -> str:
    return load_corpus()[:12_000]


@pytest.fixture
def tiny_corpus(tmp_path: Path, corpus_text: str) -> Path:
    path = tmp_path / "tiny.txt"
    path.write_text(corpus_text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def module_corpus(tmp_path_factory: pytest.TempPathFactory, corpus_text: str) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "tiny.txt"
    path.write_text(corpus_text, encoding="utf-8")
    return path

