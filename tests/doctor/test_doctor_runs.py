"""The doctor on minimodel runs: the optimizer's hold on the tied matrix, and the gradient ledger."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minimodel.cli import main
from minimodel.doctor import diagnose
from minimodel.doctor.ledger import frequency_buckets, gradient_ledger, shares
from minimodel.doctor.texts import words
from minimodel.models import GPT, GPTConfig

TINY = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "10", "--eval-interval", "5",
        "--eval-batches", "2", "--lr", "1e-2", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    from minimodel.data import load_corpus

    path = tmp_path_factory.mktemp("corpus") / "tiny.txt"
    path.write_text(load_corpus()[:12_000], encoding="utf-8")
    return path


def train(out: Path, corpus: Path, *extra: str) -> Path:
    assert main(["train", "--corpus", str(corpus), "--out", str(out), *TINY, *extra]) == 0
    return out


@pytest.mark.parametrize("tied", [True, False])
def test_a_healthy_run_reports_nothing(tmp_path, corpus, tied):
    run = train(tmp_path / "run", corpus, *([] if tied else ["--untied"]))
    report = diagnose(run)
    assert [(f.status, f.key) for f in report.findings if f.status not in ("ok", "skipped")] == []
    optimizer = next(f for f in report.findings if f.check == "optimizer")
    assert optimizer.key == "optimizer.once"
    assert len(optimizer.data["entries_holding_vd"]) == (1 if tied else 2)
    ledger = next(f for f in report.findings if f.check == "ledger")
    assert ledger.key == ("ledger.shares" if tied else "ledger.not_tied_gpt")
    if tied:
        buckets = ledger.data["buckets"]
        assert ledger.data["sum_error"] <= 1e-6
        assert buckets["unseen"]["lookup_norm"] == 0.0  # never looked up: the head is all
        assert 0 < buckets["all"]["lookup_share"] < 1


def test_a_run_stopped_at_step_0_is_not_healthy_and_says_how_to_train_it(tmp_path, corpus,
                                                                        capsys):
    # `train --json | head -1`: the reader leaves at the start; the run saves a step-0
    # checkpoint and a model whose weights are the initialisation, which the tie, size and
    # row checks all find healthy. The doctor once said "0 problem(s)" on it. The pipe's
    # reader is gone before the run writes anything: a reader that reads one line and then
    # closes races the run's next write, which a busy machine can let through (the run then
    # trains up to its next event).
    run = tmp_path / "run"
    options = [o for o in TINY if o != "--quiet"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "minimodel", "train", "--corpus",
                               str(corpus), "--out", str(run), *options, "--json"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write_end)
    assert proc.returncode == 130 and (run / "model.safetensors").is_file(), proc.stderr

    report = diagnose(run)
    first = report.findings[0]
    assert (first.check, first.status, first.key) == ("training", "problem",
                                                      "training.never_trained")
    assert not report.healthy and report.keys("problem")[0] == "training.never_trained"
    capsys.readouterr()
    assert main(["doctor", str(run), "--lang", "es"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "nunca entrenó" in out and "paso 0 de 10" in out
    command = shlex.split(report.to_dict()["findings"][0]["fix"].split(": ", 1)[1])
    assert command == ["minimodel", "train", "--resume", "--out", str(run)]

    assert main([*command[1:], "--quiet"]) == 0   # the command it gives, as typed
    report = diagnose(run)
    assert report.healthy and "training" not in {f.check for f in report.findings}


def test_a_parameter_of_the_same_shape_as_E_is_not_mistaken_for_a_second_copy(tmp_path, corpus):
    # block_size = V = 256: the position table is 256 x 16 like E, and the optimizer holds both.
    run = train(tmp_path / "run", corpus, "--block-size", "256")
    optimizer = next(f for f in diagnose(run).findings if f.check == "optimizer")
    assert (optimizer.status, optimizer.values["entries"], optimizer.values["matrices"]) == \
        ("ok", 2, 2)


def _state_files(run: Path) -> tuple[Path, Path]:
    folder = next((run / "checkpoints").glob("step-*"))
    return folder / "train_state.json", folder / "train_state.npz"


@pytest.mark.parametrize("how", ["a second entry", "an index listed twice"])
def test_an_optimizer_holding_the_tied_matrix_twice_is_a_problem(tmp_path, corpus, how):
    run = train(tmp_path / "run", corpus)
    json_path, npz_path = _state_files(run)
    info = json.loads(json_path.read_text())
    groups = info["optimizer"]["param_groups"]
    E_index = 0  # the first matrix of the decayed group is token_emb.weight
    if how == "a second entry":
        # What an optimizer built from [E, *model.parameters()] saves: E's moments twice.
        new = 1 + max(i for g in groups for i in g["params"])
        groups[0]["params"].append(new)
        info["optimizer"]["scalars"][str(new)] = dict(info["optimizer"]["scalars"]["0"])
        with np.load(npz_path) as npz:
            arrays = {k: npz[k] for k in npz.files}
        arrays[f"opt.{new}.exp_avg"] = arrays[f"opt.{E_index}.exp_avg"].copy()
        arrays[f"opt.{new}.exp_avg_sq"] = arrays[f"opt.{E_index}.exp_avg_sq"].copy()
        np.savez(npz_path, **arrays)
    else:
        groups[1]["params"].append(E_index)
    json_path.write_text(json.dumps(info))
    report = diagnose(run)
    problems = [f for f in report.findings if f.status == "problem"]
    assert [f.key for f in problems] == ["optimizer.twice"]
    if how == "a second entry":
        assert problems[0].values["entries"] == 2
        found_en = words(problems[0].key, problems[0].values, "en")[0]
        found_es = words(problems[0].key, problems[0].values, "es")[0]
        assert found_en.endswith("weight decay 0.1, 0.1.")
        # a Spanish decimal comma; the list then takes '; ' (a comma would read as a decimal)
        assert found_es.endswith("decaimiento de pesos 0,1; 0,1.")
    else:
        assert problems[0].data["repeated_indices"] == [E_index]


def test_the_two_paths_add_up_to_the_tied_gradient_and_match_the_formulas():
    rng = np.random.default_rng(0)
    model = GPT(GPTConfig(vocab_size=40, block_size=8, n_layer=1, n_head=2, d_model=16),
                rng=rng).eval()
    x = rng.integers(0, 20, size=(3, 8))  # ids 20..39 never appear in the batch
    y = rng.integers(0, 20, size=(3, 8))
    ledger = gradient_ledger(model, x, y)
    assert ledger.sum_error <= 1e-6
    np.testing.assert_allclose(ledger.lookup + ledger.head, ledger.full, atol=1e-6)
    # The lookup path touches only the rows of the ids read; the head path moves every row.
    assert not np.any(ledger.lookup[20:]) and np.any(ledger.lookup[:20])
    assert np.all(np.linalg.norm(ledger.head, axis=1) > 0)
    # The head path by hand: dE_head = dlogits^T h with dlogits = (softmax - onehot) / N.
    h = model.hidden_states(x).data.reshape(-1, 16).astype(np.float64)  # (N, d)
    logits = h @ model.token_emb.weight.data.T.astype(np.float64)  # (N, V)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(p)), y.ravel()] -= 1
    np.testing.assert_allclose(ledger.head, (p / len(p)).T @ h, atol=1e-6)


def test_frequency_buckets_split_the_seen_ids_at_half_the_occurrences():
    counts = np.array([50, 30, 10, 5, 5, 0, 0])
    buckets = frequency_buckets(counts)
    assert buckets["frequent"].tolist() == [0]  # id 0 alone is half of the 100 occurrences
    assert sorted(buckets["seen"].tolist()) == [1, 2, 3, 4]
    assert buckets["unseen"].tolist() == [5, 6]
    from minimodel.doctor.ledger import Ledger

    ones = np.ones((7, 2))
    table = shares(Ledger(ones, 3 * ones, 4 * ones), buckets)
    assert table["all"]["lookup_share"] == pytest.approx(0.25)


def test_a_checkpoint_directory_of_a_run_is_accepted(tmp_path, corpus, capsys):
    run = train(tmp_path / "run", corpus)
    step = next((run / "checkpoints").glob("step-*"))
    report = diagnose(step)
    assert report.subject.files.kind == "minimodel" and report.healthy
    assert report.subject.vocab is not None  # the run's tokenizer, found from the checkpoint
    assert {f.key for f in report.findings if f.check == "optimizer"} == {"optimizer.once"}
    capsys.readouterr()
    assert main(["doctor", str(step)]) == 0


def test_a_byte_token_reads_the_same_in_a_run_and_in_a_hugging_face_vocabulary(tmp_path, corpus):
    from minimodel.data._pretokenize import bytes_to_unicode
    from minimodel.doctor.vocabulary import read_vocabulary

    run = train(tmp_path / "run", corpus)
    mine = diagnose(run).subject.vocab
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "vocab.json").write_text(json.dumps({bytes_to_unicode()[b]: b for b in range(256)}),
                                   encoding="utf-8")
    (hf / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    theirs = read_vocabulary(hf / "vocab.json")
    assert theirs.tokens[0x88] == "Ī" and theirs.text(0x88) == mine.text(0x88) == "\\x88"
    assert theirs.text(ord(" ")) == mine.text(ord(" ")) == " "  # not 'Ġ'
