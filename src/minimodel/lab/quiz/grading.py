"""Grading answers of each question kind, and reading answer files.

Answer formats (the same as ``minimodel quiz export``, except free and numeric)::

    single   0-based int index                     2
    multi    list of 0-based int indices           [0, 1, 3]   (order does not matter)
    free     a string                               "the embedding collapsed"
    numeric  a number                               6.238

A free answer is correct when it contains, for EVERY keyword group, AT LEAST ONE keyword of that
group (an AND of ORs). Matching ignores case and accents, and a keyword must start at a word
boundary, so "rank" does not match inside "frank" but "collaps" matches "collapsed".
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from minimodel.lab.quiz.loader import Question, Quiz
from minimodel.lab.quiz.schema import load_yaml


def normalise(text: str) -> str:
    """Casefold, strip accents (NFKD + drop combining marks) and collapse whitespace."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())


def keyword_in(keyword: str, text: str) -> bool:
    """True when ``keyword`` occurs in ``text`` starting at a word boundary (both normalised)."""
    kw = normalise(keyword)
    return bool(kw) and re.search(r"(?<!\w)" + re.escape(kw), normalise(text)) is not None


def free_matches(text: str, groups: list[list[str]]) -> bool:
    """AND over groups of OR over keywords."""
    return all(any(keyword_in(kw, text) for kw in group) for group in groups)


def numeric_matches(value: float, target: dict[str, float]) -> bool:
    """``|value - target| <= tolerance``, with a hair of slack for float round-off.

    Why the slack: 6.238 - 6.228 is 0.010000000000000675 in binary floating point, so an answer
    exactly on the tolerance edge would otherwise be marked wrong.
    """
    slack = 1e-9 * max(1.0, abs(target["value"]), abs(target["tolerance"]))
    return abs(value - target["value"]) <= target["tolerance"] + slack


def check_answer(question: Question, answer: Any) -> Any:
    """Validate the type/range of ``answer`` for ``question``; return it in canonical form.

    Raises:
        ValueError or TypeError naming the question, the value and the expected format.
    """
    qid, kind, n = question.id, question.kind, len(question.choices)

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def in_range(i: int) -> int:
        if not 0 <= i < n:
            raise ValueError(f"{qid}: choice index {i} is out of range; use 0..{n - 1} "
                             "(indices are 0-based)")
        return i

    if kind == "single":
        if not is_int(answer):
            raise TypeError(f"{qid} is a single-choice question: answer with one 0-based "
                            f"index such as 1, not {answer!r}")
        return in_range(answer)
    if kind == "multi":
        if not isinstance(answer, list) or not all(is_int(i) for i in answer):
            raise TypeError(f"{qid} is a multiple-choice question: answer with a list of "
                            f"0-based indices such as [0, 2], not {answer!r}")
        return sorted({in_range(i) for i in answer})
    if kind == "free":
        if not isinstance(answer, str):
            raise TypeError(f"{qid} is a free-answer question: answer with a string, "
                            f"not {answer!r}")
        return answer
    if is_int(answer) or isinstance(answer, float):
        if not math.isfinite(answer):
            raise ValueError(f"{qid}: numeric answer must be finite, got {answer!r}")
        return float(answer)
    raise TypeError(f"{qid} is a numeric question: answer with a number such as 6.24, "
                    f"not {answer!r}")


def is_correct(question: Question, answer: Any) -> bool:
    """Grade one (already checked) answer."""
    answer = check_answer(question, answer)
    if question.kind == "single":
        return answer == question.answer
    if question.kind == "multi":
        return answer == sorted(set(question.answer))
    if question.kind == "free":
        return free_matches(answer, question.answer)
    return numeric_matches(answer, question.answer)


def check_answers(quiz: Quiz, answers: Any) -> dict[str, Any]:
    """Check a whole answer mapping; one ValueError lists every unknown id and bad answer."""
    if not isinstance(answers, dict):
        raise ValueError(f"answers must map question ids to answers (a JSON object), "
                         f"got {type(answers).__name__}")
    unknown = [str(k) for k in answers if k not in quiz.ids]
    problems = []
    if unknown:
        problems.append(f"unknown question ids {', '.join(unknown)} (quiz {quiz.id} has "
                        f"{quiz.ids[0]}..{quiz.ids[-1]})")
    checked: dict[str, Any] = {}
    for qid, answer in answers.items():
        if qid in unknown:
            continue
        try:
            checked[qid] = check_answer(quiz.question(qid), answer)
        except (TypeError, ValueError) as exc:
            problems.append(f"malformed answer: {exc}")
    if problems:
        raise ValueError("; ".join(problems))
    return checked


def grade(quiz: Quiz, answers: dict[str, Any]) -> dict[str, Any]:
    """Grade every question; a missing answer counts as incorrect.

    Returns:
        ``{"score": int, "total": int, "results": [{"id": str, "correct": bool}, ...]}``
        with results in quiz order.
    """
    checked = check_answers(quiz, answers)
    results = [{"id": q.id, "correct": q.id in checked and is_correct(q, checked[q.id])}
               for q in quiz.questions]
    return {"score": sum(r["correct"] for r in results), "total": len(results),
            "results": results}


def read_answers(path: str | os.PathLike) -> dict[str, Any]:
    """Read an answers file: JSON, or YAML when it is not JSON (``yaml.safe_load``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read answers file {path}: {exc.strerror}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = load_yaml(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"answers file {path} is neither JSON nor YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"answers file {path} must hold a mapping of question id -> answer, "
                         f'e.g. {{"q-13-01": 1}}; got {type(data).__name__}')
    return {str(k): v for k, v in data.items()}
