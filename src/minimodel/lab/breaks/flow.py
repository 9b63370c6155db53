"""The steps of a break that record the learner's progress: one implementation for every front
end (``minimodel break`` in a terminal, ``minimodel tutor`` for an AI assistant).

Each function does the step and records it; printing is the caller's. The statuses a break goes
through: started -> observed (ran) -> attempted (checked) -> fixed; "fixed" is sticky. Once
``break diff`` (the tutor's ``break_give_up``) has shown the fix, every later fix is recorded
as revealed, a reset or a restart included: :mod:`minimodel.lab.revealed`.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from minimodel.dispatch import KERNELS_ENV

from minimodel.lab.breaks.catalog import Break, load_all
from minimodel.lab.breaks.notes import missing_predictions
from minimodel.lab.breaks.runner import ScriptRun, check_details, is_fixed, run_script
from minimodel.lab.breaks.workspace import Workspace
from minimodel.lab.progress import Progress
from minimodel.lab.revealed import after_attempt, is_revealed
from minimodel.lab.suggest import Suggest, break_commands
from minimodel.messages import say


def record(progress: Progress, break_id: str, status: str | None, count: str | None = None,
           **detail: Any) -> None:
    """Record progress. Statuses: started -> observed (ran) -> attempted (checked) -> fixed.

    ``status=None`` keeps the current one (hints, diff, reset). "fixed" is sticky: a later
    reset or failing check does not undo it (``last_check`` tells the latest result).
    ``count`` names a counter of the entry to add one to (``checks_run``, ``resets``).
    """
    entry = progress.get("break", break_id) or {}
    if entry.get("status") == "fixed" or status is None:
        status = entry.get("status") or "started"
    if count:
        detail[count] = int(entry.get(count, 0)) + 1
    progress.record("break", break_id, status, **detail)


def started(progress: Progress, break_id: str, **detail: Any) -> None:
    """Record a (re)start: the workspace holds the bug again. It does not clear a viewed fix:
    once shown, every later fix is a fix after viewing it (:mod:`minimodel.lab.revealed`)."""
    record(progress, break_id, "started", **detail)


def was_reset(progress: Progress, break_id: str) -> None:
    """Record a ``reset`` (the bug is back in the workspace): counted."""
    record(progress, break_id, None, count="resets")


def listing(progress: Progress, lang: str) -> list[dict[str, Any]]:
    """Every break in path order with the learner's status: ``[{"id", "title", "summary",
    "hints", "predictions", "status", "revealed", "hints_used"}]`` (``break list --json``;
    ``revealed``: fixed after viewing the fix)."""
    records = progress.all("break")
    rows = []
    for brk in load_all():
        entry = records.get(brk.id) or {}
        rows.append({**brk.summary(lang), "status": entry.get("status", "not started"),
                     "revealed": is_revealed("break", entry),
                     "hints_used": entry.get("hints_used", 0)})
    return rows


def notes_missing(ws: Workspace, brk: Break, lang: str) -> list[int]:
    """The numbers of the predictions still empty in the workspace's NOTES.md."""
    notes = ws.notes_path.read_text(encoding="utf-8") if ws.notes_path.is_file() else ""
    return missing_predictions(notes, len(brk.texts("predict", lang)))


def run(progress: Progress, ws: Workspace, brk: Break, lang: str, timeout: float | None = None,
        echo: Callable[[str], None] | None = None) -> tuple[ScriptRun, dict[str, Any]]:
    """Run the experiment against the workspace copy and record what was seen.

    Returns the run and ``{"ok", "symptom", "cause_remains", "seconds"}`` (what is recorded
    as ``last_run``). The caller refuses first when predictions are missing
    (:func:`notes_missing`): predicting is the point of a break.
    """
    done = run_script(ws.root, brk.path("experiment"), lang, timeout or brk.timeout, echo=echo,
                      env=learner_kernels_env())
    seen = {"ok": not done.timed_out and done.returncode == 0,
            "symptom": bool(done.symptom_lines()), "cause_remains": done.cause_remains(),
            "seconds": round(done.seconds, 2)}
    record(progress, brk.id, "observed", last_run=seen)
    return done, seen


def learner_kernels_env() -> dict[str, str]:
    """``{"MINIMODEL_KERNELS": value}`` when the learner set it: an experiment run with kernels
    off is a diagnosis a learner may want (is it the kernel or the definition?)."""
    value = os.environ.get(KERNELS_ENV)
    return {} if value is None else {KERNELS_ENV: value}


def hint(progress: Progress, ws: Workspace, brk: Break, lang: str) -> dict[str, Any]:
    """Climb one rung of the hint ladder (staying on the last): ``{"break", "hint", "total",
    "text"}``, the new rung only."""
    hints = brk.texts("hints", lang)
    number = ws.next_hint(len(hints))
    record(progress, brk.id, None, hints_used=ws.hints_shown)
    return {"break": brk.id, "hint": number, "total": len(hints), "text": hints[number - 1]}


def check(progress: Progress, ws: Workspace, brk: Break, lang: str, seed: int | None = None,
          timeout: float | None = None, diff: str | None = None
          ) -> tuple[dict[str, Any], ScriptRun | None]:
    """Test the invariants against the workspace copy and record the result; ``diff`` is the
    ``break diff`` command a refusal names (default: built for ``progress``'s folder).

    Returns ``{"fixed", "revealed", "break", "workdir", "details", "exit_code", "seed",
    "seconds"}`` (``break check --json``; ``revealed``: the recorded fix came after viewing
    the fix) and the run (None when the verdict is refused as tampering: the scan refused to
    run the checks where the learner's code could reach into them, or the checks ran but
    loaded a ``minimodel`` module from outside the workspace's copy, so they did not check
    it: :func:`minimodel.lab.breaks.harness.foreign_modules`).
    """
    from minimodel.lab.breaks.tamper import describe, scan_workspace

    findings = scan_workspace(ws)
    prev = progress.get("break", brk.id) or {}
    if findings:
        record(progress, brk.id, "attempted", last_check=False, hints_used=ws.hints_shown)
        return {"fixed": False, "revealed": False, "break": brk.id, "workdir": str(ws.root),
                "details": [{"id": "tamper", "ok": False, "description": "",
                             "message": describe(findings, lang, diff or break_commands(
                                 Suggest(lang, progress.learner_dir), ws.root)["diff"])}],
                "exit_code": None, "seed": None, "seconds": 0.0}, None
    done = run_script(ws.root, brk.path("check"), lang, timeout or brk.timeout, seed=seed)
    if done.foreign:  # the checks ran another copy of the library: no verdict on this one
        record(progress, brk.id, "attempted", count="checks_run", last_check=False,
               hints_used=ws.hints_shown)
        module, where = done.foreign[0]
        reset = break_commands(Suggest(lang, progress.learner_dir), ws.root)["reset"]
        return {"fixed": False, "revealed": False, "break": brk.id, "workdir": str(ws.root),
                "details": [{"id": "tamper", "ok": False, "description": "",
                             "message": say("break.foreign", lang, module=module, where=where,
                                            workspace=ws.root / "minimodel", reset=reset,
                                            more=len(done.foreign) - 1)}],
                "exit_code": done.returncode, "seed": done.seed,
                "seconds": round(done.seconds, 2)}, None
    fixed = is_fixed(done)
    shown = {"revealed_fix": True} if ws.fix_shown else {}  # shown from another learner folder
    revealed = after_attempt("break", {**prev, **shown}, fixed)  # shown once: every later fix
    record(progress, brk.id, "fixed" if fixed else "attempted", count="checks_run",
           last_check=fixed, hints_used=ws.hints_shown, revealed=revealed, **shown)
    return {"fixed": fixed, "revealed": revealed and fixed, "break": brk.id,
            "workdir": str(ws.root),
            "details": check_details(done, lang), "exit_code": done.returncode,
            "seed": done.seed, "seconds": round(done.seconds, 2)}, done


def reveal_fix(progress: Progress, ws: Workspace, brk: Break) -> tuple[str, list[str]]:
    """Our fix as a unified diff, recorded as revealed, in the learner folder and in the
    workspace itself (a check of it from another learner folder reads the mark there); and
    the patched files the learner edited since the start (the diff is from the start state,
    so it may not apply)."""
    diff = ws.fix_diff()
    edited = [p for p in ws.changes()["modified"] if p in ws.patched_files()]
    record(progress, brk.id, None, revealed_fix=True)
    ws.mark_fix_shown()
    return diff, edited
