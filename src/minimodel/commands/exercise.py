"""``minimodel exercise``: judged coding exercises (list, show, start, hint, check, solution)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

ORDER = 50

EPILOG = """\
examples:
  minimodel exercise list
  minimodel exercise show mlm-with-tied-output-head --lang es
  minimodel exercise start gelu-tanh --file gelu.py
  minimodel exercise hint gelu-tanh                 # next hint of the ladder
  minimodel exercise check gelu-tanh --file gelu.py
  minimodel exercise check gelu-tanh --file gelu.py --seed 123 --json
  minimodel exercise solution gelu-tanh --yes

check exits 0 when every case passes and 1 otherwise (2 for usage errors). Solutions run in a
separate, isolated Python process with CPU, memory and time limits.
"""

UI: dict[str, dict[str, str]] = {
    "id": {"en": "id", "es": "id"},
    "title": {"en": "title", "es": "título"},
    "status": {"en": "status", "es": "estado"},
    "case": {"en": "case", "es": "caso"},
    "kind": {"en": "kind", "es": "tipo"},
    "detail": {"en": "detail", "es": "detalle"},
    "hidden": {"en": "hidden", "es": "oculto"},
    "example": {"en": "example", "es": "ejemplo"},
    "new": {"en": "new", "es": "nuevo"},
    "wrote": {"en": "Wrote {path}. When ready: minimodel exercise check {id} --file {path}",
              "es": "Escrito {path}. Cuando estés listo: minimodel exercise check {id} --file {path}"},
    "hint": {"en": "Hint {k} of {n}", "es": "Pista {k} de {n}"},
    "last_hint": {"en": "That was the last hint.", "es": "Era la última pista."},
    "seed": {"en": "seed {seed} (reproduce with --seed {seed}); tolerance rtol={rtol:g} atol={atol:g}"
                   " (float32: rtol={rtol32:g} atol={atol32:g})",
             "es": "semilla {seed} (repite con --seed {seed}); tolerancia rtol={rtol:g} atol={atol:g}"
                   " (float32: rtol={rtol32:g} atol={atol32:g})"},
    "passed": {"en": "PASSED", "es": "SUPERADO"},
    "failed": {"en": "NOT PASSED", "es": "NO SUPERADO"},
    "confirm": {"en": "You have not passed {id} yet. Show the reference solution? [y/N] ",
                "es": "Aún no has superado {id}. ¿Mostrar la solución de referencia? [s/N] "},
    "need_yes": {"en": "not shown; answer y, or pass --yes", "es": "no se muestra; responde s o usa --yes"},
    "forbidden_at": {"en": "line {line}: {name} ({how})", "es": "línea {line}: {name} ({how})"},
    "same": {"en": "(same as above)", "es": "(igual que arriba)"},
    "hung": {"en": "where it was running:", "es": "dónde se estaba ejecutando:"},
}
STATUS_STYLE = {"passed": "green", "wrong": "red", "shape": "magenta", "dtype": "magenta",
                "error": "red", "forbidden": "bold red", "timeout": "yellow", "not run": "dim"}


def t(key: str, lang: str, **kw: Any) -> str:
    return (UI[key].get(lang) or UI[key]["en"]).format(**kw)


def _console():
    from rich.console import Console
    return Console(highlight=False)


def _exercise(args) -> Any:
    from minimodel.lab.exercises import get_exercise
    return get_exercise(args.id)


def _progress(args):
    from minimodel.lab.progress import Progress
    return Progress(args.learner_dir)


def cmd_list(args) -> int:
    from minimodel.lab.exercises import list_exercises
    items = list_exercises()
    done = _progress(args).all("exercise")
    for item in items:
        item["status"] = done.get(item["id"], {}).get("status", "new")
    if args.json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return 0
    from rich.table import Table
    table = Table(title="minimodel exercises")
    for col in ("id", "title", "status"):
        table.add_column(t(col, args.lang))
    for item in items:
        status = item["status"]
        table.add_row(item["id"], item["titles"].get(args.lang, item["title"]),
                      f"[{STATUS_STYLE.get(status, 'cyan')}]{t('new', args.lang) if status == 'new' else status}[/]")
    _console().print(table)
    return 0


def reflow(text: str) -> str:
    """Join the wrapped lines of prose paragraphs; keep indented (formula) lines as they are."""
    out: list[str] = []
    for line in text.rstrip().splitlines():
        prose = line.strip() and not line.startswith("    ")
        if prose and out and out[-1].strip() and not out[-1].startswith("    "):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def _print_statement(ex, lang: str) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    body = f"{escape(reflow(ex.text('statement', lang)))}\n\n[bold]{escape(ex.signature())}[/]"
    _console().print(Panel(body, title=f"{ex.id}: {escape(ex.text('title', lang))}"))


def cmd_show(args) -> int:
    _print_statement(_exercise(args), args.lang)
    return 0


def cmd_start(args) -> int:
    from minimodel.lab.exercises import write_stub
    ex = _exercise(args)
    try:
        path = write_stub(ex, args.file, lang=args.lang, force=args.force)
    except FileExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    progress.record("exercise", ex.id, prev.get("status", "started"), file=str(path))
    _print_statement(ex, args.lang)
    print(t("wrote", args.lang, path=path, id=ex.id))
    return 0


def cmd_hint(args) -> int:
    ex = _exercise(args)
    hints = ex.hint_list(args.lang)
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    level = min(int(prev.get("hint_level", 0)) + 1, len(hints))
    progress.record("exercise", ex.id, prev.get("status", "started"), hint_level=level)
    from rich.markup import escape
    console = _console()
    console.print(f"[bold cyan]{t('hint', args.lang, k=level, n=len(hints))}[/]: "
                  f"{escape(hints[level - 1])}")
    if level == len(hints):
        console.print(f"[dim]{t('last_hint', args.lang)}[/]")
    return 0


def _print_result(result: dict, lang: str) -> None:
    from rich.markup import escape
    from rich.table import Table
    console = _console()
    tol = result["tolerance"]
    console.print(f"[bold]{result['exercise']}[/]  {escape(result['file'])}")
    console.print("[dim]" + t("seed", lang, seed=result["seed"], rtol=tol["rtol"],
                              atol=tol["atol"], rtol32=tol["rtol_float32"],
                              atol32=tol["atol_float32"]) + "[/]")
    for f in result.get("forbidden", []):
        console.print("[bold red]" + escape(t("forbidden_at", lang, line=f["line"] or "?",
                                              name=f["name"], how=f["how"])) + "[/]")
    if result["cases"]:
        table = Table(show_lines=False)
        for col in ("case", "kind", "status", "detail"):
            table.add_column(t(col, lang), overflow="fold")
        previous = None
        for case in result["cases"]:
            style = STATUS_STYLE.get(case["status"], "white")
            detail = case["message"] + "".join(f"\n  {w}" for w in case.get("where", []))
            if detail == previous and case["status"] != "passed":
                detail = t("same", lang)
            else:
                previous = detail
            table.add_row(case["name"], escape(case["label"]), f"[{style}]{case['status']}[/]",
                          escape(detail))
        console.print(table)
    if result.get("hung_at"):
        console.print(t("hung", lang))
        for line in result["hung_at"][:4]:
            console.print(f"  {escape(line)}")
    for line in result.get("stderr_tail", [])[-6:]:
        console.print(f"[dim]  {escape(line)}[/]")
    verdict = t("passed", lang) if result["passed"] else t("failed", lang)
    colour = "green" if result["passed"] else STATUS_STYLE.get(result["status"], "red")
    console.print(f"[bold {colour}]{verdict}[/] ({result['status']}): "
                  f"{escape(result['message'])}")


def cmd_check(args) -> int:
    from minimodel.lab.exercises import check_solution
    ex = _exercise(args)
    try:
        result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                lang=args.lang)
    except (FileNotFoundError, UnicodeDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    ever_passed = result["passed"] or prev.get("status") == "passed"
    progress.record("exercise", ex.id, "passed" if ever_passed else "attempted",
                    last_status=result["status"], last_seed=result["seed"],
                    attempts=int(prev.get("attempts", 0)) + 1, file=str(args.file))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        _print_result(result, args.lang)
    return 0 if result["passed"] else 1


def cmd_solution(args) -> int:
    ex = _exercise(args)
    progress = _progress(args)
    prev = progress.get("exercise", ex.id) or {}
    if not args.yes and prev.get("status") != "passed":
        try:
            answer = input(t("confirm", args.lang, id=ex.id))
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes", "s", "si", "sí"):
            print(t("need_yes", args.lang), file=sys.stderr)
            return 1
    source = ex.reference_path.read_text(encoding="utf-8")
    progress.record("exercise", ex.id, prev.get("status", "started"), solution_viewed=True)
    if sys.stdout.isatty():
        from rich.syntax import Syntax
        _console().print(Syntax(source, "python"))
    else:
        print(source, end="")
    return 0


def _common(p: argparse.ArgumentParser, learner: bool = True) -> None:
    p.add_argument("--lang", choices=["en", "es"], default="en", help="language (default en)")
    if learner:
        p.add_argument("--learner-dir", default=None,
                       help="progress folder (default $MINIMODEL_LEARNER_DIR or ~/.minimodel)")


def register(subparsers) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = subparsers.add_parser(
        "exercise", help="judged coding exercises: embeddings, attention, tied heads",
        description="Write a function, then let the judge run it against a reference on "
                    "visible examples and hidden randomised cases.",
        epilog=EPILOG, formatter_class=fmt)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])
    sub = parser.add_subparsers(dest="exercise_command", metavar="ACTION")

    p = sub.add_parser("list", help="list the exercises and your status", epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("--json", action="store_true", help='print [{"id", "title", ...}]')
    _common(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="print an exercise's statement", epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("id", help="exercise id (see `minimodel exercise list`)")
    _common(p, learner=False)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("start", help="write a starter file (signature, docstring, stub)",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", default=None, help="where to write it (default ./<id>.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    _common(p)
    p.set_defaults(func=cmd_start)

    p = sub.add_parser("hint", help="show the next hint (the level is remembered)",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    _common(p)
    p.set_defaults(func=cmd_hint)

    p = sub.add_parser("check", help="judge your solution file", epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", required=True, help="your solution (.py)")
    p.add_argument("--json", action="store_true", help="machine-readable result (DESIGN.md §2)")
    p.add_argument("--seed", type=int, default=None, help="seed of the hidden cases")
    p.add_argument("--timeout", type=float, default=None, help="wall-clock limit in seconds")
    _common(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("solution", help="print the reference solution", epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _common(p)
    p.set_defaults(func=cmd_solution)

    _wrap_errors(sub)


def _wrap_errors(sub) -> None:
    """Unknown ids and bad content become a one-line message and exit code 2, not a trace."""
    for action_parser in sub.choices.values():
        func = action_parser.get_default("func")

        def safe(args, _func=func):
            try:
                return _func(args)
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
        action_parser.set_defaults(func=safe)
