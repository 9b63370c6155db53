"""CBOW word vocabulary and examples; word-similarity loaders; the data package's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from minimodel.data import (
    WordVocab,
    build_word_vocab,
    cbow_examples,
    iter_cbow_batches,
    load_corpus,
    load_word_similarity,
)

DATA_PKG = Path(__file__).resolve().parents[2] / "src" / "minimodel" / "data"


def test_word_vocab_orders_by_frequency_with_unk_zero():
    vocab = build_word_vocab("The cat; the DOG. the cat o'er 42 dog_s")
    assert vocab.itos[:4] == ["[UNK]", "the", "cat", "dog"]
    assert vocab.unk_id == 0 and vocab.id_of("The") == 1
    # "dog_s" splits into "dog" + "s" ("_" and digits are not word characters)
    assert vocab.itos[4:] == ["o'er", "s"] and vocab.vocab_size == 6
    assert "o'er" in vocab and "42" not in vocab
    assert vocab.encode_words("the zebra cat").tolist() == [1, 0, 2]
    assert vocab.encode_words(["The", "cat"]).tolist() == [1, 2]
    assert vocab.decode([1, 0]) == ["the", "[UNK]"]
    assert WordVocab.from_dict(vocab.to_dict()).itos == vocab.itos


def test_word_vocab_min_count_and_max_size():
    text = "a a a b b c"
    assert build_word_vocab(text, min_count=2).itos == ["[UNK]", "a", "b"]
    assert build_word_vocab(text, max_size=2).itos == ["[UNK]", "a"]
    with pytest.raises(ValueError, match="no word occurs at least min_count=5 times"):
        build_word_vocab(text, min_count=5)


def test_word_vocab_on_corpus_is_fast_and_sane():
    assert build_word_vocab(load_corpus(), min_count=5).vocab_size == 3210
    vocab = build_word_vocab(load_corpus(), min_count=5, max_size=2000)
    assert vocab.vocab_size == 2000
    assert vocab.itos[1] == "the"
    assert {"king", "love", "death"} <= set(vocab.itos)


def test_cbow_examples_layout():
    contexts, targets = cbow_examples(np.arange(10), window=2)
    assert contexts.shape == (6, 4) and targets.shape == (6,)
    assert targets.tolist() == [2, 3, 4, 5, 6, 7]
    assert contexts[0].tolist() == [0, 1, 3, 4]
    assert contexts[-1].tolist() == [5, 6, 8, 9]
    with pytest.raises(ValueError, match="4 words are too few for window=2: need at least 5"):
        cbow_examples(np.arange(4), window=2)


def test_iter_cbow_batches_covers_each_example_once():
    contexts, targets = cbow_examples(np.arange(103), window=1)
    batches = list(iter_cbow_batches(contexts, targets, 16, rng=0))
    assert [len(t) for _, t in batches] == [16] * 6 + [5]
    seen = np.concatenate([t for _, t in batches])
    assert sorted(seen.tolist()) == targets.tolist() and not np.array_equal(seen, targets)
    for c, t in batches:
        assert np.array_equal(c[:, 0], t - 1) and np.array_equal(c[:, 1], t + 1)
    again = np.concatenate([t for _, t in iter_cbow_batches(contexts, targets, 16, rng=0)])
    assert np.array_equal(seen, again)
    assert len(list(iter_cbow_batches(contexts, targets, 16, rng=0, drop_last=True))) == 6


def test_word_similarity_sets_load_with_real_counts():
    simlex = load_word_similarity("simlex999")
    ws = load_word_similarity("wordsim353")
    assert len(simlex) == 999 and len(ws) == 353
    assert simlex[0] == ("old", "new", 1.58)
    assert ws[0] == ("love", "sex", 6.77)
    assert ("jerusalem", "israel", 8.46) in ws  # lower-cased
    assert all(0.0 <= s <= 10.0 for _, _, s in simlex + ws)


def test_word_similarity_errors(tmp_path):
    with pytest.raises(ValueError, match=r"unknown word-similarity set 'men'.*simlex999"):
        load_word_similarity("men")
    bad = tmp_path / "bad.tsv"
    bad.write_text("# header\ncat\tdog\tfive\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv line 2: score 'five' is not a number"):
        load_word_similarity(bad)
    good = tmp_path / "good.tsv"
    good.write_text("Cat\tDog\t7.5\n", encoding="utf-8")
    assert load_word_similarity(good) == [("cat", "dog", 7.5)]


def test_data_package_imports_only_numpy_stdlib_and_itself():
    # minimodel.data must work without the autograd engine (it is imported by the CLI and
    # by tests before a model exists), so it may only import numpy, the standard library,
    # its own modules and the stdlib-only minimodel._fileio and minimodel.labels.
    import sys

    allowed_roots = set(sys.stdlib_module_names) | {"numpy", "__future__"}
    for path in DATA_PKG.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                ok = name.split(".")[0] in allowed_roots or name.startswith("minimodel.data")
                ok = ok or name in ("minimodel._fileio", "minimodel.labels")
                assert ok, f"{path.name} imports {name}"
