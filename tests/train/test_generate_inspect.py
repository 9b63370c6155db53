"""`minimodel generate` and `minimodel inspect` on tiny trained checkpoints."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from minimodel.cli import main

TINY_ARGS = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
             "--block-size", "16", "--batch-size", "4", "--steps", "10", "--eval-interval", "10",
             "--eval-batches", "1", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def runs(module_corpus, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for name, extra in (("tied", []), ("untied", ["--untied"]),
                        ("cbow", ["--model", "cbow", "--min-count", "1"])):
        args = [a for a in TINY_ARGS if name != "cbow" or a not in ("--tokenizer", "byte")]
        if name == "cbow":
            args = [a for a in args]
            for flag in ("--n-layer", "--n-head", "--block-size"):
                i = args.index(flag)
                del args[i:i + 2]
        assert main(["train", "--corpus", str(module_corpus), "--out", str(root / name),
                     *args, *extra]) == 0
        out[name] = root / name
    return out


def test_generate_prints_prompt_and_continuation(runs, capsys):
    assert main(["generate", str(runs["tied"]), "--prompt", "ROMEO:", "--max-new-tokens", "12",
                 "--seed", "3"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("ROMEO:") and len(first.rstrip("\n")) > len("ROMEO:")
    assert main(["generate", str(runs["tied"] / "model.safetensors"), "--prompt", "ROMEO:",
                 "--max-new-tokens", "12", "--seed", "3"]) == 0
    assert capsys.readouterr().out == first  # same seed, same text


def test_generate_json_and_greedy(runs, capsys):
    args = ["generate", str(runs["untied"]), "--prompt", "the ", "--max-new-tokens", "8",
            "--temperature", "0", "--json"]
    assert main(args) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    b = json.loads(capsys.readouterr().out)
    assert a == b and len(a["new_ids"]) == 8 and a["text"] == a["prompt"] + a["continuation"]


@pytest.mark.parametrize("args, message", [
    (["--prompt", ""], "--prompt is empty"),
    (["--prompt", "x", "--temperature", "-1"], "--temperature must be a finite number >= 0"),
])
def test_generate_argument_errors(runs, args, message, capsys):
    assert main(["generate", str(runs["tied"]), *args]) == 2
    assert message in capsys.readouterr().err


def test_generate_refuses_vocab_mismatch_and_non_gpt(runs, tmp_path, capsys):
    import shutil

    from minimodel.data import ByteTokenizer

    broken = tmp_path / "broken"
    shutil.copytree(runs["tied"], broken)
    ByteTokenizer(special_tokens=("[PAD]", "[MASK]")).save(broken / "tokenizer.json")
    assert main(["generate", str(broken), "--prompt", "a"]) == 2
    err = capsys.readouterr().err
    assert "vocab_size=256" in err and "vocab_size=258" in err and "Traceback" not in err
    assert main(["inspect", str(broken)]) == 2
    assert "vocab_size=258" in capsys.readouterr().err
    assert main(["generate", str(runs["cbow"]), "--prompt", "a"]) == 2
    assert "needs a GPT" in capsys.readouterr().err
    assert main(["generate", str(tmp_path / "nowhere"), "--prompt", "a"]) == 2
    assert "nowhere: no such file or directory" in capsys.readouterr().err


def test_inspect_json_tied(runs, capsys):
    assert main(["inspect", str(runs["tied"]), "--json", "--neighbours", "e", "T", "--k", "3"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["model"] == "GPT" and r["tied"] is True and r["train_step"] == "10"
    assert r["tie_groups"] == [["token_emb.weight", "lm_head.weight"]]
    p = r["parameters"]
    assert p["saved_by_tying"] == 256 * 16
    assert p["parameters_if_untied"] == p["parameters"] + 256 * 16
    assert sum(t["count"] for t in r["tensors"]) == p["parameters"]
    assert r["memory"]["weights_bytes"] == 4 * p["parameters"]
    assert 1.0 <= r["embedding"]["effective_rank"] <= 16 and r["head"] is None
    assert 1.0 <= r["embedding"]["participation_ratio"] <= 16
    assert set(r["neighbours"]) == {"e", "T"}
    near = r["neighbours"]["e"]
    assert len(near) == 3 and all(-1 <= n["cosine"] <= 1 for n in near)
    assert [n["cosine"] for n in near] == sorted((n["cosine"] for n in near), reverse=True)
    assert "e" not in [n["token"] for n in near]


def test_inspect_untied_and_text_output(runs, capsys):
    assert main(["inspect", str(runs["untied"]), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["tied"] is False and r["tie_groups"] == [] and r["head"] is not None
    assert r["parameters"]["saved_by_tying"] == 0 and r["neighbours"]  # default queries
    assert main(["inspect", str(runs["tied"])]) == 0
    text = capsys.readouterr().out
    assert "lm_head.weight" in text and "effective rank" in text and "nearest neighbours" in text


def test_inspect_neighbour_errors_and_cbow_words(runs, capsys):
    assert main(["inspect", str(runs["tied"]), "--neighbours", "hello"]) == 2
    assert "is 5 tokens" in capsys.readouterr().err
    assert main(["inspect", str(runs["cbow"]), "--json", "--neighbours", "the", "--k", "2"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["model"] == "CBOW" and r["tokenizer"]["type"] == "word"
    assert len(r["neighbours"]["the"]) == 2 and not math.isnan(r["embedding"]["effective_rank"])
    assert main(["inspect", str(runs["cbow"]), "--neighbours", "qwertyuiop"]) == 2
    assert "not in the word vocabulary" in capsys.readouterr().err


def test_cbow_run_reports_word_similarity(runs):
    ws = json.loads((runs["cbow"] / "word_similarity.json").read_text())
    for which in ("input", "output"):
        for name in ("simlex999", "wordsim353"):
            r = ws[which][name]
            assert r["covered"] + r["unseen"] == r["pairs"]
            assert r["unseen"] > 0 and r["unseen_pairs"]  # listed, not dropped
    summary = json.loads((runs["cbow"] / "summary.json").read_text())
    assert summary["word_similarity"]["input"]["simlex999"]["pairs"] == 999
