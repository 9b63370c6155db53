"""Unix manners and machine-readable output: streamed generation, quiet closed pipes,
`train --json` lines (issue 15, sections 3-4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minimodel.cli import main

TINY = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "10", "--eval-interval", "5",
        "--eval-batches", "1", "--threads", "1"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from minimodel.data import load_corpus

    root = tmp_path_factory.mktemp("unix")
    corpus = root / "corpus.txt"
    corpus.write_text(load_corpus()[:12_000], encoding="utf-8")
    assert main(["train", "--corpus", str(corpus), "--out", str(root / "run"), *TINY,
                 "--quiet"]) == 0
    return root / "run"


def minimodel(*args: str) -> list[str]:
    return [sys.executable, "-m", "minimodel", *args]


def test_generate_streams_tokens_as_they_are_produced(run_dir):
    proc = subprocess.Popen(minimodel("generate", str(run_dir), "--prompt", "ROMEO:",
                                      "--max-new-tokens", "20000", "--temperature", "0"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stdout.read(12)  # arrives long before 20000 tokens are done
        assert first.startswith(b"ROMEO:") and len(first) == 12
        assert proc.poll() is None  # still generating: the text was streamed
    finally:
        proc.kill()
        proc.communicate()


def test_a_closed_pipe_ends_quietly(run_dir):
    proc = subprocess.run(f"{sys.executable} -m minimodel generate {run_dir} --prompt ROMEO: "
                          "--max-new-tokens 3000 --temperature 0 | head -c 20", shell=True,
                          capture_output=True, text=False, timeout=120,
                          executable="/bin/bash")
    assert len(proc.stdout) == 20
    assert b"Broken pipe" not in proc.stderr and b"Traceback" not in proc.stderr, proc.stderr
    listing = subprocess.run(f"{sys.executable} -m minimodel --help | head -1", shell=True,
                             capture_output=True, timeout=60, executable="/bin/bash")
    assert listing.stderr == b""


def test_generate_json_matches_the_streamed_text(run_dir, capsys):
    assert main(["generate", str(run_dir), "--prompt", "To be", "--max-new-tokens", "15",
                 "--temperature", "0"]) == 0
    streamed = capsys.readouterr().out
    assert main(["generate", str(run_dir), "--prompt", "To be", "--max-new-tokens", "15",
                 "--temperature", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert streamed == data["text"] + "\n" and len(data["new_ids"]) == 15


def test_train_json_prints_one_object_per_line_and_a_summary(tmp_path, run_dir):
    corpus = run_dir.parent / "corpus.txt"
    proc = subprocess.run(minimodel("train", "--corpus", str(corpus), "--out",
                                    str(tmp_path / "j"), *TINY, "--json"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is JSON
    kinds = [e["event"] for e in events]
    # the start event first (setup messages wait for it: `train --json | head -1` reads it)
    assert kinds[0] == "start" and "message" in kinds and kinds[-1] == "summary"
    assert [e["step"] for e in events if e["event"] == "eval"] == [5, 10]
    assert [e["step"] for e in events if e["event"] == "step"] == [10]
    summary = events[-1]
    assert summary["steps"] == 10 and summary["out_dir"] == str(tmp_path / "j")
    assert isinstance(summary["val_loss"], float)


def test_train_json_reports_divergence_as_an_event(tmp_path, run_dir):
    corpus = run_dir.parent / "corpus.txt"
    proc = subprocess.run(minimodel("train", "--corpus", str(corpus), "--out",
                                    str(tmp_path / "d"), *TINY, "--json", "--lr", "1e30",
                                    "--grad-clip", "0", "--warmup", "0", "--eval-interval", "1"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[-1]["event"] == "error" and "diverged" in events[-1]["message"]
