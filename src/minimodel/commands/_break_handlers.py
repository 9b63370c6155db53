"""What each ``minimodel break`` subcommand does: the learner's flow (list, start, run, hint,
check, diff, reset); maintainers check every break with ``minimodel lab validate``.

The options are declared in :mod:`minimodel.commands.break_`; the engine (workspaces, patches,
child processes, texts) lives in :mod:`minimodel.lab.breaks`. Each handler records the
learner's progress and prints for a person, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import textwrap
from typing import Any

from minimodel.commands._exit import FAILED, OK, USAGE
from minimodel.lab.i18n import DEFAULT_LANG
from minimodel.messages import say


# A command quoted for the learner to copy: `minimodel ...` (not a path like `minimodel/nn`).
COMMAND = re.compile(r"`(minimodel [^`]+)`")


def _para(text: str) -> str:
    """A paragraph wrapped to the terminal (at most 100 columns), every quoted command on a
    line of its own, indented and never wrapped: a command split across lines (at a hyphen of
    a folder name, say) no longer pastes. Punctuation that only closed the command's sentence
    is dropped with it."""
    width = max(40, min(100, shutil.get_terminal_size((100, 24)).columns))
    pieces = COMMAND.split(" ".join(text.split()))  # prose, command, prose, command, ...
    lines: list[str] = []
    for i, piece in enumerate(pieces):
        if i % 2:
            lines.append("  " + piece)
            continue
        prose = re.sub(r"^[.,;:](\s|$)", "", piece.strip()) if i else piece.strip()
        if not prose:
            continue
        lines += textwrap.wrap(prose, width=width, break_on_hyphens=False,
                               break_long_words=False)
    return "\n".join(lines)


def _show(text: str, style: str | None = None) -> None:
    """Print like print(), in colour on a terminal (Rich drops the style when piped)."""
    from minimodel._console import Console
    from rich.text import Text

    Console(soft_wrap=True, highlight=False).print(Text(text, style=style or ""))


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _progress(args: argparse.Namespace):
    from minimodel.lab.progress import Progress

    return Progress(args.learner_dir)


def _commands(args: argparse.Namespace, root) -> dict[str, str]:
    """The break commands to suggest for workspace ``root``, carrying --learner-dir/--lang."""
    from minimodel.lab.suggest import Suggest, break_commands

    return break_commands(Suggest(args.lang or DEFAULT_LANG, args.learner_dir), root)


def _open(args: argparse.Namespace):
    from minimodel.lab.breaks import Workspace, load_break

    ws = Workspace.open(args.workdir)
    return ws, load_break(ws.break_id), args.lang or ws.lang


# --- handlers ------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.flow import listing

    lang = args.lang or DEFAULT_LANG
    rows = listing(_progress(args), lang)
    if args.json:
        _print_json(rows)
        return OK
    from minimodel._console import Console, add_name_column
    from rich.table import Table
    from rich.text import Text

    from minimodel.lab.i18n import status_label
    from minimodel.lab.revealed import shown

    table = Table(title=say("break.list_title", lang))
    add_name_column(table, say("break.col_id", lang), [row["id"] for row in rows])
    for column in ("title", "status"):
        table.add_column(say(f"break.col_{column}", lang))
    for row in rows:
        table.add_row(row["id"], Text(row["title"]),
                      status_label(shown(row["status"], row["revealed"]), lang))
    Console().print(table)
    return OK


def cmd_start(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks import AlreadyStarted, load_break, start

    lang = args.lang or DEFAULT_LANG
    brk = load_break(args.break_id, lang=lang)
    try:
        ws = start(brk, args.workdir, lang=lang, force=args.force, learner_dir=args.learner_dir)
    except AlreadyStarted as already:  # may hold the learner's edits: touch nothing
        return _already_started(args, already.workspace, brk)
    from minimodel.lab.breaks.flow import started
    started(_progress(args), brk.id, workdir=str(ws.root), lang=lang)
    if args.json:
        _print_json({"break": brk.id, "workdir": str(ws.root), "notes": str(ws.notes_path),
                     "lang": lang, "files": len(ws.manifest), "restarted": ws.restarted,
                     "already_started": False})
        return OK
    print(say("break.started", lang, id=brk.id, title=brk.text("title", lang), root=ws.root))
    if ws.restarted:
        print(say("break.restarted", lang))
    print(_para(brk.text("intro", lang)))
    print()
    print(say("break.next_steps", lang, notes=ws.notes_path, root=ws.root,
              **_commands(args, ws.root)))
    return OK


def _already_started(args: argparse.Namespace, ws, brk) -> int:
    """``start`` again on this break's workspace: say how to go on; nothing is written."""
    lang = args.lang or ws.lang
    if args.json:
        _print_json({"break": brk.id, "workdir": str(ws.root), "notes": str(ws.notes_path),
                     "lang": ws.lang, "files": len(ws.manifest), "restarted": False,
                     "already_started": True})
        return OK
    print(_para(say("break.already_started", lang, id=brk.id, root=ws.root,
                    **_commands(args, ws.root))))
    return OK


def cmd_run(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.flow import learner_kernels_env, notes_missing
    from minimodel.lab.breaks.flow import run as run_experiment
    from minimodel.lab.breaks.harness import CAUSE_REMAINS, SYMPTOM

    ws, brk, lang = _open(args)
    questions = brk.texts("predict", lang)
    if not args.skip_predictions:
        missing = notes_missing(ws, brk, lang)
        if missing:
            label = say("break.prediction", lang)
            print(say("break.predictions_missing", lang, notes=ws.notes_path,
                    missing=", ".join(f"{label} {n}" for n in missing)))
            for n in missing:
                print(f"\n## {label} {n}\n" + textwrap.indent(_para(questions[n - 1]), "  "))
            print("\n" + say("break.predictions_skip", lang))
            return USAGE
    script = brk.path("experiment")
    print(say("break.running", lang, script=script, root=ws.root))
    for name, value in learner_kernels_env().items():
        print(say("break.kernels_env", lang, name=name, value=value))
    print(say("break.output", lang), flush=True)
    labels = {SYMPTOM: (say("break.symptom_label", lang), "bold red"),
              CAUSE_REMAINS: (say("break.cause_remains_label", lang), "bold yellow")}

    def echo(line: str) -> None:  # live, so a few seconds of training are not a silent wait
        for marker, (label, style) in labels.items():
            if line.startswith(marker):
                _show(label + line[len(marker):], style)
                return
        print(line, flush=True)

    run, seen = run_experiment(_progress(args), ws, brk, lang, args.timeout, echo=echo)
    if run.stderr.strip():
        print(run.stderr.rstrip("\n"), file=sys.stderr)
    if run.timed_out:
        print(say("break.timed_out", lang, seconds=run.seconds), file=sys.stderr)
    ok, symptom = seen["ok"], seen["symptom"]
    if not ok:
        print(_para(say("break.experiment_failed", lang, code=run.returncode,
                        expected=0, **_commands(args, ws.root))), file=sys.stderr)
        return FAILED
    if not symptom:  # after a fix, full or partial: the "what to look at" text would describe
        print()          # a symptom that is no longer there
        key = "partial_fix" if run.cause_remains() else "no_symptom"
        print(_para(say(f"break.{key}", lang, **_commands(args, ws.root))))
        return OK
    print(say("break.observe", lang))
    print(_para(brk.text("observe", lang)))
    print()
    print(_para(say("break.after_run", lang, **_commands(args, ws.root))))
    return OK


def cmd_hint(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.flow import hint

    ws, brk, lang = _open(args)
    shown = hint(_progress(args), ws, brk, lang)
    number, total = shown["hint"], shown["total"]
    if args.json:
        _print_json(shown)
        return OK
    _show(say("break.hint", lang, n=number, total=total) + ":", "bold cyan")
    print(_para(shown["text"]))
    if number == total:
        print(_para(say("break.hint_last", lang, **_commands(args, ws.root))))
    return OK


def cmd_check(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.flow import check

    ws, brk, lang = _open(args)
    if not args.json and sys.stderr.isatty():
        print(say("break.checking", lang, root=ws.root), file=sys.stderr, flush=True)
    result, run = check(_progress(args), ws, brk, lang, seed=args.seed, timeout=args.timeout,
                        diff=_commands(args, ws.root)["diff"])
    fixed, details = result["fixed"], result["details"]
    if args.json:
        _print_json(result)
        return OK if fixed else FAILED
    if run is None:  # refused: the learner's code reaches into the checks
        _show(say("break.refused", lang), "bold red")
        print(_para(details[0]["message"]))
        return FAILED
    for d in details:
        _show(("PASS  " if d["ok"] else "FAIL  ") + d["description"],
             "green" if d["ok"] else "red")
        if d["message"]:
            print(f"      {d['message']}")
    failed = sum(not d["ok"] for d in details)
    if fixed:
        print()
        _show(say("break.fixed", lang, passed=len(details), total=len(details)), "bold green")
        if result["revealed"]:
            _show(_para(say("break.fixed_revealed", lang)), "yellow")
        print(say("break.why", lang))
        print(_para(brk.text("explanation", lang)))
        if brk.references:
            print(say("break.references", lang))
            for ref in brk.references:
                print(f"  - {ref}")
        return OK
    if run.stderr.strip() and not run.checks:
        print(run.stderr.rstrip("\n"), file=sys.stderr)
    print()
    _show(say("break.not_fixed", lang, failed=failed, total=len(details)), "bold red")
    replay = _commands(args, ws.root)["check"] + f" --seed {run.seed}"
    print(_para(say("break.replay_seed", lang, seed=run.seed, command=replay)))
    print(_para(say("break.not_fixed_next", lang, **_commands(args, ws.root))))
    return FAILED


def cmd_diff(args: argparse.Namespace) -> int:
    from minimodel.lab.breaks.flow import reveal_fix

    ws, brk, lang = _open(args)
    diff, edited = reveal_fix(_progress(args), ws, brk)
    print(_para(say("break.diff_recorded", lang)),
          file=sys.stderr)   # stdout is the diff alone (`break diff | patch -p1 -d DIR`)
    if edited:
        print(_para(say("break.diff_edited", lang, files=", ".join(edited),
                        **_commands(args, ws.root))), file=sys.stderr)
    sys.stdout.write(diff)
    return OK


def cmd_reset(args: argparse.Namespace) -> int:

    ws, brk, lang = _open(args)
    result = ws.reset(notes=args.notes)
    from minimodel.lab.breaks.flow import was_reset
    was_reset(_progress(args), brk.id)
    if args.json:
        _print_json({"break": brk.id, "workdir": str(ws.root), **result,
                     "matches_manifest": True})
        return OK
    if result["restored"] or result["removed"]:
        print(say("break.reset_done", lang, restored=len(result["restored"]),
                removed=len(result["removed"])))
        for rel in result["restored"] + result["removed"]:
            print(f"  {rel}")
    else:
        print(say("break.reset_clean", lang))
    return OK
