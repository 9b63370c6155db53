"""Breaks: predict, run, observe and fix a bug planted in a scratch copy of minimodel.

A break is a folder in ``minimodel/lab/content/breaks/`` (see :mod:`.catalog`). The learner
flow, driven by ``minimodel break``:

    start   copy the installed package into DIR/minimodel and apply the bug patch
    run     (predictions first) run experiment.py against the copy and show the symptom
    hint    climb a ladder of 3-4 hints
    check   behavioural checks against the copy: fixed or not
    diff    the fix as a unified diff (``patch -p1 -d DIR`` applies it)
    reset   back to the just-started files, byte for byte

Public functions: :func:`list_breaks`, :func:`load_break`, :func:`validate_all`.
"""

from __future__ import annotations

from minimodel.lab.breaks.catalog import Break, list_breaks, load_all, load_break
from minimodel.lab.patching import PatchError, apply_patch_to_texts, make_diff, parse_patch
from minimodel.lab.breaks.workspace import Workspace, WorkspaceError, start


def validate_all(use_patch_command: bool = True) -> list[str]:
    """Problems across every break (``[]`` when sound); see :mod:`.validate`."""
    from minimodel.lab.breaks.validate import validate_all as _validate_all

    return _validate_all(use_patch_command=use_patch_command)


__all__ = ["Break", "PatchError", "Workspace", "WorkspaceError", "apply_patch_to_texts",
           "list_breaks", "load_all", "load_break", "make_diff", "parse_patch", "start",
           "validate_all"]
