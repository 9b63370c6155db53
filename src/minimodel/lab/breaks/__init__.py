"""Breaks: predict, run, observe and fix a bug planted in a scratch copy of minimodel.

A break is a folder in ``minimodel/lab/content/breaks/`` (see :mod:`.catalog`). The learner
flow, driven by ``minimodel break``:

    start   copy the installed package into DIR/minimodel and apply the bug patch
    run     (predictions first) run experiment.py against the copy and show the symptom
    hint    climb a ladder of 3-4 hints
    check   behavioural checks against the copy: fixed or not
    diff    the fix as a unified diff (``patch -p1 -d DIR`` applies it)
    reset   back to the just-started files, byte for byte
"""

from __future__ import annotations

from minimodel.lab.breaks.catalog import Break, list_breaks, load_all, load_break
from minimodel.lab.breaks.validate import validate_all
from minimodel.lab.breaks.workspace import AlreadyStarted, Workspace, WorkspaceError, start

__all__ = ["AlreadyStarted", "Break", "Workspace", "WorkspaceError", "list_breaks", "load_all",
           "load_break", "start", "validate_all"]
