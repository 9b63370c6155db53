"""Grading answers of each question kind, and reading answer files.

Question kinds and the answers a learner gives (``take --answers FILE``; the ``answer`` field of
``minimodel quiz export --json`` is accepted too, so an exported key grades as all right)::

    kind     in the quiz YAML                         a learner's answer
    single   0-based index                 2          2
    multi    list of 0-based indices       [0, 3]     [3, 0]          (order does not matter)
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

Short answers match after :func:`canonical_phrase`: case, accents, punctuation, hyphens and a
leading article are ignored; every accepted form, in either language, is a right answer.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import yaml

from minimodel.lab.quiz.arithmetic import evaluate
from minimodel.lab.quiz.loader import Question, Quiz
from minimodel.lab.quiz.schema import AUTO_GRADED, load_yaml
from minimodel.lab.quiz.ui import t
from minimodel.lab.i18n import DEFAULT_LANG
from minimodel.lab.quiz.text import canonical_phrase, normalise

# --- numbers -------------------------------------------------------------------------------

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

_GROUPED = re.compile(r"[+-]?\d{1,3}(?:([.,])\d{3})+")
_LEADING_NUMBER = re.compile(r"[+-]?[\d.,]*\d(?:[\s\u00a0\u202f\u2009]\d{3})*(?![\d.,])")


def _digit_readings(text: str) -> list[float]:
    """Readings of a string of digits and separators (no spaces, no letters)."""
    if "," in text and "." in text:  # both marks: the last one is the decimal mark
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        group = "." if decimal == "," else ","
        try:
            return [float(text.replace(group, "").replace(decimal, "."))]
        except ValueError:
            return []
    readings = []
    match = _GROUPED.fullmatch(text)
    if match:  # digits grouped by threes: thousands separators
        readings.append(float(text.replace(match.group(1), "")))
    if text.count(",") <= 1 and text.count(".") <= 1:  # one separator: a decimal mark
        try:
            readings.append(float(text.replace(",", ".")))
        except ValueError:
            pass
    return [value for value in readings if math.isfinite(value)]


def numeric_readings(raw: str) -> list[float]:
    """The numbers a learner may mean by ``raw``; ValueError when it is not one number.

    People type numbers the way they write them: ``2,097,152``, ``2.097.152`` or
    ``2 097 152`` (English, Spanish and SI thousands separators), ``6,238`` or ``6.238``
    (decimal comma or point), ``four``/``cuatro`` (number words up to twenty), they add a
    unit (``4 rows``, ``4 filas``) or write the calculation (``8192 * 256``, ``ln 512``, see
    :mod:`.arithmetic`). ``65,536`` and ``6.238`` are genuinely ambiguous (thousands
    or three decimals); both readings are returned and the caller keeps the one on the
    question's scale, since the two differ by a factor of 1000.

    Anything else after the number must be words (a unit): ``4 or 5`` or ``not 4`` are not one
    number and raise, so they are never graded as the number they contain.
    """
    text = normalise(raw).strip().lstrip("≈~ ").rstrip(".!")
    if not text:
        raise ValueError(raw)
    first, _, rest = text.partition(" ")
    number: list[float] = []
    unit = ""
    if first in NUMBER_WORDS:
        number, unit = [float(NUMBER_WORDS[first])], rest
    elif (match := _LEADING_NUMBER.match(text)) is not None:
        digits = re.sub(r"[\s\u00a0\u202f\u2009]", "", match.group(0))
        number, unit = _digit_readings(digits), text[match.end():]
    if not number or not _is_unit(unit):
        return [evaluate(text)]  # "8192 * 256", "2^21", "ln 512"; ValueError when not
    return number


def _is_unit(text: str) -> bool:
    """Empty, or a few words of letters (``rows``, ``parametros``, ``%``): no digits, no
    second number word."""
    words = text.replace("%", " percent ").split()
    return (len(words) <= 3 and all(w.isalpha() for w in words)
            and not any(w in NUMBER_WORDS and w not in {"un", "una"} for w in words))


def numeric_matches(value: float, target: dict[str, float]) -> bool:
    """``|value - target| <= tolerance``, with a hair of slack for float round-off.

    Why the slack: 6.238 - 6.228 is 0.010000000000000675 in binary floating point, so an answer
    exactly on the tolerance edge would otherwise be marked wrong.
    """
    slack = 1e-9 * max(1.0, abs(target["value"]), abs(target["tolerance"]))
    return abs(value - target["value"]) <= target["tolerance"] + slack


def read_number(question: Question, raw: str) -> float:
    """The number ``raw`` means, on the scale of the question's answer (see numeric_readings)."""
    target = float(question.answer["value"])
    return min(numeric_readings(raw), key=lambda value: abs(value - target))


# --- yes / no ------------------------------------------------------------------------------

YES = {"y", "yes", "s", "si", "true", "1"}
NO = {"n", "no", "false", "0"}


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


def check_answer(question: Question, answer: Any, lang: str = DEFAULT_LANG) -> Any:
    """Validate the type/range of ``answer`` for ``question``; return it in canonical form.

    Canonical forms: single int, multi sorted list, order list, numeric float, short string,
    recall bool. ``lang`` is the language of the error message.

    Raises:
        ValueError or TypeError naming the question, the value and the expected format.
    """
    qid, kind, n = question.id, question.kind, len(question.choices)

    def in_range(i: int) -> int:
        if not 0 <= i < n:
            raise ValueError(t("answer.out_of_range", lang, qid=qid, index=i, last=n - 1))
        return i

    if kind == "single":
        if not _is_int(answer):
            raise TypeError(t("answer.single", lang, qid=qid, answer=answer))
        return in_range(answer)
    if kind == "multi":
        if not isinstance(answer, list) or not all(_is_int(i) for i in answer):
            raise TypeError(t("answer.multi", lang, qid=qid, answer=answer))
        return sorted({in_range(i) for i in answer})
    if kind == "order":
        if (not isinstance(answer, list) or not all(_is_int(i) for i in answer)
                or sorted(answer) != list(range(n))):
            raise ValueError(t("answer.order", lang, qid=qid, n=n,
                               example=list(range(n))[::-1], answer=answer))
        return list(answer)
    if kind == "numeric":
        if isinstance(answer, dict) and "value" in answer:  # the exported form
            answer = answer["value"]
        if isinstance(answer, str):
            try:
                return read_number(question, answer)
            except ValueError:
                raise ValueError(t("answer.not_one_number", lang, qid=qid,
                                   answer=answer)) from None
        if _is_int(answer) or isinstance(answer, float):
            if not math.isfinite(answer):
                raise ValueError(t("answer.not_finite", lang, qid=qid, answer=answer))
            return float(answer)
        raise TypeError(t("answer.numeric", lang, qid=qid, answer=answer))
    if kind == "short":
        if isinstance(answer, dict):  # the exported form: its first accepted form
            forms = [f for lang_forms in answer.values() if isinstance(lang_forms, list)
                     for f in lang_forms if isinstance(f, str)]
            answer = forms[0] if forms else answer
        if not isinstance(answer, str) or not canonical_phrase(answer):
            raise TypeError(t("answer.short", lang, qid=qid, answer=answer))
        return answer
    # recall: the learner's own judgement against the rubric
    if isinstance(answer, dict) and "recalled" in answer:
        answer = answer["recalled"]
    elif isinstance(answer, dict) and set(answer) <= set(question.answer):
        answer = True  # the exported model answer itself
    if isinstance(answer, str):
        try:
            answer = read_yes_no(answer)
        except ValueError:
            pass
    if not isinstance(answer, bool):
        raise TypeError(t("answer.recall", lang, qid=qid, answer=answer))
    return answer


def is_correct(question: Question, answer: Any, lang: str = DEFAULT_LANG) -> bool:
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
        return numeric_matches(answer, question.answer)
    if kind == "short":
        return short_matches(answer, question.answer)
    return answer


_ALTERNATIVES = re.compile(r"[()\[\]/,;]| or | o ", re.IGNORECASE)


def short_matches(answer: str, forms: dict[str, list[str]]) -> bool:
    """Is ``answer`` an accepted form (any language), after :func:`canonical_phrase`?

    A learner may give the term with an alias, ``effective rank (erank)`` or ``rango efectivo /
    effective rank``: then every part must be an accepted form. So ``(not) effective rank``
    is refused, because ``not`` is not one.
    """
    accepted = {canonical_phrase(form) for lang_forms in forms.values() for form in lang_forms}
    whole = canonical_phrase(answer)
    if whole in accepted:
        return True
    parts = [canonical_phrase(p) for p in _ALTERNATIVES.split(f" {answer} ")]
    parts = [p for p in parts if p]
    return bool(parts) and all(p in accepted for p in parts)


def check_answers(quiz: Quiz, answers: Any, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """Check a whole answer mapping; one ValueError lists every unknown id and bad answer.

    ``lang`` is the language of the error message, per-question details included.
    """
    if not isinstance(answers, dict):
        raise ValueError(t("error.not_mapping", lang, type=type(answers).__name__))
    unknown = [str(k) for k in answers if k not in quiz.ids]
    problems = []
    if unknown:
        problems.append(t("error.unknown_ids", lang, ids=", ".join(unknown), quiz=quiz.id,
                          first=quiz.ids[0], last=quiz.ids[-1]))
    checked: dict[str, Any] = {}
    for qid, answer in answers.items():
        if qid in unknown:
            continue
        try:
            checked[qid] = check_answer(quiz.question(qid), answer, lang)
        except (TypeError, ValueError) as exc:
            problems.append(t("error.malformed", lang, problem=exc))
    if problems:
        raise ValueError("; ".join(problems))
    return checked


def grade(quiz: Quiz, answers: dict[str, Any], lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """Grade every question; a missing answer counts as incorrect.

    Returns:
        ``{"score", "total", "results": [{"id", "correct"}], "recall": {"answered",
        "recalled", "total", "results": [{"id", "recalled"}]}}``, in quiz order. ``score`` and
        ``total`` count only the auto-graded kinds; recall questions are self-marked and
        reported apart (an unanswered one is left out of ``recall.results``).
    """
    checked = check_answers(quiz, answers, lang)
    results, recalled = [], []
    for q in quiz.questions:
        if q.kind in AUTO_GRADED:
            results.append({"id": q.id, "correct": q.id in checked and is_correct(q, checked[q.id])})
        elif q.id in checked:
            recalled.append({"id": q.id, "recalled": bool(checked[q.id])})
    recall_total = sum(q.kind not in AUTO_GRADED for q in quiz.questions)
    return {"score": sum(r["correct"] for r in results), "total": len(results),
            "results": results,
            "recall": {"answered": len(recalled), "recalled": sum(r["recalled"] for r in recalled),
                       "total": recall_total, "results": recalled}}


def outcomes(report: dict[str, Any]) -> dict[str, bool]:
    """Question id -> right (auto-graded) or recalled (self-marked), for the Leitner boxes."""
    out = {r["id"]: bool(r["correct"]) for r in report["results"]}
    out.update({r["id"]: bool(r["recalled"]) for r in report.get("recall", {}).get("results", [])})
    return out


def read_answers(path: str | os.PathLike, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """Read an answers file: JSON, or YAML when it is not JSON (``yaml.safe_load``).

    ``lang`` is the language of the error messages.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise ValueError(t("error.answers_dir", lang, path=path)) from None
    except UnicodeDecodeError:
        raise ValueError(t("error.answers_not_utf8", lang, path=path)) from None
    except OSError as exc:
        raise ValueError(t("error.answers_unreadable", lang, path=path,
                           reason=exc.strerror)) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = load_yaml(text)
        except yaml.YAMLError as exc:
            reason = " ".join(str(exc).split())
            raise ValueError(t("error.answers_not_json_yaml", lang, path=path,
                               reason=reason)) from None
    if not isinstance(data, dict):
        raise ValueError(t("error.answers_not_mapping", lang, path=path,
                           type=type(data).__name__))
    return {str(k): v for k, v in data.items()}


def labelled_problems(quiz: Quiz, labelled: dict[str, Any], minimum: int = 8) -> list[str]:
    """Check a labelled answer set: every ``correct`` answer grades right, every ``wrong`` one
    does not (an unreadable one counts as not right), and every short or numeric question has
    at least ``minimum`` of each, in each language.

    ``labelled`` is ``{"quiz": id, "answers": {qid: {lang: {"correct": [...], "wrong": [...]}}}}``.
    Why: exact matching must be shown to accept what people really type and to refuse what a
    learner who guesses would type; the set is the evidence, and it grows with every report.
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
            for label in ("correct", "wrong"):
                items = (sets or {}).get(label) or []
                if len(items) < minimum:
                    problems.append(f"{qid} ({lang}): only {len(items)} {label} answers; "
                                    f"label at least {minimum}")
                for item in items:
                    try:
                        right = is_correct(q, item)
                    except (TypeError, ValueError):
                        right = False
                    if right != (label == "correct"):
                        problems.append(f"{qid} ({lang}): {item!r} is labelled {label} but "
                                        f"grades as {'right' if right else 'wrong'}")
    return problems
