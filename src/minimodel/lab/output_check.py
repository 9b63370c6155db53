"""How what a lesson block prints is compared with the ``output`` block written after it:
exactly, within a declared tolerance, or as a sample.

Most of what a lesson prints is the same on every computer: shapes, counts, token ids, exact
arithmetic, values computed in float64 from fixed inputs. Those are compared character for
character. Some values are not: NumPy's matrix products go through the machine's BLAS
(OpenBLAS picks its kernels by CPU: AVX2, AVX-512, ...), each kernel adds the terms of a dot
product in its own order, and floating-point addition is not associative,

    (a + b) + c  and  a + (b + c)  can differ in the last bit,

so a float32 product differs in its last bits from one CPU to another, and a few hundred
training steps amplify those bits into a visibly different loss. The lesson source declares,
on the ``output`` block itself, how such a block is checked::

    ```output                          every character as written (the default)
    ```output rtol=0.01 atol=0.002     numbers within a tolerance, everything else exact
    ```output sample                   generated text: that sampling runs, not its letters

Under a tolerance, a number written with a decimal point or an exponent (``3.103``,
``8.2e-02``) may differ from the written one by ``atol + rtol * |written|``; everything else
stays exact: the words, the number of numbers, how many decimals each shows, and every whole
number (a shape, a count, an id), so a changed shape or count is never taken for drift. The
tolerances are chosen from the spread measured across OpenBLAS core types
(``python benchmarks/lesson_drift.py`` re-measures it).

A ``sample`` block must print the written first line (the prompt) and then some text, between
half and twice the written length.

:func:`compare` returns a :class:`Verdict`: ``ok``, ``drift`` (only numbers with a decimal
point differ, beyond the declared tolerance, or at all in a block without one: a learner's
build warns, a strict build fails) or ``content`` (anything else: fails every build).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from minimodel.messages import say

# A number as Python prints it: 42, -0.5, 3.103, 8.2e-02, 1e-05; not inside a word (p50, x_2).
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@dataclass(frozen=True)
class OutputMark:
    """How one ``output`` block is compared: its ``rtol`` and ``atol``, or ``sample``."""

    rtol: float = 0.0
    atol: float = 0.0
    sample: bool = False

    @property
    def exact(self) -> bool:
        return not self.sample and self.rtol == 0.0 and self.atol == 0.0

    def describe(self) -> str:
        """``rtol=0.01 atol=0.002`` or ``sample`` (what the source wrote, normalised)."""
        if self.sample:
            return "sample"
        return " ".join(f"{name}={value:g}" for name, value in
                        (("rtol", self.rtol), ("atol", self.atol)) if value)


def parse_mark(words: str) -> OutputMark:
    """The mark after ``output`` on the fence line (``"rtol=0.01 atol=0.002"``, ``"sample"``,
    ``""``); a ValueError that names the word it cannot read and what it accepts."""
    rtol = atol = 0.0
    sample = False
    for word in words.split():
        name, _, value = word.partition("=")
        if word == "sample":
            sample = True
            continue
        if name in ("rtol", "atol") and value:
            try:
                number = float(value)
            except ValueError:
                number = -1.0
            if number >= 0.0:
                rtol, atol = (number, atol) if name == "rtol" else (rtol, number)
                continue
        raise ValueError(f"the ```output mark {word!r} is not one of: rtol=R, atol=A (numbers "
                         "≥ 0, e.g. rtol=0.01 atol=0.002) or sample")
    if sample and (rtol or atol):
        raise ValueError("an ```output block is either a sample or has a tolerance, not both")
    return OutputMark(rtol, atol, sample)


def split_numbers(text: str) -> tuple[list[str], list[str]]:
    """``(the text between numbers, the numbers)``: ``"loss 3.10 at 20"`` ->
    ``(["loss ", " at ", ""], ["3.10", "20"])``."""
    return NUMBER.split(text), NUMBER.findall(text)


def _is_whole(number: str) -> bool:
    return not any(c in number for c in ".eE")


def _shape(number: str) -> tuple[bool, int, bool]:
    """What a printed number's format says, which drift never changes: whole or not, digits
    after the point, an exponent or not."""
    mantissa = re.split("[eE]", number)[0]
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return _is_whole(number), decimals, "e" in number.lower()


@dataclass
class Deviation:
    """One printed number against the written one."""

    written: str
    printed: str

    @property
    def absolute(self) -> float:
        return abs(float(self.printed) - float(self.written))

    @property
    def relative(self) -> float:
        scale = abs(float(self.written))
        return self.absolute / scale if scale else (0.0 if self.absolute == 0 else float("inf"))


@dataclass
class Verdict:
    """``kind``: ``ok``, ``drift`` or ``content``; ``deviations``: the numbers outside the
    tolerance (drift); ``reason``: why a ``content`` verdict is one."""

    kind: str
    deviations: list[Deviation] = field(default_factory=list)
    reason: str = ""

    def summary(self, mark: OutputMark) -> str:
        """``3.103 -> 3.084 (|Δ| 0.019, 0.61 %), ...; declared: rtol=0.005`` for a drift."""
        shown = ", ".join(f"{d.written} -> {d.printed} (|Δ| {d.absolute:.3g}, "
                          f"{100 * d.relative:.2g} %)" for d in self.deviations[:4])
        more = f" and {len(self.deviations) - 4} more" if len(self.deviations) > 4 else ""
        declared = mark.describe() if not mark.exact else "none (compared exactly)"
        return f"{shown}{more}; tolerance declared: {declared}"


def _normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).rstrip()


def _sample_verdict(expected: str, printed: str) -> Verdict:
    first = expected.splitlines()[0] if expected else ""
    if not printed.startswith(first):
        return Verdict("content", reason=f"a sample must start with the written first line "
                                         f"{first!r}")
    if not len(expected) / 2 <= len(printed) <= 2 * len(expected):
        return Verdict("content", reason=f"the sample printed {len(printed)} characters, not "
                                         f"between half and twice the {len(expected)} written")
    return Verdict("ok")


def compare(expected: str, printed: str, mark: OutputMark = OutputMark()) -> Verdict:
    """Compare the written ``expected`` with ``printed`` as ``mark`` says (trailing spaces and
    blank lines at either end never count)."""
    expected, printed = _normalised(expected), _normalised(printed)
    if mark.sample:
        return _sample_verdict(expected, printed)
    if printed == expected:
        return Verdict("ok")
    (text_w, numbers_w), (text_p, numbers_p) = split_numbers(expected), split_numbers(printed)
    if text_w != text_p or len(numbers_w) != len(numbers_p):
        return Verdict("content", reason="the text or the number of printed values changed")
    outside = []
    for written, now in zip(numbers_w, numbers_p):
        if written == now:
            continue
        if _shape(written) != _shape(now) or _is_whole(written):
            return Verdict("content", reason=f"{written} became {now}: a whole number (a shape, "
                                             "a count, an id) or a number's format changed")
        deviation = Deviation(written, now)
        if deviation.absolute > mark.atol + mark.rtol * abs(float(written)):
            outside.append(deviation)
    return Verdict("drift", outside) if outside else Verdict("ok")


def _tolerance_words(mark: OutputMark, lang: str) -> str:
    """``± 0.5 %``, ``± 0.002``, ``± (1 % + 0.002)``, with the language's decimal mark."""
    parts = ([f"{100 * mark.rtol:g} %"] if mark.rtol else []) + \
            ([f"{mark.atol:g}"] if mark.atol else [])
    words = "± " + (f"({parts[0]} + {parts[1]})" if len(parts) == 2 else parts[0])
    return words.replace(".", ",") if lang == "es" else words


def note(mark: OutputMark, lang: str) -> str:
    """The one line a page and a notebook show under a block that is not compared exactly:
    the reader's numbers (or text) will differ slightly, and why."""
    if mark.sample:
        return say("lesson.sample_note", lang)
    return say("lesson.drift_note", lang, tolerance=_tolerance_words(mark, lang))
