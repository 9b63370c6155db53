"""How ``minimodel exercise`` shows an exercise and a verdict on the terminal (Rich).

Statements are YAML block text: prose paragraphs wrapped at ~95 columns and indented formula
lines. :func:`reflow` joins the prose so the terminal can wrap it, and :func:`wrap_formulas`
wraps long formula lines without breaking the block apart.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import sys
import textwrap
from typing import Any

from minimodel.lab.i18n import case_label, case_name, case_status_label, isolation_reason_label
from minimodel.messages import say

STATUS_STYLE = {"passed": "green", "wrong": "red", "shape": "magenta", "dtype": "magenta",
                "error": "red", "forbidden": "bold red", "timeout": "yellow", "not run": "dim"}


def console():
    from minimodel._console import Console

    return Console(highlight=False)


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


def print_statement(ex, lang: str) -> None:
    """The statement in a panel, with the function's signature under it."""
    from rich.markup import escape
    from rich.panel import Panel

    out = console()
    text = wrap_formulas(reflow(ex.text("statement", lang)), max(40, out.width - 4))
    body = f"{escape(text)}\n\n[bold]{escape(ex.signature())}[/]"
    out.print(Panel(body, title=f"{ex.id}: {escape(ex.text('title', lang))}"))


def _case_table(cases: list[dict[str, Any]], lang: str):
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_lines=False)
    for col in ("case", "kind", "status", "detail"):
        table.add_column(say(f"exercise.{col}", lang), overflow="fold")
    previous = None
    for case in cases:
        style = STATUS_STYLE.get(case["status"], "white")
        detail = case["message"] + "".join(f"\n  {w}" for w in case.get("where", []))
        if detail == previous and case["status"] != "passed":
            detail = say("exercise.same", lang)  # a run of identical failures reads as one
        else:
            previous = detail
        if not case.get("hidden") and case.get("inputs"):  # which call it was: not the statement's
            detail = ", ".join(f"{k} {v}" for k, v in case["inputs"].items()) \
                + (f"\n{detail}" if detail else "")
        table.add_row(case_name(case["name"], lang), escape(case_label(case["label"], lang)),
                      f"[{style}]{case_status_label(case['status'], lang)}[/]", escape(detail))
    return table


def print_result(result: dict[str, Any], lang: str) -> None:
    """A judge result (see :mod:`minimodel.lab.exercises.judge`) as a table and a verdict."""
    from rich.markup import escape

    out = console()
    tol = result["tolerance"]
    out.print(f"[bold]{result['exercise']}[/]  {escape(result['file'])}")
    out.print("[dim]" + say("exercise.seed", lang, seed=result["seed"], rtol=tol["rtol"],
                          atol=tol["atol"], rtol32=tol["rtol_float32"],
                          atol32=tol["atol_float32"]) + "[/]")
    if result.get("isolation"):
        key = "isolation_full" if result["isolation"] == "full" else "isolation_partial"
        reason = isolation_reason_label(result.get("isolation_reason", ""), lang)
        out.print("[dim]" + escape(say(f"exercise.{key}", lang, reason=reason)) + "[/]")
    for f in result.get("forbidden", []):
        where = say("exercise.line", lang, line=f["line"]) if f.get("line") else ""
        out.print("[bold red]" + escape(where + f"{f['name']} ({f['how']})") + "[/]")
    if any(case["status"] != "not run" for case in result["cases"]):
        out.print(_case_table(result["cases"], lang))
    if result.get("hung_at"):
        out.print(say("exercise.hung", lang))
        for line in result["hung_at"][:4]:
            out.print(f"  {escape(line)}")
    for line in result.get("stderr_tail", [])[-6:]:
        out.print(f"[dim]  {escape(line)}[/]")
    verdict = say("exercise.passed", lang) if result["passed"] else say("exercise.failed", lang)
    colour = "green" if result["passed"] else STATUS_STYLE.get(result["status"], "red")
    status = case_status_label(result["status"], lang)
    # "FAILED (timeout)" says why; "PASSED (passed)" would say the same word twice.
    why = "" if status.casefold() == verdict.casefold() else f" ({escape(status)})"
    out.print(f"[bold {colour}]{verdict}[/]{why}: {escape(result['message'])}")


def rehearse(lang: str) -> None:
    """Show a made-up result of every kind into a throwaway buffer, as JSON and as a table.

    Called before a solution runs: whatever showing a verdict needs (Rich's lazily imported
    modules, the codec of this terminal) is imported now, so nothing is imported after the
    solution ran (without bubblewrap it could have planted a file to be imported)."""
    cases = [{"name": f"hidden {i}", "hidden": True, "label": "float32, large :smile: x",
              "status": status, "message": "y: largest error 1.5 :thumbs_up:", "clauses": [],
              "where": ["solution.py, line 3 in f"], "inputs": {"x": "float32 (2,)"}}
             for i, status in enumerate(STATUS_STYLE)]
    for passed, status in ((True, "passed"), (False, "error")):
        result = {"exercise": "rehearsal", "file": "solution.py", "seed": 1, "passed": passed,
                  "status": status, "message": "0 of 1 cases passed: ñ …",
                  "tolerance": {"rtol": 1e-9, "atol": 1e-9, "rtol_float32": 1e-5,
                                "atol_float32": 1e-5},
                  "isolation": "partial", "isolation_reason": "rehearsal",
                  "forbidden": [{"name": "torch.x", "line": 1, "how": "attribute"}],
                  "hung_at": ["solution.py, line 1 in f"], "stderr_tail": ["Error: ñ"],
                  "cases": cases}
        with contextlib.redirect_stdout(io.StringIO()):
            print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
            print_result(result, lang)
    for stream in (sys.stdout, sys.stderr):
        codecs.lookup(getattr(stream, "encoding", None) or "utf-8")
