"""The quiz file format: a JSON schema and the semantic checks a schema cannot express.

A quiz is one YAML file in ``lab/content/quizzes/`` whose ``id`` equals the file name::

    id: phase-13-embeddings
    title: {en: ..., es: ...}
    questions:
      - id: q-13-01
        kind: single              # single | multi | order | numeric | short | recall
        title: {en: ..., es: ..., es_source_hash: ...}   # every text: see lab.freshness
        prompt: {en: ..., es: ...}
        choices: [{en: ..., es: ...}, ...]   # single, multi and order only
        answer: 1                 # single: index; multi: [indices]; order: [indices in order]
                                  # numeric: {value: 6.238, tolerance: 0.01, unit: {en, es}}
                                  # short: {en: [accepted forms], es: [accepted forms]}
                                  # recall: {en: model answer, es: model answer}
        rubric: [{en: ..., es: ...}, ...]     # recall only: the points a full answer makes
        explanation: {en: ..., es: ...}

Every ``{en, es}`` text also carries ``es_source_hash``, the hash of the English its Spanish
was translated from, so editing the English flags exactly that Spanish text
(:mod:`minimodel.lab.freshness`, ``minimodel lab rehash``).
"""

from __future__ import annotations

from typing import Any

from minimodel.lab.freshness import without_stamps
from minimodel.lab.i18n import LANGS
from minimodel.lab.items import TEXT_SCHEMA, text_problems
from minimodel.lab.items import load_yaml  # noqa: F401 - re-exported (validation)
from minimodel.lab.quiz.numbers import asked_decimals
from minimodel.lab.quiz.text import canonical_phrase

KINDS = ("single", "multi", "order", "numeric", "short", "recall")
# Graded by the quiz; ``recall`` is marked by the learner against its rubric, outside the score.
AUTO_GRADED = ("single", "multi", "order", "numeric", "short")
# q-13-01 (the first quiz) or q-<lesson slug>-<k> (q-layer-norm-1)
QUESTION_ID = r"^q-[a-z0-9]+(-[a-z0-9]+)*-[0-9]+$"
QUIZ_ID = r"^[a-z0-9]+(-[a-z0-9]+)*$"

def _when(kind: str, answer: dict, choices: dict, rubric: dict | None = None) -> dict:
    then: dict[str, Any] = {"properties": {"answer": answer, "choices": choices,
                                           "rubric": rubric or {"type": "array", "maxItems": 0}}}
    if rubric:
        then["required"] = ["rubric"]
    return {"if": {"properties": {"kind": {"const": kind}}}, "then": then}


_WITH_CHOICES = {"type": "array", "minItems": 2}
_NO_CHOICES = {"type": "array", "maxItems": 0}
_WITH_ORDER = {"type": "array", "minItems": 3}

QUIZ_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "minimodel quiz",
    "type": "object",
    "required": ["id", "title", "questions"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": QUIZ_ID},
        "title": {"$ref": "#/$defs/text"},
        "description": {"$ref": "#/$defs/text"},
        "questions": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/question"}},
    },
    "$defs": {
        "text": TEXT_SCHEMA,
        "question": {
            "type": "object",
            "required": ["id", "kind", "title", "prompt", "answer", "explanation"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "pattern": QUESTION_ID},
                "kind": {"enum": list(KINDS)},
                "title": {"$ref": "#/$defs/text"},
                "prompt": {"$ref": "#/$defs/text"},
                "choices": {"type": "array", "items": {"$ref": "#/$defs/text"}},
                "answer": {},
                "rubric": {"type": "array", "items": {"$ref": "#/$defs/text"}},
                "explanation": {"$ref": "#/$defs/text"},
            },
            "allOf": [
                _when("single", {"type": "integer", "minimum": 0}, _WITH_CHOICES),
                _when("multi", {"type": "array", "minItems": 1, "uniqueItems": True,
                                "items": {"type": "integer", "minimum": 0}}, _WITH_CHOICES),
                _when("order", {"type": "array", "minItems": 3, "uniqueItems": True,
                                "items": {"type": "integer", "minimum": 0}}, _WITH_ORDER),
                _when("numeric", {"type": "object", "required": ["value", "tolerance"],
                                  "additionalProperties": False,
                                  "properties": {"value": {"type": "number"},
                                                 "tolerance": {"type": "number",
                                                               "minimum": 0},
                                                 "unit": {"$ref": "#/$defs/text"},
                                                 # optional; derived when absent (numbers.py)
                                                 "decimals": {"type": "integer", "minimum": 0},
                                                 "units": {"type": "array",
                                                           "items": {"type": "string"}}}},
                      _NO_CHOICES),
                _when("short", {"type": "object", "required": list(LANGS),
                                "additionalProperties": False,
                                "properties": {lang: {"type": "array", "minItems": 1,
                                                      "items": {"type": "string",
                                                                "minLength": 1}}
                                               for lang in LANGS}},
                      _NO_CHOICES),
                _when("recall", {"$ref": "#/$defs/text"}, _NO_CHOICES,
                      {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/text"}}),
            ],
        },
    },
}


def semantic_problems(data: dict[str, Any], expected_id: str | None = None) -> list[str]:
    """Checks a JSON schema cannot express (a repeated id is the links section's:
    :func:`minimodel.lab.items.link_problems`). Assumes the schema found nothing."""
    problems: list[str] = []
    if expected_id is not None and data["id"] != expected_id:
        problems.append(f"quiz id {data['id']!r} differs from its file name {expected_id!r}; "
                        "rename one so they match")
    for q in data["questions"]:
        qid, kind, answer = q["id"], q["kind"], q["answer"]
        problems += text_problems(q, f"question {qid}")
        n = len(q.get("choices") or [])
        indices = [answer] if kind == "single" else answer if kind in ("multi", "order") else []
        for index in indices:
            if index >= n:
                problems.append(f"question {qid}: answer index {index} is out of range for "
                                f"{n} choices (valid: 0..{n - 1})")
        if kind == "order" and sorted(answer) != list(range(n)):
            problems.append(f"question {qid}: an order answer lists every choice index once "
                            f"(0..{n - 1}), got {answer}")
        if kind == "order" and answer == list(range(n)):
            problems.append(f"question {qid}: the choices are already in the right order; "
                            "shuffle them in the file so the order is not given away")
        if kind == "short":
            problems += _short_form_problems(qid, answer)
        if kind == "numeric":
            problems += _decimals_problems(qid, answer, q["prompt"])
    return problems


def _decimals_problems(qid: str, answer: dict[str, Any], prompt: dict[str, str]) -> list[str]:
    """One rule for "give N decimals": every language's prompt asks for the same N, and the
    tolerance is one unit in the N-th decimal at most (what the grader applies anyway)."""
    asked = {lang: asked_decimals({}, {lang: text}) for lang, text in without_stamps(prompt).items()}
    if len(set(asked.values())) > 1:
        return [f"question {qid}: the prompts ask for different numbers of decimals {asked}; "
                "say the same in every language"]
    decimals = asked_decimals(answer, prompt)
    if decimals is not None and answer["tolerance"] > 10.0 ** -decimals:
        return [f"question {qid}: tolerance {answer['tolerance']} is looser than the "
                f"{decimals} decimals the prompt asks for; set tolerance: {10.0 ** -decimals:g}"]
    return []


def _short_form_problems(qid: str, forms: dict[str, list[str]]) -> list[str]:
    """Accepted forms must be non-blank, and one form must not be accepted for two meanings:
    a form that is empty after canonicalisation (only punctuation) would match anything empty."""
    problems = []
    for lang, items in forms.items():
        for form in items:
            if not canonical_phrase(form):
                problems.append(f"question {qid}: accepted {lang!r} form {form!r} is blank "
                                "once case, accents and punctuation are ignored")
    return problems
