"""The quiz file format: a JSON schema, semantic checks and translation hashes.

A quiz is one YAML file in ``lab/content/quizzes/`` whose ``id`` equals the file name::

    id: phase-13-embeddings
    title: {en: ..., es: ...}
    questions:
      - id: q-13-01
        kind: single              # single | multi | order | numeric | short | recall
        source_hash: 3f2a...      # hash of the English text (see english_hash)
        translated_from: {es: 3f2a...}   # English hash each translation was made from
        title: {en: ..., es: ...}
        prompt: {en: ..., es: ...}
        choices: [{en: ..., es: ...}, ...]   # single, multi and order only
        answer: 1                 # single: index; multi: [indices]; order: [indices in order]
                                  # numeric: {value: 6.238, tolerance: 0.01, unit: {en, es}}
                                  # short: {en: [accepted forms], es: [accepted forms]}
                                  # recall: {en: model answer, es: model answer}
        rubric: [{en: ..., es: ...}, ...]     # recall only: the points a full answer makes
        explanation: {en: ..., es: ...}

Why hashes: a translation silently goes stale when someone edits the English. Recording the
English hash a translation came from lets ``validate`` point at exactly those questions.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import jsonschema
import yaml

from minimodel.lab.i18n import LANGS
from minimodel.lab.quiz.text import canonical_phrase

KINDS = ("single", "multi", "order", "numeric", "short", "recall")
# Graded by the quiz; ``recall`` is marked by the learner against its rubric, outside the score.
AUTO_GRADED = ("single", "multi", "order", "numeric", "short")
HASH_LEN = 12
# q-13-07 (the phase quiz) or q-<lesson slug>-<k> (a lesson's own quiz, e.g. q-layer-norm-1)
QUESTION_ID = r"^q-([0-9]{2}-[0-9]{2}|[a-z]+(-[a-z0-9]+)*-[0-9]+)$"
QUIZ_ID = r"^[a-z0-9]+(-[a-z0-9]+)*$"
SOURCE_LANG = LANGS[0]
TRANSLATIONS = tuple(lang for lang in LANGS if lang != SOURCE_LANG)

_TEXT = {
    "type": "object",
    "required": list(LANGS),
    "properties": {lang: {"type": "string", "minLength": 1} for lang in LANGS},
    "additionalProperties": False,
}
_HASH = {"type": "string", "pattern": f"^[0-9a-f]{{{HASH_LEN}}}$"}


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
        "text": _TEXT,
        "question": {
            "type": "object",
            "required": ["id", "kind", "source_hash", "translated_from", "title", "prompt",
                         "answer", "explanation"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "pattern": QUESTION_ID},
                "kind": {"enum": list(KINDS)},
                "source_hash": _HASH,
                "translated_from": {
                    "type": "object",
                    "required": list(TRANSLATIONS),
                    "properties": {lang: _HASH for lang in TRANSLATIONS},
                    "additionalProperties": False,
                },
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
                                                 "unit": {"$ref": "#/$defs/text"}}},
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


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml when available (same safety, ~10x faster)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def english_hash(question: dict[str, Any]) -> str:
    """Hash of a question's English text: title, prompt, choices, explanation, a numeric
    answer's unit, a recall question's model answer and rubric.

    Answers that are not text are left out on purpose: changing which choice is right or the
    tolerance does not make the Spanish wording stale. A short answer's accepted forms are
    per language and each language keeps its own list, so they are left out too.
    """
    def en(text: Any) -> Any:
        return text.get(SOURCE_LANG) if isinstance(text, dict) else text

    source = {
        "title": en(question.get("title")),
        "prompt": en(question.get("prompt")),
        "choices": [en(c) for c in question.get("choices") or []],
        "explanation": en(question.get("explanation")),
    }
    answer = question.get("answer")
    if question.get("kind") == "recall":
        source["model_answer"] = en(answer)
        source["rubric"] = [en(r) for r in question.get("rubric") or []]
    elif question.get("kind") == "numeric" and isinstance(answer, dict) and answer.get("unit"):
        source["unit"] = en(answer["unit"])
    blob = json.dumps(source, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:HASH_LEN]


def _where(error: jsonschema.ValidationError, data: Any) -> str:
    """Readable location of a schema error, naming the question id when there is one."""
    path = list(error.absolute_path)
    if len(path) >= 2 and path[0] == "questions" and isinstance(path[1], int):
        try:
            qid = data["questions"][path[1]].get("id", f"#{path[1]}")
        except (AttributeError, IndexError, KeyError, TypeError):
            qid = f"#{path[1]}"
        rest = ".".join(str(p) for p in path[2:])
        return f"question {qid}" + (f" field {rest}" if rest else "")
    return "field " + ".".join(str(p) for p in path) if path else "top level"


def schema_problems(data: Any) -> list[str]:
    """Every JSON-schema violation of ``data`` as a one-line message."""
    validator = jsonschema.Draft202012Validator(QUIZ_SCHEMA)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{_where(e, data)}: {e.message}" for e in errors]


def _blank_texts(value: Any, where: str) -> list[str]:
    """Texts that are present but only whitespace (the schema only checks minLength)."""
    if isinstance(value, dict):
        return [f"{where}: the {lang!r} text is blank; write it or remove the question"
                for lang in LANGS if isinstance(value.get(lang), str) and not value[lang].strip()]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _blank_texts(v, f"{where} choice {i}")]
    return []


def semantic_problems(data: dict[str, Any], expected_id: str | None = None) -> list[str]:
    """Checks a JSON schema cannot express. Assumes :func:`schema_problems` found nothing."""
    problems: list[str] = []
    if expected_id is not None and data["id"] != expected_id:
        problems.append(f"quiz id {data['id']!r} differs from its file name {expected_id!r}; "
                        "rename one so they match")
    seen: set[str] = set()
    for q in data["questions"]:
        qid, kind, answer = q["id"], q["kind"], q["answer"]
        if qid in seen:
            problems.append(f"question id {qid} is used twice; give each question its own id")
        seen.add(qid)
        for field in ("title", "prompt", "explanation", "choices", "rubric"):
            problems += _blank_texts(q.get(field), f"question {qid} {field}")
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
        if kind == "recall":
            problems += _blank_texts(answer, f"question {qid} model answer")
        if kind == "short":
            problems += _short_form_problems(qid, answer)
    return problems


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


def hash_problems(data: dict[str, Any]) -> list[str]:
    """Out-of-date hashes: English edited without rehash, or translations made from old text."""
    problems: list[str] = []
    for q in data["questions"]:
        qid, stored, current = q["id"], q["source_hash"], english_hash(q)
        if stored != current:
            problems.append(
                f"question {qid}: English text changed (stored hash {stored}, now {current}); "
                f"run `minimodel quiz rehash {data['id']}` and then review its translations")
        for lang in TRANSLATIONS:
            made_from = q["translated_from"][lang]
            if made_from != stored:
                problems.append(
                    f"question {qid}: the {lang!r} translation is stale (made from English "
                    f"{made_from}, English is now {stored}); update the {lang!r} text, then run "
                    f"`minimodel quiz rehash {data['id']} --translated {lang} --question {qid}`")
    return problems


_ID_LINE = re.compile(r"^\s*-\s+id:\s*['\"]?([^'\"\s]+)")
_SOURCE_LINE = re.compile(r"^(\s*source_hash:\s*)['\"]?[0-9a-f]*['\"]?\s*$")


def rehash_text(text: str, translated: str | None = None,
                questions: set[str] | None = None) -> str:
    """Rewrite the hash lines of a quiz file in place (comments and layout are kept).

    Args:
        text: the YAML source.
        translated: also mark this language's translation as current (``translated_from``).
        questions: limit the change to these question ids (default: all).

    The English ``source_hash`` of every question is always brought up to date; translations
    change only when ``translated`` is given, because only a person can say the wording is done.
    """
    data = load_yaml(text)
    current = {q["id"]: english_hash(q) for q in data.get("questions", [])}
    if translated is not None and translated not in TRANSLATIONS:
        raise ValueError(f"--translated {translated!r}: translations are {', '.join(TRANSLATIONS)}")
    unknown = sorted((questions or set()) - set(current))
    if unknown:
        raise ValueError(f"unknown question ids {', '.join(unknown)}; "
                         f"ids in this quiz: {', '.join(current)}")
    out, qid = [], None
    for line in text.splitlines(keepends=True):
        found = _ID_LINE.match(line)
        if found and found.group(1) in current:
            qid = found.group(1)
        selected = qid is not None and (questions is None or qid in questions)
        if qid is not None and _SOURCE_LINE.match(line):
            # Quoted, so a hash made only of digits stays a string in YAML.
            line = _SOURCE_LINE.sub(lambda m: f'{m.group(1)}"{current[qid]}"',
                                    line.rstrip("\n")) + "\n"
        elif selected and translated and "translated_from:" in line:
            line = re.sub(rf"(\b{translated}:\s*)['\"]?[0-9a-f]*['\"]?",
                          lambda m: f'{m.group(1)}"{current[qid]}"', line)
        out.append(line)
    new_text = "".join(out)
    # The rewrite is line-based; make sure it did what was asked (e.g. the file may use a
    # block-style translated_from mapping that the line patterns do not recognise).
    for q in load_yaml(new_text)["questions"]:
        selected = questions is None or q["id"] in questions
        if q.get("source_hash") != current[q["id"]] or (
                selected and translated and q["translated_from"].get(translated) != current[q["id"]]):
            raise ValueError(f"could not update the hashes of {q['id']}: write them on one line "
                             f'each, as source_hash: "..." and translated_from: {{es: "..."}}')
    return new_text
