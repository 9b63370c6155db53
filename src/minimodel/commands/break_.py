"""``minimodel break``: predict, run, observe and fix a bug planted in a copy of minimodel.

(The module name ends in ``_`` because ``break`` is a Python keyword; the command is ``break``.)
The engine lives in :mod:`minimodel.lab.breaks`; this module is argument parsing, printing and
progress records.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from typing import Any, Callable

from minimodel.lab.i18n import DEFAULT_LANG, LANGS

ORDER = 55

DESCRIPTION = """\
Breaks: a bug about embeddings and weight tying is planted in a scratch copy of minimodel.
You predict what it will do, run an experiment that shows the symptom, climb a ladder of
hints if needed, fix the copy, and let behavioural checks decide whether it is fixed.
The installed package is never modified.

Flow: list -> start ID --workdir DIR -> (write predictions in DIR/NOTES.md) -> run -> hint ->
fix DIR/minimodel -> check.  `diff` shows the fix, `reset` restores the start state."""

EPILOG = """\
examples:
  minimodel break list
  minimodel break start tied-vocab-mismatch --workdir /tmp/b1 --lang es
  minimodel break run   --workdir /tmp/b1
  minimodel break hint  --workdir /tmp/b1
  minimodel break check --workdir /tmp/b1 --json
  minimodel break diff  --workdir /tmp/b1 | patch -p1 -d /tmp/b1
  minimodel break reset --workdir /tmp/b1

exit codes: 0 ok (check: fixed); 1 check not fixed / experiment failed;
            2 usage error; 3 predictions missing (run)"""

EXIT_NOT_FIXED = 1
EXIT_USAGE = 2
EXIT_NO_PREDICTIONS = 3


def _para(text: str) -> str:
    """A paragraph wrapped to the terminal (at most 100 columns)."""
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    return textwrap.fill(" ".join(text.split()), width=max(40, width))


def _say(text: str, style: str | None = None) -> None:
    """Print like print(), in colour on a terminal (Rich drops the style when piped)."""
    from rich.console import Console
    from rich.text import Text

    Console(soft_wrap=True, highlight=False).print(Text(text, style=style or ""))


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """User errors (unknown id, not a workspace, patch drift...) -> ``error: ...``, exit 2."""
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (ValueError, TypeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    return run


def _progress(args: argparse.Namespace):
    from minimodel.lab.progress import Progress

    return Progress(args.learner_dir)


def _record(args: argparse.Namespace, break_id: str, status: str | None, **detail: Any) -> None:
    """Record progress. Statuses: started -> observed (ran) -> attempted (checked) -> fixed.

    ``status=None`` keeps the current one (hints, diff, reset). "fixed" is sticky: a later
    reset or failing check does not undo it (``last_check`` tells the latest result).
    """
    progress = _progress(args)
    previous = (progress.get("break", break_id) or {}).get("status")
    if previous == "fixed" or status is None:
        status = previous or "started"
    progress.record("break", break_id, status, **detail)


def _open(args: argparse.Namespace):
    from minimodel.lab.breaks import Workspace

    ws = Workspace.open(args.workdir)
    lang = args.lang or ws.lang
    return ws, ws.load_break(), lang


# --- handlers ------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks import load_all

    records = _progress(args).all("break")
    lang = args.lang or DEFAULT_LANG
    rows = []
    for brk in load_all():
        entry = records.get(brk.id) or {}
        rows.append({**brk.summary(lang), "status": entry.get("status", "not started"),
                     "hints_used": entry.get("hints_used", 0)})
    if args.json:
        _print_json(rows)
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from minimodel.lab.breaks.messages import t
    from minimodel.lab.i18n import status_label

    table = Table(title=t("list_title", lang))
    for column in ("id", "title", "status"):
        table.add_column(t(f"col_{column}", lang))
    for row in rows:
        table.add_row(row["id"], Text(row["title"]), status_label(row["status"], lang))
    Console().print(table)
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks import Workspace, WorkspaceError, load_break, start
    from minimodel.lab.breaks.messages import t

    lang = args.lang or DEFAULT_LANG
    brk = load_break(args.break_id)
    try:
        previous = Workspace.open(args.workdir)
    except WorkspaceError:
        previous = None
    ws = start(brk, args.workdir, lang=lang, force=args.force)
    restarted = previous is not None and previous.break_id == brk.id
    _record(args, brk.id, "started", workdir=str(ws.root), lang=lang)
    if args.json:
        _print_json({"break": brk.id, "workdir": str(ws.root), "notes": str(ws.notes_path),
                     "lang": lang, "files": len(ws.manifest), "restarted": restarted})
        return 0
    print(t("started", lang, id=brk.id, title=brk.text("title", lang), root=ws.root))
    if restarted:
        print(t("restarted", lang))
    print(_para(brk.text("intro", lang)))
    print()
    print(t("next_steps", lang, notes=ws.notes_path, root=ws.root))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.messages import t
    from minimodel.lab.breaks.notes import missing_predictions
    from minimodel.lab.breaks.runner import run_script

    ws, brk, lang = _open(args)
    questions = brk.texts("predict", lang)
    if not args.skip_predictions:
        notes = ws.notes_path.read_text(encoding="utf-8") if ws.notes_path.is_file() else ""
        missing = missing_predictions(notes, len(questions))
        if missing:
            label = t("prediction", lang)
            print(t("predictions_missing", lang, notes=ws.notes_path,
                    missing=", ".join(f"{label} {n}" for n in missing)))
            for n in missing:
                print(f"\n## {label} {n}\n" + textwrap.indent(_para(questions[n - 1]), "  "))
            print("\n" + t("predictions_skip", lang))
            return EXIT_NO_PREDICTIONS
    script = brk.path("experiment")
    print(t("running", lang, script=script, root=ws.root))
    print(t("output", lang), flush=True)
    marker, label = brk.symptom_marker, t("symptom_label", lang)

    def echo(line: str) -> None:  # live, so a few seconds of training are not a silent wait
        if line.startswith(marker):
            _say(label + line[len(marker):], "bold red")
        else:
            print(line, flush=True)

    run = run_script(ws.root, script, lang, args.timeout or brk.timeout, echo=echo)
    if run.stderr.strip():
        print(run.stderr.rstrip("\n"), file=sys.stderr)
    if run.timed_out:
        print(t("timed_out", lang, seconds=run.seconds), file=sys.stderr)
    ok = not run.timed_out and run.returncode == brk.experiment_exit_code
    symptom = bool(run.symptom_lines(brk.symptom_marker))
    _record(args, brk.id, "observed", last_run={"ok": ok, "symptom": symptom,
                                               "seconds": round(run.seconds, 2)})
    if not ok:
        print(t("experiment_failed", lang, code=run.returncode, expected=brk.experiment_exit_code),
              file=sys.stderr)
        return EXIT_NOT_FIXED
    if not symptom:  # e.g. after a fix: the "what to look at" text would describe a bug
        print()          # that is no longer there
        print(_para(t("no_symptom", lang, root=ws.root)))
        return 0
    print(t("observe", lang))
    print(_para(brk.text("observe", lang)))
    print()
    print(t("after_run", lang, root=ws.root))
    return 0


def cmd_hint(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.messages import t

    ws, brk, lang = _open(args)
    hints = brk.texts("hints", lang)
    number, _new = ws.next_hint(len(hints))
    _record(args, brk.id, None, hints_used=ws.hints_shown)
    if args.json:
        _print_json({"break": brk.id, "hint": number, "total": len(hints),
                     "text": hints[number - 1]})
        return 0
    _say(t("hint", lang, n=number, total=len(hints)) + ":", "bold cyan")
    print(_para(hints[number - 1]))
    if number == len(hints):
        print(t("hint_last", lang, root=ws.root))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.messages import t
    from minimodel.lab.breaks.runner import check_details, is_fixed, run_script

    ws, brk, lang = _open(args)
    if not args.json and sys.stderr.isatty():
        print(t("checking", lang, root=ws.root), file=sys.stderr, flush=True)
    run = run_script(ws.root, brk.path("check"), lang, args.timeout or brk.timeout)
    fixed = is_fixed(run)
    details = check_details(run, lang)
    progress = _progress(args)
    checks_run = int((progress.get("break", brk.id) or {}).get("checks_run", 0)) + 1
    _record(args, brk.id, "fixed" if fixed else "attempted", last_check=fixed,
            checks_run=checks_run, hints_used=ws.hints_shown)
    if args.json:
        _print_json({"fixed": fixed, "break": brk.id, "workdir": str(ws.root),
                     "details": details, "exit_code": run.returncode,
                     "seconds": round(run.seconds, 2)})
        return 0 if fixed else EXIT_NOT_FIXED
    for d in details:
        _say(("PASS  " if d["ok"] else "FAIL  ") + d["description"],
             "green" if d["ok"] else "red")
        if d["message"]:
            print(f"      {d['message']}")
    failed = sum(not d["ok"] for d in details)
    if fixed:
        print()
        _say(t("fixed", lang, passed=len(details), total=len(details)), "bold green")
        print(t("why", lang))
        print(_para(brk.text("explanation", lang)))
        if brk.references:
            print(t("references", lang))
            for ref in brk.references:
                print(f"  - {ref}")
        return 0
    if run.stderr.strip() and not run.checks:
        print(run.stderr.rstrip("\n"), file=sys.stderr)
    print()
    _say(t("not_fixed", lang, failed=failed, total=len(details)), "bold red")
    print(t("not_fixed_next", lang, root=ws.root))
    return EXIT_NOT_FIXED


def cmd_diff(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.messages import t

    ws, brk, lang = _open(args)
    diff = ws.fix_diff()
    edited = [p for p in ws.changes()["modified"] if p in ws.state["patched_files"]]
    if edited:
        print(t("diff_edited", lang, files=", ".join(edited), root=ws.root), file=sys.stderr)
    _record(args, brk.id, None, revealed_fix=True)
    sys.stdout.write(diff)
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.messages import t

    ws, brk, lang = _open(args)
    result = ws.reset(notes=args.notes)
    resets = int((_progress(args).get("break", brk.id) or {}).get("resets", 0)) + 1
    _record(args, brk.id, None, resets=resets)
    if args.json:
        _print_json({"break": brk.id, "workdir": str(ws.root), **result,
                     "matches_manifest": True})
        return 0
    if result["restored"] or result["removed"]:
        print(t("reset_done", lang, restored=len(result["restored"]),
                removed=len(result["removed"])))
        for rel in result["restored"] + result["removed"]:
            print(f"  {rel}")
    else:
        print(t("reset_clean", lang))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks import validate_all

    problems = validate_all(use_patch_command=not args.no_patch_command)
    if args.json:
        _print_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            print(f"- {problem}")
        print("ok: every break applies, shows its symptom, fails its checks and is fixed by its "
              "diff" if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1


def cmd_rehash(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks import rehash

    stamped = rehash(args.break_id, keys=args.key)
    print(f"stamped {len(stamped)} Spanish text(s) as translated from the current English: "
          f"{', '.join(stamped) or '-'}")
    return 0


# --- parser --------------------------------------------------------------------------------


def _sub(subparsers, name: str, help_text: str, description: str, examples: list[str],
         handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name, help=help_text, description=description,
        epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(func=_guarded(handler))
    parser.add_argument("--lang", choices=LANGS, default=None,
                        help="language of the texts (default: the workspace's, else en)")
    parser.add_argument("--learner-dir", metavar="DIR", default=None,
                        help="learner folder with your progress "
                             "(default: $MINIMODEL_LEARNER_DIR or ~/.minimodel)")
    return parser


def _workdir(parser: argparse.ArgumentParser, required: bool = False) -> None:
    kwargs: dict[str, Any] = {"required": True} if required else {"default": "."}
    parser.add_argument("--workdir", metavar="DIR", help="the break workspace"
                        + ("" if required else " (default: the current folder)"), **kwargs)


def register(subparsers) -> None:
    """Add ``minimodel break`` and its subcommands."""
    top = subparsers.add_parser("break", help="predict, run and fix planted bugs (weight tying)",
                                description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    top.set_defaults(func=lambda _args: (top.print_help(), 0)[1])
    sub = top.add_subparsers(dest="break_command", metavar="SUBCOMMAND")

    p = _sub(sub, "list", "list the breaks and your status",
             "List the breaks in curriculum order with your status from the learner folder.\n"
             'With --json: [{"id", "title", "summary", "hints", "predictions", "status", '
             '"hints_used"}].',
             ["minimodel break list", "minimodel break list --json --lang es"], cmd_list)
    p.add_argument("--json", action="store_true", help="print the list as JSON")

    p = _sub(sub, "start", "create a workspace with the bug planted",
             "Copy the installed minimodel source to DIR/minimodel (without __pycache__ and\n"
             "lab/content), apply the break's bug patch there, and write DIR/NOTES.md (your\n"
             "predictions) and DIR/.break.json (state and the sha256 manifest of the start\n"
             "state). The installed package is only read. A non-empty DIR is refused unless it\n"
             "is already a workspace of this break (then the copy is rebuilt and NOTES.md kept)\n"
             "or --force is given.",
             ["minimodel break start tied-vocab-mismatch --workdir /tmp/b1",
              "minimodel break start tie-by-copy --workdir ~/breaks/copy --lang es",
              "minimodel break start tie-by-copy --workdir /tmp/old --force"], cmd_start)
    p.add_argument("break_id", metavar="ID", help="break id (see `minimodel break list`)")
    _workdir(p, required=True)
    p.add_argument("--force", action="store_true",
                   help="use a non-empty DIR anyway (replaces DIR/minimodel, NOTES.md and "
                        ".break.json there)")
    p.add_argument("--json", action="store_true", help='print {"break", "workdir", ...}')

    p = _sub(sub, "run", "run the experiment that shows the symptom (predict first)",
             "Run the break's experiment in a child process with PYTHONPATH=DIR, so that\n"
             "`import minimodel` is the workspace copy, and show its output. Refuses (exit 3)\n"
             "until every 'Prediction N' section of DIR/NOTES.md has some text.",
             ["minimodel break run --workdir /tmp/b1",
              "minimodel break run --workdir /tmp/b1 --skip-predictions --lang es"], cmd_run)
    _workdir(p)
    p.add_argument("--skip-predictions", action="store_true",
                   help="run even if NOTES.md has empty predictions (for scripts)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit (default: the break's, usually 120 s)")

    p = _sub(sub, "hint", "show the next hint of the ladder",
             "Climb one rung of the break's hint ladder (3-4 hints) and print it as 'hint N of\n"
             "M'. The rung is kept in DIR/.break.json and your progress; after the last hint,\n"
             "the last one is repeated.",
             ["minimodel break hint --workdir /tmp/b1", "minimodel break hint --json"], cmd_hint)
    _workdir(p)
    p.add_argument("--json", action="store_true", help='print {"break", "hint", "total", "text"}')

    p = _sub(sub, "check", "run the behavioural checks: fixed or not",
             "Run the break's checks against DIR/minimodel in a child process. The checks test\n"
             "behaviour, not text, so any correct fix passes. Records the result in your\n"
             "progress. Exit 0 when fixed, 1 otherwise.\n"
             'With --json: {"fixed": bool, "break", "workdir", "details": [{"id", "ok",\n'
             '"description", "message"}], "exit_code", "seconds"}.',
             ["minimodel break check --workdir /tmp/b1",
              "minimodel break check --workdir /tmp/b1 --json"], cmd_check)
    _workdir(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit (default: the break's)")

    p = _sub(sub, "diff", "print the fix as a unified diff",
             "Print our fix as a unified diff from the workspace's broken files (as they were at\n"
             "start) to the original library text, with a/minimodel/... b/minimodel/... paths,\n"
             "so `patch -p1 -d DIR` applies it. Notes on stderr if you edited those files.",
             ["minimodel break diff --workdir /tmp/b1",
              "minimodel break diff --workdir /tmp/b1 | patch -p1 -d /tmp/b1"], cmd_diff)
    _workdir(p)

    p = _sub(sub, "reset", "restore the workspace to its start state",
             "Rewrite DIR/minimodel byte for byte as it was right after `start` (removing files\n"
             "you added there) and verify it against the sha256 manifest. NOTES.md and other\n"
             "files outside DIR/minimodel are kept; --notes also resets NOTES.md.",
             ["minimodel break reset --workdir /tmp/b1",
              "minimodel break reset --workdir /tmp/b1 --notes"], cmd_reset)
    _workdir(p)
    p.add_argument("--notes", action="store_true",
                   help="also restore NOTES.md (erases your predictions)")
    p.add_argument("--json", action="store_true", help='print {"restored", "removed", ...}')

    p = _sub(sub, "validate", "check every break against the current library (maintainers)",
             "For every break, in a temporary workspace: texts complete in en/es and no stale\n"
             "Spanish; the bug patch applies; the experiment shows its symptom; the checks fail\n"
             "when broken and pass after the fix diff (our patch code and `patch -p1`); reset\n"
             "restores the manifest. Exit 1 when there is any problem.",
             ["minimodel break validate", "minimodel break validate --json"], cmd_validate)
    p.add_argument("--json", action="store_true", help='print {"ok", "problems"}')
    p.add_argument("--no-patch-command", action="store_true",
                   help="do not also apply the fix with the `patch` program")

    p = _sub(sub, "rehash", "mark Spanish texts as translated from the current English",
             "Stamp es_source_hash in a break.yaml with the hash of the current English text:\n"
             "for the texts named with --key, or else only those whose hash is missing/TODO.\n"
             "Do this after updating the Spanish of a text whose English changed.",
             ["minimodel break rehash tie-by-copy",
              "minimodel break rehash tie-by-copy --key intro --key 'hints[2]'"], cmd_rehash)
    p.add_argument("break_id", metavar="ID")
    p.add_argument("--key", action="append", default=None, metavar="KEY",
                   help="text to stamp: title, summary, intro, observe, explanation, "
                        "predict[N] or hints[N] (repeatable)")
