"""A run stopped from outside saves what it trained and says how to continue: SIGTERM
(``kill``, ``timeout``), SIGHUP (the terminal closed), a closed output pipe, Ctrl-C in
``compare``; a run that diverges before its first checkpoint says there is nothing to resume.

The signals are sent once the run has reported a training step (read from its output), never
after a sleep, so a loaded machine cannot change the outcome.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.cli import main
from minimodel.commands import _train_options

LONG = ["--steps", "100000", "--eval-interval", "50000"]  # never finishes on its own


def _start(args: list[str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "minimodel", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _wait_for_a_step(proc: subprocess.Popen) -> None:
    for line in proc.stdout:
        if json.loads(line).get("event") == "step":
            return
    pytest.fail(f"the run ended before its first step: {proc.stderr.read()}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_save_a_checkpoint_like_ctrl_c(sig, tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    proc = _start(["train", "--corpus", str(tiny_corpus), *tiny, *LONG, "--out", str(out),
                   "--json"])
    _wait_for_a_step(proc)
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    latest = json.loads((out / "checkpoints" / "LATEST").read_text())
    assert latest["step"] >= 1
    assert f"minimodel train --resume --out {out}" in rest + err


def test_json_head_1_reads_the_start_event_and_leaves_a_resumable_run(tiny_corpus, tiny,
                                                                       tmp_path):
    """`train --json | head -1`: the first line is the start event (setup messages wait for
    it), and the reader leaving then keeps a step-0 checkpoint, not an empty run folder."""
    out = tmp_path / "run"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "minimodel", "train", "--corpus",
                             str(tiny_corpus), *tiny, *LONG, "--out", str(out), "--json"],
                            stdout=write_end, stderr=subprocess.PIPE, text=True)
    os.close(write_end)
    with os.fdopen(read_end) as reader:
        first = json.loads(reader.readline())
    _, err = proc.communicate(timeout=300)
    assert first == {"event": "start", "total_steps": 100000, "done": 0}
    assert proc.returncode == 130   # whichever later write found the reader gone
    assert "interrupted at step" in err and "Traceback" not in err
    assert (out / "checkpoints" / "LATEST").exists()


def test_a_reader_gone_from_stdout_and_stderr_keeps_the_checkpoint(tiny_corpus, tiny, tmp_path):
    """`train ... 2>&1 | head -3`: stderr is the same closed pipe. Saying so on stderr once
    raised a second BrokenPipeError before the checkpoint was written, and the run exited 0
    with nothing to resume."""
    out = tmp_path / "run"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "minimodel", "train", "--corpus",
                             str(tiny_corpus), *tiny, *LONG, "--out", str(out), "--json"],
                            stdout=write_end, stderr=write_end)
    os.close(write_end)
    with os.fdopen(read_end) as reader:   # read until the run reports a training step
        for line in reader:
            if '"event": "step"' in line:
                break
    # the reader is gone: the next write on either stream fails
    assert proc.wait(timeout=300) == 130
    assert (out / "checkpoints" / "LATEST").exists()   # `--resume` has a step to go on from


def test_compare_interrupted_prints_the_command_that_finishes_it(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "cmp"
    proc = _start(["compare", "--corpus", str(tiny_corpus), *tiny, *LONG, "--out", str(out),
                   "--json"])
    for line in proc.stderr:  # with --json the progress goes to stderr
        if "== tied ==" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130
    assert f"minimodel compare --resume --out {out}" in err


def test_divergence_before_the_first_checkpoint_says_there_is_nothing_to_resume(tiny_corpus,
                                                                                 tiny, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "minimodel", "train", "--corpus",
                           str(tiny_corpus), *tiny, "--out", str(out), "--lr", "1e30",
                           "--grad-clip", "0", "--warmup", "0", "--eval-interval", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "no checkpoint had been written yet, so there is nothing to resume" in proc.stderr
    assert "last good checkpoint" not in proc.stderr and "--resume" not in proc.stderr
    assert "e.g. 0.003, the default" in proc.stderr          # not 3.3e+29
    assert "RuntimeWarning" not in proc.stderr and "encountered" not in proc.stderr
    assert not (out / "checkpoints" / "LATEST").exists()
    # ... and the same command with a sane learning rate just runs, no --force needed
    again = subprocess.run([sys.executable, "-m", "minimodel", "train", "--corpus",
                            str(tiny_corpus), *tiny, "--out", str(out), "--steps", "2"],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def test_a_late_divergence_names_the_kept_checkpoint_and_a_tenth_of_the_lr(tiny_corpus, tiny,
                                                                          tmp_path, monkeypatch,
                                                                          capsys):
    from minimodel.training.loop import Trainer

    original = Trainer.train_step

    def poisoned(self, batch):
        loss = original(self, batch)
        return float("nan") if self.step + 1 >= 7 else loss
    monkeypatch.setattr(Trainer, "train_step", poisoned)
    code = main(["train", "--corpus", str(tiny_corpus), *tiny, "--eval-interval", "3",
                 "--lr", "1e-3", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 1
    assert "the last good checkpoint (step-000006)" in err and "e.g. 0.0001)" in err


def test_more_threads_than_cores_are_lowered_with_a_note(tiny_corpus, tiny, tmp_path,
                                                         monkeypatch, capsys):
    monkeypatch.setattr(_train_options, "usable_cores", lambda: 1)
    i = tiny.index("--threads")
    args = tiny[:i] + tiny[i + 2:]
    assert main(["train", "--corpus", str(tiny_corpus), *args, "--threads", "64", "--steps", "1",
                 "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "--threads 64 is more than the 1 core(s) this process can use; using 1" in out
    assert _train_options.clamp_threads(1) == (1, None)
    assert _train_options.clamp_threads("auto") == ("auto", None)


def test_ctrl_c_outside_the_loop_still_says_how_to_resume(tiny_corpus, tiny, tmp_path,
                                                         monkeypatch, capsys):
    """Ctrl-C while the tokenizer is built or the final evaluation runs (no loop to catch it)."""
    from minimodel.training.loop import Trainer

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(Trainer, "_finish", interrupted)  # the final evaluation
    out = tmp_path / "run"
    code = main(["train", "--corpus", str(tiny_corpus), *tiny, "--eval-interval", "1000",
                 "--out", str(out)])
    assert code == 130
    assert f"`minimodel train --resume --out {out}` continues" in capsys.readouterr().err
