"""Bad input, command by command: one clear sentence on stderr naming what was wrong, the
right exit code (2), and never a traceback or a raw `[Errno N]` text (issue 15, sections 2-4)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from minimodel.cli import main

TINY = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "10", "--eval-interval", "5",
        "--eval-batches", "1", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """A corpus, a trained GPT run, a CBOW run, an HF export and a few odd files."""
    from minimodel.data import load_corpus

    root = tmp_path_factory.mktemp("world")
    corpus = root / "corpus.txt"
    corpus.write_text(load_corpus()[:12_000], encoding="utf-8")
    assert main(["train", "--corpus", str(corpus), "--out", str(root / "gpt"), *TINY]) == 0
    assert main(["train", "--model", "cbow", "--corpus", str(corpus), "--out",
                 str(root / "cbow"), "--min-count", "1", "--steps", "5", "--eval-interval", "5",
                 "--threads", "1", "--quiet"]) == 0
    assert main(["export", str(root / "gpt"), "--format", "hf", str(root / "hf")]) == 0
    (root / "a_file").write_text("not a directory")
    (root / "binary.txt").write_bytes(b"\x00\x01\x02\x03" * 100)
    (root / "garbage.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    (root / "empty_dir").mkdir()
    (root / "answers.json").write_text('{"q-13-01": 1}')
    (root / "loop").symlink_to(root / "loop")
    return {"root": root, "corpus": corpus, "gpt": root / "gpt", "cbow": root / "cbow",
            "hf": root / "hf"}


def case(*args, words, code=2):
    return pytest.param(list(args), words, code, id=" ".join(args)[:60])


CASES = [
    # ---- train
    case("train", "--lr", "nan", words="--lr must be a finite number, got nan"),
    case("train", "--lr", "inf", words="--lr must be a finite number, got inf"),
    case("train", "--lr", "0", words="--lr must be > 0, got 0"),
    case("train", "--lr", "-1", words="--lr must be > 0, got -1"),
    case("train", "--weight-decay", "nan", words="--weight-decay must be a finite number"),
    case("train", "--grad-clip=-inf", words="--grad-clip must be a finite number"),
    case("train", "--warmup", "50", "--steps", "20", words="--warmup 50 is beyond --steps 20"),
    case("train", "--steps", "0", words="--steps must be a positive integer, got 0"),
    case("train", "--batch-size", "-3", words="--batch-size must be a positive integer"),
    case("train", "--d-model", "30", "--n-head", "4", words="--d-model 30 must be divisible"),
    case("train", "--mask-prob", "0.2", words="--mask-prob does not apply to --model gpt"),
    case("train", "--model", "mlm", "--mask-prob", "1.5", words="--mask-prob must be in (0, 1], got 1.5"),
    case("train", "--vocab-size", "100", words="--vocab-size 100 is too small"),
    case("train", "--threads", "0", words="--threads expects 'auto' or a whole number ≥ 1, got '0'"),
    # (--out in the test's folder: the default runs/... would be shared by parallel tests)
    case("train", "--corpus", "{root}/missing.txt", "--out", "{root}/o1",
         words="missing.txt does not exist"),
    case("train", "--corpus", "{root}/empty_dir", "--out", "{root}/o2",
         words="empty_dir is a directory"),
    case("train", "--corpus", "{root}/loop", "--out", "{root}/o3",
         words="loop: it is a symbolic link loop"),
    case("train", "--corpus", "{root}/binary.txt", "--out", "{root}/o4", words="binary"),
    case("train", "--corpus", "{corpus}", "--out", "{root}/a_file",
         words="a_file is a file, not a directory"),
    case("train", "--corpus", "{corpus}", "--batch-size", "100000", "--block-size", "4096",
         "--out", "{root}/o5", words="GiB of memory"),
    case("train", "--resume", "--out", "{root}/empty_dir", words="nothing to resume"),
    case("train", "--corpus", "{corpus}", "--out", "{gpt}",
         words="already holds a finished run"),
    # ---- compare
    case("compare", "--resume", "--out", "{root}/empty_dir", words="nothing to resume"),
    case("compare", "--lr", "nan", words="--lr must be a finite number"),
    # ---- generate
    case("generate", "{root}/missing", "--prompt", "x", words="missing: no such file"),
    case("generate", "{root}/empty_dir", "--prompt", "x", words="has no model.safetensors"),
    case("generate", "{root}/garbage.safetensors", "--prompt", "x", words="corrupt or truncated"),
    case("generate", "{gpt}/tokenizer.json", "--prompt", "x",
         words="tokenizer.json is not a safetensors checkpoint (it looks like JSON); give "
               "model.safetensors or the run folder"),
    case("generate", "{gpt}", "--prompt", "", words="--prompt is empty"),
    case("generate", "{gpt}", "--prompt", "x", "--temperature", "nan",
         words="--temperature must be a finite number >= 0"),
    case("generate", "{gpt}", "--prompt", "x", "--temperature", "-1",
         words="--temperature must be a finite number >= 0"),
    case("generate", "{gpt}", "--prompt", "x", "--max-new-tokens", "-2",
         words="--max-new-tokens must be >= 0"),
    case("generate", "{gpt}", "--prompt", "x", "--top-k", "0", words="--top-k must be a positive"),
    case("generate", "{cbow}", "--prompt", "x", words="holds a CBOW model; generate needs a GPT"),
    # ---- inspect
    case("inspect", "{root}/missing.safetensors", words="missing.safetensors: no such file"),
    case("inspect", "{root}/loop", words="loop: it is a symbolic link loop"),
    case("inspect", "{root}/garbage.safetensors", words="corrupt or truncated"),
    # ---- export / import-hf
    case("export", "{root}/missing", "--format", "hf", "{root}/out1", words="missing: no such"),
    case("export", "{cbow}", "--format", "hf", "{root}/out2", words="--format word2vec"),
    case("export", "{gpt}", "--format", "hf", "{root}/a_file", words="a_file"),
    case("export", "{gpt}", "--format", "hf", "{root}/a_file/sub",
         words="a_file is a file, not a folder, so"),
    case("import-hf", "{root}/missing", "{root}/in1", words="is not a folder"),
    case("import-hf", "{root}/a_file", "{root}/in2", words="is not a folder"),
    case("import-hf", "{root}/empty_dir", "{root}/in3", words="config.json"),
    case("import-hf", "{hf}", "{root}/a_file", words="a_file is an existing file"),
    # ---- lab: quiz, exercise, break, lab (a file where the learner folder should be, folders
    # where files should be, unreadable answers, unknown ids)
    case("quiz", "take", "phase-13-embeddings", "--answers", "{root}/missing.json",
         words="cannot read answers file"),
    case("quiz", "take", "phase-13-embeddings", "--answers", "{root}/empty_dir",
         words="empty_dir is a directory; pass a JSON or YAML file"),
    case("quiz", "take", "phase-13-embeddings", "--answers", "{root}/binary.txt",
         words="is neither JSON nor YAML"),
    case("quiz", "take", "nope", "--answers", "{root}/answers.json", words="unknown quiz 'nope'"),
    case("quiz", "take", "phase-13-embeddings", "--answers", "{root}/answers.json",
         "--learner-dir", "{root}/a_file", words="a_file is a file, not a folder"),
    case("quiz", "review", "phase-13-embeddings", "--json", "--learner-dir", "{root}/a_file",
         words="a_file is a file, not a folder"),
    case("lab", "status", "--learner-dir", "{root}/a_file", words="a_file is a file, not a folder"),
    case("exercise", "start", "nope", words="unknown exercise 'nope'"),
    case("exercise", "start", "layer-norm", "--file", "{root}/a_file/x.py", "--learner-dir",
         "{root}/learner", words="a_file is a file, not a folder, so"),
    case("exercise", "start", "layer-norm", "--file", "{root}/empty_dir", "--force",
         "--learner-dir", "{root}/learner", words="empty_dir is a folder; pass --file"),
    case("exercise", "check", "layer-norm", "--file", "{root}/empty_dir", "--learner-dir",
         "{root}/learner", words="empty_dir is a folder"),
    case("exercise", "check", "layer-norm", "--file", "{root}/missing.py", "--learner-dir",
         "{root}/learner", words="missing.py does not exist; create it with"),
    case("exercise", "hint", "layer-norm", "--learner-dir", "{root}/a_file",
         words="a_file is a file, not a folder"),
    case("break", "start", "nope", "--workdir", "{root}/w", words="unknown break 'nope'"),
    case("break", "start", "tied-model-too-large", "--workdir", "{root}/a_file",
         words="a_file exists and is not a folder"),
    case("break", "check", "--workdir", "{root}/empty_dir", words="is not a break workspace"),
    case("break", "check", "--workdir", "{root}/empty_dir", "--seed", "-1",
         words="--seed expects a whole number from 0 to 2147483647, got '-1'"),
]


@pytest.mark.parametrize("args, words, code", CASES)
def test_bad_input_is_one_clear_sentence(world, args, words, code, capsys):
    argv = [a.format(**{k: str(v) for k, v in world.items()}) for a in args]
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse's own usage errors exit directly
        got = exc.code
    err = capsys.readouterr().err
    assert got == code, err
    assert words in err, err
    assert "Traceback" not in err and "[Errno" not in err
    # one "error: ..." line, or a refused option value's line and where the help is
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 or "usage:" in err or (
        len(err.splitlines()) == 2 and " --help" in err.splitlines()[1]), err
