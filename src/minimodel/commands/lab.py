"""``minimodel lab``: progress across quizzes, breaks and exercises, and content validation.

Breaks and exercises are separate modules (:mod:`minimodel.lab.breaks`,
:mod:`minimodel.lab.exercises`). They are imported lazily so that one broken section shows up
as "unavailable" in ``status`` instead of taking the whole command down.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Callable

from minimodel.commands._exit import FAILED, OK, guarded
from minimodel.lab.i18n import DEFAULT_LANG, LANGS, pick

ORDER = 80

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
    from minimodel.lab.quiz import load_all

    items = []
    for quiz in load_all():
        entry = progress.get("quiz", quiz.id) or {}
        total = len(quiz.questions)
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
}


def validate(on_section: Callable[[str], None] | None = None) -> dict[str, list[str]]:
    """Problems per section (quiz, exercises, breaks); here a failed import IS a problem.

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
    return sections


UI: dict[str, dict[str, str]] = {
    "learner_dir": {"en": "learner folder: {path}", "es": "carpeta de progreso: {path}"},
    "quizzes": {"en": "quizzes", "es": "cuestionarios"},
    "breaks": {"en": "breaks", "es": "averías"},
    "exercises": {"en": "exercises", "es": "ejercicios"},
    "done": {"en": "{name}: {done}/{total} done", "es": "{name}: {done}/{total} completados"},
    "unavailable": {"en": "{name}: unavailable ({error})", "es": "{name}: no disponible ({error})"},
    "id": {"en": "id", "es": "id"},
    "title": {"en": "title", "es": "título"},
    "best score": {"en": "best score", "es": "mejor puntuación"},
    "status": {"en": "status", "es": "estado"},
}


def _t(key: str, lang: str, **values: Any) -> str:
    return pick(UI[key], lang).format(**values)


def cmd_status(args: argparse.Namespace) -> int:
    summary = status(args.learner_dir, args.lang)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return OK
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from minimodel.lab.i18n import status_label

    lang = args.lang
    console = Console()
    console.print(Text(_t("learner_dir", lang, path=summary["learner_dir"]), style="dim"))
    for name in ("quizzes", "breaks", "exercises"):
        section = summary[name]
        label = _t(name, lang)
        if not section["available"]:
            console.print(Text(_t("unavailable", lang, name=label, error=section["error"]),
                               style="yellow"))
            continue
        table = Table(title=_t("done", lang, name=label, done=section["done"],
                               total=section["total"]))
        for column in ("id", "title", "best score" if name == "quizzes" else "status"):
            table.add_column(_t(column, lang))
        for item in section["items"]:
            last = (f"{item['best_score'] if item['best_score'] is not None else '-'}"
                    f"/{item['total']}") if name == "quizzes" else status_label(item["status"],
                                                                               lang)
            table.add_row(Text(item["id"]), Text(item["title"]), Text(str(last)))
        console.print(table)
    return OK


def cmd_validate(args: argparse.Namespace) -> int:
    import time

    start = time.monotonic()

    def progress(name: str) -> None:  # stderr: the JSON on stdout stays clean
        print(f"[{time.monotonic() - start:4.0f} s] {name}: {VALIDATE_STEPS[name]} ...",
              file=sys.stderr, flush=True)

    sections = validate(on_section=progress)
    ok = not any(sections.values())
    if args.json:
        print(json.dumps({"ok": ok, "sections": sections}, ensure_ascii=False, indent=2))
    else:
        for name, problems in sections.items():
            print(f"{name}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
            for problem in problems:
                print(f"  - {problem}")
    return OK if ok else FAILED


def register(subparsers) -> None:
    """Add ``minimodel lab status`` and ``minimodel lab validate``."""
    lab = subparsers.add_parser(
        "lab", help="your progress through the lab; check the lab content",
        description="The learning lab: quizzes (minimodel quiz), breaks (minimodel break) and "
                    "judged exercises (minimodel exercise).",
        epilog="examples:\n  minimodel lab status\n  minimodel lab status --json "
               "--learner-dir ~/my-lab\n  minimodel lab validate",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lab.set_defaults(func=lambda _args: (lab.print_help(), 0)[1])
    sub = lab.add_subparsers(dest="lab_command", metavar="SUBCOMMAND")

    p = sub.add_parser(
        "status", help="progress across quizzes, breaks and exercises",
        description="Show best quiz scores and the status of every break and exercise, with "
                    "done/total counts. A section whose module cannot be imported is shown as "
                    "unavailable with the reason.",
        epilog="examples:\n  minimodel lab status\n  minimodel lab status --lang es\n"
               "  minimodel lab status --json --learner-dir /tmp/learner\n"
               '      -> {"learner_dir", "quizzes": {"available", "error", "done", "total", '
               '"items"}, "breaks": {...}, "exercises": {...}}',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG, help="language of titles")
    p.add_argument("--learner-dir", metavar="DIR", default=None,
                   help="learner folder (default: $MINIMODEL_LEARNER_DIR or ~/.minimodel)")
    p.set_defaults(func=guarded(cmd_status))

    p = sub.add_parser(
        "validate", help="check quizzes, exercises and breaks content",
        description="Run the content checks of every lab section (quiz, exercises, breaks) and "
                    "list the problems per section. Exit 1 when there is any problem, "
                    "including a section that cannot be imported.",
        epilog="examples:\n  minimodel lab validate\n  minimodel lab validate --json\n"
               '      -> {"ok": bool, "sections": {"quiz": [...], "exercises": [...], '
               '"breaks": [...]}}',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the problems as JSON")
    p.set_defaults(func=guarded(cmd_validate))
