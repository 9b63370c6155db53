"""Work is never lost: kills at every checkpoint commit point, divergence, re-runs, locks,
write errors and damaged run state (issue 15, section 1).

Kills are injected, not timed: ``fault_runner.py <point>@<n>`` runs ``minimodel`` with the n-th
checkpoint commit ended at that point by ``os._exit`` (no cleanup runs, as with SIGKILL).
"""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minimodel.cli import main
from minimodel.training import RunLock, TrainConfig, checkpoint, train
from train_helpers import current_checkpoint

COMMIT_POINTS = ["npz", "model", "state", "rename", "latest", "publish"]
TINY_STEPS = ["--steps", "12", "--eval-interval", "4"]  # commits at steps 4, 8 and 12 (the last)
FAULT_RUNNER = Path(__file__).with_name("fault_runner.py")
TIMINGS = {"tokens_per_s", "train_time_s", "elapsed_s"}  # wall-clock figures differ by nature


def cli(*args: str, env: dict | None = None, limit_file_size: int | None = None,
        fault: str | None = None):
    """Run `minimodel ...` in a fresh process (so a kill ends only that process); ``fault``
    (``point@n``) kills it there (see fault_runner.py)."""
    def limit() -> None:
        if limit_file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))
    command = [sys.executable, str(FAULT_RUNNER), fault] if fault else \
        [sys.executable, "-m", "minimodel"]
    return subprocess.run([*command, *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, preexec_fn=limit,
                          timeout=300)


def weights(path: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(path))


def leftovers(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*")
                  if ".tmp" in p.name or p.name.startswith(".tmp-"))


@pytest.fixture(scope="module")
def straight_run(module_corpus, tmp_path_factory):
    """The uninterrupted 12-step run every killed run must end up identical to."""
    out = tmp_path_factory.mktemp("straight") / "run"
    from train_helpers import TINY_ARGS

    assert main(["train", "--corpus", str(module_corpus), *TINY_ARGS, *TINY_STEPS,
                 "--out", str(out)]) == 0
    return out


def _without_timings(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in TIMINGS}


@pytest.mark.parametrize("point, commit", [(p, n) for n in (2, 3) for p in COMMIT_POINTS]
                         + [("plot", 1)])
def test_a_kill_at_any_commit_point_leaves_a_run_that_resumes_exactly(point, commit,
                                                                       straight_run,
                                                                       module_corpus, tiny,
                                                                       tmp_path):
    """Commit 3 is the run's last (step 12): a kill after its LATEST still has to publish the
    model, plot and summary, and ``--resume`` does it (it once said "nothing to resume")."""
    args = ["train", "--corpus", str(module_corpus), *tiny, *TINY_STEPS]
    cut = tmp_path / "cut"
    killed = cli(*args, "--out", str(cut), fault=f"{point}@{commit}")
    assert killed.returncode == 137, killed.stderr
    committed = 3 if point == "plot" else commit if point in ("latest", "publish") else commit - 1
    assert json.loads((cut / "checkpoints" / "LATEST").read_text())["step"] == 4 * committed
    assert not (cut / "summary.json").exists()
    refused = cli(*args, "--out", str(cut))  # a plain re-run points at --resume ...
    assert refused.returncode == 2 and "--resume" in refused.stderr
    resumed = cli("train", "--resume", "--out", str(cut), "--quiet", "--threads", "1")
    assert resumed.returncode == 0, resumed.stderr  # ... and --resume finishes the run
    a, b = weights(straight_run / "model.safetensors"), weights(cut / "model.safetensors")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    summaries = [json.loads((d / "summary.json").read_text()) for d in (straight_run, cut)]
    assert _without_timings(summaries[0]) == _without_timings(summaries[1])
    assert (cut / "loss.png").stat().st_size > 0
    assert leftovers(cut) == []
    assert [p.name for p in (cut / "checkpoints").iterdir() if p.is_dir()] == ["step-000012"]
    again = cli("train", "--resume", "--out", str(cut), "--quiet")
    assert again.returncode == 0 and "nothing to resume" in again.stdout + again.stderr


def test_a_kill_during_the_first_commit_leaves_nothing_half_written(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    args = ["train", "--corpus", str(tiny_corpus), *tiny, *TINY_STEPS, "--out", str(out)]
    killed = cli(*args, fault="state")
    assert killed.returncode == 137
    assert not (out / "checkpoints" / "LATEST").exists() and not (out / "model.safetensors").exists()
    nothing = cli("train", "--resume", "--out", str(out))
    assert nothing.returncode == 2 and "nothing to resume" in nothing.stderr
    again = cli(*args)  # no finished or interrupted run is here: no --force needed
    assert again.returncode == 0, again.stderr
    assert leftovers(out) == []


def _poison_after(step: int, monkeypatch) -> None:
    """Make the weights NaN after optimizer step ``step`` (a divergence on demand)."""
    from minimodel.training.loop import Trainer

    original = Trainer.train_step

    def train_step(self, batch):
        loss = original(self, batch)
        if self.step + 1 >= step:
            self.model.get_input_embeddings().weight.data[0, 0] = np.nan
        return loss
    monkeypatch.setattr(Trainer, "train_step", train_step)


def test_divergence_never_overwrites_the_last_good_checkpoint(tiny_corpus, tmp_path,
                                                              monkeypatch):
    out = tmp_path / "run"
    cfg = TrainConfig(corpus=str(tiny_corpus), tokenizer="byte", d_model=16, n_layer=1,
                      n_head=2, block_size=16, batch_size=4, steps=20, eval_interval=1,
                      eval_batches=1)
    _poison_after(7, monkeypatch)
    with pytest.raises(FloatingPointError, match="validation loss became nan at step 7") as err:
        train(cfg, out)
    assert "last good checkpoint" in str(err.value) and "--lr" in str(err.value)
    assert current_checkpoint(out).name == "step-000006"
    for path in (out / "model.safetensors", current_checkpoint(out) / "model.safetensors"):
        assert all(np.all(np.isfinite(v)) for v in weights(path).values())
    for line in (out / "metrics.jsonl").read_text().splitlines():  # strict JSON, no NaN
        json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in metrics.jsonl"))
    monkeypatch.undo()
    resumed = train(TrainConfig(), out, resume=True)  # the last good state continues
    assert resumed.step == 20 and np.isfinite(resumed.summary["val_loss"])


def test_a_diverging_cli_run_says_what_to_try_and_prints_no_giant_numbers(tiny_corpus, tiny,
                                                                           tmp_path):
    out = tmp_path / "run"
    proc = cli("train", "--corpus", str(tiny_corpus), *tiny, "--out", str(out), "--lr", "1e30",
               "--grad-clip", "0", "--warmup", "0", "--eval-interval", "1")
    assert proc.returncode == 1, proc.stderr
    assert "diverged" in proc.stderr and "lower --lr" in proc.stderr.replace("a lower", "lower")
    assert "Traceback" not in proc.stderr
    assert not re.search(r"\d{20,}", proc.stdout + proc.stderr)  # no 300-digit perplexity
    if (out / "metrics.jsonl").exists():
        for line in (out / "metrics.jsonl").read_text().splitlines():
            json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in metrics"))


def test_rerunning_a_run_needs_force_and_keeps_the_previous_model(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    args = ["train", "--corpus", str(tiny_corpus), *tiny, "--out", str(out)]
    assert main(args) == 0
    before = (out / "model.safetensors").read_bytes()
    refused = cli(*args)
    assert refused.returncode == 2
    assert "already holds a finished run (step 20/20)" in refused.stderr
    assert "--force" in refused.stderr and "previous" in refused.stderr
    assert "--resume" not in refused.stderr  # a finished run has nothing to resume
    # A forced re-run that diverges: the earlier model is kept, usable, in previous/.
    failed = cli(*args, "--force", "--lr", "1e30", "--grad-clip", "0", "--warmup", "0",
                 "--eval-interval", "1")
    assert failed.returncode == 1
    assert (out / "previous" / "model.safetensors").read_bytes() == before
    assert (out / "previous" / "tokenizer.json").is_file()
    gen = cli("generate", str(out / "previous"), "--prompt", "To", "--max-new-tokens", "3",
              "--temperature", "0")
    assert gen.returncode == 0 and gen.stdout.startswith("To")
    # The diverged run left nothing to set aside; a new run here needs no --force. Then
    # another forced re-run sets that one aside next to previous/, never over it.
    assert cli(*args, "--steps", "3").returncode == 0
    again = cli(*args, "--force", "--steps", "3")
    assert again.returncode == 0, again.stderr
    assert f"was moved to {out / 'previous-2'}" in again.stdout + again.stderr
    assert (out / "previous" / "model.safetensors").read_bytes() == before
    assert (out / "previous-2").is_dir()


def test_resume_and_force_together_are_refused(tmp_path, capsys):
    assert main(["train", "--resume", "--force", "--out", str(tmp_path)]) == 2
    assert "choose one" in capsys.readouterr().err


def test_one_process_per_run_directory(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    with RunLock(out):
        proc = cli("train", "--corpus", str(tiny_corpus), *tiny, "--out", str(out))
    assert proc.returncode == 2
    assert f"is in use by process {os.getpid()}" in proc.stderr
    assert not (out / ".lock").exists()  # released on exit
    # A lock file left by a killed process holds no flock: the next run proceeds.
    (out / ".lock").write_text(json.dumps({"pid": 999999, "host": "elsewhere"}))
    assert main(["train", "--corpus", str(tiny_corpus), *tiny, "--out", str(out)]) == 0


def test_a_killed_owner_does_not_block_resume(tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    args = ["train", "--corpus", str(tiny_corpus), *tiny, *TINY_STEPS, "--out", str(out)]
    assert cli(*args, fault="publish@2").returncode == 137
    proc = cli("train", "--resume", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr


def test_a_file_size_limit_fails_cleanly_and_keeps_the_previous_run(tiny_corpus, tiny,
                                                                     tmp_path):
    out = tmp_path / "run"
    args = ["train", "--corpus", str(tiny_corpus), *tiny, "--out", str(out)]
    assert main(args) == 0
    before = (out / "model.safetensors").read_bytes()
    proc = cli(*args, "--force", limit_file_size=20_000)  # the model file is ~30 kB
    assert proc.returncode == 2, proc.stderr
    assert "the file would exceed the file-size limit" in proc.stderr
    assert "checkpoints/step-000005/" in proc.stderr and "Traceback" not in proc.stderr
    assert "[Errno" not in proc.stderr
    assert (out / "previous" / "model.safetensors").read_bytes() == before
    assert leftovers(out) == []


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "the disk is full"),
                                         (errno.EACCES, "permission denied"),
                                         (errno.EROFS, "the file system is read-only")])
def test_write_errors_are_one_sentence_with_the_path(code, words, tiny_corpus, tiny, tmp_path,
                                                      monkeypatch, capsys):
    import minimodel._fileio as fileio

    real_fdopen = os.fdopen

    def failing_fdopen(fd, mode="r", *a, **kw):
        handle = real_fdopen(fd, mode, *a, **kw)
        if "w" in mode:
            handle.close()
            raise OSError(code, os.strerror(code), str(tmp_path / "run" / "model.safetensors"))
        return handle
    monkeypatch.setattr(fileio.os, "fdopen", failing_fdopen)
    assert main(["train", "--corpus", str(tiny_corpus), *tiny, "--out",
                 str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "model.safetensors" in err
    assert "Traceback" not in err and "[Errno" not in err


@pytest.mark.parametrize("damage, words", [
    ("LATEST", "LATEST is damaged"),
    ("state", "train_state.json is damaged"),
    ("npz", "train_state.npz is damaged"),
    ("metrics", "metrics.jsonl line 2 is damaged"),
    ("rng", "batch-sampler state is damaged"),
    ("steps-string", "train_state.json is damaged: its config is invalid (--steps must be a "
                     "positive integer, got '12')"),
    ("step-string", "train_state.json is damaged: 'step' must be an integer >= 0, got '8'"),
    ("accumulators", "train_state.json is damaged: 'accumulators' must hold the numbers"),
])
def test_damaged_run_state_is_a_clear_error_that_touches_nothing(damage, words, tiny_corpus,
                                                                  tiny, tmp_path):
    out = tmp_path / "run"
    args = ["train", "--corpus", str(tiny_corpus), *tiny, *TINY_STEPS, "--out", str(out)]
    assert cli(*args, fault="publish@2").returncode == 137
    ckpt = current_checkpoint(out)
    if damage == "LATEST":
        (out / "checkpoints" / "LATEST").write_text("{not json")
    elif damage == "state":
        (ckpt / "train_state.json").write_text('{"version": 2, "step"')
    elif damage == "npz":
        (ckpt / "train_state.npz").write_bytes(b"PK\x03\x04 garbage")
    elif damage == "metrics":
        lines = (out / "metrics.jsonl").read_text().splitlines()
        (out / "metrics.jsonl").write_text(lines[0] + "\n{broken\n")
    else:
        state = json.loads((ckpt / "train_state.json").read_text())
        if damage == "rng":
            state["rng"] = {"bit_generator": "PCG64", "state": "nonsense"}
        elif damage == "steps-string":
            state["config"]["steps"] = "12"
        elif damage == "step-string":
            state["step"] = "8"
        else:
            state["accumulators"]["loss_n"] = None
        (ckpt / "train_state.json").write_text(json.dumps(state))
    snapshot = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".lock"}
    os.utime(out / "run.json", (0, 0))  # a rewrite with the same bytes must show too
    proc = cli("train", "--resume", "--out", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert words in proc.stderr and "Traceback" not in proc.stderr
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == snapshot
    if damage == "LATEST":  # the way out is --force, not a --resume that cannot read it
        plain = cli("train", "--corpus", str(tiny_corpus), *tiny, *TINY_STEPS, "--out", str(out))
        assert plain.returncode == 2 and "--force" in plain.stderr
        assert "--resume" not in plain.stderr
    if damage != "metrics":  # checked when the state is read, before any write
        assert (out / "run.json").stat().st_mtime == 0


def test_export_and_import_under_a_file_size_limit_leave_nothing_half_written(tiny_corpus, tiny,
                                                                               tmp_path):
    run, hf, back = tmp_path / "run", tmp_path / "hf", tmp_path / "back"
    assert main(["train", "--corpus", str(tiny_corpus), *tiny, "--out", str(run)]) == 0
    assert main(["export", str(run), "--format", "hf", str(hf)]) == 0
    before = {p.name: p.read_bytes() for p in hf.iterdir()}
    failed = cli("export", str(run), "--format", "hf", str(hf), "--force",
                 limit_file_size=20_000)
    assert failed.returncode == 2 and f"{hf}/model.safetensors: the file would exceed" in failed.stderr
    assert {p.name: p.read_bytes() for p in hf.iterdir()} == before  # the old export intact
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
    failed = cli("import-hf", str(hf), str(back), limit_file_size=20_000)
    assert failed.returncode == 2 and "the file would exceed the file-size limit" in failed.stderr
    assert not back.exists()  # neither a tokenizer without a model, nor an empty folder
    assert cli("import-hf", str(hf), str(back)).returncode == 0
    assert {p.name for p in back.iterdir()} == {"model.safetensors", "tokenizer.json"}


def test_a_reader_that_goes_away_stops_the_run_like_ctrl_c(tiny_corpus, tiny, tmp_path):
    # `minimodel train --json | head -5`: the pipe closes while the run trains. The run stops
    # at a step boundary with its checkpoint saved (not silently, not lost), says how to
    # resume on stderr, and --resume finishes it.
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "minimodel", "train", "--corpus",
                             str(tiny_corpus), *tiny, "--steps", "400", "--eval-interval", "5",
                             "--json", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = []
    while len(events) < 2:  # read until the first evaluation, then close the pipe
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        if json.loads(line)["event"] in ("eval",):
            events.append(line)
        if json.loads(line)["event"] == "start":
            events.append(line)
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "the output's reader went away" in err and "Traceback" not in err
    assert f"resume with:  minimodel train --resume --out {out}" in err
    assert main(["train", "--resume", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "summary.json").read_text())["steps"] == 400


@pytest.mark.parametrize("argv", [["inspect", "{run}"], ["lab", "status", "--learner-dir", "{me}"]])
def test_output_into_a_closed_pipe_ends_quietly_with_0(argv, tiny_corpus, tiny, tmp_path):
    # `| true` closes the pipe before Python has even started, so every write fails. Rich's
    # console would exit 1 there; ours ends quietly, like other Unix tools.
    run = tmp_path / "run"
    assert main(["train", "--corpus", str(tiny_corpus), *tiny, "--out", str(run),
                 "--quiet"]) == 0
    words = " ".join(a.format(run=run, me=tmp_path / "me") for a in argv)
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m minimodel {words} | true; "
                           "echo ${PIPESTATUS[0]}"], capture_output=True, text=True)
    assert done.stdout.strip() == "0" and "Traceback" not in done.stderr, done.stderr
