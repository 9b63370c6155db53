"""Exercises: the statement and its visible examples, one hint per call, and a check of the
learner's file by the judge of ``minimodel exercise check``.

Same sandbox, same cases, same feedback (a hidden case names its clause and the size and place
of an error, never its expected value), same progress rule: a check with a chosen ``seed``
replays known cases and is practice, never a recorded pass. The reference solution is never
shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minimodel.lab import path as learning_path
from minimodel.lab.exercise_progress import (climb_hint, record_check, record_start,
                                             viewed_solutions)
from minimodel.lab.exercises import check_solution, get_exercise, list_exercises, write_stub
from minimodel.lab.exercises.cases import EXAMPLE_SEED
from minimodel.lab.exercises.judge import _inside_package, build_cases
from minimodel.lab.revealed import is_revealed
from minimodel.messages import say
from minimodel.tutor.learner import Learner

# The judge's result fields an assistant needs (the rest is for the terminal's table).
RESULT_FIELDS = ("exercise", "passed", "status", "reason", "practice", "message", "forbidden",
                 "hung_at", "isolation", "file", "stderr_tail")
CASE_FIELDS = ("name", "hidden", "label", "status", "message", "inputs", "clauses", "where")


class ExerciseDesk:
    """The exercise tools for one learner."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner

    def _file(self, exercise_id: str) -> Path:
        """The learner's file: the one their progress names, else the lab's starter file."""
        progress = self.learner.progress()
        recorded = (progress.get("exercise", exercise_id) or {}).get("file")
        if recorded and Path(recorded).is_file():
            return Path(recorded)
        return learning_path.item_place(progress, "exercise", exercise_id)

    def list(self, lang: str | None = None) -> list[dict[str, Any]]:
        """``exercise list --json`` with the learner's status."""
        lang = self.learner.pick_lang(lang)
        done = self.learner.progress().all("exercise")
        return [{"id": item["id"], "title": item["titles"].get(lang, item["title"]),
                 "status": done.get(item["id"], {}).get("status", "new"),
                 "revealed": is_revealed("exercise", done.get(item["id"]))}
                for item in list_exercises()]

    def show(self, exercise_id: str, lang: str | None = None) -> dict[str, Any]:
        """The statement, the signature, the visible examples' inputs, and the learner's file
        (the starter file is written, as ``exercise start``, when there is none yet)."""
        lang = self.learner.pick_lang(lang)
        ex = get_exercise(str(exercise_id), lang)
        path = self._file(ex.id)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_stub(ex, path, lang=lang)
            record_start(self.learner.progress(), ex.id, str(path))
        examples = [{"name": case.name, "inputs": case.describe_inputs()}
                    for case in build_cases(ex, EXAMPLE_SEED) if not case.hidden]
        return {"exercise": ex.id, "title": ex.text("title", lang),
                "statement": ex.text("statement", lang), "signature": ex.signature(),
                "visible_examples": examples, "file": str(path),
                "hints": len(ex.hint_list(lang)),
                "say": say("tutor.exercise.write_first", lang, file=path)}

    def hint(self, exercise_id: str, lang: str | None = None) -> dict[str, Any]:
        """The next rung of the exercise's hint ladder, and only that one."""
        lang = self.learner.pick_lang(lang)
        ex = get_exercise(str(exercise_id), lang)
        hints = ex.hint_list(lang)
        level = climb_hint(self.learner.progress(), ex.id, len(hints))
        return {"exercise": ex.id, "hint": level, "total": len(hints), "text": hints[level - 1]}

    def check(self, exercise_id: str, file: str | None = None, seed: int | None = None,
              lang: str | None = None) -> dict[str, Any]:
        """Judge the learner's file (default: their file for this exercise) and record it."""
        lang = self.learner.pick_lang(lang)
        ex = get_exercise(str(exercise_id), lang)
        path = Path(file).expanduser() if file else self._file(ex.id)
        if file and (path.resolve().suffix != ".py" or _inside_package(path)):
            # the tool judges the learner's .py file: not a reader of any file on the machine
            # (a load error quotes the line a file fails to parse at) nor of the lab's content
            raise ValueError(say("tutor.exercise.not_learner_file", lang, file=file))
        result = check_solution(ex, path, seed=seed, lang=lang,
                                learner_dir=self.learner.learner_dir,
                                viewed=viewed_solutions(self.learner.progress()))
        entry = record_check(self.learner.progress(), ex.id, result, str(path))
        out = {key: result.get(key) for key in RESULT_FIELDS}
        out["cases"] = [{key: case.get(key) for key in CASE_FIELDS} for case in result["cases"]]
        out["revealed"] = bool(entry.get("revealed"))
        revealed = result["passed"] and out["revealed"]
        own_kept = result["passed"] and result["copy_viewed"] and not revealed \
            and entry.get("status") == "passed"   # an own pass before viewing is kept
        out["say"] = say("tutor.exercise.passed_revealed_copy" if revealed and result["copy_viewed"]
                         else "tutor.exercise.passed_revealed" if revealed
                         else "tutor.exercise.copy_own_kept" if own_kept
                         else "tutor.exercise.passed" if result["passed"] else
                         "tutor.exercise.failed", lang)
        return out
