"""Export a minimodel tokenizer so Hugging Face ``AutoTokenizer`` produces the very same ids.

Our id layout (``minimodel.data``): ids 0..255 are the byte values, the special tokens come
next (256, 257, ...), then the BPE merges in the order they were learned. GPT-2's own files
order the 256 base bytes differently ("!" is id 0), so we always write an explicit
``vocab.json`` with *our* ids rather than reuse GPT-2's table.

Files written (all read by ``transformers`` 4.40+ and 5.x):

* ``tokenizer.json``        the fast-tokenizer description (``tokenizers`` library): a byte-level
                            BPE model, GPT-2's pre-tokeniser (ByteLevel, ``add_prefix_space``
                            off, GPT-2 regex), and our specials as *added tokens* with fixed ids,
                            so they are matched in raw text before pre-tokenisation, like ours;
* ``vocab.json`` + ``merges.txt``  the same vocabulary for slow tokenizers and other tools;
* ``tokenizer_config.json`` + ``special_tokens_map.json``  which special plays which role.

Why every role is written, even as ``null``: ``GPT2Tokenizer`` defaults unk/bos/eos to
``"<|endoftext|>"``; left unset, transformers would *add* that string as a new token (id V),
so the tokenizer would no longer match the model's vocabulary.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_text
from minimodel.data import BPETokenizer, Tokenizer
from minimodel.data._pretokenize import token_bytes_to_str

# Conventional spellings of each role, most common first. The end-of-text token also serves
# as GPT-2's beginning-of-sequence token (GPT-2 has no separate BOS).
ROLE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "eos_token": ("<|endoftext|>", "</s>", "[EOS]", "<eos>", "<|eos|>"),
    "bos_token": ("<|endoftext|>", "<s>", "[BOS]", "<bos>", "<|bos|>"),
    "unk_token": ("[UNK]", "<unk>", "<|unk|>"),
    "pad_token": ("[PAD]", "<pad>", "<|pad|>"),
    "mask_token": ("[MASK]", "<mask>", "<|mask|>"),
    "cls_token": ("[CLS]",),
    "sep_token": ("[SEP]",),
}

# GPT-2's pre-tokeniser: byte-level alphabet, GPT-2 regex split, no space added in front.
_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
               "use_regex": True}


def special_roles(tokenizer: Tokenizer) -> dict[str, str | None]:
    """Role name (``eos_token``, ``pad_token``, ...) -> our special token that plays it, or None."""
    specials = tokenizer.special_tokens
    return {role: next((s for s in spellings if s in specials), None)
            for role, spellings in ROLE_SPELLINGS.items()}


def hf_vocab(tokenizer: Tokenizer) -> dict[str, int]:
    """``vocab.json`` contents: token (GPT-2 byte alphabet, or a special's name) -> our id.

    Raises:
        ValueError: a special token is spelled like a regular token in GPT-2's alphabet
            (the file could not tell them apart), or the tokenizer type is unknown.
    """
    if isinstance(tokenizer, BPETokenizer):
        return tokenizer.to_gpt2_vocab()  # checks special/regular spelling clashes
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"expected a minimodel tokenizer (ByteTokenizer or BPETokenizer), got "
                        f"{type(tokenizer).__name__}")
    special_ids = {i: name for name, i in tokenizer.special_tokens.items()}
    vocab: dict[str, int] = {}
    for i in range(tokenizer.vocab_size):
        if i in special_ids:
            continue
        vocab[token_bytes_to_str(tokenizer.id_to_token_bytes(i))] = i
    for i, name in special_ids.items():
        if name in vocab:
            raise ValueError(f"special token {name!r} has the same spelling as regular token "
                             f"{vocab[name]} in GPT-2's alphabet; rename the special to export")
        vocab[name] = i
    return dict(sorted(vocab.items(), key=lambda kv: kv[1]))


def hf_merges(tokenizer: Tokenizer) -> list[str]:
    """``merges.txt`` lines ``"left right"`` (a ByteTokenizer has none)."""
    return tokenizer.to_gpt2_merges() if isinstance(tokenizer, BPETokenizer) else []


def _added_token(name: str, i: int) -> dict[str, Any]:
    # normalized=False: match the raw text, as our encode() does; no stripping of neighbours.
    return {"id": i, "content": name, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def tokenizer_json(tokenizer: Tokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` (``tokenizers`` fast format) describing ``tokenizer``."""
    vocab = hf_vocab(tokenizer)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added_token(n, i) for n, i in
                         sorted(tokenizer.special_tokens.items(), key=lambda kv: kv[1])],
        "normalizer": None,
        "pre_tokenizer": dict(_BYTE_LEVEL),
        # ByteLevel post-processing only fixes offsets; it adds no BOS/EOS (neither do we).
        "post_processor": {**_BYTE_LEVEL, "trim_offsets": False},
        "decoder": dict(_BYTE_LEVEL),
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
            "ignore_merges": False, "vocab": vocab,
            # "left right" strings: read by every tokenizers version (lists need >= 0.20).
            "merges": hf_merges(tokenizer),
        },
    }


def tokenizer_config(tokenizer: Tokenizer, model_max_length: int | None = None) -> dict[str, Any]:
    """``tokenizer_config.json``: class, roles (``null`` when absent), no BOS/EOS insertion."""
    roles = special_roles(tokenizer)
    used = {name for name in roles.values() if name}
    extra = [n for n in tokenizer.special_tokens if n not in used]
    config: dict[str, Any] = {
        "tokenizer_class": "GPT2Tokenizer",
        "add_prefix_space": False,
        "add_bos_token": False,
        "add_eos_token": False,
        "errors": "replace",
        # Decoding must give back the exact text, so no "clean-up" of spaces before punctuation.
        "clean_up_tokenization_spaces": False,
        **roles,
        "added_tokens_decoder": {str(i): {k: v for k, v in _added_token(n, i).items() if k != "id"}
                                 for n, i in tokenizer.special_tokens.items()},
    }
    if extra:
        config["additional_special_tokens"] = extra
    if model_max_length is not None:
        config["model_max_length"] = int(model_max_length)
    return config


def special_tokens_map(tokenizer: Tokenizer) -> dict[str, Any]:
    """``special_tokens_map.json`` (read by transformers 4.x): roles that exist, plus extras."""
    roles = {k: v for k, v in special_roles(tokenizer).items() if v}
    used = set(roles.values())
    extra = [n for n in tokenizer.special_tokens if n not in used]
    if extra:
        roles["additional_special_tokens"] = extra
    return roles


def tokenizer_files(tokenizer: Tokenizer, model_max_length: int | None = None) -> dict[str, str]:
    """File name -> text of every tokenizer file of the export (nothing written)."""
    def dump(obj: Any) -> str:
        return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"

    merges = "#version: 0.2\n" + "".join(line + "\n" for line in hf_merges(tokenizer))
    return {
        "tokenizer.json": dump(tokenizer_json(tokenizer)),
        "vocab.json": json.dumps(hf_vocab(tokenizer), ensure_ascii=False) + "\n",
        "merges.txt": merges,
        "tokenizer_config.json": dump(tokenizer_config(tokenizer, model_max_length)),
        "special_tokens_map.json": dump(special_tokens_map(tokenizer)),
    }


def export_tokenizer(tokenizer: Tokenizer, out_dir: str | os.PathLike,
                     model_max_length: int | None = None) -> list[Path]:
    """Write the Hugging Face tokenizer files of ``tokenizer`` into ``out_dir``.

    Each file is written atomically; the folder is created if needed. Afterwards
    ``transformers.AutoTokenizer.from_pretrained(out_dir)`` encodes any text (special tokens
    included) to the same ids as ``tokenizer.encode``.

    Args:
        tokenizer: a ``ByteTokenizer`` or ``BPETokenizer``.
        out_dir: target folder (usually the model export folder).
        model_max_length: the model's context length (``block_size``), so transformers can
            warn about over-long inputs.

    Returns:
        The paths written.
    """
    files = tokenizer_files(tokenizer, model_max_length)
    out = Path(out_dir)
    return [atomic_write_text(out / name, text) for name, text in files.items()]
