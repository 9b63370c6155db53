"""The lab's content model: every quiz question, break and exercise is an :class:`Item`.

An item has an id, a kind (``question``, ``break``, ``exercise``), texts in English and
Spanish (``{en, es}`` mappings anywhere in its YAML), its file and its lesson. Every kind's
files are read here (:data:`FOLDERS`, :func:`read_yaml`: errors name file, line and column),
and here are the checks they share: JSON-schema errors named by item id
(:func:`schema_problems`), both languages in every text (:func:`text_problems`), one id per
item and the lesson links (:func:`link_problems`). :mod:`.quiz.loader`,
:mod:`.breaks.catalog` and :mod:`.exercises.registry` build their objects on top.

The lesson is never written in the item's file: it comes from the lessons' front matter
(``quiz:``, ``breaks:``, ``exercises:``), the ONE place where a lesson links to its items. An
item no lesson lists must be named in ``content/lessonless.yaml`` (with the reason), so a
forgotten link is an error, not a silent orphan::

    [item for item in load_items() if item.lesson is None]   # the lesson-less ones
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from minimodel.lab.lessons import FRONT_MATTER, LANGS, Lesson, linked_ids, load_lessons

KINDS = ("question", "break", "exercise")
CONTENT_DIR = Path(__file__).resolve().parent / "content"
# Where each kind's files are, and the file pattern under that folder.
FOLDERS = {"question": (CONTENT_DIR / "quizzes", "*.yaml"),
           "break": (CONTENT_DIR / "breaks", "*/break.yaml"),
           "exercise": (CONTENT_DIR / "exercises", "*/exercise.yaml")}
LESSONLESS_PATH = CONTENT_DIR / "lessonless.yaml"
# The JSON schema of one text; es_source_hash is the translation's stamp (lab.freshness).
TEXT_SCHEMA = {"type": "object", "required": list(LANGS), "additionalProperties": False,
               "properties": {**{lang: {"type": "string", "minLength": 1} for lang in LANGS},
                              "es_source_hash": {"type": "string"}}}


@dataclass(frozen=True)
class Item:
    """One lab item; ``lesson`` is the stem of the lesson that lists it (None if none does),
    ``path`` the YAML file that holds it and ``data`` its parsed mapping."""

    id: str
    kind: str
    titles: dict[str, str]
    lesson: str | None = None
    path: Path | None = None
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml when available (same safety, ~10x faster)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_yaml(path: Path) -> Any:
    """The parsed YAML of ``path``; a ValueError naming the file, line and column when it does
    not parse."""
    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).replace("\n", " ")
        shown = path.relative_to(CONTENT_DIR) if path.is_relative_to(CONTENT_DIR) else path
        raise ValueError(f"{shown}: not valid YAML{where}: {problem}; fix the indentation or "
                         "quoting there") from None


def item_files(kind: str, folder: Path | None = None) -> list[Path]:
    """The files of one kind, sorted (``folder`` replaces the shipped one: tests, authors)."""
    root, pattern = FOLDERS[kind]
    root = Path(folder) if folder is not None else root
    return sorted(p for p in root.glob(pattern) if p.is_file()) if root.is_dir() else []


def _where(error: jsonschema.ValidationError, data: Any) -> str:
    """A schema error's place, named by the innermost entry with an id: ``question q-13-01
    field answer.unit``, ``field title``, ``top level``."""
    path, node, owner, rest = list(error.absolute_path), data, "", []
    for i, step in enumerate(path):
        try:
            node = node[step]
        except (IndexError, KeyError, TypeError):
            break
        if isinstance(step, int) and isinstance(node, dict) and "id" in node:
            owner, rest = f"{str(path[i - 1]).rstrip('s')} {node['id']}", []
        else:
            rest.append(str(step))
    field_name = "field " + ".".join(rest) if rest else ""
    return " ".join(part for part in (owner, field_name) if part) or "top level"


def schema_problems(data: Any, schema: dict[str, Any]) -> list[str]:
    """Every violation of the JSON ``schema`` by ``data``, one line each, in file order."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{_where(e, data)}: {e.message}" for e in errors]


def texts(data: Any, name: str = "") -> list[tuple[str, dict[str, Any]]]:
    """``(name, text)`` for every bilingual text in parsed YAML: a mapping with an ``en`` or
    ``es`` string (``title``, ``choices[2]``, ``hints[3]``; lists number from 1)."""
    if isinstance(data, dict):
        if any(isinstance(data.get(lang), str) for lang in LANGS):
            return [(name, data)]
        return [t for key, value in data.items()
                for t in texts(value, f"{name}.{key}" if name else str(key))]
    if isinstance(data, list):
        return [t for i, value in enumerate(data, 1) for t in texts(value, f"{name}[{i}]")]
    return []


def text_problems(data: Any, where: str) -> list[str]:
    """Every text of ``data`` whose English or Spanish is missing or blank."""
    return [f"{where} {name}: the {lang!r} text is missing or blank; write it"
            for name, text in texts(data) for lang in LANGS
            if not isinstance(text.get(lang), str) or not text[lang].strip()]


def read_items(kind: str, folder: Path | None = None) -> list[Item]:
    """Every item of one kind with its data, lesson not set (files that do not parse are
    skipped: each kind's validation reports them)."""
    items = []
    for path in item_files(kind, folder):
        try:
            data = read_yaml(path)
        except ValueError:
            continue
        entries = data.get("questions") if kind == "question" else [data]
        for entry in entries if isinstance(data, dict) and isinstance(entries, list) else []:
            if isinstance(entry, dict):
                item_id = str(entry.get("id", path.parent.name))
                titles = {lang: text for lang, text in (entry.get("title") or {}).items()
                          if lang in LANGS}
                items.append(Item(item_id, kind, titles, path=path, data=entry))
    return items


def load_items(lessons: list[Lesson] | None = None) -> list[Item]:
    """Every item, its ``lesson`` taken from the first lesson whose front matter lists it."""
    lessons = load_lessons() if lessons is None else lessons
    owner: dict[tuple[str, str], str] = {}
    for lesson in lessons:
        for kind in KINDS:
            for item_id in linked_ids(lesson, kind):
                owner.setdefault((kind, item_id), lesson.stem)
    return [replace(i, lesson=owner.get((i.kind, i.id))) for kind in KINDS
            for i in read_items(kind)]


def load_lessonless(path: Path = LESSONLESS_PATH) -> dict[str, list[str]]:
    """``{kind: [ids]}`` of the items that explicitly belong to no lesson."""
    data = read_yaml(path) if path.is_file() else {}
    data = data or {}
    return {kind: [str(entry["id"]) for entry in data.get(FRONT_MATTER[kind]) or []]
            for kind in KINDS}


def link_problems(lessons: list[Lesson] | None = None, items: list[Item] | None = None,
                  lessonless: dict[str, list[str]] | None = None) -> list[str]:
    """Every repeated id and broken link between lessons and items, one sentence each.

    Ids are unique within a kind; a lesson may only list items that exist; each item belongs
    to exactly one lesson, or is listed in ``lessonless.yaml`` (and then to none).
    """
    lessons = load_lessons() if lessons is None else lessons
    items = load_items(lessons) if items is None else items
    lessonless = load_lessonless() if lessonless is None else lessonless
    known = {(i.kind, i.id) for i in items}
    files: dict[tuple[str, str], list[str]] = {}
    for item in items:
        files.setdefault((item.kind, item.id), []).append(item.path.name if item.path else "?")
    problems = [f"{kind} id {item_id!r} is used {len(where)} times ({', '.join(where)}); give "
                f"each {kind} its own id" for (kind, item_id), where in files.items()
                if len(where) > 1]
    owners: dict[tuple[str, str], list[str]] = {}
    for lesson in lessons:
        for kind in KINDS:
            for item_id in linked_ids(lesson, kind):
                owners.setdefault((kind, item_id), []).append(lesson.stem)
                if (kind, item_id) not in known:
                    problems.append(f"lesson {lesson.stem} lists {FRONT_MATTER[kind]}: "
                                    f"{item_id!r}, but no {kind} has that id; fix the front "
                                    f"matter or add the {kind}")
    for kind, item_id in sorted(known, key=lambda k: (KINDS.index(k[0]), k[1])):
        mine = owners.get((kind, item_id), [])
        listed = item_id in lessonless[kind]
        if len(mine) > 1:
            problems.append(f"{kind} {item_id} is listed by {len(mine)} lessons "
                            f"({', '.join(mine)}); keep it in one front matter only")
        if mine and listed:
            problems.append(f"{kind} {item_id} belongs to lesson {mine[0]} and is also "
                            f"listed in lessonless.yaml; remove it from lessonless.yaml")
        if not mine and not listed:
            problems.append(f"{kind} {item_id} belongs to no lesson; list it in a lesson's "
                            f"'{FRONT_MATTER[kind]}:' front matter or in lessonless.yaml")
    for kind, ids in lessonless.items():
        for item_id in ids:
            if (kind, item_id) not in known:
                problems.append(f"lessonless.yaml names {kind} {item_id!r}, which does not "
                                f"exist; remove it")
    return problems
