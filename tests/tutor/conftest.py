"""A tiny trained run for the doctor and explorer tools (a few seconds of training)."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.cli import main

TINY = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "4", "--eval-interval", "4",
        "--eval-batches", "1", "--threads", "1", "--quiet"]


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    from minimodel.data import load_corpus

    root = tmp_path_factory.mktemp("tutor-run")
    corpus = root / "corpus.txt"
    corpus.write_text(load_corpus()[:12_000], encoding="utf-8")
    assert main(["train", "--corpus", str(corpus), "--out", str(root / "gpt"), *TINY]) == 0
    return root / "gpt"
