"""``minimodel exercise``: judged coding exercises (list, show, start, hint, check, solution)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
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
    "same": {"en": "(same as above)", "es": "(igual que arriba)"},
    "hung": {"en": "where it was running:", "es": "dónde se estaba ejecutando:"},
    "line": {"en": "line {line}: ", "es": "línea {line}: "},
    "judging": {"en": "judging {file}: {done}/{total} cases, {elapsed:.0f} s "
                      "(limit {limit:g} s)",
                "es": "evaluando {file}: {done}/{total} casos, {elapsed:.0f} s "
                      "(límite {limit:g} s)"},
    "list_title": {"en": "minimodel exercises", "es": "ejercicios de minimodel"},
}
# Case statuses as shown in the table (the JSON keeps the English values of DESIGN.md §2).
STATUS_ES = {"passed": "superado", "wrong": "incorrecto", "shape": "forma", "dtype": "dtype",
             "error": "error", "forbidden": "prohibido", "timeout": "tiempo agotado",
             "not run": "no ejecutado"}
# Words of the generated case labels ("float32, 2 blocks, 4 heads") in Spanish.
LABEL_ES = {"repeated ids": "ids repetidos", "affine": "con afín", "no affine": "sin afín",
            "tiny variance": "varianza diminuta", "all ids = V-1": "todos los ids = V-1",
            "full": "rango completo", "low rank": "rango bajo", "zeros": "con ceros",
            "orthonormal": "ortonormal"}
COUNTED_ES = {"block": ("bloque", "bloques"), "head": ("cabeza", "cabezas")}
STATUS_STYLE = {"passed": "green", "wrong": "red", "shape": "magenta", "dtype": "magenta",
                "error": "red", "forbidden": "bold red", "timeout": "yellow", "not run": "dim"}


def t(key: str, lang: str, **kw: Any) -> str:
    return (UI[key].get(lang) or UI[key]["en"]).format(**kw)


def case_name(name: str, lang: str) -> str:
    """``example 2`` / ``hidden 3`` in ``lang``."""
    kind, _, number = name.partition(" ")
    return f"{t(kind, lang)} {number}" if kind in ("example", "hidden") else name


def case_label(label: str, lang: str) -> str:
    """A generated case label in ``lang``: each comma-separated part is translated."""
    if lang != "es":
        return label
    parts = []
    for part in label.split(", "):
        count, _, word = part.partition(" ")
        singular = word[:-1] if word.endswith("s") else word
        if count.isdigit() and singular in COUNTED_ES:
            one, many = COUNTED_ES[singular]
            parts.append(f"{count} {one if count == '1' else many}")
        else:
            parts.append(LABEL_ES.get(part, part))
    return ", ".join(parts)


def status_word(status: str, lang: str) -> str:
    return STATUS_ES.get(status, status) if lang == "es" else status


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
    from rich.text import Text

    from minimodel.lab.i18n import status_label
    table = Table(title=t("list_title", args.lang))
    for col in ("id", "title", "status"):
        table.add_column(t(col, args.lang))
    for item in items:
        status = item["status"]
        table.add_row(item["id"], Text(item["titles"].get(args.lang, item["title"])),
                      Text(status_label(status, args.lang),
                           style=STATUS_STYLE.get(status, "cyan")))
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


def wrap_formulas(text: str, width: int) -> str:
    """Wrap the indented (formula) lines of a reflowed statement to ``width`` columns.

    Rich would wrap them at column 0 and break the layout of a formula block; here a long
    formula line moves its trailing comment (after a run of spaces) onto the next line,
    indented under the formula, and anything still too long wraps with a hanging indent.
    """
    out: list[str] = []
    for line in text.splitlines():
        if not line.startswith("    ") or len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        code, gap, comment = line.strip().partition("   ")
        pieces = ([indent + code.rstrip(), indent + "    " + comment.strip()]
                  if gap and comment.strip() else [line.rstrip()])
        for piece in pieces:
            out.extend(textwrap.wrap(piece, width, subsequent_indent=indent + "        ",
                                     break_on_hyphens=False) if len(piece) > width else [piece])
    return "\n".join(out)


def _print_statement(ex, lang: str) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    console = _console()
    text = wrap_formulas(reflow(ex.text("statement", lang)), max(40, console.width - 4))
    body = f"{escape(text)}\n\n[bold]{escape(ex.signature())}[/]"
    console.print(Panel(body, title=f"{ex.id}: {escape(ex.text('title', lang))}"))


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
        where = t("line", lang, line=f["line"]) if f.get("line") else ""
        console.print("[bold red]" + escape(where + f"{f['name']} ({f['how']})") + "[/]")
    if any(case["status"] != "not run" for case in result["cases"]):
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
            table.add_row(case_name(case["name"], lang), escape(case_label(case["label"], lang)),
                          f"[{style}]{status_word(case['status'], lang)}[/]", escape(detail))
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
        if args.json or not sys.stderr.isatty():
            result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                    lang=args.lang)
        else:  # a live line on stderr: the judge may take up to its time limit
            from rich.console import Console
            with Console(stderr=True).status("") as status:
                def progress(done: int, total: int, elapsed: float, limit: float) -> None:
                    status.update(t("judging", args.lang, file=args.file, done=done,
                                    total=total, elapsed=elapsed, limit=limit))
                result = check_solution(ex, args.file, seed=args.seed, timeout=args.timeout,
                                        lang=args.lang, progress=progress)
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
            print()
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
        p.add_argument("--learner-dir", metavar="DIR", default=None,
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

    p = sub.add_parser("list", help="list the exercises and your status",
                       description="List the exercises with your status (from the learner "
                                   "folder).", epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("--json", action="store_true", help='print [{"id", "title", ...}]')
    _common(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="print an exercise's statement",
                       description="Print the statement and signature of an exercise.",
                       epilog=EPILOG,
                       formatter_class=fmt)
    p.add_argument("id", help="exercise id (see `minimodel exercise list`)")
    _common(p, learner=False)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("start", help="write a starter file (signature, docstring, stub)",
                       description="Print the statement and write a starter file with the "
                                   "signature, a docstring with the shapes and a stub that "
                                   "raises NotImplementedError.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", default=None, help="where to write it (default ./<id>.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    _common(p)
    p.set_defaults(func=cmd_start)

    p = sub.add_parser("hint", help="show the next hint (the level is remembered)",
                       description="Show the next hint of the exercise's ladder; the level "
                                   "reached is kept in your learner folder.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    _common(p)
    p.set_defaults(func=cmd_hint)

    p = sub.add_parser("check", help="judge your solution file",
                       description="Run your function in a sandboxed process (python -I, temp "
                                   "dir, scrubbed environment, CPU/memory/time limits) on the "
                                   "visible examples and on hidden cases drawn from a seed, and "
                                   "compare with the reference within the stated tolerance. "
                                   "Status: passed, wrong (values, shape or dtype), error, "
                                   "timeout or forbidden.",
                       epilog=EPILOG, formatter_class=fmt)
    p.add_argument("id", help="exercise id")
    p.add_argument("--file", required=True, help="your solution (.py)")
    p.add_argument("--json", action="store_true", help="machine-readable result (DESIGN.md §2)")
    p.add_argument("--seed", type=int, default=None, help="seed of the hidden cases")
    p.add_argument("--timeout", type=float, default=None, help="wall-clock limit in seconds")
    _common(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("solution", help="print the reference solution",
                       description="Print the reference solution (asks first unless you "
                                   "passed the exercise or give --yes).",
                       epilog=EPILOG, formatter_class=fmt)
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
