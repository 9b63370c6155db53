"""Read a Hugging Face byte-level BPE tokenizer (GPT-2 style) as a minimodel ``BPETokenizer``.

Our tokenizers fix the id layout (bytes 0..255 = their values, then specials, then merges in
rank order), so a Hugging Face tokenizer converts *with the same ids* only if its vocabulary
already has that layout, which is the case for anything ``to_hf`` wrote. Other vocabularies
(GPT-2's own puts "!" at id 0 and ``<|endoftext|>`` last) convert to the same *tokens* under
different ids: :class:`HFTokenizerImport` records the correspondence (``hf_ids``) and
:func:`remap_vocab` reorders a model's embedding (and untied head) rows to match, which
permutes the logits and changes nothing else.

What cannot be converted is refused with the reason: other model types (WordPiece,
Unigram), a normaliser, ``add_prefix_space``, post-processors that add BOS/EOS, merges
outside GPT-2's byte alphabet.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minimodel.data import BPETokenizer
from minimodel.data._pretokenize import bytes_to_unicode, token_str_to_bytes
from minimodel.interop._files import read_json

PROBE_TEXT = ("Hello world! ¿Qué tal, señor Müller? Ça va. 1234567 x²+½=3.5 it's they'll\n\n"
              "  \tindent   trailing  \r\nemoji 😀👍🏽 中文 — end")
_GPT2_CLASSES = (None, "GPT2Tokenizer", "GPT2TokenizerFast", "PreTrainedTokenizerFast",
                 "TokenizersBackend")


@dataclass
class HFTokenizerImport:
    """A converted tokenizer and how its ids relate to the Hugging Face ones.

    Attributes:
        tokenizer: the minimodel ``BPETokenizer`` (same tokens, minimodel's id layout).
        hf_ids: ``hf_ids[our_id]`` is the Hugging Face id of the same token.
    """

    tokenizer: BPETokenizer
    hf_ids: np.ndarray

    @property
    def identity(self) -> bool:
        """True when both tokenizers use the same ids (no model rows need moving)."""
        return bool(np.array_equal(self.hf_ids, np.arange(len(self.hf_ids))))


def _refuse(folder: Path, why: str) -> ValueError:
    return ValueError(f"cannot convert the tokenizer in {folder} to a minimodel BPETokenizer: "
                      f"{why}")


def _check_byte_level(pre: Any, folder: Path) -> None:
    if not isinstance(pre, dict) or pre.get("type") != "ByteLevel":
        raise _refuse(folder, f"pre-tokenizer {pre and pre.get('type')!r} is not GPT-2's "
                              "ByteLevel")
    if pre.get("add_prefix_space") or pre.get("use_regex") is False:
        raise _refuse(folder, "the ByteLevel pre-tokenizer adds a prefix space or skips GPT-2's "
                              "regex split; minimodel's BPE splits text exactly like GPT-2")


def _check_config(config: dict[str, Any], folder: Path) -> None:
    cls = config.get("tokenizer_class")
    if cls not in _GPT2_CLASSES:
        raise _refuse(folder, f"tokenizer_class {cls!r} is not a GPT-2 tokenizer")
    for key in ("add_prefix_space", "add_bos_token", "add_eos_token"):
        if config.get(key):
            raise _refuse(folder, f"{key}=true in tokenizer_config.json (minimodel adds nothing "
                                  "to the text it encodes)")


def _split_merge(item: Any, k: int, folder: Path) -> tuple[str, str]:
    parts = item.split(" ") if isinstance(item, str) else item
    if not isinstance(parts, (list, tuple)) or len(parts) != 2:
        raise _refuse(folder, f"merge #{k} {item!r} is not a pair of tokens")
    return parts[0], parts[1]


def _read_fast(folder: Path) -> tuple[dict[str, int], list[tuple[str, str]], dict[str, int]]:
    """vocab, merges and added tokens from ``tokenizer.json``."""
    data = read_json(folder / "tokenizer.json", "tokenizer")
    model = data.get("model") or {}
    if model.get("type") != "BPE":
        raise _refuse(folder, f"model type {model.get('type')!r}; only byte-level BPE converts")
    if model.get("dropout") or model.get("byte_fallback") or model.get(
            "continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise _refuse(folder, "BPE options (dropout / byte_fallback / subword prefix or suffix) "
                              "that GPT-2 does not use")
    if data.get("normalizer") is not None:
        raise _refuse(folder, "it has a normalizer; GPT-2 encodes the raw text")
    _check_byte_level(data.get("pre_tokenizer"), folder)
    post = data.get("post_processor")
    if post is not None and post.get("type") not in ("ByteLevel", "TemplateProcessing"):
        raise _refuse(folder, f"post-processor {post.get('type')!r} adds tokens to every input")
    if post is not None and post.get("type") == "TemplateProcessing" and any(
            "SpecialToken" in piece for piece in post.get("single", [])):
        raise _refuse(folder, "its post-processor adds special tokens to every input")
    added: dict[str, int] = {}
    for token in data.get("added_tokens") or []:
        if token.get("lstrip") or token.get("rstrip") or token.get("single_word"):
            raise _refuse(folder, f"added token {token.get('content')!r} strips neighbouring "
                                  "spaces or matches whole words only")
        added[token["content"]] = int(token["id"])
    merges = [_split_merge(m, k, folder) for k, m in enumerate(model.get("merges") or [])]
    return dict(model.get("vocab") or {}), merges, added


def _read_slow(folder: Path) -> tuple[dict[str, int], list[tuple[str, str]], dict[str, int]]:
    """vocab, merges and added tokens from ``vocab.json`` + ``merges.txt`` (+ extras)."""
    vocab = read_json(folder / "vocab.json", "tokenizer vocabulary")
    lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    merges = [_split_merge(line, k, folder) for k, line in enumerate(lines)
              if line and not line.startswith("#version")]
    added: dict[str, int] = {}
    if (folder / "added_tokens.json").is_file():
        added.update({k: int(v) for k, v in read_json(folder / "added_tokens.json",
                                                      "added tokens").items()})
    return vocab, merges, added


def _role_names(mapping: dict[str, Any]) -> list[str]:
    """Token strings named by role keys (eos_token, ...) and additional/extra special lists."""
    names: list[str] = []
    for key, value in mapping.items():
        values = value if isinstance(value, list) else [value]
        if key.endswith("_token") or key in ("additional_special_tokens", "extra_special_tokens"):
            for item in values:
                item = item.get("content") if isinstance(item, dict) else item
                if isinstance(item, str) and item:
                    names.append(item)
    return names


def _registered_names(folder: Path, config: dict[str, Any]) -> list[str]:
    """Special tokens declared in tokenizer_config.json and special_tokens_map.json."""
    names = _role_names(config)
    path = folder / "special_tokens_map.json"
    if path.is_file():
        names += _role_names(read_json(path, "special tokens map"))
    return names


def tokenizer_from_hf(path: str | os.PathLike, verify: bool = True) -> HFTokenizerImport:
    """Convert the GPT-2 style tokenizer of a Hugging Face folder to a ``BPETokenizer``.

    Reads ``tokenizer.json`` if present, else ``vocab.json`` + ``merges.txt``. Every added
    token becomes one of our special tokens (matched anywhere in the text, like in
    transformers). With ``verify`` and the ``tokenizers`` library installed, both tokenizers
    encode a probe text (accents, digits, whitespace runs, emoji, CJK, every special) and
    must agree token for token.

    Raises:
        FileNotFoundError: no tokenizer files in the folder.
        ValueError: the tokenizer cannot be expressed as ours (the message says why).
    """
    folder = Path(path)
    config_path = folder / "tokenizer_config.json"
    config = read_json(config_path, "tokenizer config") if config_path.is_file() else {}
    _check_config(config, folder)
    if (folder / "tokenizer.json").is_file():
        vocab, merge_strs, added = _read_fast(folder)
    elif (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
        vocab, merge_strs, added = _read_slow(folder)
    else:
        raise FileNotFoundError(f"{folder} has no tokenizer (tokenizer.json, or vocab.json + "
                                "merges.txt)")
    for key, entry in (config.get("added_tokens_decoder") or {}).items():
        added.setdefault(entry["content"], int(key))
    for name in _registered_names(folder, config):
        if name in vocab:  # e.g. GPT-2's "<|endoftext|>", registered as eos/bos/unk
            added.setdefault(name, int(vocab[name]))
    try:
        merges = [(token_str_to_bytes(a), token_str_to_bytes(b)) for a, b in merge_strs]
    except ValueError as exc:
        raise _refuse(folder, f"a merge is not byte-level: {exc}") from None
    full = {**vocab, **added}
    regular = {bytes_to_unicode()[b] for b in range(256)}
    for a, b in merge_strs:
        regular.add(a + b)
    missing_bytes = [ch for ch in bytes_to_unicode().values() if ch not in vocab]
    if missing_bytes:
        raise _refuse(folder, f"{len(missing_bytes)} of the 256 byte tokens are missing from "
                              "the vocabulary, so it is not byte-level")
    dead = sorted((n for n in full if n not in regular and n not in added), key=full.get)
    if dead:
        # BPE never produces these and transformers does not match them in text; as our
        # specials they would be matched, so encodings would differ. Real vocabularies have none.
        raise _refuse(folder, f"vocabulary entries {dead[:5]} are neither bytes, merge results "
                              "nor registered special tokens")
    specials = sorted(added, key=lambda name: full[name])
    try:
        tok = BPETokenizer(merges, special_tokens=specials)
        ours = tok.to_gpt2_vocab()
    except ValueError as exc:
        raise _refuse(folder, str(exc)) from None
    if set(ours) != set(full):
        extra = sorted(set(full) - set(ours))[:5] + sorted(set(ours) - set(full))[:5]
        raise _refuse(folder, f"vocabulary and merges disagree (e.g. {extra})")
    hf_ids = np.array([full[name] for name in ours], dtype=np.int64)
    if not np.array_equal(np.sort(hf_ids), np.arange(len(hf_ids))):
        raise _refuse(folder, "its ids are not 0..V-1 without gaps or repeats")
    result = HFTokenizerImport(tok, hf_ids)
    if verify:
        _verify(folder, result)
    return result


def _verify(folder: Path, result: HFTokenizerImport) -> None:
    """Encode a probe text with both tokenizers (skipped without the ``tokenizers`` library)."""
    try:
        from tokenizers import Tokenizer as HFTokenizer  # optional dependency (Hugging Face's)
    except ImportError:
        return
    tok = result.tokenizer
    if (folder / "tokenizer.json").is_file():
        hf = HFTokenizer.from_file(str(folder / "tokenizer.json"))
    else:
        from tokenizers import decoders, models, pre_tokenizers  # optional, as above

        vocab, merges, _ = _read_slow(folder)
        hf = HFTokenizer(models.BPE(vocab=vocab, merges=merges))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
        hf.add_special_tokens(list(tok.special_tokens))
    text = PROBE_TEXT + " " + " x".join(tok.special_tokens)
    ours = result.hf_ids[np.array(tok.encode(text), dtype=np.int64)].tolist()
    theirs = hf.encode(text, add_special_tokens=False).ids
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                     min(len(ours), len(theirs)))
        raise _refuse(folder, f"the converted tokenizer encodes a probe text differently from "
                              f"the original (first difference at token {first})")


def remap_vocab(model: Any, hf_ids: np.ndarray) -> None:
    """Reorder a GPT's vocabulary rows from Hugging Face ids to minimodel ids, in place.

    Row ``o`` of the embedding (and of an untied head) becomes old row ``hf_ids[o]``, so the
    model reads and predicts our tokenizer's ids. The arrays are changed in place: a tied
    head still shares the one Parameter.
    """
    hf_ids = np.asarray(hf_ids, dtype=np.int64)
    vocab = model.token_emb.weight.shape[0]
    if hf_ids.shape != (vocab,):
        raise ValueError(f"the tokenizer has {hf_ids.shape[0]} tokens but the model's embedding "
                         f"has {vocab} rows; they must be equal to remap the vocabulary")
    weights = [model.token_emb.weight]
    if model.lm_head.weight is not model.token_emb.weight:
        weights.append(model.lm_head.weight)
    for weight in weights:
        weight.data[...] = weight.data[hf_ids]
