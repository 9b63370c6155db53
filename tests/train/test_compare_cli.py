"""`minimodel compare`: two runs, same seed and budget, a table and three files."""

from __future__ import annotations

import json
import re

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
    # the table's time is the time in training steps, the step lines' the time elapsed: each
    # is labelled for what it measures, so the two do not read as one number disagreeing
    assert "| step time (s) |" in md and "| time (s) |" not in md
    assert re.search(r"tok/s  [\d.]+s elapsed$", text, re.M)
    assert all(run["train_time_s"] <= run["elapsed_s"] for run in (tied, untied))
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


def _stop_untied_at(step):
    """Interrupt the untied run of a comparison at ``step`` (as Ctrl-C would)."""
    import minimodel.training as training

    original = training.train

    def train(cfg, out_dir, **kw):
        if not cfg.tied and not kw.get("resume"):
            def hook(current, loss):
                if current == step:
                    raise KeyboardInterrupt
            kw["on_step"] = hook
        return original(cfg, out_dir, **kw)
    return train


def test_resume_continues_with_the_saved_budget_and_refuses_another(tiny_corpus, tmp_path,
                                                                    capsys, monkeypatch):
    import minimodel.training as training

    out = tmp_path / "cmp"
    args = ["compare", "--corpus", str(tiny_corpus), "--out", str(out), *ARGS]
    monkeypatch.setattr(training, "train", _stop_untied_at(5))
    assert main(args) == 130  # the tied run finished, the untied one was interrupted
    monkeypatch.undo()
    said = "".join(capsys.readouterr())
    # One way to continue, the comparison's (the untied run alone would leave it unfinished).
    assert f"resume with:  minimodel compare --resume --out {out}" in said
    assert "minimodel train --resume" not in said
    # A different budget typed at resume time is refused: a comparison has one budget.
    assert main(["compare", "--resume", "--out", str(out), "--steps", "20", "--quiet"]) == 2
    assert "--steps 20 (the run used 10)" in capsys.readouterr().err
    assert main(["compare", "--resume", "--out", str(out), "--quiet", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["runs"]["tied"]["steps"] == report["runs"]["untied"]["steps"] == 10


def test_a_comparison_is_not_overwritten_without_force(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "cmp"
    args = ["compare", "--corpus", str(tiny_corpus), "--out", str(out), *ARGS]
    assert main(args) == 0
    before = (out / "tied" / "model.safetensors").read_bytes()
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "already holds a comparison" in err and "--resume" in err and "--force" in err
    assert main([*args, "--force"]) == 0
    assert (out / "tied" / "previous" / "model.safetensors").read_bytes() == before


def test_resume_on_an_empty_directory_says_there_is_nothing(tmp_path, capsys):
    assert main(["compare", "--resume", "--out", str(tmp_path / "none")]) == 2
    assert "nothing to resume" in capsys.readouterr().err
