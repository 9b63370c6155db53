"""What an exercise attempt records in the learner's progress, wherever it is made: the
``minimodel exercise`` command and a notebook (:mod:`minimodel.lab.notebook`) call these, so
progress is the same progress."""

from __future__ import annotations

from typing import Any

from minimodel.lab.exercises.registry import all_exercises, get_exercise
from minimodel.lab.progress import Progress
from minimodel.lab.revealed import after_attempt


def record_check(progress: Progress, exercise_id: str, result: dict[str, Any],
                 file: str) -> dict[str, Any]:
    """Record one judged attempt: ``passed`` once any attempt passed, else ``attempted``;
    ``revealed`` when the pass came after viewing the solution (:mod:`minimodel.lab.revealed`).

    A seed the learner chose replays known cases (``result["practice"]``): practice, never a
    recorded pass. A copy of lab code the learner was shown (``result["copy_viewed"]``, from
    another exercise's solution too) is a pass after viewing the solution.
    """
    prev = progress.get("exercise", exercise_id) or {}
    counted = result["passed"] and not result.get("practice")
    # a copy of code shown with another exercise's solution is revealed like this one's
    shown = {**prev, "solution_viewed": True} if result.get("copy_viewed") else prev
    ever_passed = counted or prev.get("status") == "passed"
    return progress.record("exercise", exercise_id, "passed" if ever_passed else "attempted",
                           last_status=result["status"], last_seed=result["seed"],
                           practice=bool(result.get("practice")),
                           attempts=int(prev.get("attempts", 0)) + 1, file=file,
                           revealed=after_attempt("exercise", shown, counted))


def viewed_solutions(progress: Progress) -> frozenset[str]:
    """The exercises whose solution the learner has been shown (``exercise solution``, the
    notebook's ``solution()``): the judge records a copy of their code as revealed work."""
    return frozenset(item for item, entry in progress.all("exercise").items()
                     if entry.get("solution_viewed"))


def record_start(progress: Progress, exercise_id: str, file: str) -> None:
    """Record a start (a new starter file written). It does not clear a viewed solution:
    once shown, every later pass is a pass after viewing it (:mod:`minimodel.lab.revealed`)."""
    prev = progress.get("exercise", exercise_id) or {}
    progress.record("exercise", exercise_id, prev.get("status", "started"), file=file)


def climb_hint(progress: Progress, exercise_id: str, hint_count: int) -> int:
    """Go one rung up the hint ladder (staying on the last one); returns the new rung, 1-based."""
    prev = progress.get("exercise", exercise_id) or {}
    level = min(int(prev.get("hint_level", 0)) + 1, hint_count)
    progress.record("exercise", exercise_id, prev.get("status", "started"), hint_level=level)
    return level


def record_solution_viewed(progress: Progress, exercise_id: str) -> None:
    """Record that the reference solution was shown: every pass from now on is a pass after
    viewing the solution. The exercises whose reference is the same file (the two MLM
    exercises share one library module) were shown their solution too."""
    shown = get_exercise(exercise_id).reference_path
    for ex in all_exercises():
        if ex.id == exercise_id or ex.reference_path == shown:
            prev = progress.get("exercise", ex.id) or {}
            progress.record("exercise", ex.id, prev.get("status", "started"),
                            solution_viewed=True)
