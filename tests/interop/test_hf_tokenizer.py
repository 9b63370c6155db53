"""Tokenizer export/import: transformers' AutoTokenizer must produce minimodel's ids exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interop_helpers import VARIED_TEXTS

transformers = pytest.importorskip("transformers")

from minimodel.data import BPETokenizer, ByteTokenizer  # noqa: E402
from minimodel.data._pretokenize import bytes_to_unicode  # noqa: E402
from minimodel.interop import export_tokenizer, remap_vocab, tokenizer_from_hf  # noqa: E402

SPECIALS = ("[PAD]", "[MASK]", "<|endoftext|>")


def _auto(folder):
    return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def _with_specials(text: str, names) -> str:
    """Sprinkle every special into the text: at the start, mid-word, doubled, at the end."""
    if not names:
        return text
    a, b = names[0], names[-1]
    mid = len(text) // 2
    return f"{a}{text[:mid]}{b}{text[mid:]}x{a}{a} {b}"


@pytest.fixture(scope="module")
def exported(tmp_path_factory, small_bpe):
    """name -> (minimodel tokenizer, AutoTokenizer of its export)."""
    tokenizers = {
        "byte": ByteTokenizer(),
        "byte+specials": ByteTokenizer(special_tokens=SPECIALS),
        "bpe": small_bpe,
        "bpe-no-specials": BPETokenizer(small_bpe.merges),
    }
    out = {}
    for name, tok in tokenizers.items():
        folder = tmp_path_factory.mktemp(name.replace("+", "_"))
        export_tokenizer(tok, folder)
        out[name] = (tok, _auto(folder), folder)
    return out


@pytest.mark.parametrize("name", ["byte", "byte+specials", "bpe", "bpe-no-specials"])
def test_same_ids_on_varied_text(exported, corpus, name):
    tok, hf, _ = exported[name]
    assert len(hf) == tok.vocab_size  # no token silently added by transformers
    texts = VARIED_TEXTS + [corpus[60_000:64_000]]
    for text in texts:
        text = _with_specials(text, list(tok.special_tokens))
        ours = tok.encode(text)
        assert hf.encode(text) == ours, text
        assert hf(text)["input_ids"] == ours  # __call__ adds no BOS/EOS either
        assert hf.decode(ours) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=12), st.sampled_from(SPECIALS)), max_size=6))
def test_same_ids_on_random_text(exported, pieces):
    text = "".join(pieces)
    for name in ("byte+specials", "bpe"):
        tok, hf, _ = exported[name]
        try:
            ours = tok.encode(text)
        except ValueError:  # lone surrogates have no UTF-8 encoding: refused by both sides
            return
        assert hf.encode(text) == ours


def test_special_token_roles(exported):
    tok, hf, folder = exported["bpe"]
    assert (hf.eos_token, hf.bos_token, hf.pad_token, hf.mask_token) == (
        "<|endoftext|>", "<|endoftext|>", "[PAD]", "[MASK]")
    assert hf.unk_token is None
    assert (hf.eos_token_id, hf.pad_token_id, hf.mask_token_id) == (258, 256, 257)
    assert hf.decode(tok.encode("a[PAD]b"), skip_special_tokens=True) == "ab"
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert config["clean_up_tokenization_spaces"] is False


def test_no_specials_means_no_phantom_endoftext(exported):
    """GPT2Tokenizer defaults eos to '<|endoftext|>'; our export must not let it appear."""
    _, hf, _ = exported["byte"]
    assert hf.eos_token is None and len(hf) == 256
    assert hf.encode("<|endoftext|>") == list(b"<|endoftext|>")


def test_export_refuses_special_spelled_like_a_regular_token(tmp_path):
    tok = ByteTokenizer(special_tokens=("A",))  # "A" is also byte 65's spelling
    with pytest.raises(ValueError, match=r"special token 'A' has the same spelling"):
        export_tokenizer(tok, tmp_path)


# ----------------------------------------------------------------------------- import
@pytest.mark.parametrize("files", ["fast", "slow"])
def test_our_export_converts_back_with_identical_ids(tmp_path, small_bpe, files):
    export_tokenizer(small_bpe, tmp_path)
    if files == "slow":  # only vocab.json + merges.txt (+ config)
        (tmp_path / "tokenizer.json").unlink()
    result = tokenizer_from_hf(tmp_path)
    assert result.identity
    assert result.tokenizer == small_bpe


def _write_gpt2_ordered(folder, tok: BPETokenizer) -> dict[str, int]:
    """vocab.json/merges.txt laid out like GPT-2's own: printable bytes first, specials last."""
    vocab: dict[str, int] = {}
    for ch in bytes_to_unicode().values():  # GPT-2's byte order
        vocab[ch] = len(vocab)
    for line in tok.to_gpt2_merges():
        vocab.setdefault(line.replace(" ", ""), len(vocab))
    for name in tok.special_tokens:
        vocab[name] = len(vocab)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(tok.to_gpt2_merges())
                                       + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "GPT2Tokenizer", "unk_token": "<|endoftext|>",
         "eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>", "pad_token": "[PAD]",
         "mask_token": "[MASK]"}))
    return vocab


def test_gpt2_ordered_vocabulary_converts_with_a_permutation(tmp_path, small_bpe, corpus):
    vocab = _write_gpt2_ordered(tmp_path / "slow", small_bpe)
    result = tokenizer_from_hf(tmp_path / "slow")
    assert not result.identity and result.tokenizer == small_bpe
    assert result.hf_ids[ord("!")] == 0 and result.hf_ids[258] == vocab["<|endoftext|>"]
    hf = _auto(tmp_path / "slow")
    text = _with_specials(corpus[:3000] + VARIED_TEXTS[8], SPECIALS)
    assert hf.encode(text) == result.hf_ids[small_bpe.encode(text)].tolist()
    # transformers 5 saves only tokenizer.json: the fast reader gives the same result.
    hf.save_pretrained(str(tmp_path / "fast"))
    fast = tokenizer_from_hf(tmp_path / "fast")
    assert fast.tokenizer == small_bpe and np.array_equal(fast.hf_ids, result.hf_ids)


def test_tokenizer_trained_by_hf_tokenizers_converts(tmp_path, corpus):
    """A genuinely foreign tokenizer: trained by the `tokenizers` library, its own id order."""
    tk = pytest.importorskip("tokenizers")
    hf = tk.Tokenizer(tk.models.BPE())
    hf.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>"],
                                     initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
                                     show_progress=False)
    hf.train_from_iterator([corpus[:100_000]], trainer)
    hf.save(str(tmp_path / "tokenizer.json"))
    result = tokenizer_from_hf(tmp_path)
    assert not result.identity and result.tokenizer.vocab_size == 700
    assert result.tokenizer.special_tokens == {"<|endoftext|>": 256}
    text = corpus[100_000:130_000] + "".join(VARIED_TEXTS) + "<|endoftext|>"
    assert hf.encode(text).ids == result.hf_ids[result.tokenizer.encode(text)].tolist()


def test_unregistered_vocabulary_entries_are_refused(tmp_path, small_bpe):
    """A vocab entry no merge makes and no config registers is never produced by transformers."""
    _write_gpt2_ordered(tmp_path, small_bpe)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    del config["mask_token"]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"entries \['\[MASK\]'\] are neither bytes"):
        tokenizer_from_hf(tmp_path)


def test_remap_vocab_moves_rows_and_keeps_the_tie(make_gpt):
    model = make_gpt(6, 4, 1, 1, 8, tied=True)
    before = model.token_emb.weight.data.copy()
    perm = np.array([3, 0, 5, 1, 2, 4])
    remap_vocab(model, perm)
    np.testing.assert_array_equal(model.token_emb.weight.data, before[perm])
    assert model.lm_head.weight is model.token_emb.weight
    with pytest.raises(ValueError, match=r"tokenizer has 5 tokens but the model's embedding "
                                         r"has 6 rows"):
        remap_vocab(model, perm[:5])


@pytest.mark.parametrize("edit, message", [
    ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True}}, r"prefix space"),
    ({"pre_tokenizer": {"type": "Whitespace"}}, r"pre-tokenizer 'Whitespace'"),
    ({"normalizer": {"type": "NFC"}}, r"normalizer"),
    ({"model": {"type": "WordPiece", "vocab": {}}}, r"model type 'WordPiece'"),
    ({"post_processor": {"type": "RobertaProcessing"}}, r"adds tokens to every input"),
])
def test_unconvertible_tokenizers_are_refused(tmp_path, small_bpe, edit, message):
    export_tokenizer(small_bpe, tmp_path)
    data = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    data.update(edit)
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"cannot convert the tokenizer .*" + message):
        tokenizer_from_hf(tmp_path)
