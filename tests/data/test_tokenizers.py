"""ByteTokenizer / BPETokenizer: vocab accounting, specials, training, files, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from minimodel.data import (
    BPETokenizer,
    ByteTokenizer,
    Tokenizer,
    check_vocab_match,
    load_corpus,
    load_tokenizer,
)

SPECIALS = ("[PAD]", "[MASK]")


@pytest.fixture(scope="module")
def corpus() -> str:
    return load_corpus()


@pytest.fixture(scope="module")
def small_bpe(corpus: str) -> BPETokenizer:
    return BPETokenizer.train(corpus[:100_000], 400, special_tokens=SPECIALS)


# ----------------------------------------------------------------------------- ByteTokenizer
def test_byte_tokenizer_ids_are_bytes_and_specials_follow():
    tok = ByteTokenizer(special_tokens=SPECIALS)
    assert tok.vocab_size == 258 == len(tok)
    assert tok.special_tokens == {"[PAD]": 256, "[MASK]": 257}
    assert (tok.pad_id, tok.mask_id) == (256, 257)
    assert tok.encode("hé") == [104, 0xC3, 0xA9]
    assert tok.encode("a[MASK]b") == [97, 257, 98]
    assert tok.encode("a[MASK]b", allowed_special=False) == list(b"a[MASK]b")
    assert tok.decode([97, 257, 98]) == "a[MASK]b"
    assert tok.id_to_token_bytes(257) == b"[MASK]"
    assert tok.id_to_token_bytes(65) == b"A"


def test_byte_tokenizer_without_specials_has_no_pad_or_mask():
    tok = ByteTokenizer()
    assert tok.vocab_size == 256
    assert tok.pad_id is None and tok.mask_id is None
    with pytest.raises(ValueError, match=r"no special token '\[PAD\]'"):
        tok.token_to_id("[PAD]")


def test_invalid_special_tokens_are_refused():
    with pytest.raises(TypeError, match="sequence of strings"):
        ByteTokenizer(special_tokens="[PAD]")
    with pytest.raises(ValueError, match="unique"):
        ByteTokenizer(special_tokens=("[PAD]", "[PAD]"))
    with pytest.raises(ValueError, match="non-empty"):
        ByteTokenizer(special_tokens=("",))


def test_allowed_special_subset():
    tok = ByteTokenizer(special_tokens=SPECIALS)
    assert tok.encode("[PAD][MASK]", allowed_special={"[MASK]"}) == list(b"[PAD]") + [257]
    with pytest.raises(ValueError, match="not special tokens"):
        tok.encode("x", allowed_special={"[CLS]"})


def test_decode_rejects_out_of_range_ids_and_replaces_partial_utf8():
    tok = ByteTokenizer()
    with pytest.raises(ValueError, match=r"token id 300 is out of range .*vocab_size=256"):
        tok.decode([65, 300])
    with pytest.raises(ValueError, match=r"token id -1"):
        tok.decode([-1])
    assert tok.decode([0xC3]) == "\ufffd"  # a cut-off "é" does not crash
    assert tok.decode(np.array([104, 105])) == "hi"


def test_encode_refuses_lone_surrogate():
    with pytest.raises(ValueError, match="lone surrogate U\\+D800 at index 1"):
        ByteTokenizer().encode("a\ud800")


# ----------------------------------------------------------------------------- BPE training
def test_bpe_vocab_accounting_includes_bytes_and_specials(small_bpe: BPETokenizer):
    assert small_bpe.vocab_size == 400 == len(small_bpe)
    assert small_bpe.special_tokens == {"[PAD]": 256, "[MASK]": 257}
    # 400 = 256 bytes + 2 specials + 142 learned tokens, and every id decodes.
    assert len(small_bpe.merges) == 142
    assert max(small_bpe.encode(load_corpus()[:20_000])) < 400
    assert small_bpe.id_to_token_bytes(258) == b" t"  # most frequent pair in Shakespeare


def test_bpe_too_small_vocab_names_minimum():
    with pytest.raises(ValueError, match=r"vocab_size=257 is too small: the minimum is 258"):
        BPETokenizer.train("hello world", 257, special_tokens=SPECIALS)
    assert BPETokenizer.train("hello", 258, special_tokens=SPECIALS).vocab_size == 258


def test_bpe_too_large_vocab_names_reachable_size():
    # Words "ab" and " ab": merge a+b, then " "+ab; after that every word is one token.
    with pytest.raises(ValueError, match=r"supports at most vocab_size=258 .*asked for 1000"):
        BPETokenizer.train("ab ab", 1000)


def test_bpe_training_is_deterministic(corpus: str):
    a = BPETokenizer.train(corpus[:30_000], 320)
    b = BPETokenizer.train(corpus[:30_000], 320)
    assert a.merges == b.merges and a == b


def test_bpe_merges_do_not_depend_on_specials(corpus: str):
    plain = BPETokenizer.train(corpus[:30_000], 300)
    special = BPETokenizer.train(corpus[:30_000], 302, special_tokens=SPECIALS)
    assert plain.merges == special.merges
    shifted = [i + 2 if i >= 256 else i for i in plain.encode("the king")]
    assert special.encode("the king") == shifted


def test_bpe_training_ignores_special_tokens_in_text():
    text = "[MASK]" * 50 + " hello hello"
    tok = BPETokenizer.train(text, 262, special_tokens=SPECIALS)
    learned = [tok.id_to_token_bytes(i) for i in range(258, tok.vocab_size)]
    assert not any(b"MASK" in t or b"[" in t for t in learned), learned


def test_bpe_encode_compresses_and_round_trips(small_bpe: BPETokenizer, corpus: str):
    sample = corpus[100_000:110_000]
    ids = small_bpe.encode(sample)
    assert len(ids) < 0.6 * len(sample.encode())
    assert small_bpe.decode(ids) == sample


def test_bpe_progress_callback_reports_every_new_token(corpus: str):
    calls: list[tuple[int, int]] = []
    BPETokenizer.train(corpus[:20_000], 266, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(k, 10) for k in range(1, 11)]


def test_bpe_special_tokens_encode_as_single_ids(small_bpe: BPETokenizer):
    ids = small_bpe.encode("to be[MASK] or not[PAD]")
    assert ids.count(257) == 1 and ids.count(256) == 1
    assert small_bpe.decode(ids) == "to be[MASK] or not[PAD]"
    assert 257 not in small_bpe.encode("[MASK]", allowed_special=False)


def test_merges_must_be_in_rank_order():
    with pytest.raises(ValueError, match=r"merge #0 .*neither a byte nor produced"):
        BPETokenizer([(b"ab", b"c")])
    tok = BPETokenizer([(b"a", b"b"), (b"ab", b"c")])
    assert tok.encode("abc abd") == [257, 32, 256, 100]


# ----------------------------------------------------------------------------- files
def test_save_load_round_trip(tmp_path, small_bpe: BPETokenizer):
    path = small_bpe.save(tmp_path / "tok.json")
    loaded = BPETokenizer.load(path)
    assert loaded == small_bpe
    assert loaded.merges == small_bpe.merges
    assert loaded.encode("Wherefore art thou?") == small_bpe.encode("Wherefore art thou?")
    assert isinstance(load_tokenizer(path), BPETokenizer)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["type"] == "bpe" and data["vocab_size"] == 400
    assert data["merges"][0] == ["Ġ", "t"]  # stored in GPT-2's byte alphabet
    assert not list(tmp_path.glob(".tok.json.*"))  # atomic write left no temp file


def test_load_tokenizer_dispatches_on_type(tmp_path):
    path = ByteTokenizer(special_tokens=SPECIALS).save(tmp_path / "byte.json")
    tok = load_tokenizer(path)
    assert type(tok) is ByteTokenizer and tok.vocab_size == 258
    assert type(Tokenizer.load(path)) is ByteTokenizer
    with pytest.raises(ValueError, match=r"holds a 'byte' tokenizer, not 'bpe'.*load_tokenizer"):
        BPETokenizer.load(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"format": "minimodel-tokenizer", "vers', r"invalid JSON .*line 1"),
        ('{"model": {"type": "BPE"}}', r"not a minimodel tokenizer file \(it looks like a Hugging"),
        ("[1, 2, 3]", r"not a minimodel tokenizer file"),
        (
            '{"format": "minimodel-tokenizer", "version": 99, "type": "bpe"}',
            r"version 99; this minimodel reads version 1",
        ),
    ],
)
def test_load_refuses_foreign_or_corrupt_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        load_tokenizer(path)
    assert str(path) in str(info.value)


def test_load_refuses_binary_file(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x80\x00\xff\x10")
    with pytest.raises(ValueError, match=r"model.safetensors is not a tokenizer file: byte 0"):
        load_tokenizer(path)


def test_load_refuses_tampered_contents(tmp_path, small_bpe: BPETokenizer):
    data = small_bpe.to_dict()
    wrong_size = dict(data, vocab_size=401)
    (tmp_path / "a.json").write_text(json.dumps(wrong_size), encoding="utf-8")
    with pytest.raises(ValueError, match=r"says vocab_size=401 but its contents give 400"):
        load_tokenizer(tmp_path / "a.json")
    bad_merge = dict(data, merges=[["zz", "q"]] + data["merges"])
    (tmp_path / "b.json").write_text(json.dumps(bad_merge), encoding="utf-8")
    with pytest.raises(ValueError, match=r"b.json: merge #0 .*neither a byte"):
        load_tokenizer(tmp_path / "b.json")
    bad_char = dict(data, merges=[[" ", "t"]])  # a raw space is not in GPT-2's alphabet
    (tmp_path / "c.json").write_text(json.dumps(bad_char), encoding="utf-8")
    with pytest.raises(ValueError, match=r"c.json: merge #0: .*not in GPT-2's byte alphabet"):
        load_tokenizer(tmp_path / "c.json")
    bad_ids = dict(data, special_tokens={"[PAD]": 300})
    (tmp_path / "d.json").write_text(json.dumps(bad_ids), encoding="utf-8")
    with pytest.raises(ValueError, match=r"d.json: special token ids .*not 256, 257"):
        load_tokenizer(tmp_path / "d.json")


# ----------------------------------------------------------------------------- vocab checks
def test_check_vocab_match_names_both_sizes_and_the_fix():
    check_vocab_match(400, 400)
    with pytest.raises(ValueError) as info:
        check_vocab_match(512, 400, where="GPT token embedding")
    msg = str(info.value)
    assert "GPT token embedding" in msg and "vocab_size=512" in msg and "vocab_size=400" in msg
    assert "rebuild the model with vocab_size=400" in msg
    assert "use the tokenizer it was trained with" in msg


def test_id_to_token_str_shows_partial_bytes_escaped():
    tok = BPETokenizer.train("éé éé éé", 257)  # first merge: the two bytes of "é"
    assert tok.id_to_token_str(0xC3) == "\\xc3"
    # control characters are escaped too, once, the same way: one visible line per token
    assert [tok.id_to_token_str(b) for b in (0, 10, 0x18, 0x7F)] == ["\\x00", "\\n", "\\x18",
                                                                 "\\x7f"]
    assert tok.id_to_token_str(256) == "é"
