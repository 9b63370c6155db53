"""`minimodel train` end to end: artefacts, metrics, summaries and user errors (exit code 2)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from minimodel.cli import main
from train_helpers import current_checkpoint


def _rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_train_writes_every_artefact_and_learns(tiny_corpus, tiny, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--corpus", str(tiny_corpus), "--out", str(out), *tiny]) == 0
    for name in ("model.safetensors", "metrics.jsonl", "loss.png", "tokenizer.json",
                 "summary.json", "run.json"):
        assert (out / name).is_file(), name
    ckpt = current_checkpoint(out)
    assert ckpt.name == "step-000020" and [p.name for p in (out / "checkpoints").iterdir()
                                           if p.is_dir()] == ["step-000020"]
    for name in ("model.safetensors", "train_state.json", "train_state.npz"):
        assert (ckpt / name).is_file(), name
    assert (ckpt / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = _rows(out)
    assert [r["step"] for r in rows] == [5, 10, 15, 20]
    for r in rows:
        assert set(r) >= {"step", "train_loss", "val_loss", "val_ppl", "lr", "tokens_per_s",
                          "elapsed"}
        assert r["val_ppl"] == pytest.approx(math.exp(r["val_loss"]))
        assert r["tokens_per_s"] > 0
    assert rows[-1]["val_loss"] < rows[0]["val_loss"] < math.log(256) + 0.05
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]
    assert [r["elapsed"] for r in rows] == sorted(r["elapsed"] for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 20 and summary["tied"] is True and summary["vocab_size"] == 256
    assert summary["uniform_baseline"] == pytest.approx(math.log(256))
    assert 0 < summary["unigram_baseline"] < math.log(256)
    text = capsys.readouterr().out
    assert "unigram" in text and "step 20/20" in text and "final" in text


def test_train_state_has_no_pickles(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    assert main(["train", "--corpus", str(tiny_corpus), "--out", str(out), *tiny]) == 0
    ckpt = current_checkpoint(out)
    with np.load(ckpt / "train_state.npz", allow_pickle=False) as npz:  # raises on pickles
        assert int(npz["step"]) == 20
        assert any(k.endswith("exp_avg_sq") for k in npz.files)
    state = json.loads((ckpt / "train_state.json").read_text())
    assert state["step"] == 20 and state["rng"]["bit_generator"] == "PCG64"


def test_untied_run_and_default_out_dir(tiny_corpus, tiny, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--untied", "--corpus", str(tiny_corpus), *tiny]) == 0
    summary = json.loads((tmp_path / "runs/gpt-untied/summary.json").read_text())
    assert summary["tied"] is False
    assert summary["parameters"] == summary["parameters_if_untied"]
    assert summary["erank_head"] is not None


def test_bpe_tokenizer_is_cached_in_the_out_dir(tiny_corpus, tiny, tmp_path, capsys):
    args = ["train", "--corpus", str(tiny_corpus), "--out", str(tmp_path / "r"), *tiny]
    args[args.index("byte")] = "bpe"
    args += ["--vocab-size", "300", "--steps", "5"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main([*args, "--force"]) == 0
    second = capsys.readouterr().out
    assert "reusing the tokenizer" not in first and "reusing the tokenizer" in second
    assert json.loads((tmp_path / "r/tokenizer.json").read_text())["vocab_size"] == 300


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    (b"", "empty"),
    (b"abc\x00\x01\x02 binary", "binary"),
    (b"too short", "needs at least"),
])
def test_bad_corpus_is_a_clear_error(content, message, tiny, tmp_path, capsys):
    path = tmp_path / "corpus.txt"
    if content is not None:
        path.write_bytes(content)
    code = main(["train", "--corpus", str(path), "--out", str(tmp_path / "r"), *tiny])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("extra, message", [
    (["--vocab-size", "300"], "--vocab-size 300 applies to --tokenizer bpe only"),
    (["--n-head", "3"], "divisible by --n-head 3"),
    (["--steps", "0"], "--steps must be a positive integer"),
    (["--steps", "-1"], "--steps must be a positive integer, got -1"),
    (["--min-lr", "1"], "--min-lr 1.0 is above --lr"),
    (["--corpus", "missing.txt"], "corpus file missing.txt does not exist"),
])
@pytest.mark.parametrize("as_json", [False, True], ids=["plain", "json"])
def test_bad_options_are_clear_errors(extra, message, as_json, tiny_corpus, tiny, tmp_path,
                                      capsys, monkeypatch):
    # The error is all that is said: the "BLAS threads" line once came first, and the run
    # folder was created for nothing
    monkeypatch.chdir(tmp_path)
    loud = [o for o in tiny if o != "--quiet"]  # the setup's lines are printed
    code = main(["train", "--corpus", str(tiny_corpus), "--out", str(tmp_path / "r"), *loud,
                 *extra, *(["--json"] if as_json else [])])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and message in captured.err
    assert captured.err.startswith("error: ") and len(captured.err.splitlines()) == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("argv, message", [
    (["--resume", "--steps", "7"], "these options differ: --steps 7"),
    (["--corpus", "{corpus}", "--tokenizer", "byte"], "already holds an interrupted run"),
    (["--resume", "--out", "elsewhere"], "nothing to resume in elsewhere: there is no such folder"),
])
def test_a_refused_run_says_only_why(argv, message, tiny_corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    state = current_checkpoint(_interrupted_run(tiny_corpus, out))
    capsys.readouterr()
    code = main(["train", "--out", str(out), *[a.format(corpus=tiny_corpus) for a in argv]])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert message in err
    assert current_checkpoint(out) == state and not (tmp_path / "elsewhere").exists()


def _interrupted_run(corpus: Path, out: Path) -> Path:
    """A run stopped by Ctrl-C after its first step (its checkpoint is step 1)."""
    from minimodel.training import TrainConfig, train

    def stop(step: int, loss: float) -> None:
        raise KeyboardInterrupt

    config = TrainConfig(model="gpt", corpus=str(corpus), tokenizer="byte", d_model=16,
                         n_layer=1, n_head=2, block_size=16, batch_size=4, steps=20,
                         eval_interval=10, eval_batches=2)
    assert train(config, out, on_step=stop).interrupted
    return out


def test_mlm_run_uses_mask_token_and_reports(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "mlm"
    assert main(["train", "--model", "mlm", "--corpus", str(tiny_corpus), "--out", str(out),
                 *tiny]) == 0
    tok = json.loads((out / "tokenizer.json").read_text())
    assert tok["special_tokens"] == {"[PAD]": 256, "[MASK]": 257} and tok["vocab_size"] == 258
    rows = _rows(out)
    assert rows[-1]["val_loss"] < rows[0]["val_loss"]
    assert json.loads((out / "summary.json").read_text())["vocab_size"] == 258


def test_a_bad_corpus_does_not_destroy_an_existing_run(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    assert main(["train", "--corpus", str(tiny_corpus), "--out", str(out), *tiny]) == 0
    before = (out / "model.safetensors").read_bytes()
    assert main(["train", "--corpus", str(tmp_path / "missing.txt"), "--out", str(out),
                 *tiny, "--force"]) == 2
    assert (out / "model.safetensors").read_bytes() == before
    assert not (out / "previous").exists()  # nothing moved: the new run never started
    assert (out / "metrics.jsonl").read_text()
