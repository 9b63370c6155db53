"""Property tests: decode(encode(s)) == s for any text, for both tokenizers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.data import BPETokenizer, ByteTokenizer, load_corpus

SPECIALS = ("[PAD]", "[MASK]")

# Arbitrary text (Hypothesis never generates lone surrogates here), plus text biased towards
# the interesting cases: accents, combining marks, emoji with ZWJ, CJK, odd whitespace and
# special-token strings glued to words.
PIECES = st.sampled_from(
    ["é", "e\u0301", "ñ", "ß", "😀", "👩\u200d👩\u200d👧", "中文", "²", "\u00a0", "\u3000",
     "\r\n", "\t", "  ", "'s", "'LL", "[MASK]", "[PAD]", "[MA", "K]", " the", "123", "_"]
)
TEXT = st.one_of(st.text(), st.lists(st.one_of(PIECES, st.text(max_size=3))).map("".join))


@pytest.fixture(scope="module")
def bpe() -> BPETokenizer:
    # Train on Shakespeare plus some non-ASCII so merges inside multi-byte characters exist.
    text = load_corpus()[:50_000] + " café naïve 😀😀 中文中文 " * 20
    return BPETokenizer.train(text, 450, special_tokens=SPECIALS)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_byte_round_trip(text: str):
    tok = ByteTokenizer(special_tokens=SPECIALS)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.decode(tok.encode(text, allowed_special=False)) == text
    assert len(tok.encode(text, allowed_special=False)) == len(text.encode("utf-8"))


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_bpe_round_trip(bpe: BPETokenizer, text: str):
    ids = bpe.encode(text)
    assert all(0 <= i < bpe.vocab_size for i in ids)
    assert bpe.decode(ids) == text
    assert bpe.decode(bpe.encode(text, allowed_special=False)) == text
    # Specials are recognised exactly where their full string occurs.
    assert ids.count(bpe.mask_id) == text.count("[MASK]")


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_bpe_encode_is_concatenation_over_special_boundaries(bpe: BPETokenizer, text: str):
    # A special token is a hard boundary: encoding around it equals encoding each side.
    joined = bpe.encode(text + "[PAD]" + text)
    assert joined == bpe.encode(text) + [bpe.pad_id] + bpe.encode(text)
