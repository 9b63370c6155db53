"""Revealed work: a pass after viewing the solution, a fix after viewing the fix.

Viewing the answer is allowed (``exercise solution``, ``break diff``, the tutor's
``break_give_up``) and is a fact of the record: the step it completes is shown as done *after
viewing the answer* wherever progress is shown, never as the learner's own work.

The decision: revealed work completes its step (``lab next`` moves on; nobody is stuck behind
a step they gave up on), and it is counted and shown apart: "exercises passed: 5/8, 1 after
viewing the solution"; ``--json`` outputs carry ``"revealed": true`` beside the status (which
stays ``passed``/``fixed``, so a script that asks "is the step done?" keeps its answer).

The rule is one and sticky. The fields of a progress entry (``progress/exercise.json``,
``progress/break.json``):

* ``solution_viewed`` / ``revealed_fix``: the answer was shown (``exercise solution``, the
  notebook's ``solution()``, ``break diff``, the tutor's ``break_give_up``);
* ``revealed``: the recorded pass or fix came after the answer was shown.

Once the answer of an item has been shown, every later pass or fix of that item is revealed:
a fresh start (``exercise start``, ``break reset``) does not clear it, and nothing about the
file that passes is compared. Telling a learner's own later work from the answer pasted back
with a no-op edit (a ``pass``, a future import, ``** 2.0`` for a square, a comment) cannot be
done by comparing content, and a rule that tried would record one of them wrongly; the fact
that the answer was seen is certain. A pass or fix recorded *before* the answer was first
shown stays own (viewing it afterwards, to compare, changes nothing). A copy of the lab's
own solution is never a recorded pass at all, viewed or not
(:mod:`minimodel.lab.exercises.copies`). Records written before these fields existed read as
own work.
"""

from __future__ import annotations

from typing import Any

DONE = {"break": "fixed", "exercise": "passed"}
# The field that says the answer of a ``kind`` step was shown (history, never cleared).
VIEWED = {"break": "revealed_fix", "exercise": "solution_viewed"}
# The status keys shown for revealed work (``status.*`` in the message catalogue).
SHOWN = {"passed": "passed-revealed", "fixed": "fixed-revealed"}


def after_attempt(kind: str, prev: dict[str, Any], done_now: bool) -> bool:
    """The ``revealed`` mark after an attempt of a ``kind`` step whose entry was ``prev``: an
    own pass (or fix) already recorded stays own; a pass now is revealed when the answer was
    ever shown; a failed attempt keeps the mark as it was."""
    if prev.get("status") == DONE[kind] and not prev.get("revealed"):
        return False
    if done_now:
        return bool(prev.get(VIEWED[kind]))
    return bool(prev.get("revealed"))


def is_revealed(kind: str, entry: dict[str, Any] | None) -> bool:
    """Is this entry's pass or fix one made after viewing the answer?"""
    entry = entry or {}
    return entry.get("status") == DONE[kind] and bool(entry.get("revealed"))


def shown(status: str, revealed: bool) -> str:
    """The status key to show (``status_label``): ``passed-revealed`` / ``fixed-revealed``
    ("passed after viewing the solution", "fixed after viewing the fix") for revealed work."""
    return SHOWN.get(status, status) if revealed else status


def shown_status(kind: str, entry: dict[str, Any] | None, default: str) -> str:
    """:func:`shown` of a progress entry (``default`` when there is none)."""
    return shown((entry or {}).get("status", default), is_revealed(kind, entry))
