"""Ctrl-C and --resume: an interrupted + resumed run ends with the uninterrupted run's weights."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from minimodel.cli import main
from minimodel.training import TrainConfig, train
from train_helpers import current_checkpoint
from minimodel.training.tasks import LMTask

SMALL = dict(tokenizer="byte", d_model=16, n_layer=1, n_head=2, block_size=16, batch_size=4,
             steps=16, eval_interval=5, eval_batches=2, lr=1e-2, seed=7)


def _weights(run_dir: Path) -> dict[str, np.ndarray]:
    return load_file(str(run_dir / "model.safetensors"))


def _assert_same_weights(a: Path, b: Path) -> None:
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for key in wa:
        np.testing.assert_array_equal(wa[key], wb[key], err_msg=key)  # bitwise


def _untimed(run_dir: Path) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in ("elapsed", "tokens_per_s")} for r in rows]


def _stop_at(step: int):
    def hook(current: int, loss: float) -> None:
        if current == step:
            raise KeyboardInterrupt
    return hook


@pytest.mark.parametrize("model", ["gpt", "mlm", "cbow"])
def test_interrupt_then_resume_matches_straight_run(model, tiny_corpus, tmp_path):
    kw = dict(SMALL, model=model, corpus=str(tiny_corpus))
    if model == "cbow":
        kw.update(tokenizer=None, n_layer=None, n_head=None, block_size=None, min_count=1)
    straight = train(TrainConfig(**kw), tmp_path / "straight")
    assert not straight.interrupted and straight.step == 16
    cut = train(TrainConfig(**kw), tmp_path / "cut", on_step=_stop_at(8))
    assert cut.interrupted and cut.step == 8
    state = json.loads((current_checkpoint(tmp_path / "cut") / "train_state.json").read_text())
    assert state["step"] == 8
    resumed = train(TrainConfig(), tmp_path / "cut", resume=True)
    assert resumed.step == 16 and not resumed.interrupted
    _assert_same_weights(tmp_path / "straight", tmp_path / "cut")
    assert _untimed(tmp_path / "straight") == _untimed(tmp_path / "cut")
    assert resumed.summary["val_loss"] == straight.summary["val_loss"]


def test_interrupt_inside_a_step_redoes_that_step(tiny_corpus, tmp_path, monkeypatch):
    """KeyboardInterrupt after the batch was drawn but before the update: the saved sampler
    state is the one from the start of the step, so the resumed run draws the same batch."""
    kw = dict(SMALL, corpus=str(tiny_corpus))
    train(TrainConfig(**kw), tmp_path / "straight")
    calls = {"n": 0}
    original = LMTask.sample

    def sample_then_interrupt(self, rng):
        batch = original(self, rng)
        calls["n"] += 1
        if calls["n"] == 7:  # step 7 is drawn, never applied
            raise KeyboardInterrupt
        return batch

    monkeypatch.setattr(LMTask, "sample", sample_then_interrupt)
    cut = train(TrainConfig(**kw), tmp_path / "cut")
    monkeypatch.setattr(LMTask, "sample", original)
    assert cut.interrupted and cut.step == 6
    train(TrainConfig(), tmp_path / "cut", resume=True)
    _assert_same_weights(tmp_path / "straight", tmp_path / "cut")


def test_cli_interrupt_message_and_resume(tiny_corpus, tiny, tmp_path, capsys, monkeypatch):
    import minimodel.training as training

    out = tmp_path / "run"
    real_train = training.train
    monkeypatch.setattr(training, "train",
                        lambda *a, **k: real_train(*a, **{**k, "on_step": _stop_at(12)}))
    code = main(["train", "--corpus", str(tiny_corpus), "--out", str(out), *tiny])
    text = capsys.readouterr().out
    assert code == 130
    assert "interrupted at step 12/20" in text
    assert f"minimodel train --resume --out {out}" in text
    monkeypatch.setattr(training, "train", real_train)
    assert main(["train", "--resume", "--out", str(out), "--threads", "1"]) == 0
    text = capsys.readouterr().out
    assert f"resuming from the checkpoint at step 12/20 in {out}" in text
    assert "step 20/20" in text
    assert json.loads((out / "summary.json").read_text())["steps"] == 20


def test_resume_refuses_changed_options_and_missing_state(tiny_corpus, tiny, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--resume", "--out", str(out), "--quiet"]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert not out.exists()  # the refusal leaves no empty folder behind
    assert main(["train", "--corpus", str(tiny_corpus), "--out", str(out), *tiny]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(out), "--lr", "0.5", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--lr 0.5 (the run used 0.01)" in err
    assert main(["train", "--resume", "--out", str(out), "--quiet"]) == 0
    assert "already trained to step 20/20" in capsys.readouterr().out


def test_resume_refuses_tokenizer_vocab_mismatch(tiny_corpus, tmp_path):
    from minimodel.data import ByteTokenizer

    kw = dict(SMALL, corpus=str(tiny_corpus))
    train(TrainConfig(**kw), tmp_path / "r", on_step=_stop_at(3))
    ByteTokenizer(special_tokens=("[PAD]",)).save(tmp_path / "r/tokenizer.json")
    with pytest.raises(ValueError, match="vocab_size=256 but the tokenizer has vocab_size=257"):
        train(TrainConfig(), tmp_path / "r", resume=True)


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
def test_real_ctrl_c_saves_and_resumes(tiny_corpus, tmp_path):
    """A real SIGINT stops at a step boundary, saves, exits 130; resume completes the run."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "minimodel", "train", "--corpus", str(tiny_corpus),
           "--out", str(out), "--tokenizer", "byte", "--d-model", "16", "--n-layer", "1",
           "--n-head", "2", "--block-size", "16", "--batch-size", "4", "--steps", "100000",
           "--eval-interval", "20", "--eval-batches", "1", "--threads", "1", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:  # wait for the first evaluation line
            line = proc.stdout.readline()
            if line.startswith("step "):
                break
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "resume with:" in stdout and "Traceback" not in stderr
    state = json.loads((current_checkpoint(out) / "train_state.json").read_text())
    assert state["step"] >= 20
    assert load_file(str(out / "model.safetensors"))  # a readable checkpoint


def test_resume_accepts_the_same_relative_corpus(tiny_corpus, tiny, tmp_path, monkeypatch,
                                                 capsys):
    monkeypatch.chdir(tiny_corpus.parent)
    assert main(["train", "--corpus", tiny_corpus.name, "--out", "run", *tiny]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", "--corpus", tiny_corpus.name, "--out", "run",
                 "--quiet"]) == 0
    assert "already trained" in capsys.readouterr().out


def test_resume_without_out_uses_the_default_directory(tiny_corpus, tiny, tmp_path,
                                                       monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--corpus", str(tiny_corpus), *tiny]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", "--quiet"]) == 0  # finds runs/gpt-tied
    assert "runs/gpt-tied is already trained to step 20/20" in capsys.readouterr().out
