"""Grading answers of each question kind, and reading answer files.

Question kinds and the answers a learner gives (``take --answers FILE``; the ``answer`` field of
``minimodel quiz export --json`` is accepted too, so an exported key grades as all right)::

    kind     in the quiz YAML                         a learner's answer
    single   0-based index                 2          2
    multi    list of 0-based indices       [0, 3]     [3, 0]          (any order, each once)
    order    the choices' indices in the   [2, 0, 1]  [2, 0, 1]       (0-based, in order)
             right order
    numeric  {value, tolerance, unit?}     {value: 4, 4, "4", "4 rows", "four", "cuatro",
                                            tolerance: 0}  "2,097,152", "6,238"
    short    accepted forms per language   {en: [effective rank, ...], es: [rango efectivo]}
                                                      "effective rank" or "Rango efectivo"
    recall   a model answer and a rubric   {en, es}   true / false: did your answer cover
                                                      every point of the rubric? (self-marked)

Why no free text graded by keywords: keywords accept negations ("it does NOT collapse") and
match inside words of the other language ("tie" in Spanish "tiene"). A question that needs an
explanation is a ``recall`` question, marked by the learner against a rubric and kept out of
the score; a question with a short, closed answer (a term, a number) is graded exactly.

How a typed number is read (locale, scale word, unit, the tolerance a "give N decimals" prompt
sets) is in :mod:`.numbers`; which words may surround a short term, in :mod:`.terms`. Both
follow one rule: an answer the grader cannot read one way is never graded. Interactively it is
asked again with the reason; in an answers file it is reported as ``unreadable`` with the reason
(not as wrong, not as a malformed file).
"""

from __future__ import annotations

import json
import math
import os
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from minimodel.lab.i18n import DEFAULT_LANG
from minimodel.lab.quiz.arithmetic import exact_literal
from minimodel.lab.quiz.loader import Question, Quiz
from minimodel.lab.quiz.numbers import (Number, Unreadable, effective_tolerance, format_number,
                                        read_numeric)
from minimodel.lab.quiz.schema import AUTO_GRADED
from minimodel.lab.quiz.terms import read_short
from minimodel.lab.quiz.text import canonical_phrase
from minimodel.messages import say

# --- numbers ------------------------------------------------------------------------------


def numeric_matches(value: float, target: dict[str, float], tolerance: float | None = None) -> bool:
    """``|value - target| <= tolerance``, with a hair of slack for float round-off.

    Why the slack: 6.238 - 6.228 is 0.010000000000000675 in binary floating point, so an answer
    exactly on the tolerance edge would otherwise be marked wrong.
    """
    tolerance = float(target["tolerance"]) if tolerance is None else tolerance
    slack = 1e-9 * max(1.0, abs(target["value"]), abs(tolerance))
    return abs(value - target["value"]) <= tolerance + slack


def numeric_right(question: Question, number: Number) -> bool:
    """Right: a declared unit (or none) and within the tolerance the prompt allows (see
    :func:`.numbers.effective_tolerance`). A number typed in digits or words is compared
    exactly (a fraction, no slack: ``3.9999999999999999`` is not the count 4), and so is a
    number given as such in an answers file and a calculation of fractions (``2^21 + 1/1000``
    is not 2^21); a calculation with ``ln``/``exp``/``sqrt`` by its float value, with
    :func:`numeric_matches`' hair of slack. The target and the tolerance are read as they are
    written in the quiz (``6.238``, ``0.001``), not as their nearest floats."""
    tolerance = effective_tolerance(question.answer, question.prompt)
    if number.wrong_unit:
        return False
    if number.exact is not None:
        target = Fraction(repr(float(question.answer["value"])))
        return abs(number.exact - target) <= Fraction(repr(float(tolerance)))
    return numeric_matches(number.value, question.answer, tolerance)


def read_number(question: Question, raw: str, lang: str) -> Number:
    """The number ``raw`` means for ``question`` (see :mod:`.numbers`); Unreadable when it
    cannot be read one way, including a Spanish ``65.536`` whose two readings grade apart."""
    readings = read_numeric(raw, question.answer, question.prompt, lang)
    if not readings:
        raise Unreadable(say("quiz.reask.not_number", lang, answer=raw))
    if len({numeric_right(question, n) for n in readings}) > 1:
        first, second = (format_number(n.value, lang) for n in readings[:2])
        raise Unreadable(say("quiz.reask.ambiguous", lang, answer=raw, first=first, second=second))
    return readings[0]


# --- yes / no ------------------------------------------------------------------------------

YES = {"y", "yes", "s", "si", "true"}  # not "1"/"0": a pasted line of an answer is no mark
NO = {"n", "no", "false"}


def read_yes_no(raw: str) -> bool:
    """``y``/``yes``/``s``/``sí`` -> True, ``n``/``no`` -> False; ValueError otherwise."""
    word = canonical_phrase(raw)
    if word in YES:
        return True
    if word in NO:
        return False
    raise ValueError(raw)


# --- checking and grading ------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def repeated(indices: list[int]) -> int | None:
    """The first choice index given more than once, or None."""
    seen: set[int] = set()
    for i in indices:
        if i in seen:
            return i
        seen.add(i)
    return None


def check_answer(question: Question, answer: Any, lang: str) -> Any:
    """Validate the type/range of ``answer`` for ``question``; return it in canonical form.

    Canonical forms: single int, multi sorted list, order list, numeric float, short string,
    recall bool. ``lang`` is the language of the error message.

    Raises:
        ValueError or TypeError naming the question, the value and the expected format.
    """
    qid, kind, n = question.id, question.kind, len(question.choices)

    def in_range(i: int) -> int:
        if not 0 <= i < n:
            raise ValueError(say("quiz.answer.out_of_range", lang, qid=qid, index=i, last=n - 1))
        return i

    if kind == "single":
        if not _is_int(answer):
            raise TypeError(say("quiz.answer.single", lang, qid=qid, answer=answer))
        return in_range(answer)
    if kind == "multi":
        if not isinstance(answer, list) or not all(_is_int(i) for i in answer):
            raise TypeError(say("quiz.answer.multi", lang, qid=qid, answer=answer))
        if (twice := repeated(answer)) is not None:  # a slip or a guess: never read one way
            reason = say("quiz.reask.repeated", lang, answer=answer, choice=twice)
            raise Unreadable(say("quiz.answer.unreadable", lang, qid=qid, reason=reason), reason)
        return sorted({in_range(i) for i in answer})
    if kind == "order":
        if (not isinstance(answer, list) or not all(_is_int(i) for i in answer)
                or sorted(answer) != list(range(n))):
            raise ValueError(say("quiz.answer.order", lang, qid=qid, n=n,
                               example=list(range(n))[::-1], answer=answer))
        return list(answer)
    if kind == "numeric":
        if isinstance(answer, dict) and "value" in answer:  # the exported form
            answer = answer["value"]
        if isinstance(answer, Number):
            return answer
        if isinstance(answer, str):
            try:
                return read_number(question, answer, lang)
            except Unreadable as exc:
                raise Unreadable(say("quiz.answer.unreadable", lang, qid=qid, reason=exc.reason),
                                 exc.reason) from None
        if _is_int(answer) or isinstance(answer, (float, Decimal)):
            if not math.isfinite(answer):
                raise ValueError(say("quiz.answer.not_finite", lang, qid=qid, answer=answer))
            # exactly as written in the file (a JSON number is read as a Decimal from its
            # digits, see read_answers): 3.9999999999999999 is not the count 4
            try:
                exact = exact_literal(str(answer) if isinstance(answer, Decimal) else repr(answer))
            except ValueError:  # 1e-999999999: an exponent beyond any float's
                reason = say("quiz.reask.not_number", lang, answer=str(answer))
                raise Unreadable(say("quiz.answer.unreadable", lang, qid=qid, reason=reason),
                                 reason) from None
            return Number(float(answer), exact=exact)
        raise TypeError(say("quiz.answer.numeric", lang, qid=qid, answer=answer))
    if kind == "short":
        if isinstance(answer, dict):  # the exported form: its first accepted form
            forms = [f for lang_forms in answer.values() if isinstance(lang_forms, list)
                     for f in lang_forms if isinstance(f, str)]
            answer = forms[0] if forms else answer
        if not isinstance(answer, str) or not canonical_phrase(answer):
            raise TypeError(say("quiz.answer.short", lang, qid=qid, answer=answer))
        try:
            read_short(answer, question.answer, lang)
        except Unreadable as exc:
            raise Unreadable(say("quiz.answer.unreadable", lang, qid=qid, reason=exc.reason),
                                 exc.reason) from None
        return answer
    # recall: the learner's own judgement against the rubric
    if isinstance(answer, dict) and "recalled" in answer:
        answer = answer["recalled"]
    elif isinstance(answer, dict) and answer and set(answer) <= set(question.answer):
        answer = True  # the exported model answer itself (not an empty mapping)
    if isinstance(answer, str):
        try:
            answer = read_yes_no(answer)
        except ValueError:
            pass
    if not isinstance(answer, bool):
        raise TypeError(say("quiz.answer.recall", lang, qid=qid, answer=answer))
    return answer


def is_correct(question: Question, answer: Any, lang: str) -> bool:
    """Grade one answer (a recall question returns the learner's own mark); ``lang`` is the
    language of the error when the answer does not fit the question."""
    answer = check_answer(question, answer, lang)
    kind = question.kind
    if kind == "single":
        return answer == question.answer
    if kind == "multi":
        return answer == sorted(set(question.answer))
    if kind == "order":
        return answer == list(question.answer)
    if kind == "numeric":
        return numeric_right(question, answer)
    if kind == "short":
        return read_short(answer, question.answer, lang)
    return answer


def check_answers(quiz: Quiz, answers: Any, lang: str,
                  unreadable: dict[str, str] | None = None) -> dict[str, Any]:
    """Check a whole answer mapping; one ValueError lists every unknown id and bad answer.

    An answer of the right type that cannot be read one way (``65536 each``) is not an error
    of the file: it goes into ``unreadable`` (question id -> reason) when that dict is given.
    ``lang`` is the language the answers were typed in: it reads their numbers (``6,238`` is
    six point two three eight in Spanish, six thousand and so asked again in English) and
    words the messages, per-question details included.
    """
    if not isinstance(answers, dict):
        raise ValueError(say("quiz.error.not_mapping", lang, type=type(answers).__name__))
    unknown = [str(k) for k in answers if k not in quiz.ids]
    problems = []
    if unknown:
        ids = ", ".join(unknown)
        problems.append(say("quiz.error.unknown_ids", lang, ids=ids, quiz=quiz.id,
                            first=quiz.ids[0], last=quiz.ids[-1]) if len(quiz.ids) > 1
                        else say("quiz.error.unknown_ids_one", lang, ids=ids, quiz=quiz.id,
                                 first=quiz.ids[0]))
    checked: dict[str, Any] = {}
    for qid, answer in answers.items():
        if qid in unknown:
            continue
        try:
            checked[qid] = check_answer(quiz.question(qid), answer, lang)
        except Unreadable as exc:
            if unreadable is None:
                problems.append(say("quiz.error.malformed", lang, problem=exc))
            else:
                unreadable[qid] = exc.reason
        except (TypeError, ValueError) as exc:
            problems.append(say("quiz.error.malformed", lang, problem=exc))
    if problems:
        raise ValueError("; ".join(problems))
    return checked


def grade(quiz: Quiz, answers: dict[str, Any], lang: str) -> dict[str, Any]:
    """Grade every question; a missing answer counts as incorrect. ``lang`` is the language the
    answers were typed in, so one text gets one grade live, recorded and from a file.

    Returns:
        ``{"score", "total", "results": [{"id", "correct", "status"[, "reason"]}], "recall":
        {"answered", "recalled", "total", "results": [{"id", "recalled"}]}}``, in quiz order.
        ``status`` is ``right``, ``wrong``, ``unanswered`` or ``unreadable`` (then ``reason``
        says why; ``correct`` is false, the answer was not graded). ``score`` and ``total``
        count only the auto-graded kinds; recall questions are self-marked and reported apart
        (an unanswered one is left out of ``recall.results``).
    """
    unreadable: dict[str, str] = {}
    checked = check_answers(quiz, answers, lang, unreadable)
    results, recalled = [], []
    for q in quiz.questions:
        if q.kind in AUTO_GRADED:
            if q.id in unreadable:
                results.append({"id": q.id, "correct": False, "status": "unreadable",
                                "reason": unreadable[q.id]})
                continue
            right = q.id in checked and is_correct(q, checked[q.id], lang)
            status = "right" if right else "wrong" if q.id in checked else "unanswered"
            results.append({"id": q.id, "correct": right, "status": status})
        elif q.id in checked:
            recalled.append({"id": q.id, "recalled": bool(checked[q.id])})
    recall_total = sum(q.kind not in AUTO_GRADED for q in quiz.questions)
    return {"score": sum(r["correct"] for r in results), "total": len(results),
            "results": results,
            "recall": {"answered": len(recalled), "recalled": sum(r["recalled"] for r in recalled),
                       "total": recall_total, "results": recalled}}


def expected_value(question: Question, lang: str) -> str:
    """A numeric question's expected answer as the language writes it, with the tolerance
    the grader applies: ``2,097,152 parameters``, ``6,238 ± 0,001``."""
    target = question.answer
    text = format_number(float(target["value"]), lang)
    tolerance = effective_tolerance(target, question.prompt)
    if tolerance:
        text += f" ± {format_number(tolerance, lang)}"
    if target.get("unit"):
        text += f" {target['unit'].get(lang) or target['unit']['en']}"
    return text


def outcomes(report: dict[str, Any]) -> dict[str, bool]:
    """Question id -> right (auto-graded) or recalled (self-marked), for the Leitner boxes."""
    out = {r["id"]: bool(r["correct"]) for r in report["results"]}
    out.update({r["id"]: bool(r["recalled"]) for r in report.get("recall", {}).get("results", [])})
    return out


class TypedYamlLoader(yaml.BaseLoader):
    """YAML that keeps every scalar as the text typed, but a plain whole number in decimal
    digits (``2``, ``-1``, ``[0, 3]``: choice indices), which is an int.

    Why not ``yaml.safe_load``: it reads YAML 1.1, which turns text into numbers and booleans
    silently: ``582:32:32`` is 2097152 in base 60, ``0200000`` is 65536 in octal, ``0x4`` is 4,
    ``1_000`` is 1000, ``.inf`` is infinity, ``on``/``off`` are booleans and ``~`` is null. Kept
    as text, each is read as the grader reads anything typed (``0x4`` and ``1_000`` are asked
    again, ``0200000`` is two hundred thousand, ``yes``/``no`` and ``true``/``false`` are a
    self-mark, ``on`` is none)."""


TypedYamlLoader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^(?:0|-?[1-9][0-9]*)$"),
                                      list("-0123456789"))
TypedYamlLoader.add_constructor("tag:yaml.org,2002:int",
                                lambda loader, node: int(loader.construct_scalar(node)))


def read_answers(path: str | os.PathLike, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """Read an answers file: JSON, or YAML when it is not JSON.

    Each answer is read as it was typed. A JSON number with a point or an exponent becomes a
    ``Decimal`` of its own digits (``parse_float``): ``json`` would make
    ``3.9999999999999999`` the float 4.0, and so the count 4. A YAML scalar stays its text
    (:class:`TypedYamlLoader`), but a whole number in plain digits.
    ``lang`` is the language of the error messages.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise ValueError(say("quiz.error.answers_dir", lang, path=path)) from None
    except UnicodeDecodeError:
        raise ValueError(say("quiz.error.answers_not_utf8", lang, path=path)) from None
    except OSError as exc:
        raise ValueError(say("quiz.error.answers_unreadable", lang, path=path,
                           reason=exc.strerror)) from exc
    try:
        data = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError:
        try:
            data = yaml.load(text, Loader=TypedYamlLoader)  # noqa: S506 - scalars as text
        except yaml.YAMLError as exc:
            reason = " ".join(str(exc).split())
            raise ValueError(say("quiz.error.answers_not_json_yaml", lang, path=path,
                               reason=reason)) from None
    if data is None:
        raise ValueError(say("quiz.error.answers_empty", lang, path=path))
    if not isinstance(data, dict):
        raise ValueError(say("quiz.error.answers_not_mapping", lang, path=path,
                           type=type(data).__name__))
    return {str(k): v for k, v in data.items()}


LABELS = ("correct", "wrong", "reask")


def labelled_outcome(question: Question, item: Any, lang: str) -> str:
    """``correct``, ``wrong`` or ``reask`` (unreadable, or not of the question's kind)."""
    try:
        return "correct" if is_correct(question, item, lang) else "wrong"
    except (TypeError, ValueError):
        return "reask"


def labelled_problems(quiz: Quiz, labelled: dict[str, Any], minimum: int = 8) -> list[str]:
    """Check a labelled answer set: every answer grades exactly as labelled, in its language
    (``correct`` right, ``wrong`` graded wrong, ``reask`` asked again as unreadable), and every
    short or numeric question has at least ``minimum`` correct and ``minimum`` not-right
    (wrong + reask) answers, in each language.

    ``labelled`` is ``{"quiz": id, "answers": {qid: {lang: {"correct": [...], "wrong": [...],
    "reask": [...]}}}}``. Why: exact matching must be shown to accept what people really type
    and to refuse what a learner who guesses would type; the set is the evidence, and it grows
    with every report.
    """
    problems: list[str] = []
    answers = labelled.get("answers") if isinstance(labelled, dict) else None
    if not isinstance(answers, dict):
        return ["labelled answers: expected a mapping under 'answers'"]
    for q in quiz.questions:
        if q.kind in ("numeric", "short") and q.id not in answers:
            problems.append(f"{q.id}: no labelled answers (a {q.kind} question needs them)")
    for qid, by_lang in answers.items():
        try:
            q = quiz.question(qid)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        for lang, sets in (by_lang or {}).items():
            sets = sets or {}
            counts = {label: len(sets.get(label) or []) for label in LABELS}
            if counts["correct"] < minimum or counts["wrong"] + counts["reask"] < minimum:
                problems.append(f"{qid} ({lang}): {counts['correct']} correct and "
                                f"{counts['wrong'] + counts['reask']} wrong or reask answers; "
                                f"label at least {minimum} of each")
            for label in LABELS:
                for item in sets.get(label) or []:
                    got = labelled_outcome(q, item, lang)
                    if got != label:
                        problems.append(f"{qid} ({lang}): {item!r} is labelled {label} but "
                                        f"grades as {got}")
    return problems
