"""Authoring: ``lab new`` scaffolds a lesson, question, break or exercise; ``lab sync`` does the
bookkeeping after an edit.

A teacher touches content only. ``new`` writes the item's files in both languages with every
required field (texts marked ``TODO``, which ``lab validate`` refuses until they are written)
and links it: a lesson gets its line in ``path.yaml`` (``--after SLUG``), an item is listed in
its lesson's front matter in both languages (``--lesson SLUG``). ``sync`` then regenerates
what is derived from content: the quiz mirrors in ``docs/quizzes/``, the Spanish stamps of
texts that have none yet (a stale stamp is never refreshed: that would hide an out-of-date
translation; ``lab rehash ITEM --key NAME`` does it once the Spanish is updated) and the
integrity manifest. Counts are never written by hand anywhere: ``sync`` prints them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_text
from minimodel.lab.lessons import LESSONS_DIR, find_lesson, path_file, read_path

CONTENT_DIR = LESSONS_DIR.parent
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
TODO = "TODO"

LESSON = """---
title: "{title}"
quiz: []
breaks: []
exercises: []
---

# {title}

{todo}: {intro}

```python
import numpy as np

x = np.arange(3)
print(x)
```

```output
[0 1 2]
```

```python
print(x.sum())
```

```output
3
```
"""


def _text(en: str = TODO, es: str = TODO) -> dict[str, str]:
    return {"en": en, "es": es}


def _check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a valid name; use lowercase letters, digits and '-', "
                         "a letter first (e.g. example-softmax-temperature)")


def _write_new(path: Path, text: str) -> Path:
    if path.exists():
        raise ValueError(f"{path} already exists; choose another name or edit it")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path


def _dump(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=96)


def new_lesson(slug: str, after: str | None, content: Path = CONTENT_DIR) -> list[Path]:
    """``lessons/<slug>.md`` and ``.es.md`` and one line in ``path.yaml`` (after ``after``,
    or last)."""
    _check_name(slug)
    lessons = content / "lessons"
    order = read_path(lessons)
    if slug in order:
        raise ValueError(f"path.yaml already lists {slug!r}; choose another slug")
    place = len(order)
    if after is not None:
        place = order.index(find_lesson(after, lessons).slug) + 1
    written = [_write_new(lessons / f"{slug}.md", LESSON.format(
                   title=slug.replace("-", " ").capitalize(), todo=TODO,
                   intro="what this lesson teaches, then its worked example")),
               _write_new(lessons / f"{slug}.es.md", LESSON.format(
                   title=slug.replace("-", " ").capitalize(), todo=TODO,
                   intro="qué enseña esta lección y después su ejemplo resuelto"))]
    lines = path_file(lessons).read_text(encoding="utf-8").splitlines(keepends=True)
    entries = [i for i, line in enumerate(lines) if line.lstrip().startswith("- ")]
    at = entries[place - 1] + 1 if place else (entries[0] if entries else len(lines))
    lines.insert(at, f"- {slug}\n")
    atomic_write_text(path_file(lessons), "".join(lines))
    return written + [path_file(lessons)]


def _link(lesson_key: str, key: str, item_id: str, content: Path) -> list[Path]:
    """List ``item_id`` under ``key`` (quiz, breaks, exercises) in both languages' front
    matter of the lesson ``lesson_key``."""
    lessons = content / "lessons"
    lesson = find_lesson(lesson_key, lessons)
    changed = []
    for lang in ("en", "es"):
        path = lesson.path(lang, lessons)
        text = path.read_text(encoding="utf-8")
        line = re.search(rf"^{key}:[ \t]*\[(?P<ids>[^\]\n]*)\][ \t]*$", text, re.M)
        if line is None:
            raise ValueError(f"{path.name}: no one-line '{key}: [...]' in the front matter; "
                             f"add '{key}: [{item_id}]' by hand")
        ids = [i.strip() for i in line["ids"].split(",") if i.strip()]
        ids += [] if item_id in ids else [item_id]        # listed by hand already: once
        text = text[:line.start()] + f"{key}: [{', '.join(ids)}]" + text[line.end():]
        atomic_write_text(path, text)
        changed.append(path)
    return changed


def new_question(question_id: str, lesson_key: str, kind: str = "numeric",
                 content: Path = CONTENT_DIR) -> list[Path]:
    """A question in ``quizzes/<lesson slug>.yaml`` (the file is created if needed), listed in
    the lesson's front matter."""
    if not re.fullmatch(r"q-[a-z0-9]+(-[a-z0-9]+)*-[0-9]+", question_id):
        raise ValueError(f"{question_id!r} is not a question id; write q-<lesson slug>-<n>, "
                         "e.g. q-example-softmax-temperature-1")
    lesson = find_lesson(lesson_key, content / "lessons")
    quiz = content / "quizzes" / f"{lesson.slug}.yaml"
    answers = {"numeric": {"value": 0.0, "tolerance": 0.001, "unit": _text("nats", "nats")},
               "single": 0}
    question = {"id": question_id, "kind": kind, "title": _text(), "prompt": _text(),
                **({"choices": [_text(), _text()]} if kind == "single" else {}),
                "answer": answers[kind], "explanation": _text()}
    if quiz.is_file():
        text = quiz.read_text(encoding="utf-8").rstrip("\n") + "\n"
        block = _dump([question])
        # as indented as the file's questions: "- id:" as this module writes it, "  - id:" by hand
        items = re.search(r"^(?P<indent>[ \t]*)- id:", text, re.M)
        indent = items["indent"] if items else "  "
        atomic_write_text(quiz, text + "".join(f"{indent}{line}\n" for line in block.splitlines()))
    else:
        _write_new(quiz, _dump({"id": lesson.slug,
                                "title": _text(f"Quiz: {lesson.titles['en']}",
                                               f"Cuestionario: {lesson.titles.get('es', '')}"),
                                "questions": [question]}))
    return [quiz, _labelled(lesson.slug, question_id, content)] + \
        _link(lesson.slug, "quiz", question_id, content)


def _labelled(quiz_id: str, question_id: str, content: Path) -> Path:
    """Room for the typed answers a grader must get right: ``quizzes/labelled/<quiz>.yaml``,
    right and wrong answers in each language (``lab validate`` grades every one)."""
    path = content / "quizzes" / "labelled" / f"{quiz_id}.yaml"
    entry = {question_id: {lang: {"correct": [TODO], "wrong": [TODO]} for lang in ("en", "es")}}
    if path.is_file():
        block = _dump(entry)
        text = path.read_text(encoding="utf-8").rstrip("\n") + "\n"
        atomic_write_text(path, text + "".join(f"  {line}\n" for line in block.splitlines()))
        return path
    return _write_new(path, f"# Answers people type to the questions of {quiz_id}, labelled "
                            "right or wrong\n# (see labelled/phase-13-embeddings.yaml).\n"
                      + _dump({"quiz": quiz_id, "answers": entry}))


EXPERIMENT = '''"""TODO: the experiment `break run` shows: it prints what the learner observes, and a
SYMPTOM line while the bug is in place (see the other breaks' experiment.py)."""
'''
INVARIANTS = '''"""TODO: the invariants `break check` decides by (see the other breaks' invariants.py)."""

from minimodel_break_harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
checks = Checks()


@checks.case("todo", "TODO: what must hold", "TODO: qué debe cumplirse")
def _todo():
    raise CheckFailed("TODO: write this invariant", "TODO: escribe este invariante")


if __name__ == "__main__":
    checks.finish()     # runs the invariants and prints one PASS/FAIL line each
'''


def new_break(break_id: str, lesson_key: str, content: Path = CONTENT_DIR) -> list[Path]:
    """``breaks/<id>/`` with ``break.yaml`` (every field, texts TODO), an empty
    ``bug.patch``, an ``experiment.py`` and an ``invariants.py`` with its footer; listed in
    the lesson's front matter."""
    _check_name(break_id)
    folder = content / "breaks" / break_id
    order = 1 + max([int(m) for m in re.findall(r"^order: (\d+)", "".join(
        p.read_text(encoding="utf-8") for p in (content / "breaks").glob("*/break.yaml")),
        re.M)] or [0])
    data = {"id": break_id, "cause_words": [TODO], "secret_words": [], "order": order, "timeout_seconds": 120,
            "fails_under_bug": ["todo"], "fakes": [],
            **{key: _text() for key in ("title", "summary", "intro")},
            "predict": [_text(), _text()], "observe": _text(),
            "hints": [_text(), _text(), _text()], "explanation": _text(),
            "references": [TODO]}
    written = [_write_new(folder / "break.yaml", _dump(data)),
               _write_new(folder / "bug.patch", ""),
               _write_new(folder / "experiment.py", EXPERIMENT),
               _write_new(folder / "invariants.py", INVARIANTS)]
    return written + _link(lesson_key, "breaks", break_id, content)


def new_exercise(exercise_id: str, lesson_key: str, content: Path = CONTENT_DIR) -> list[Path]:
    """``exercises/<id>/`` with ``exercise.yaml`` (declared inputs, two clauses, two known-wrong
    solutions), ``reference.py`` and ``wrong/``; listed in the lesson's front matter."""
    _check_name(exercise_id)
    folder = content / "exercises" / exercise_id
    function = exercise_id.replace("-", "_")
    data = {"id": exercise_id, "order": 1000, "function": function, "args": ["x"],
            "outputs": [{"name": "y"}], "title": _text(), "statement": _text(),
            "hints": {"en": [TODO, TODO], "es": [TODO, TODO]}, "stub_doc": _text(),
            "tolerance": {"rtol": 1e-9, "atol": 1e-12},
            "cases": {"examples": 2, "sizes": {"N": [1, 6]},
                      "inputs": {"x": {"shape": ["N"], "dtype": "float", "range": [-3, 3]}},
                      "kinds": {"float64": {}, "float32": {"dtype": "float32"}}},
            "forbidden": ["torch"], "timeout": 20,
            "wrong": [{"file": "returns_zeros.py", "expect": "wrong", "why": "TODO"},
                      {"file": "upcasts.py", "expect": "dtype", "why": "float32 in, float64 out"}],
            "clauses": [{"id": "values", "en": TODO, "es": TODO, "kinds": ["float64"],
                         "wrong": "returns_zeros.py"},
                        {"id": "dtype", "en": "float32 in, float32 out",
                         "es": "entra float32, sale float32", "kinds": ["float32"],
                         "wrong": "upcasts.py"}]}
    reference = f"import numpy as np\n\n\ndef {function}(x):\n    return x  # TODO\n"
    written = [_write_new(folder / "exercise.yaml", _dump(data)),
               _write_new(folder / "reference.py", reference),
               _write_new(folder / "wrong" / "returns_zeros.py",
                          f"import numpy as np\n\n\ndef {function}(x):\n"
                          "    return np.zeros_like(x)\n"),
               _write_new(folder / "wrong" / "upcasts.py",
                          f"import numpy as np\n\n\ndef {function}(x):\n"
                          "    return np.asarray(x, dtype=np.float64)\n")]
    return written + _link(lesson_key, "exercises", exercise_id, content)


def todo_problems(content: Path = CONTENT_DIR) -> list[str]:
    """Every ``TODO`` left in the content (what ``lab new`` writes until the author does), one
    problem per file and line; a ``es_source_hash: TODO`` stamp is the translations check's."""
    problems = []
    for path in sorted(content.rglob("*")):
        if not path.is_file() or path.suffix not in (".md", ".yaml", ".py", ".patch") \
                or "__pycache__" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if TODO in line and "es_source_hash" not in line:
                problems.append(f"{path.relative_to(content)}:{number}: still TODO "
                                f"({line.strip()[:60]}); write it")
    return problems


def sync(repo_docs: Path | None = None) -> dict[str, Any]:
    """Regenerate what is derived from content; returns what was done and the counts."""
    from minimodel.lab.freshness import TRANSLATED, stamp
    from minimodel.lab.integrity import write_manifest
    from minimodel.lab.items import load_items
    from minimodel.lab.lessons import load_lessons
    from minimodel.lab.quiz import render

    items = load_items()
    stamped = {}
    for item in items:
        if item.kind in TRANSLATED and item.path is not None:
            names = stamp(item.path, item.id)          # only texts without a stamp
            if names:
                stamped[item.id] = names
    docs = repo_docs if repo_docs is not None else render.docs_dir()
    mirrors = [str(p) for p in render.write_mirrors(docs)]
    orphans = [line.split(" has no quiz YAML")[0] for line in render.drift(docs)
               if "has no quiz YAML" in line]
    for orphan in orphans:
        Path(orphan).unlink()
    manifest = write_manifest()
    items = load_items()
    counts = {"lessons": len(load_lessons()),
              **{f"{kind}s": sum(i.kind == kind for i in items)
                 for kind in ("question", "break", "exercise")}}
    return {"stamped": stamped, "mirrors_written": mirrors, "mirrors_deleted": orphans,
            "manifest": str(manifest), "counts": counts}
