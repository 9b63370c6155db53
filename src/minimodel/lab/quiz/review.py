"""Spaced repetition with Leitner boxes, stored in the learner's quiz progress entry.

Each question sits in a box 1..5 with a due date::

    progress/quiz.json -> {"phase-13-embeddings": {"boxes": {"q-13-04": {"box": 1,
                                                                          "due": "2025-03-02"}}}}

A wrong answer sends the question back to box 1, due today; a right answer moves it up one box
(a never-seen question starts from box 1) and pushes its due date out by that box's interval.
Why Leitner: it needs no tuning and its state is two small fields a learner can read.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from minimodel.lab.quiz.loader import Quiz

MAX_BOX = 5
INTERVAL_DAYS = {1: 0, 2: 1, 3: 3, 4: 7, 5: 14}

# Sort keys of the review queue: missed questions come back first, then unseen ones, then
# questions whose interval has run out; not-yet-due questions only with ``include_all``.
_RANK = {"missed": 0, "new": 1, "due": 2, "later": 3}


def today() -> dt.date:
    """The current local date (a function so tests can monkeypatch it)."""
    return dt.date.today()


def move(state: dict[str, Any] | None, correct: bool, on: dt.date) -> dict[str, Any]:
    """The new ``{"box", "due"}`` of one question after an answer given on ``on``."""
    box = (state or {}).get("box", 1)
    box = min(max(box, 1) + 1, MAX_BOX) if correct else 1
    return {"box": box, "due": (on + dt.timedelta(days=INTERVAL_DAYS[box])).isoformat()}


def update_boxes(boxes: dict[str, Any], results: dict[str, bool],
                 on: dt.date | None = None) -> dict[str, Any]:
    """A copy of ``boxes`` with every graded question moved (others untouched)."""
    on = on or today()
    new = {qid: dict(state) for qid, state in boxes.items()}
    for qid, correct in results.items():
        new[qid] = move(boxes.get(qid), correct, on)
    return new


def _reason(state: dict[str, Any] | None, on: dt.date) -> str:
    if not state:
        return "new"
    try:
        due = dt.date.fromisoformat(str(state.get("due")))
    except ValueError:
        return "due"  # a hand-edited, unreadable date: better to ask again than to hide it
    if due > on:
        return "later"
    return "missed" if state.get("box", 1) <= 1 else "due"


def review_queue(quiz: Quiz, boxes: dict[str, Any], on: dt.date | None = None,
                 include_all: bool = False) -> list[dict[str, Any]]:
    """Questions to review, missed ones first.

    Returns:
        ``[{"id", "box", "due", "reason"}]`` where reason is ``missed`` (box 1 and due),
        ``new`` (never answered), ``due`` (interval over) or ``later`` (only with
        ``include_all``). Ties keep the lower box first, then the earlier due date, then quiz
        order.
    """
    on = on or today()
    queue = []
    for index, q in enumerate(quiz.questions):
        state = boxes.get(q.id)
        reason = _reason(state, on)
        if reason == "later" and not include_all:
            continue
        box = (state or {}).get("box", 0)
        due = (state or {}).get("due") or on.isoformat()
        queue.append(((_RANK[reason], box, str(due), index),
                      {"id": q.id, "box": box, "due": due, "reason": reason}))
    return [item for _, item in sorted(queue, key=lambda pair: pair[0])]


def next_due(boxes: dict[str, Any]) -> str | None:
    """The earliest due date among the boxes (None when nothing was answered yet)."""
    dates = sorted(str(s.get("due")) for s in boxes.values() if s.get("due"))
    return dates[0] if dates else None
