"""CBOW vectors to the word-vector ecosystem: word2vec text/binary (read by gensim) and the
Embedding Projector's TSV pair; same nearest neighbours after the round trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors

import minimodel as mm
from minimodel.cli import main
from minimodel.diagnostics import nearest_neighbours
from minimodel.interop.word2vec import export_word2vec, load_word2vec, word2vec_bytes

QUERIES = ("king", "love", "night", "good", "lord")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("w2v")
    for name, extra in (("cbow", []), ("cbow-tied", ["--tied"]), ("gpt", ["--model", "gpt"])):
        args = ["train", "--out", str(root / name), "--steps", "30", "--quiet", "--threads", "1",
                "--eval-interval", "30"]
        if name.startswith("cbow"):
            args += ["--model", "cbow", *extra]
        else:
            args += [*extra, "--tokenizer", "byte", "--d-model", "16", "--n-layer", "1",
                     "--n-head", "2", "--block-size", "16", "--batch-size", "4"]
        assert main(args) == 0
    return {"root": root, "cbow": root / "cbow", "tied": root / "cbow-tied", "gpt": root / "gpt"}


def _words(run: Path) -> list[str]:
    return ["[UNK]"] + json.loads((run / "tokenizer.json").read_text())["words"]


@pytest.mark.parametrize("fmt, binary", [("word2vec", False), ("word2vec-bin", True)])
def test_gensim_reads_the_export_with_the_same_neighbours(runs, capsys, fmt, binary):
    out = runs["root"] / f"vectors.{fmt}"
    assert main(["export", str(runs["cbow"]), "--format", fmt, str(out)]) == 0
    assert "load_word2vec_format" in capsys.readouterr().out
    model = mm.load(runs["cbow"] / "model.safetensors")
    matrix = model.get_input_embeddings().weight.data
    kv = KeyedVectors.load_word2vec_format(str(out), binary=binary)
    assert kv.index_to_key == _words(runs["cbow"])
    np.testing.assert_allclose(kv.vectors, matrix, rtol=1e-6, atol=1e-7)  # float32 both ways
    for word in QUERIES:
        ours = [kv.index_to_key[j] for j, _ in nearest_neighbours(matrix, kv.key_to_index[word], 10)]
        theirs = [w for w, _ in kv.most_similar(word, topn=10)]
        assert ours == theirs, word


def test_output_vectors_of_an_untied_model_and_refusal_for_a_tied_one(runs, capsys):
    out = runs["root"] / "out.bin"
    assert main(["export", str(runs["cbow"]), "--format", "word2vec-bin", str(out),
                 "--vectors", "output"]) == 0
    model = mm.load(runs["cbow"] / "model.safetensors")
    _, vectors = load_word2vec(out)
    np.testing.assert_array_equal(vectors, model.lm_head.weight.data.astype(np.float32))
    code = main(["export", str(runs["tied"]), "--format", "word2vec", str(runs["root"] / "t.txt"),
                 "--vectors", "output"])
    assert code == 2 and "this model is tied" in capsys.readouterr().err


def test_projector_pair_for_any_model(runs, capsys):
    out = runs["root"] / "projector"
    assert main(["export", str(runs["gpt"]), "--format", "projector", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    model = mm.load(runs["gpt"] / "model.safetensors")
    vectors = np.loadtxt(out / "vectors.tsv", delimiter="\t")
    labels = (out / "metadata.tsv").read_text(encoding="utf-8").split("\n")[:-1]
    assert payload["shape"] == list(vectors.shape) == [model.config.vocab_size, 16]
    assert len(labels) == vectors.shape[0]
    np.testing.assert_allclose(vectors, model.token_emb.weight.data, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("binary", [False, True])
def test_own_reader_round_trips_exactly(tmp_path, binary):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((6, 5)).astype(np.float32)
    words = ["a", "b", "cañón", "d'e", "[UNK]", "x"]
    path = export_word2vec(vectors, words, tmp_path / "v", binary=binary)
    got_words, got = load_word2vec(path)          # format guessed from the content
    assert got_words == words
    np.testing.assert_array_equal(got, vectors)


@pytest.mark.parametrize("words, vectors, message", [
    (["a", "b c"], np.zeros((2, 3)), "contains whitespace"),
    (["a", ""], np.zeros((2, 3)), "is empty"),
    (["a", "a"], np.zeros((2, 3)), "must be unique"),
    (["a"], np.zeros((2, 3)), "1 words for 2 vectors"),
    (["a", "b"], np.array([[0.0, np.nan], [1, 2]]), "NaN or Inf"),
    (["a"], np.zeros(3), "2-D"),
])
def test_words_that_would_break_the_format_are_refused(words, vectors, message):
    with pytest.raises(ValueError, match=message):
        word2vec_bytes(vectors, words)


def test_damaged_files_are_named(tmp_path):
    data = word2vec_bytes(np.ones((3, 4), dtype=np.float32), ["a", "b", "c"], binary=True)
    (tmp_path / "cut.bin").write_bytes(data[:-10])
    with pytest.raises(ValueError, match=r"cut.bin: row 3 of 3 is cut short"):
        load_word2vec(tmp_path / "cut.bin", binary=True)
    (tmp_path / "bad.txt").write_text("three 4\n")
    with pytest.raises(ValueError, match="bad.txt: the first line must be"):
        load_word2vec(tmp_path / "bad.txt")


@pytest.mark.parametrize("args, words", [
    (["{gpt}", "--format", "word2vec", "{root}/g.txt"], "the word2vec formats are for CBOW"),
    (["{cbow}", "--format", "word2vec", "{root}"], "is a folder; give a file name"),
    (["{cbow}", "--format", "hf", "{root}/h", "--vectors", "output"],
     "--vectors applies to the word2vec and projector formats"),
])
def test_export_bad_input(runs, capsys, args, words):
    argv = ["export", *[a.format(**{k: str(v) for k, v in runs.items()}) for a in args]]
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_existing_output_needs_force(runs, capsys):
    out = runs["root"] / "twice.txt"
    assert main(["export", str(runs["cbow"]), "--format", "word2vec", str(out)]) == 0
    assert main(["export", str(runs["cbow"]), "--format", "word2vec", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["export", str(runs["cbow"]), "--format", "word2vec", str(out), "--force"]) == 0
