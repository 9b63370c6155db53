"""Terminal output that ends quietly when its reader goes away (``minimodel ... | head``).

A reader that stops early closes the pipe; the next write raises ``BrokenPipeError``. Unix
tools then end without an error, and so do we: ``cli.main`` catches it, points stdout at
``/dev/null`` (so Python's exit-time flush cannot raise again) and exits 0. Rich's console
would instead exit with 1 on its own; :class:`Console` hands the error on to ``cli.main``.
"""

from __future__ import annotations

import os
import sys

import rich.console


class Console(rich.console.Console):
    """Rich's console, except that a closed pipe raises ``BrokenPipeError`` for the caller."""

    def on_broken_pipe(self) -> None:
        self.quiet = True  # nothing more to write through this console
        raise BrokenPipeError("the reader of the output went away")


def stdout_to_devnull() -> None:
    """Point stdout at /dev/null: later writes and the exit-time flush go nowhere, quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
