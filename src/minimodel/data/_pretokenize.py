"""GPT-2 style pre-tokenisation and the GPT-2 byte <-> unicode alphabet.

Pre-tokenisation cuts text into "words" before BPE runs, so merges never cross a word
boundary (no token for "e t" spanning two words) and encoding can be cached per word.

GPT-2 uses this pattern with the third-party ``regex`` module::

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

The standard-library ``re`` has no ``\\p{...}`` classes, so we build the letter (``L*``) and
number (``N*``) classes from :mod:`unicodedata` once, on first use (~0.1 s), and spell out
the Unicode ``White_Space`` set that ``\\s`` means in the ``regex`` module and in Hugging Face
``tokenizers``. Python's own ``\\s`` would add U+001C..U+001F, which GPT-2 treats as symbols.
The result splits text exactly like GPT-2 for every character whose Unicode category agrees
between Python's Unicode database and the other library's (all of ASCII and Latin, and almost
everything else; only characters assigned in newer Unicode versions can differ).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Unicode White_Space property (PropList.txt); identical in Unicode 6 through 15.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _ranges_to_class(codepoints: list[int]) -> str:
    """Turn a sorted list of code points into the body of a ``[...]`` character class."""
    parts: list[str] = []
    start = prev = codepoints[0]
    for cp in codepoints[1:] + [-2]:
        if cp == prev + 1:
            prev = cp
            continue
        lo, hi = re.escape(chr(start)), re.escape(chr(prev))
        parts.append(lo if start == prev else f"{lo}-{hi}")
        start = prev = cp
    return "".join(parts)


@lru_cache(maxsize=1)
def gpt2_pattern() -> re.Pattern[str]:
    """The compiled GPT-2 pre-tokenisation pattern (built once, then cached)."""
    letters: list[int] = []
    numbers: list[int] = []
    category = unicodedata.category
    # Planes 4-13 have no assigned characters and 15-16 are private use (category Co), so
    # scanning planes 0-3 and 14 finds every letter and number 4x faster than a full scan.
    for cp in list(range(0x40000)) + list(range(0xE0000, 0xF0000)):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        major = category(chr(cp))[0]
        if major == "L":
            letters.append(cp)
        elif major == "N":
            numbers.append(cp)
    let, num = _ranges_to_class(letters), _ranges_to_class(numbers)
    ws = _WHITE_SPACE
    pattern = (
        rf"'(?:[sdmt]|ll|ve|re)"  # contractions, case-sensitive like GPT-2
        rf"| ?[{let}]+"  # an optional leading space glued to a run of letters
        rf"| ?[{num}]+"  # ... or of numbers
        rf"| ?[^{ws}{let}{num}]+"  # ... or of symbols / punctuation
        rf"|[{ws}]+(?![^{ws}])"  # whitespace run that does not end right before a word
        rf"|[{ws}]+"  # the remaining whitespace
    )
    return re.compile(pattern)


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into GPT-2 pre-tokens; ``"".join(pretokenize(t)) == t`` always."""
    return gpt2_pattern().findall(text)


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values to printable unicode characters.

    Why: vocab.json / merges.txt are text files in which tokens are separated by spaces
    and newlines, so every byte must be shown as a visible, non-space character. The 188
    printable Latin-1 bytes map to themselves; the other 68 (controls, space, ...) are
    shifted to code points 256, 257, ... in byte order. E.g. the space byte 32 becomes
    "Ġ" (U+0120) and newline 10 becomes "Ċ" (U+010A).
    """
    keep = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping: dict[int, str] = {b: chr(b) for b in keep}
    shift = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + shift)
            shift += 1
    return mapping


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """Inverse of :func:`bytes_to_unicode`."""
    return {ch: b for b, ch in bytes_to_unicode().items()}


def token_bytes_to_str(token: bytes) -> str:
    """A token's bytes written in the GPT-2 alphabet (what vocab.json stores)."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def token_str_to_bytes(token: str) -> bytes:
    """Inverse of :func:`token_bytes_to_str`; ValueError for a character outside the alphabet."""
    table = unicode_to_bytes()
    try:
        return bytes(table[ch] for ch in token)
    except KeyError as exc:
        raise ValueError(
            f"token {token!r} contains {exc.args[0]!r}, which is not in GPT-2's byte alphabet"
        ) from None

