"""What an exercise attempt records in the learner's progress, wherever it is made: the
``minimodel exercise`` command and a notebook (:mod:`minimodel.lab.notebook`) call these, so
progress is the same progress."""

from __future__ import annotations

from typing import Any

from minimodel.lab.progress import Progress
from minimodel.lab.revealed import after_attempt


def record_check(progress: Progress, exercise_id: str, result: dict[str, Any],
                 file: str) -> dict[str, Any]:
    """Record one judged attempt: ``passed`` once any attempt passed, else ``attempted``;
    ``revealed`` when the pass came after viewing the solution (:mod:`minimodel.lab.revealed`).

    A seed the learner chose replays known cases (``result["practice"]``): practice, never a
    recorded pass.
    """
    prev = progress.get("exercise", exercise_id) or {}
    counted = result["passed"] and not result.get("practice")
    ever_passed = counted or prev.get("status") == "passed"
    return progress.record("exercise", exercise_id, "passed" if ever_passed else "attempted",
                           last_status=result["status"], last_seed=result["seed"],
                           practice=bool(result.get("practice")),
                           attempts=int(prev.get("attempts", 0)) + 1, file=file,
                           revealed=after_attempt("exercise", prev, counted))


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
    viewing the solution."""
    prev = progress.get("exercise", exercise_id) or {}
    progress.record("exercise", exercise_id, prev.get("status", "started"),
                    solution_viewed=True)
