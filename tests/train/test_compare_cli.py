"""`minimodel compare`: two runs, same seed and budget, a table and three files."""

from __future__ import annotations

import json

from minimodel.cli import main

ARGS = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "10", "--eval-interval", "5",
        "--eval-batches", "1", "--threads", "1", "--quiet"]


def test_compare_writes_table_json_md_png(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "--corpus", str(tiny_corpus), "--out", str(out), *ARGS]) == 0
    text = capsys.readouterr().out
    for label in ("parameters", "val loss", "val ppl", "erank E", "erank W", "tied", "untied"):
        assert label in text
    report = json.loads((out / "compare.json").read_text())
    tied, untied = report["runs"]["tied"], report["runs"]["untied"]
    assert tied["tied"] is True and untied["tied"] is False
    assert untied["parameters"] - tied["parameters"] == 256 * 16
    assert report["difference_untied_minus_tied"]["parameters"] == 256 * 16
    assert tied["steps"] == untied["steps"] == 10
    for run in (tied, untied):
        for key in ("train_loss", "val_loss", "val_ppl", "erank_embedding", "train_time_s"):
            assert isinstance(run[key], float)
    assert tied["erank_head"] is None and isinstance(untied["erank_head"], float)
    assert tied["unigram_baseline"] == untied["unigram_baseline"]  # same data
    md = (out / "compare.md").read_text()
    assert "| tied |" in md and "| untied |" in md
    assert (out / "compare.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "tied/model.safetensors").is_file() and (out / "untied/metrics.jsonl").is_file()


def test_compare_json_stdout_and_resume_keeps_finished_runs(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "cmp"
    args = ["compare", "--corpus", str(tiny_corpus), "--out", str(out), *ARGS, "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)  # stdout is pure JSON
    assert report["model"] == "gpt"
    assert main([*args, "--resume"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["runs"] == report["runs"]
    assert "is complete; keeping it" in captured.err
