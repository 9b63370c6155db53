"""The tokenizer beside a model (or given with ``--tokenizer``), read as a table of ids.

The checks need three things from a tokenizer, not the ability to encode text: which ids it
can produce (every id of its vocabulary plus its added and special tokens), the text of each
id (to list suspicious rows by token), and which ids are special. So every format is read as
plain data, without the ``tokenizers`` or ``transformers`` packages:

    tokenizer.json (minimodel)    {"format": "minimodel-tokenizer", ...}: loaded by minimodel
    tokenizer.json (Hugging Face) model.vocab (a dict, or Unigram's [piece, score] list) and
                                  added_tokens
    vocab.json (+ merges.txt)     GPT-2's slow format: token -> id
    vocab.txt                     BERT's WordPiece: the token on line i has id i
    added_tokens.json,            more added and special tokens, by id
      tokenizer_config.json

Byte-level BPE vocabularies (GPT-2's, and every tokenizer.json with a ``ByteLevel``
pre-tokenizer or decoder) write each byte as a printable character (``Ġ`` for the space,
``Ī`` for byte 0x88). The doctor shows a token by its bytes instead, as minimodel's own
tokenizers do (``' the'``, ``'\\x88'``), so one token reads the same in a minimodel run and in the
Hugging Face folder exported from it.

A SentencePiece model file (``spiece.model``, ``tokenizer.model``) alone is a protobuf that
needs the sentencepiece package; the size checks then say the tokenizer was not read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minimodel._fileio import require_file
from minimodel.data._pretokenize import token_str_to_bytes
from minimodel.data._tokenizer_base import visible
from minimodel.interop._files import read_json
from minimodel.messages import Phrase, PhraseError, phrase

HF_FILES = ("tokenizer.json", "vocab.json", "vocab.txt")
SENTENCEPIECE_FILES = ("spiece.model", "tokenizer.model", "sentencepiece.bpe.model")


@dataclass
class Vocabulary:
    """Token ids a tokenizer can produce, with their text."""

    source: Path
    tokens: dict[int, str]
    special: set[int] = field(default_factory=set)
    added: set[int] = field(default_factory=set)
    byte_level: bool = False  # tokens are written in GPT-2's byte alphabet

    @property
    def size(self) -> int:
        """One more than the largest id: the rows a matrix needs to look every id up."""
        return max(self.tokens) + 1 if self.tokens else 0

    def text(self, i: int) -> str:
        """Token ``i`` as text: its bytes, decoded where they are UTF-8 and ``\\xNN`` where not."""
        token = self.tokens.get(int(i), "")
        if self.byte_level and int(i) not in self.added:
            try:
                token = token_str_to_bytes(token).decode("utf-8", errors="backslashreplace")
            except ValueError:  # not in the byte alphabet: shown as written
                pass
        return "".join(visible(ch) for ch in token)

    def quoted(self, i: int) -> str:
        r"""Token ``i`` in quotes for a report line: ``'\x10'``, not ``repr``'s ``'\\x10'``
        (the text already shows its bytes escaped once)."""
        return "'" + self.text(i).replace("'", "\\'") + "'"


def find_tokenizer(folder: Path) -> tuple[Path | None, Phrase | None]:
    """(tokenizer file, None) beside a model, or (None, why none could be read)."""
    for name in HF_FILES:
        if (folder / name).is_file():
            return folder / name, None
    pieces = [name for name in SENTENCEPIECE_FILES if (folder / name).is_file()]
    if pieces:
        return None, phrase("doctor.error.sentencepiece", path=folder / pieces[0])
    return None, None


def read_vocabulary(path: str | Path) -> Vocabulary:
    """The vocabulary in ``path`` (a tokenizer file, or a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        found, why = find_tokenizer(path)
        if found is None:
            raise PhraseError(why or phrase("doctor.error.no_tokenizer", path=path))
        path = found
    require_file(path, "tokenizer")
    try:
        return _read(path)
    except (KeyError, TypeError, AttributeError) as exc:
        raise PhraseError(phrase("doctor.error.tokenizer_entry", path=path,
                                 entry=repr(exc))) from None


def _read(path: Path) -> Vocabulary:
    if path.suffix == ".txt":
        lines = path.read_text(encoding="utf-8").splitlines()
        vocab = Vocabulary(path, {i: tok for i, tok in enumerate(lines)})
    else:
        data = read_json(path, "tokenizer file")
        if data.get("format") == "minimodel-tokenizer" or data.get("type") == "word-vocab":
            return _minimodel_vocabulary(path)
        if isinstance(data.get("model"), dict):
            vocab = _fast_vocabulary(path, data)
        elif all(isinstance(v, int) for v in data.values()):
            vocab = Vocabulary(path, {int(i): tok for tok, i in data.items()},
                               byte_level=(path.parent / "merges.txt").is_file())
        else:
            raise PhraseError(phrase("doctor.error.not_tokenizer", path=path))
    _add_config_tokens(vocab, path.parent)
    return vocab


def _fast_vocabulary(path: Path, data: dict[str, Any]) -> Vocabulary:
    raw = data["model"].get("vocab") or {}
    if isinstance(raw, list):  # Unigram: [[piece, score], ...], the id is the position
        tokens = {i: str(item[0]) for i, item in enumerate(raw)}
    else:
        tokens = {int(i): str(tok) for tok, i in raw.items()}
    vocab = Vocabulary(path, tokens, byte_level="ByteLevel" in json.dumps(
        [data.get("pre_tokenizer"), data.get("decoder")]))
    for entry in data.get("added_tokens") or []:
        _add(vocab, int(entry["id"]), str(entry.get("content", "")), bool(entry.get("special")))
    return vocab


def _add(vocab: Vocabulary, i: int, text: str, special: bool) -> None:
    vocab.tokens[i] = text
    vocab.added.add(i)
    if special:
        vocab.special.add(i)


def _add_config_tokens(vocab: Vocabulary, folder: Path) -> None:
    """Added tokens listed in added_tokens.json and tokenizer_config.json."""
    extra = folder / "added_tokens.json"
    if extra.is_file():
        for text, i in read_json(extra, "added tokens").items():
            _add(vocab, int(i), text, special=False)
    config = folder / "tokenizer_config.json"
    if config.is_file():
        decoder = read_json(config, "tokenizer config").get("added_tokens_decoder") or {}
        for i, entry in decoder.items():
            _add(vocab, int(i), str(entry.get("content", "")), bool(entry.get("special")))


def _minimodel_vocabulary(path: Path) -> Vocabulary:
    from minimodel.training.tasks import load_any_tokenizer

    tok = load_any_tokenizer(path)
    if hasattr(tok, "itos"):  # a CBOW word vocabulary
        return Vocabulary(path, dict(enumerate(tok.itos)))
    tokens = {i: tok.id_to_token_str(i) for i in range(tok.vocab_size)}
    special = set((getattr(tok, "special_tokens", None) or {}).values())
    return Vocabulary(path, tokens, special={int(i) for i in special if isinstance(i, int)})
