"""A command that needs an optional package (scikit-learn, torch) says so before it starts the
work, or, when the work is done and only a check needs the package, says the work is done."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from minimodel.cli import main

TINY = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "4", "--eval-interval", "4",
        "--eval-batches", "1", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from minimodel.data import load_corpus

    root = tmp_path_factory.mktemp("optional")
    corpus = root / "corpus.txt"
    corpus.write_text(load_corpus()[:12_000], encoding="utf-8")
    assert main(["train", "--corpus", str(corpus), "--out", str(root / "gpt"), *TINY]) == 0
    return root / "gpt"


def test_explore_tsne_without_scikit_learn_fails_before_announcing_the_run(run_dir, tmp_path,
                                                                            monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sklearn" else real(name, *a))
    code = main(["explore", str(run_dir), "--tsne", "--out", str(tmp_path / "e.html")])
    out, err = capsys.readouterr()
    assert code == 2 and "--tsne needs scikit-learn" in err
    assert "t-SNE of every matrix" not in out and not (tmp_path / "e.html").exists()


def test_export_verify_without_torch_says_the_export_worked(run_dir, tmp_path, monkeypatch,
                                                            capsys):
    for name in ("torch", "transformers"):  # `import torch` now raises ImportError
        monkeypatch.setitem(sys.modules, name, None)
    out_dir = tmp_path / "hf"
    code = main(["export", str(run_dir), "--format", "hf", str(out_dir), "--verify"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "the export worked; the check with transformers could not run" in out
    assert "error:" not in err
    assert (out_dir / "model.safetensors").is_file() and (out_dir / "config.json").is_file()
