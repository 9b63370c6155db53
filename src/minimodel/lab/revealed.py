"""Revealed work: a pass after viewing the solution, a fix after viewing the fix.

Viewing the answer is allowed (``exercise solution``, ``break diff``, the tutor's
``break_give_up``) and is a fact of the record: the step it completes is shown as done *after
viewing the answer* wherever progress is shown, never as the learner's own work.

The decision: revealed work completes its step (``lab next`` moves on; nobody is stuck behind
a step they gave up on), and it is counted and shown apart: "exercises passed: 5/8, 1 after
viewing the solution"; ``--json`` outputs carry ``"revealed": true`` beside the status (which
stays ``passed``/``fixed``, so a script that asks "is the step done?" keeps its answer).

The fields of a progress entry (``progress/exercise.json``, ``progress/break.json``):

* ``solution_viewed`` / ``revealed_fix``: the answer was shown at least once (history);
* ``seen_since_start``: the answer was shown since the work last started afresh. A fresh start
  is ``exercise start`` writing a new starter file (also ``lab next`` and the tutor's
  ``exercise_show`` when they write one) and ``break start`` or ``break reset`` putting the
  bug back into the workspace;
* ``revealed``: the recorded pass or fix came while ``seen_since_start`` was set.

So an own pass or fix made before viewing the answer stays own (viewing it afterwards, to
compare, changes nothing); a pass after viewing is revealed; and a later pass or fix after a
fresh start clears the mark, unless it *is* the answer shown. The answer is recognised by its
content, as a program (:func:`minimodel.lab.pyparse.normalised`: comments and layout do not
count): a checked exercise file that is the reference or an alternative is practice, never a
recorded pass (:mod:`minimodel.lab.exercises.copies`); and a break fix checked after a fresh
start, when the fix was viewed before (``revealed_fix``), whose patched files equal the fix
the lab showed (``Workspace.holds_shown_fix``), is revealed. What the lab cannot see is an
answer retyped in the learner's own way (that is their work again). Records written before
these fields existed read as own work.
"""

from __future__ import annotations

from typing import Any

DONE = {"break": "fixed", "exercise": "passed"}
SEEN = "seen_since_start"
# The status keys shown for revealed work (``status.*`` in the message catalogue).
SHOWN = {"passed": "passed-revealed", "fixed": "fixed-revealed"}


def after_attempt(kind: str, prev: dict[str, Any], done_now: bool) -> bool:
    """The ``revealed`` mark after an attempt of a ``kind`` step whose entry was ``prev``: an
    own pass (or fix) already recorded stays own; a pass now is revealed when the answer was
    seen since the last fresh start; a failed attempt keeps the mark as it was."""
    if prev.get("status") == DONE[kind] and not prev.get("revealed"):
        return False
    if done_now:
        return bool(prev.get(SEEN))
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
