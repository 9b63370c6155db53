"""The lab as a whole: progress across quizzes, breaks and exercises, and content validation.

Breaks and exercises are separate packages (:mod:`minimodel.lab.breaks`,
:mod:`minimodel.lab.exercises`). They are imported lazily so that one broken section shows up
as "unavailable" in :func:`status` instead of taking ``minimodel lab status`` down.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from minimodel.lab.i18n import DEFAULT_LANG, pick

# Statuses that count as "done" in the totals. Quizzes count when the best score is perfect.
DONE = {"passed", "fixed", "done", "completed", "solved"}

# section name -> (module, listing function)
SECTIONS = {"breaks": ("minimodel.lab.breaks", "list_breaks"),
            "exercises": ("minimodel.lab.exercises", "list_exercises")}
PROGRESS_KIND = {"breaks": "break", "exercises": "exercise"}


def _import(module_name: str):
    """Import a lab section; any failure becomes a one-line message (why: keep status usable)."""
    try:
        return importlib.import_module(module_name), None
    except Exception as exc:  # noqa: BLE001 - a half-written module can raise anything
        return None, f"cannot import {module_name}: {type(exc).__name__}: {exc}"


def _quiz_section(progress, lang: str) -> dict[str, Any]:
    from minimodel.lab.quiz import AUTO_GRADED, load_all

    items = []
    for quiz in load_all():
        entry = progress.get("quiz", quiz.id) or {}
        total = sum(q.kind in AUTO_GRADED for q in quiz.questions)  # recall is self-marked
        best = entry.get("best_score")
        items.append({"id": quiz.id, "title": pick(quiz.title, lang),
                      "status": entry.get("status", "not started"),
                      "best_score": best, "total": total})
    done = sum(1 for i in items if i["best_score"] == i["total"])
    return {"available": True, "error": None, "done": done, "total": len(items), "items": items}


def _other_section(name: str, progress, lang: str) -> dict[str, Any]:
    module_name, func_name = SECTIONS[name]
    module, error = _import(module_name)
    listing = getattr(module, func_name, None) if module else None
    if module is not None and listing is None:
        error = f"{module_name} has no {func_name}()"
    items: list[dict[str, Any]] = []
    if listing is not None:
        try:
            records = progress.all(PROGRESS_KIND[name])
            for item in listing():
                status = (records.get(item["id"]) or {}).get("status", "not started")
                title = pick(item.get("titles") or item.get("title", ""), lang)
                items.append({"id": item["id"], "title": title, "status": status})
        except Exception as exc:  # noqa: BLE001 - report, do not crash the whole status
            error, items = f"{module_name}.{func_name}() failed: {type(exc).__name__}: {exc}", []
    if error:
        return {"available": False, "error": error, "done": 0, "total": 0, "items": []}
    done = sum(1 for i in items if i["status"] in DONE)
    return {"available": True, "error": None, "done": done, "total": len(items), "items": items}


def status(learner_dir: str | None = None, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """Progress summary: ``{"learner_dir", "quizzes", "breaks", "exercises"}``.

    Each section is ``{"available", "error", "done", "total", "items": [...]}``; quiz items
    carry ``best_score`` and ``total``, the others ``status``.
    """
    from minimodel.lab.progress import Progress

    progress = Progress(learner_dir)
    out: dict[str, Any] = {"learner_dir": str(progress.learner_dir),
                           "quizzes": _quiz_section(progress, lang)}
    for name in SECTIONS:
        out[name] = _other_section(name, progress, lang)
    return out


# What each section's validation does, shown while it runs (the breaks take ~10-40 s).
VALIDATE_STEPS = {
    "quiz": "schema, answers and translations of every quiz",
    "exercises": "judging every reference, alternative and known-wrong solution",
    "breaks": "applying every bug patch to the current library, running experiments and checks",
    "glossary": "Spanish texts of quizzes, breaks, exercises and messages against the glossary",
}


def validate(on_section: Callable[[str], None] | None = None) -> dict[str, list[str]]:
    """Problems per section (quiz, exercises, breaks, glossary); a failed import IS a problem.

    ``on_section(name)`` is called as each section starts (progress for a slow validation).
    """
    from minimodel.lab.quiz import validate_all

    if on_section:
        on_section("quiz")
    sections: dict[str, list[str]] = {"quiz": validate_all()}
    for name in ("exercises", "breaks"):
        if on_section:
            on_section(name)
        module_name = SECTIONS[name][0]
        module, error = _import(module_name)
        if error:
            sections[name] = [error]
        elif not callable(getattr(module, "validate_all", None)):
            sections[name] = [f"{module_name} has no validate_all() function"]
        else:
            try:
                sections[name] = [str(p) for p in module.validate_all()]
            except Exception as exc:  # noqa: BLE001
                sections[name] = [f"{module_name}.validate_all() failed: "
                                  f"{type(exc).__name__}: {exc}"]
    if on_section:
        on_section("glossary")
    from minimodel.lab.terminology import glossary_problems

    sections["glossary"] = glossary_problems()
    return sections
