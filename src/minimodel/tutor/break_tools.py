"""Breaks: start, predictions in NOTES.md, run, one hint per call, check; the fix only when the
learner gives up.

Every step is :mod:`minimodel.lab.breaks.flow`'s, as ``minimodel break`` runs it, on the same
workspace: the one the learner started (its folder is in their progress), else
``<learner dir>/work/breaks/<id>`` as ``lab next`` uses. What no result holds before the break
is fixed: the cause (the ``explanation``), the bug patch, the fix, a hint above the rung
reached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minimodel._fileio import atomic_write_text
from minimodel.lab import path as learning_path
from minimodel.lab.breaks import Workspace, WorkspaceError, load_break, start
from minimodel.lab.breaks import flow
from minimodel.lab.breaks.catalog import Break
from minimodel.lab.breaks.harness import CAUSE_REMAINS, SYMPTOM
from minimodel.lab.breaks.notes import is_written, with_predictions
from minimodel.lab.suggest import Suggest, break_commands
from minimodel.messages import say
from minimodel.tutor.learner import Learner


class BreakDesk:
    """The break tools for one learner."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner

    # --- where the workspace is --------------------------------------------------------
    def _place(self, break_id: str) -> Path:
        progress = self.learner.progress()
        recorded = (progress.get("break", break_id) or {}).get("workdir")
        if recorded:
            try:
                if Workspace.open(recorded).break_id == break_id:
                    return Path(recorded)
            except WorkspaceError:
                pass
        return learning_path.item_place(progress, "break", break_id)

    def _open(self, break_id: str, lang: str | None) -> tuple[Workspace, Break, str]:
        brk = load_break(str(break_id), lang=self.learner.pick_lang(lang))
        try:
            ws = Workspace.open(self._place(brk.id))
        except WorkspaceError:
            raise ValueError(say("tutor.break.not_started", self.learner.pick_lang(lang),
                                 id=brk.id)) from None
        return ws, brk, self.learner.pick_lang(lang, ws.lang)

    # --- the tools -------------------------------------------------------------------------
    def list(self, lang: str | None = None) -> list[dict[str, Any]]:
        """``break list --json``: every break with the learner's status."""
        return flow.listing(self.learner.progress(), self.learner.pick_lang(lang))

    def start(self, break_id: str, lang: str | None = None) -> dict[str, Any]:
        """Start the break in its workspace, or continue it when it is already there."""
        asked, lang = lang, self.learner.pick_lang(lang)
        brk = load_break(str(break_id), lang=lang)
        place = self._place(brk.id)
        try:
            ws = Workspace.open(place)
            continued = ws.break_id == brk.id
        except WorkspaceError:
            continued = False
        if continued:
            lang = self.learner.pick_lang(asked, ws.lang)
        else:
            ws = start(brk, place, lang=lang, force=True,
                       learner_dir=self.learner.learner_dir)
            flow.started(self.learner.progress(), brk.id, workdir=str(ws.root), lang=lang)
        return {"break": brk.id, "title": brk.text("title", lang), "workdir": str(ws.root),
                "notes": str(ws.notes_path), "continued": continued,
                "intro": brk.text("intro", lang),
                "predict": brk.texts("predict", lang),
                "predictions_missing": flow.notes_missing(ws, brk, lang),
                "hints_shown": ws.hints_shown, "hints_total": len(brk.texts("hints", lang)),
                "say": say("tutor.break.predict_first", lang,
                           n=len(brk.texts("predict", lang)))}

    def predict(self, break_id: str, predictions: list[str],
                lang: str | None = None) -> dict[str, Any]:
        """Write the learner's predictions (one per question, in order) into NOTES.md."""
        ws, brk, lang = self._open(break_id, lang)
        questions = brk.texts("predict", lang)
        given = [str(p) for p in predictions]
        if len(given) != len(questions) or not all(is_written(p) for p in given):
            raise ValueError(say("tutor.break.predictions_count", lang, n=len(questions),
                                 got=sum(is_written(p) for p in given)))
        notes = ws.notes_path.read_text(encoding="utf-8") if ws.notes_path.is_file() else ""
        atomic_write_text(ws.notes_path, with_predictions(
            notes, {n: text for n, text in enumerate(given, 1)}))
        return {"break": brk.id, "notes": str(ws.notes_path),
                "predictions_missing": flow.notes_missing(ws, brk, lang),
                "say": say("tutor.break.predicted", lang)}

    def run(self, break_id: str, lang: str | None = None) -> dict[str, Any]:
        """Run the experiment (refused while a prediction is empty, as ``break run``)."""
        ws, brk, lang = self._open(break_id, lang)
        missing = flow.notes_missing(ws, brk, lang)
        if missing:
            label = say("break.prediction", lang)
            raise ValueError(say("break.predictions_missing", lang, notes=ws.notes_path,
                                 missing=", ".join(f"{label} {n}" for n in missing)))
        labels = {SYMPTOM: say("break.symptom_label", lang),
                  CAUSE_REMAINS: say("break.cause_remains_label", lang)}
        lines: list[str] = []

        def keep(line: str) -> None:
            for marker, label in labels.items():
                if line.startswith(marker):
                    line = label + line[len(marker):]
                    break
            lines.append(line)

        done, seen = flow.run(self.learner.progress(), ws, brk, lang, echo=keep)
        out: dict[str, Any] = {"break": brk.id, "output": lines, "ok": seen["ok"],
                               "symptom": seen["symptom"],
                               "cause_remains": seen["cause_remains"]}
        if not seen["ok"]:
            out["stderr"] = done.stderr_tail(12)
            out["say"] = say("break.experiment_failed", lang, code=done.returncode, expected=0,
                             **self._commands(ws, lang))
        elif seen["symptom"]:
            out["observe"] = brk.text("observe", lang)
            out["say"] = say("tutor.break.after_run", lang)
        else:
            key = "partial_fix" if seen["cause_remains"] else "no_symptom"
            out["say"] = say(f"break.{key}", lang, **self._commands(ws, lang))
        return out

    def _commands(self, ws, lang: str) -> dict[str, str]:
        """The break commands the messages name, for this learner's folder."""
        return break_commands(Suggest(lang, self.learner.learner_dir), ws.root)

    def hint(self, break_id: str, lang: str | None = None) -> dict[str, Any]:
        """The next rung of the hint ladder, and only that one."""
        ws, brk, lang = self._open(break_id, lang)
        shown = flow.hint(self.learner.progress(), ws, brk, lang)
        shown["say"] = say("tutor.break.hint_rule", lang, n=shown["hint"], total=shown["total"])
        return shown

    def check(self, break_id: str, seed: int | None = None,
              lang: str | None = None) -> dict[str, Any]:
        """The invariants against the workspace copy on fresh random sizes (``seed`` replays
        a failure's): fixed or not; the why once fixed."""
        ws, brk, lang = self._open(break_id, lang)
        result, _ = flow.check(self.learner.progress(), ws, brk, lang, seed=seed)
        out = {key: result[key] for key in ("break", "fixed", "revealed", "details", "seed")}
        if result["fixed"]:
            out["why"] = brk.text("explanation", lang)
            out["references"] = brk.references
            out["say"] = say("break.fixed", lang, passed=len(result["details"]),
                             total=len(result["details"]))
            if result["revealed"]:
                out["say"] += " " + say("tutor.break.fixed_revealed", lang)
        else:
            failed = sum(not d["ok"] for d in result["details"])
            out["say"] = say("break.not_fixed", lang, failed=failed,
                             total=len(result["details"]))
        return out

    def give_up(self, break_id: str, learner_gives_up: bool = False,
                lang: str | None = None) -> dict[str, Any]:
        """Our fix as a diff (``break diff``), only when the learner said they give up."""
        ws, brk, lang = self._open(break_id, lang)
        if learner_gives_up is not True:
            raise ValueError(say("tutor.break.give_up_first", lang, id=brk.id))
        diff, edited = flow.reveal_fix(self.learner.progress(), ws, brk)
        return {"break": brk.id, "diff": diff, "edited": edited,
                "apply": f"patch -p1 -d {ws.root}", "why": brk.text("explanation", lang)}
