"""Shared machinery of the byte-level tokenizers: special tokens, decode, file format.

Id layout shared by :class:`ByteTokenizer` and :class:`BPETokenizer`::

    0 .. 255                 the 256 byte values (id == byte value)
    256 .. 256+S-1           the S special tokens, in the order given
    256+S .. vocab_size-1    BPE merges, in the order they were learned (BPE only)

Putting the specials right after the bytes means ``[PAD]`` has the same id in a byte
tokenizer and in every BPE tokenizer built with the same special list, whatever its size.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from minimodel._fileio import atomic_write_text

PAD = "[PAD]"
MASK = "[MASK]"
FILE_FORMAT = "minimodel-tokenizer"
FILE_VERSION = 1

AllowedSpecial = bool | Collection[str] | None


def _validate_special_names(special_tokens: Iterable[str]) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError(
            f"special_tokens must be a sequence of strings, got the string {special_tokens!r}; "
            f"write special_tokens=({special_tokens!r},)"
        )
    names = list(special_tokens)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"special tokens must be non-empty strings, got {name!r}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"special tokens must be unique; repeated: {duplicates}")
    return names


def _utf8(text: str) -> bytes:
    """UTF-8 bytes of ``text``, with a clear error for lone surrogates (not encodable)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ValueError(
            f"text contains a lone surrogate U+{ord(bad):04X} at index {exc.start}, which "
            "has no UTF-8 encoding; fix the text (e.g. decode files with errors='replace')"
        ) from None



def visible(ch: str) -> str:
    """``ch``, or its escape when it is a control character or a line/paragraph separator."""
    if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
        return ch.encode("unicode_escape").decode("ascii")
    return ch

class Tokenizer:
    """Base class: 256 byte tokens + special tokens; subclasses add how plain text is cut.

    Attributes every tokenizer exposes: ``vocab_size`` (``== len`` of its id table, the one
    number a model's embedding must match), ``special_tokens`` (name -> id), ``pad_id`` and
    ``mask_id`` (``None`` when the tokenizer has no ``[PAD]`` / ``[MASK]``).
    """

    type_name: ClassVar[str] = ""
    # type_name -> class, filled in as each subclass is defined (``__init_subclass__``), so
    # ``Tokenizer.load`` can rebuild any saved tokenizer without importing the modules that
    # define the subclasses (which import this one: that would be an import cycle).
    _classes: ClassVar[dict[str, type[Tokenizer]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type_name:
            Tokenizer._classes[cls.type_name] = cls

    def __init__(self, special_tokens: Sequence[str] = ()) -> None:
        names = _validate_special_names(special_tokens)
        self._special_tokens: dict[str, int] = {n: 256 + i for i, n in enumerate(names)}
        # id -> bytes for every id; subclasses append merged tokens after the specials.
        self._id_to_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self._id_to_bytes += [_utf8(n) for n in names]
        # Longest first so that "[MASK]x" can never shadow "[MASK]" by alternation order.
        ordered = sorted(names, key=len, reverse=True)
        self._special_re = re.compile("|".join(map(re.escape, ordered))) if names else None

    # ----------------------------------------------------------------- vocabulary
    @property
    def vocab_size(self) -> int:
        """Number of ids this tokenizer can produce (bytes + specials + merges)."""
        return len(self._id_to_bytes)

    def __len__(self) -> int:
        return self.vocab_size

    @property
    def special_tokens(self) -> dict[str, int]:
        """A copy of the special token table, name -> id."""
        return dict(self._special_tokens)

    @property
    def special_ids(self) -> list[int]:
        """Ids of all special tokens, ascending (e.g. for ``mask_tokens(special_ids=...)``)."""
        return sorted(self._special_tokens.values())

    def token_to_id(self, name: str) -> int:
        """Id of the special token ``name``; ValueError listing the known ones otherwise."""
        try:
            return self._special_tokens[name]
        except KeyError:
            known = list(self._special_tokens) or "none"
            raise ValueError(
                f"{type(self).__name__} has no special token {name!r} (it has: {known}); "
                f"add it with special_tokens=(..., {name!r}) when building/training it"
            ) from None

    @property
    def pad_id(self) -> int | None:
        return self._special_tokens.get(PAD)

    @property
    def mask_id(self) -> int | None:
        return self._special_tokens.get(MASK)

    def _check_id(self, i: int) -> int:
        i = int(i)
        if not 0 <= i < self.vocab_size:
            raise ValueError(
                f"token id {i} is out of range for this tokenizer (vocab_size={self.vocab_size}); "
                "the ids probably come from a model or tokenizer with a different vocabulary"
            )
        return i

    def id_to_token_bytes(self, i: int) -> bytes:
        """The bytes token ``i`` stands for (a special token gives its name in UTF-8)."""
        return self._id_to_bytes[self._check_id(i)]

    def id_to_token_str(self, i: int) -> str:
        """Printable form of token ``i``: bytes that are not valid UTF-8 shown as ``\\xNN``,
        control characters and line breaks as Python writes them (``\\n``, ``\\x00``), so a
        label is one line of visible text in a table, a TSV file or a plot."""
        text = self.id_to_token_bytes(i).decode("utf-8", errors="backslashreplace")
        return "".join(visible(ch) for ch in text)

    # ----------------------------------------------------------------- encode / decode
    def _encode_ordinary(self, text: str) -> list[int]:
        """Encode text that contains no special tokens. Subclasses implement this."""
        raise NotImplementedError

    def _special_pattern(self, allowed_special: AllowedSpecial) -> re.Pattern[str] | None:
        if allowed_special is True:
            return self._special_re
        if allowed_special is None or allowed_special is False:
            return None
        if isinstance(allowed_special, str):
            allowed_special = (allowed_special,)
        names = list(allowed_special)
        unknown = [n for n in names if n not in self._special_tokens]
        if unknown:
            raise ValueError(
                f"allowed_special names {unknown} are not special tokens of this tokenizer "
                f"(it has {list(self._special_tokens)})"
            )
        if not names:
            return None
        return re.compile("|".join(map(re.escape, sorted(names, key=len, reverse=True))))

    def encode(self, text: str, allowed_special: AllowedSpecial = True) -> list[int]:
        """Encode ``text`` to token ids.

        Args:
            text: any string that can be written as UTF-8.
            allowed_special: ``True`` (default) turns every registered special token found
                in the text into its single id; ``False``/``None`` treats them as plain
                text; a collection of names allows only those.
        """
        if not isinstance(text, str):
            raise TypeError(f"encode expects str, got {type(text).__name__}")
        pattern = self._special_pattern(allowed_special)
        if pattern is None:
            return self._encode_ordinary(text)
        ids: list[int] = []
        start = 0
        for match in pattern.finditer(text):
            ids += self._encode_ordinary(text[start : match.start()])
            ids.append(self._special_tokens[match.group()])
            start = match.end()
        ids += self._encode_ordinary(text[start:])
        return ids

    def decode(self, ids: Iterable[int] | np.ndarray) -> str:
        """Turn ids back into text; ``decode(encode(s)) == s`` for every encodable ``s``.

        A sequence that ends inside a multi-byte character (e.g. while sampling) decodes
        the incomplete bytes as U+FFFD instead of failing.
        """
        if isinstance(ids, np.ndarray):
            if ids.ndim != 1:
                raise ValueError(f"decode expects a 1-D sequence of ids, got shape {ids.shape}")
            ids = ids.tolist()
        ids = ids if isinstance(ids, list) else list(ids)
        table = self._id_to_bytes
        # min/max run in C; a negative id would otherwise silently index from the end.
        if ids and (min(ids) < 0 or max(ids) >= len(table)):
            for i in ids:
                self._check_id(i)  # raises, naming the first bad id
        return b"".join([table[i] for i in ids]).decode("utf-8", errors="replace")

    # ----------------------------------------------------------------- files
    def _payload(self) -> dict[str, Any]:
        """Type-specific fields of the saved JSON (subclasses extend)."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready description :meth:`save` writes."""
        return {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "type": self.type_name,
            "vocab_size": self.vocab_size,
            "special_tokens": self.special_tokens,
            **self._payload(),
        }

    def to_json(self) -> str:
        """The text :meth:`save` writes."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n"

    def save(self, path: str | os.PathLike) -> Path:
        """Write the tokenizer as JSON, atomically (a crash never leaves half a file)."""
        return atomic_write_text(path, self.to_json())

    @classmethod
    def _from_dict(cls, data: dict[str, Any], where: str) -> Tokenizer:
        raise NotImplementedError

    @classmethod
    def load(cls, path: str | os.PathLike) -> Tokenizer:
        """Read a file written by :meth:`save`; ValueError naming the file if it is not one.

        ``Tokenizer.load(path)`` lets the file choose the class; ``BPETokenizer.load(path)``
        insists on that class.
        """
        data = read_tokenizer_file(path)
        if not cls.type_name:
            kind = data["type"]
            if kind not in Tokenizer._classes:
                raise ValueError(f"{path}: unknown tokenizer type {kind!r} "
                                 f"(known: {sorted(Tokenizer._classes)})")
            return Tokenizer._classes[kind]._from_dict(data, str(path))
        if data["type"] != cls.type_name:
            raise ValueError(
                f"{path} holds a {data['type']!r} tokenizer, not {cls.type_name!r}; "
                "use minimodel.data.load_tokenizer(path), which picks the right class"
            )
        return cls._from_dict(data, str(path))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value object

    def __repr__(self) -> str:
        specials = list(self._special_tokens)
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, special_tokens={specials})"


def read_tokenizer_file(path: str | os.PathLike) -> dict[str, Any]:
    """Parse and check the common header of a tokenizer JSON file."""
    path = Path(path)
    raw = path.read_bytes()  # FileNotFoundError names the path already
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not a tokenizer file: byte {exc.start} is not UTF-8 text"
        ) from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path} is not a tokenizer file: invalid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}); it may be truncated or corrupt, save it again"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        hint = ""
        if isinstance(data, dict) and "model" in data:
            hint = " (it looks like a Hugging Face tokenizer.json)"
        raise ValueError(
            f"{path} is not a minimodel tokenizer file{hint}: expected a JSON object with "
            f"\"format\": \"{FILE_FORMAT}\", as written by Tokenizer.save()"
        )
    version = data.get("version")
    if version != FILE_VERSION:
        raise ValueError(
            f"{path} has tokenizer file version {version!r}; this minimodel reads version "
            f"{FILE_VERSION} (upgrade minimodel or re-save the tokenizer)"
        )
    for key, kind in (("type", str), ("vocab_size", int), ("special_tokens", dict)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{path}: field {key!r} is missing or not a {kind.__name__}")
    names = list(data["special_tokens"])
    expected = {n: 256 + i for i, n in enumerate(names)}
    if data["special_tokens"] != expected:
        raise ValueError(
            f"{path}: special token ids {data['special_tokens']} are not 256, 257, ... in "
            "order; the file is corrupt or was edited by hand"
        )
    return data


def check_file_vocab_size(tok: Tokenizer, data: dict[str, Any], where: str) -> None:
    """Refuse a file whose recorded vocab_size disagrees with what it rebuilds to."""
    if tok.vocab_size != data["vocab_size"]:
        raise ValueError(
            f"{where} says vocab_size={data['vocab_size']} but its contents give "
            f"{tok.vocab_size} tokens; the file is corrupt or was edited by hand"
        )
