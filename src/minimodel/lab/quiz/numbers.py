"""Reading a typed numeric answer: its locale, its scale word and its unit.

The rules (each one refuses to guess; what cannot be read one way is asked again, never graded):

* **Separators follow the language of the quiz.** English: a comma groups thousands
  (``2,097,152``, ``4,000`` is four thousand) and a point is the decimal mark. Spanish: a comma
  is the decimal mark (``6,238``) and a point groups thousands (``2.097.152``). A space groups
  thousands in both (``2 097 152``), and so does an apostrophe (``2'097'152``, as in
  Switzerland). Any mark groups only when the first group has one to three digits and no
  leading ``0`` and every later group exactly three (:data:`THOUSANDS`). A space or an
  apostrophe that cannot group (``2097 152``, ``20 97 152``, ``0 097 152``, ``1,234 567``)
  is asked again: the digits may be two numbers, or one with a digit missing. A comma or a
  point that cannot group (``6,24``, ``0.004``) is a decimal mark in both; with two of them it is
  asked again (``20.97.152``, ``02,097,152``).
  One case stays ambiguous: in Spanish a single point followed by three digits (``65.536``,
  ``6.238``) is a thousands point in Spain and a decimal point in Mexico and on most keyboards;
  when the two readings get the same grade that grade stands, otherwise the answer is asked
  again, naming both readings.
* **Scale words multiply**: ``hundred``/``cien``/``cientos`` (100), ``thousand``/``mil``/``K``
  (1,000), ``million``/``millón``/``millones``/``M`` (1,000,000): ``2.1M`` is 2,100,000 and
  ``cuatro mil`` is 4,000.
* **The unit must be one the question declares, or none.** A question declares its unit with
  ``unit`` (``rows``/``filas``), which brings the unit's other spellings (``row``, ``fila``,
  ``params`` for ``parameters``); a loss "in natural log" declares ``nats``; the optional
  ``units`` list adds more. A known unit of another quantity (``4 columns`` for rows, ``bytes``
  for a parameter count, ``bits`` for a natural-log loss) is read and graded wrong. Any other
  word after the number (``65536 each``, ``per matrix``, ``twice``, ``not``) changes what the
  number means, so the answer is asked again with that word named. The only other words
  allowed beside the unit are a preposition before a unit (``in nats``, ``de`` as in ``2
  millones de parámetros``) and, for a count only, :data:`COUNT_MODIFIERS` (``distinct``,
  ``in total``, ``altogether``, ``en total``, ``en conjunto``...). A question asks for a count
  when its unit counts things (:data:`COUNT_UNITS`: rows, parameters, tokens...). Beside a
  mean, a loss or a ratio those words change the quantity (``6.238 in total`` is a summed
  loss, not the mean per token asked for), so the answer is asked again naming them.
* **Decimals**: a prompt that says "Give N decimals" asks again for a number typed with fewer
  (``6.24``, ``6``; a calculation such as ``ln 512`` is exact and always accepted), and its
  tolerance is at most one unit in the N-th decimal (:func:`effective_tolerance`). In Spanish
  this also settles ``6.238``: only its decimal reading has three decimals.
* **Working shown**: in a chain such as ``512 × 128 = 65,536`` or ``ln 512 ≈ 6.238`` the
  last side is the answer; every other side must be a number or a calculation that agrees with
  it (within the tolerance; exactly, for an exact count, when the side has an exact value), or
  the answer is asked again.
* **Brackets after the number are read, never ignored.** A note in ``()``, ``[]`` or ``{}``
  after a space (``4 (ids 1, 3, 7, 9)``) is one of: working, checked like a chain's side
  (``65,536 (512 × 128)``, ``6.238 (= ln 512)``); words, read as if typed after the number
  (``4 (rows)`` is ``4 rows``, ``0.408 (in bits)`` is ``0.408 in bits``: a wrong unit; ``4
  (not)`` and ``2,097,152 (in millions)`` are asked again, and so is a scale word, which in a
  note could be the number's scale or a remark); the natural log a question declares
  (``0.408 (natural log)``); or a list of ids the question's prompt names, which must name as
  many distinct ids as the answer (``4 (ids 1, 3, 7, 9)``; ``5 (ids 1, 3, 7, 9)`` and
  ``4 (rows 1, 2, 3, 4)``, ids the prompt never gives, are asked again). Anything else, a
  nested or unbalanced bracket included, is asked again. A bracket after a space is never a
  factor: the grader has no implicit product.
* **Notation**: number words up to twenty (``four``, ``cuatro``) with scale words; small
  arithmetic (``8192 x 256``, ``2^21``, ``ln512``, ``9 ln 2``; see :mod:`.arithmetic`); a
  leading ``exactly`` (and Spanish forms) and one trailing full stop (``2.``) are ignored; nothing
  else is (``4!``, ``4..``, ``4‥`` are asked again). A number written with a base prefix, in
  any case, is asked again: hexadecimal (``0x200000``, whose ``x`` is no product; ``0 x
  200000``, with spaces, is one), octal (``0o10000000``) and binary (``0b1000``): the grader
  reads decimal only, and a quiz asks for the number, not for a spelling only a Python prompt
  reads. So are underscores between digits (``2_097_152``, ``0o10_000_000``): no quiz
  language groups digits with them. An
  approximation, as a sign (``≈``, ``~``), a word (``about``, ``roughly``, ``unos``, ``más o
  menos``) or a trailing ``...``, is read past at the start of a value with a tolerance
  (``≈ 6.238``) and asked again anywhere in an answer to an exact count (``≈4``, ``about 4``,
  ``4...``, and after a qualifier, on any side of a chain or in a note: ``exactly about 4``,
  ``4 = ~4``, ``4 (≈ 3 + 1)``): it says something about the number that the number alone
  does not.
* **Unit abbreviations**: the usual short forms of a unit belong to its family (``dims``
  for ``dimensions``, ``cols`` for ``columns``, ``params`` for ``parameters``), so they are
  accepted where the unit is and graded wrong where another unit is asked for.
* **Digits are read exactly.** Typed digits and number words are read as ``Decimal``, never
  through a float, and graded exactly (``3.9999999999999999`` is not the count 4, though its
  nearest float is); so are a number given as such in an answers file and a calculation of
  fractions (``2^21 + 1/1000`` is not 2^21; :func:`.arithmetic.evaluate_exact`). A decimal digit of any script counts (``𝟒``, read after NFKD
  normalisation); a character that is numeric without being a decimal digit (a superscript
  ``⁴``, ``2²¹``, a fraction ``½``, a circled ``④``) is asked again: normalised, it would read
  as a plain digit and change the number. So is a combining mark that is not an accent over
  any character (a strike-through ``4\u0336``, a slash ``4\u0338``): it says the number is not
  meant.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from minimodel.lab.quiz.arithmetic import FUNCTIONS, evaluate, evaluate_exact
from minimodel.lab.quiz.text import normalise, stray_marks
from minimodel.messages import grouped, say

NUMBER_WORDS = {
    word: value
    for words in (
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty",
        "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce "
        "quince dieciseis diecisiete dieciocho diecinueve veinte")
    for value, word in enumerate(words.split())
}
NUMBER_WORDS["un"] = NUMBER_WORDS["una"] = 1

SCALE_WORDS = {"hundred": 100, "hundreds": 100, "cien": 100, "cientos": 100,
               "thousand": 1e3, "thousands": 1e3, "mil": 1e3, "k": 1e3,
               "million": 1e6, "millions": 1e6, "millon": 1e6, "millones": 1e6, "m": 1e6}

# Units by quantity: a question's unit brings its family; the others are known wrong units.
UNIT_FAMILIES = [
    {"row", "rows", "fila", "filas"},
    {"parameter", "parameters", "param", "params", "parametro", "parametros"},
    {"nat", "nats"},
    {"column", "columns", "col", "cols", "columna", "columnas"},
    {"byte", "bytes", "kb", "mb", "gb"},
    {"bit", "bits"},
    {"token", "tokens"},
    {"dimension", "dimensions", "dim", "dims", "dimensiones"},
    {"percent", "%", "pct", "porciento"},
]
KNOWN_UNITS = set().union(*UNIT_FAMILIES)
# Units that count things: a question declaring one asks for a count ("4 rows", "65,536
# parameters"). Nats, bits and percent measure a mean, a loss or a ratio instead.
COUNT_UNITS = set().union(*(family for family in UNIT_FAMILIES
                            if family & {"rows", "parameters", "columns", "bytes", "tokens",
                                         "dimensions"}))
# Words that say what a count counts: its total, or its distinct things. Beside a count they
# say what the count already is ("4 rows in total"); beside a mean, a loss or a ratio they
# change the quantity ("6.238 in total" is the loss summed over tokens, not the mean per token
# asked for), so there the answer is asked again, naming the words.
COUNT_MODIFIERS = [tuple(phrase.split()) for phrase in (
    "in total", "en total", "en conjunto", "in all", "all told", "altogether", "overall", "total",
    "totales", "distinct", "different", "unique", "distintas", "distintos", "diferentes",
    "unicas", "unicos")]
# A preposition before a unit ("0.408 in nats", "2 millones de parametros") adds nothing.
UNIT_PREPOSITIONS = {"in", "en", "de"}
_QUALIFIER = re.compile(r"^(?:about|around|approximately|approx|roughly|exactly|precisely|"
                        r"aproximadamente|aprox|alrededor de|cerca de|unos|unas|exactamente|"
                        r"[≈~=])\s*")
_NATURAL_LOG = re.compile(r"natural log|logaritmo natural|\bnats?\b")
_DECIMALS_ASKED = re.compile(r"\b(\d+|[a-z]+) decimal(?:e?s)?\b")
# Thousands groups: a first group of 1-3 digits without a leading 0, then groups of exactly 3
THOUSANDS = r"[1-9]\d{0,2}"
_SPACE_MARKS = " \u00a0\u202f\u2009'\u2019"
# "2 097 152", "2'097'152": the whole run of digits and spaces, not its tail ("2097 152" is no
# grouping: the lookbehind keeps "097 152" from being read as one)
_SPACE_GROUPED = re.compile(rf"(?<![\d.,{_SPACE_MARKS}]){THOUSANDS}(?:[{_SPACE_MARKS}]\d{{3}})+"
                            r"(?=$|[.,]\d)")
_SPACED_DIGITS = re.compile(rf"\d[{_SPACE_MARKS}]+\d")
_PLAIN = re.compile(r"[+-]?\d[\d.,]*")
# "0x200000", "0o10000000", "0b1000" (case folded): a base prefix, not 0 x 200000; "2_097_152":
# Python's digit grouping. Both are asked again (see Notation above).
_BASE_OR_UNDERSCORE = re.compile(r"(?<![\d.,])0[xob][\da-f_]|\d_|_\d")
# Brackets a note may be written in; "ln (2)" and "exp (ln 4)" are calculations, not notes.
_CLOSING = {")": "(", "]": "[", "}": "{"}
_AFTER_FUNCTION = re.compile(r"\b(?:ln|log|exp|sqrt)\s*$")
# "ids 1, 3, 7 and 9", "rows: 1 3 7 9": a label, then ids separated by commas, "and", "y"
_ID_LIST = re.compile(r"(?:([a-z]+)\s*:?\s+)?(\d+(?:\s*(?:,|\band\b|\by\b|\s)\s*\d+)*)")
LIST_LABELS = {"id", "ids", "index", "indices", "indexes", "indice", "token", "tokens"}
_CHAIN = re.compile(r"\s*(?:=|≈|~=)\s*")      # "512 x 128 = 65,536": sides of a chain
# An approximation sign ("≈4", "~4", "≃ 4"): for an exact count it says the number is not the
# count, so it is asked again wherever it stands ("exactly ~4", "4 = ~4", "4 (≈ 3 + 1)"); a
# value with a tolerance may start with one ("≈ 6.238"). NFKD makes a fullwidth "～" a "~".
_APPROXIMATE = re.compile(r"~=|[≈~∼∽≃≅≊≒〜]")
# The same said in words ("about 4", "unos 4"), or a number trailing off ("4..."): read past
# at the start of a value with a tolerance (_QUALIFIER), asked again anywhere in an exact
# count ("exactly about 4", "4 = roughly 4", "exactamente unos 4").
_HEDGES = (r"about|around|approximately|approximate|approx\.?|roughly|circa|some|nearly|"
           r"almost|ish|more or less|give or take|close to|aproximadamente|aproximad[oa]s?|"
           r"aprox\.?|alrededor de|cerca de|casi|unos|unas|mas o menos|en torno a|del orden de")
_APPROXIMATE_WORDS = re.compile(rf"(?<![a-z])({_HEDGES})(?![a-z])|(\.\.\.)")


class Unreadable(ValueError):
    """An answer the grader cannot read one way; ``reason`` says why, in the learner's language."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = message if reason is None else reason


@dataclass(frozen=True)
class Number:
    """A numeric answer as read: its value and, when it named a unit the question does not
    declare, that unit (the answer is then wrong whatever the value). ``exact``: the value
    exactly as typed, for digits, number words, a number given as such in an answers file and
    a calculation of fractions (``"3.9999999999999999"`` is not 4, though its nearest float
    is; nor is ``2^21 + 1/1000`` the count 2^21); None for a calculation with ``ln``, ``exp``
    or ``sqrt``, which is graded on its float value."""

    value: float
    wrong_unit: str = ""
    exact: Fraction | None = None


# --- what the question declares ------------------------------------------------------------


def declared_units(answer: dict[str, Any], prompt: dict[str, str]) -> set[str]:
    """The unit words a question accepts: the family of its ``unit``, ``nats`` for a loss in
    natural log, and the optional ``units`` list."""
    words = {normalise(w) for w in (answer.get("unit") or {}).values()}
    words |= {normalise(w) for w in answer.get("units") or []}
    if any(_NATURAL_LOG.search(normalise(p)) for p in prompt.values()):
        words.add("nats")
    units = set(words)
    for family in UNIT_FAMILIES:
        if family & words:
            units |= family
    return units


def unit_name(answer: dict[str, Any], prompt: dict[str, str], lang: str) -> str:
    """The unit a question asks for, as a message names it (``rows``, ``nats``), or ``""``."""
    units = declared_units(answer, prompt)
    return ((answer.get("unit") or {}).get(lang) or ("nats" if "nats" in units else "")
            or ", ".join(answer.get("units") or []))


def asked_decimals(answer: dict[str, Any], prompt: dict[str, str]) -> int | None:
    """How many decimals the question asks for: the optional ``decimals`` field, else the
    prompt's "Give N decimals" / "Da N decimales"; None when it asks for none."""
    if answer.get("decimals") is not None:
        return int(answer["decimals"])
    for text in prompt.values():
        for match in _DECIMALS_ASKED.finditer(normalise(text)):
            count = match.group(1)
            if count.isdigit():
                return int(count)
            if count in NUMBER_WORDS:
                return NUMBER_WORDS[count]
    return None


def effective_tolerance(answer: dict[str, Any], prompt: dict[str, str]) -> float:
    """The tolerance the grader applies: the question's, but never looser than one unit in the
    last decimal the prompt asks for ("Give 3 decimals" -> 0.001, so 6.237..6.239 pass for
    6.238: the exact value rounded or truncated, and 6.245 does not)."""
    tolerance = float(answer["tolerance"])
    decimals = asked_decimals(answer, prompt)
    return tolerance if decimals is None else min(tolerance, 10.0 ** -decimals)


def format_number(x: float, lang: str) -> str:
    """A number as the learner's language writes it: ``2,097,152`` / ``6.238`` in English,
    ``2 097 152`` / ``6,238`` in Spanish (a no-break space groups thousands,
    :func:`minimodel.messages.grouped`; a comma marks decimals)."""
    spec = ",.0f" if float(x).is_integer() else ",.10f"
    text = grouped(x, spec, lang)
    text = text if float(x).is_integer() else text.rstrip("0")
    return text.replace(".", ",") if lang == "es" else text


# --- reading -------------------------------------------------------------------------------


def _plain_readings(digits: str, lang: str) -> list[tuple[Decimal, int]]:
    """Readings of digits and separators (no spaces, no letters) as (value, decimals typed),
    read exactly (``Decimal``: no float rounding); one, or two when ambiguous."""
    sign = Decimal(-1) if digits.startswith("-") else Decimal(1)
    digits = digits.lstrip("+-")
    marks = [ch for ch in digits if ch in ".,"]
    if not marks:
        return [(sign * Decimal(digits), 0)]
    if len(set(marks)) == 2:  # both marks: the last one is the decimal mark
        decimal = digits[max(digits.rfind(","), digits.rfind("."))]
        group = "." if decimal == "," else ","
        whole, _, frac = digits.rpartition(decimal)
        if not re.fullmatch(rf"{THOUSANDS}(?:\{group}\d{{3}})+", whole) or not frac.isdigit():
            return []
        return [(sign * Decimal(whole.replace(group, "") + "." + frac), len(frac))]
    mark = marks[0]
    groups = digits.split(mark)
    grouping = bool(re.fullmatch(THOUSANDS, groups[0])) and all(len(g) == 3 for g in groups[1:])
    if len(groups) > 2:  # 2.097.152: grouping or nothing
        return [(sign * Decimal("".join(groups)), 0)] if grouping else []
    as_decimal = (sign * Decimal(groups[0] + "." + (groups[1] or "0")), len(groups[1]))
    if not grouping:
        return [as_decimal]
    as_thousands = (sign * Decimal("".join(groups)), 0)
    if lang == "es" and mark == ".":
        return [as_thousands, as_decimal]  # Spain and Mexico disagree; see the module docstring
    group_mark = "." if lang == "es" else ","
    return [as_thousands] if mark == group_mark else [as_decimal]


def _split_words(text: str) -> tuple[str, list[str]]:
    """``"2^21 parameters"`` -> ``("2^21", ["parameters"])``: the trailing words (letters or
    ``%``, not a function name like ``ln``) apart from the number or calculation before them."""
    tokens = text.replace("%", " % ").split()
    words: list[str] = []
    while tokens and (tokens[-1].isalpha() or tokens[-1] == "%") and tokens[-1] not in FUNCTIONS:
        words.insert(0, tokens.pop())
    return " ".join(tokens), words


def _rewrite_notation(text: str) -> str:
    """``8192 x 256`` -> ``8192 * 256``; ``ln512`` -> ``ln 512``; ``9 ln 2`` -> ``9 * ln 2``;
    ``2.1M``/``64K`` -> ``2.1 m``/``64 k`` (scale words)."""
    text = re.sub(r"(?<=\d)\s*x\s*(?=\d)", " * ", text)
    text = re.sub(r"\b(ln|log|exp|sqrt)(?=\d)", r"\1 ", text)
    text = re.sub(r"(\d|\))\s*(?=\b(?:ln|log|exp|sqrt)\b)", r"\1 * ", text)
    return re.sub(r"(?<=\d)([km])\b", r" \1", text)


def _values(number: str, lang: str, raw: str) -> list[tuple[Decimal | float, int | None]]:
    """The value(s) of the number part with the decimals typed: a number word or plain digits
    (read exactly, as ``Decimal``), or a calculation (a float; ``None`` decimals)."""
    if number in NUMBER_WORDS:
        return [(Decimal(NUMBER_WORDS[number]), 0)]
    joined = _SPACE_GROUPED.sub(lambda m: re.sub(r"[\s'\u2019]", "", m.group(0)), number)
    if _SPACED_DIGITS.search(joined):  # "2097 152": a space that groups no thousands
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    if _PLAIN.fullmatch(joined):
        readings = _plain_readings(joined, lang)
        if readings:
            return list(readings)
    try:
        exact = evaluate_exact(number)
        return [(evaluate(number) if exact is None else exact, None)]
    except ValueError:
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw)) from None


def read_numeric(raw: str, answer: dict[str, Any], prompt: dict[str, str],
                 lang: str) -> list[Number]:
    """The number(s) ``raw`` means for a question with this ``answer`` and ``prompt`` (two only
    for the Spanish point, see the module docstring); Unreadable with the reason otherwise.

    Working shown beside the answer (a parenthesised remark, the left sides of a chain
    ``a = b ≈ c``) is set aside; each left side must agree with the answer within the
    question's tolerance, so ``512 × 128 = 65,000`` is asked again, not graded.
    """
    marks = stray_marks(raw)
    if marks:  # "4\u0336": a strike-through (or a slash) over the number changes what it says
        raise Unreadable(say("quiz.reask.marks", lang, answer=raw,
                             marks=" ".join(f"U+{ord(m):04X}" for m in dict.fromkeys(marks))))
    if any(ch.isnumeric() and not ch.isdecimal() for ch in raw):
        # "⁴", "2²¹", "½", "①": a digit that means more than a digit (a power, a fraction)
        # would be read as a plain digit once normalised; "𝟒" (a decimal digit) is fine
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    if _BASE_OR_UNDERSCORE.search(normalise(raw)):  # only decimal is read ("x" is no product)
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    exact_count = effective_tolerance(answer, prompt) == 0
    if exact_count:
        _refuse_approximation(raw, lang)
    text, notes = _trailing_notes(_without_full_stop(normalise(raw).strip(), exact_count,
                                                     raw, lang))
    while (stripped := _QUALIFIER.sub("", text)) != text:  # "≈ 6.238" is no chain
        text = stripped
    *working, last = _CHAIN.split(text)
    if not last or not all(working):
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    noted_words: list[str] = []
    id_lists: list[tuple[str, int]] = []
    for note in notes:
        sides, words, ids = _read_note(note, raw, answer, prompt, lang)
        working += sides
        noted_words += words
        id_lists += [(note, ids)] if ids else []
    numbers = _read_one(last, raw, answer, prompt, lang, noted_words)
    tolerance = effective_tolerance(answer, prompt) + 1e-9 * max(1.0, abs(numbers[0].value))
    for side in working:
        worked = _values(_rewrite_notation(side), lang, raw)
        if not any(_agrees(v, d, n, tolerance, exact_count) for v, d in worked for n in numbers):
            raise Unreadable(say("quiz.reask.working", lang, answer=raw, side=side))
    for note, count in id_lists:
        if not any(n.value == count for n in numbers):
            raise Unreadable(say("quiz.reask.listed", lang, answer=raw, note=note, count=count))
    return numbers


def _agrees(side: Decimal | Fraction | float, decimals: int | None, number: Number,
            tolerance: float, exact_count: bool) -> bool:
    """A side of working agrees with the answer: within the tolerance, or the answer rounded to
    the ``decimals`` it shows. For an exact count, a side with an exact value is compared
    exactly (``2^21 + 1/1000 = 2097152`` and ``3.9999999999999999 = 4`` are asked again: no
    float hair of slack)."""
    rounding = 0.0 if decimals is None else 0.5 * 10.0 ** -decimals
    if exact_count and isinstance(side, (Decimal, Fraction)) and number.exact is not None:
        exact_rounding = 0 if decimals is None else Fraction(1, 2 * 10 ** decimals)
        return abs(Fraction(side) - number.exact) <= exact_rounding
    return abs(float(side) - number.value) <= max(tolerance, rounding)


def _without_full_stop(text: str, exact_count: bool, raw: str, lang: str) -> str:
    """``text`` without the one full stop that may end a sentence (``"4."`` -> ``"4"``), and,
    beside a value with a tolerance, without a trailing off (``"6.238..."``); Unreadable when
    another point trails the answer (``"4.."``, ``"65536‥"``): one stop ends a sentence, two
    say something else. (A decimal comma with no digits after it, Spanish ``"4,"``, is read
    as the number, as English ``"4."`` is.)"""
    if not exact_count and text.endswith("..."):  # an exact count's "4..." is asked again
        text = text[:-3]
    text = text[:-1].rstrip() if text.endswith(".") else text
    if text.endswith("."):
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    return text


def _refuse_approximation(raw: str, lang: str) -> None:
    """Unreadable when an answer to an exact count says anywhere that it is approximate: a sign
    or a word before the number, after a qualifier (``exactly about 4``), on any side of a
    chain (``4 = ~4``) or in a note (``4 (≈ 3 + 1)``), or a number trailing off (``4...``)."""
    text = normalise(raw)
    if sign := _APPROXIMATE.search(text):
        raise Unreadable(say("quiz.reask.approximate", lang, answer=raw, sign=sign.group(0)))
    if hedge := _APPROXIMATE_WORDS.search(text):
        raise Unreadable(say("quiz.reask.approximate_word", lang, answer=raw,
                             word=hedge.group(1) or hedge.group(2)))


def _trailing_notes(text: str) -> tuple[str, list[str]]:
    """``"4 (ids 1, 3, 7, 9) [rows]"`` -> ``("4", ["ids 1, 3, 7, 9", "rows"])``: the bracketed
    notes at the end of an answer, each after a space, without their outer brackets (inner
    ones are kept and make the note unreadable). A group after a function name (``exp (ln
    4)``), at the start, or not closed the way it opened stays in the text (and a text that
    is then no number is asked again)."""
    notes: list[str] = []
    while text and text[-1] in _CLOSING:
        open_at, depth = -1, []
        for i in range(len(text) - 1, -1, -1):
            if text[i] in _CLOSING:
                depth.append(_CLOSING[text[i]])
            elif text[i] in _CLOSING.values():
                if not depth or depth.pop() != text[i]:
                    return text, notes  # "(4]": not closed the way it opened
                if not depth:
                    open_at = i
                    break
        head = text[:open_at]
        if open_at <= 0 or not head[-1].isspace() or _AFTER_FUNCTION.search(head) \
                or head.rstrip()[-1] in "+-*/^×·=≈~,":
            break
        notes.insert(0, text[open_at + 1:-1].strip())
        text = head.rstrip()
    return text, notes


def _read_note(note: str, raw: str, answer: dict[str, Any], prompt: dict[str, str],
               lang: str) -> tuple[list[str], list[str], int]:
    """What a bracketed note after the number is (see the module docstring): working sides
    (``"= 512 × 128"`` -> ``["512 × 128"]``), words to read beside the number, or the number
    of distinct ids a list names; Unreadable for anything else."""
    sides = _CHAIN.split(note)
    sides = sides[1:] if sides and not sides[0] else sides  # "(= 512 × 128)"
    if sides and all(sides):
        try:
            for side in sides:
                _values(_rewrite_notation(side), lang, raw)
            return sides, [], 0
        except Unreadable:
            pass
    if _NATURAL_LOG.fullmatch(re.sub(r"^(?:in|en) ", "", note)) and \
            "nats" in declared_units(answer, prompt):
        return [], ["nats"], 0
    words = note.replace("%", " % ").split()
    if words and all(w.isalpha() or w == "%" for w in words):
        for word in words:
            if word in SCALE_WORDS:  # "42880 (in thousands)": the number's scale, or a remark?
                raise Unreadable(say("quiz.reask.words", lang, answer=raw, word=word,
                                     units=unit_name(answer, prompt, lang)
                                     or say("quiz.reask.no_unit", lang)))
        return [], words, 0
    listed = _ID_LIST.fullmatch(note)
    if listed and (not listed.group(1) or listed.group(1) in LIST_LABELS
                   or listed.group(1) in declared_units(answer, prompt)):
        ids = set(re.findall(r"\d+", listed.group(2)))
        # the listed ids are working only if the question names them: "4 (rows 1, 2, 3, 4)"
        # for ids 3, 7, 9, 1 counts four, but not the rows asked about
        named = {n for key, text in prompt.items() if not key.endswith("_hash")
                 for n in re.findall(r"\d+", str(text))}
        if ids <= named:
            return [], [], len(ids)
    raise Unreadable(say("quiz.reask.note", lang, answer=raw, note=note))


def _read_one(text: str, raw: str, answer: dict[str, Any], prompt: dict[str, str],
              lang: str, noted_words: list[str] = ()) -> list[Number]:
    """One side: a number with its qualifier, scale word and unit (see :func:`read_numeric`);
    ``noted_words`` (from a bracketed note) are read as if typed after the scale word."""
    while (stripped := _QUALIFIER.sub("", text)) != text:
        text = stripped
    text = _rewrite_notation(text)
    if not text:
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    number, words = _split_words(text)
    if not number and words and words[0] in NUMBER_WORDS:
        number, words = words[0], words[1:]
    if not number:
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    scale = 1.0
    while words and words[0] in SCALE_WORDS:
        scale *= SCALE_WORDS[words.pop(0)]
    words = [*words, *noted_words]
    wrong_unit = _unit_words(words, raw, answer, prompt, lang)
    values = _values(number, lang, raw)
    asked = asked_decimals(answer, prompt)
    if asked is not None and scale == 1:  # "Give 3 decimals": a shorter number is asked again
        precise = [(v, d) for v, d in values if d is None or d >= asked]
        if not precise:
            raise Unreadable(say("quiz.reask.decimals", lang, answer=raw, n=asked))
        values = precise
    if effective_tolerance(answer, prompt) == 0 and not any(
            isinstance(v, (Decimal, Fraction)) for v, _ in values):
        # ln, exp, a root that is not exact: a float near the count, never the count itself
        raise Unreadable(say("quiz.reask.inexact", lang, answer=raw))
    numbers = []
    for v, _ in values:
        exact = Fraction(v) * int(scale) if isinstance(v, (Decimal, Fraction)) else None
        if math.isfinite(float(v) * scale):
            numbers.append(Number(float(v) * scale, wrong_unit, exact))
    return numbers


def _unit_words(words: list[str], raw: str, answer: dict[str, Any], prompt: dict[str, str],
                lang: str) -> str:
    """Check the words after a number: the question's unit, a preposition before a unit, and,
    for a count only, :data:`COUNT_MODIFIERS`. Returns a known unit of another quantity
    (the answer is then wrong), or ``""``; Unreadable names any other word or phrase."""
    units = declared_units(answer, prompt)
    is_count = bool(units & COUNT_UNITS)
    named = unit_name(answer, prompt, lang) or say("quiz.reask.no_unit", lang)
    wrong_unit = ""
    i = 0
    while i < len(words):
        phrase = next((p for p in COUNT_MODIFIERS if tuple(words[i:i + len(p)]) == p), None)
        if phrase:  # "in total": fine for "4 rows", a different quantity for a loss
            if not is_count:
                raise Unreadable(say("quiz.reask.words", lang, answer=raw,
                                     word=" ".join(phrase), units=named))
            i += len(phrase)
            continue
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in units or (word in UNIT_PREPOSITIONS and (following in units
                                                            or following in KNOWN_UNITS)):
            i += 1
            continue
        if word in KNOWN_UNITS and not wrong_unit:
            wrong_unit = word
            i += 1
            continue
        raise Unreadable(say("quiz.reask.words", lang, answer=raw, word=word, units=named))
    return wrong_unit

