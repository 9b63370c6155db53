"""Terminal output that ends quietly when its reader goes away (``minimodel ... | head``),
keeps a number grouped with no-break spaces on one line, and writes no trailing blanks into a
pipe or a file.

A reader that stops early closes the pipe; the next write raises ``BrokenPipeError``. Unix
tools then end without an error, and so do we: ``cli.main`` catches it, points stdout at
``/dev/null`` (so Python's exit-time flush cannot raise again) and exits 0. Rich's console
would instead exit with 1 on its own; :class:`Console` hands the error on to ``cli.main``.
"""

from __future__ import annotations

import os
import re
import stat
import sys

import rich._wrap
import rich.console

# Spanish groups thousands with a no-break space ("2 097 152", messages.grouped). Rich wraps
# at any Unicode whitespace, the no-break space included, so a narrow terminal printed "2" at
# the end of one line and "097 152" on the next. Rich finds its words with this one pattern
# (rich/_wrap.py); here a no-break space belongs to the word instead of ending it.
NO_BREAK_SPACE = "\u00a0"
rich._wrap.re_word = re.compile(rf"[^\S{NO_BREAK_SPACE}]*(?:\S|{NO_BREAK_SPACE})+[^\S{NO_BREAK_SPACE}]*")


# Blanks that end a line: spaces and tabs before a newline, with the style codes that follow
# them (ESC [ ... m) kept. Rich pads panels, tables and padded text to the console's width,
# which leaves up to 80 spaces at the end of a line.
TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\n)")


class Console(rich.console.Console):
    """Rich's console, except that a closed pipe raises ``BrokenPipeError`` for the caller,
    and that output to a pipe or a file has no blanks at the ends of its lines."""

    def on_broken_pipe(self) -> None:
        self.quiet = True  # nothing more to write through this console
        raise BrokenPipeError("the reader of the output went away")

    def _render_buffer(self, buffer) -> str:
        """Rich's text to write, each line's trailing blanks dropped when the output is not a
        terminal (a file, ``| grep``, a diff then sees only the text).

        Why not at a terminal: a live display (training's progress) overwrites its previous
        lines, and its padding blanks are what erase their ends. Only blanks before a newline
        go: a prompt's ("Your answer: ") stays, the typed answer follows it.
        """
        text = super()._render_buffer(buffer)
        return text if self.is_terminal else TRAILING_BLANKS.sub(r"\1", text)


def add_name_column(table, header: str, names) -> None:
    """Add to a Rich ``table`` a column of names (ids a learner types) that is never cut: as
    wide as the longest name, never wrapped, so an 80-column terminal squeezes the other
    columns (titles, statuses wrap at word boundaries) instead of ``frequent-tokens-lea…``."""
    table.add_column(header, no_wrap=True, min_width=max((len(n) for n in names), default=0))


def stdout_to_devnull() -> None:
    """Point stdout at /dev/null: later writes and the exit-time flush go nowhere, quietly.

    When stderr is the very same pipe (``minimodel ... 2>&1 | head``) it is closed too, so it
    goes to /dev/null as well: otherwise the next message on stderr (an interrupted run saying
    where its checkpoint is) would raise ``BrokenPipeError`` again, before the checkpoint is
    written.
    """
    same_pipe = _same_pipe(sys.stdout.fileno(), sys.stderr.fileno())
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    if same_pipe:
        os.dup2(devnull, sys.stderr.fileno())
    os.close(devnull)


def _same_pipe(fd_a: int, fd_b: int) -> bool:
    """True when both descriptors are one pipe (same device and inode, a FIFO)."""
    try:
        a, b = os.fstat(fd_a), os.fstat(fd_b)
    except OSError:
        return False
    return stat.S_ISFIFO(a.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
