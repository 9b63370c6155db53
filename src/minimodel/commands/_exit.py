"""Exit codes of every ``minimodel`` command, and the one wrapper that maps user errors to them.

    0    ok: the command did what was asked (for a check: what was checked passed)
    1    what was checked failed: an exercise not passed, a break not fixed yet, lab content
         with problems, a training run whose loss is not finite, a benchmark measurement
         that failed, quiz mirrors that drifted
    2    usage or user error: a bad option value, an unknown id, a missing, unreadable or
         invalid file, or a step the command needs first (e.g. a break's predictions)
    130  interrupted with Ctrl-C (a training run saves a checkpoint first); a quiz whose input
         ends (Ctrl-D, or piped answers that run out) before its last question stops the same way

A command handler returns one of these constants; :func:`guarded` turns the errors a user can
cause into one ``error: ...`` line on stderr and ``USAGE`` instead of a traceback. Set
``MINIMODEL_DEBUG=1`` to see the traceback anyway.
"""

from __future__ import annotations

import argparse
import errno
import functools
import os
import sys
from typing import Callable

from minimodel._fileio import error_paths, plain_reason
from minimodel.commands._help import help_text
from minimodel.messages import catalogue, say

OK = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 130

# The short form for a command's --help epilog ("exit codes: 0 ok; 1 what was checked failed
# ...", help.exit_codes in messages.yaml): said in Spanish in a Spanish help page.
EPILOG = help_text("exit_codes")

# What a user can cause: bad values (ValueError, incl. UnicodeDecodeError), wrong kinds of
# values (TypeError), files that are missing or unreadable (OSError), a model that diverged
# (FloatingPointError), an optional dependency that is not installed (ImportError) and sizes
# beyond this machine's memory (MemoryError).
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, TypeError, OSError,
                                                FloatingPointError, ImportError, MemoryError)

Handler = Callable[[argparse.Namespace], int]


def user_error(message: object, lang: str = "en") -> int:
    """Print ``error: message`` (``error:`` in ``lang``) on stderr and return ``USAGE``.

    A file error (``OSError``) is said in plain words with its path ("runs/x/model.safetensors:
    the disk is full") instead of Python's ``[Errno 28] No space left on device``. An error
    that can say itself in another language (an ``in_lang(lang)`` method, e.g. the learner
    folder's) is said in ``lang``.
    """
    if callable(getattr(message, "in_lang", None)):
        message = message.in_lang(lang)  # type: ignore[union-attr]
    elif isinstance(message, OSError) and message.errno is not None:
        message = os_error_in(message, lang)
    elif isinstance(message, MemoryError):
        message = ("out of memory: what was asked for needs more memory than this machine has "
                   "free; try smaller sizes (--batch-size, --block-size, --d-model, --n-layer)")
    print(say("cli.error", lang, message=message), file=sys.stderr)
    return USAGE


def os_error_in(exc: OSError, lang: str) -> str:
    """A file error in ``lang``, in plain words with its path(s): "model file runs/x: no such
    file or directory" for :func:`~minimodel._fileio.require_file`'s errors (which carry the
    kind of file), "runs/x/log.jsonl: the disk is full" for the others. A reason the catalogue
    does not hold (``os.<the English words>``) is the system's own words; an error with no
    path is its own text."""
    english = plain_reason(exc)
    reason = say(f"os.{english}", lang) if f"os.{english}" in catalogue() else english
    what = getattr(exc, "what", None)
    if what is not None:
        return say("cli.file_is_dir" if exc.errno == errno.EISDIR else
                   "cli.file_not_regular" if exc.errno == errno.EINVAL else "cli.file_error",
                   lang, what=say(f"file_kind.{what}", lang), path=exc.path, reason=reason)
    paths = error_paths(exc)
    if paths is None:
        return exc.strerror or reason
    return say("cli.path_error", lang, paths=paths, reason=reason)


def guarded(handler: Handler) -> Handler:
    """Wrap a command handler: user errors become one ``error:`` line and exit code 2."""
    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except BrokenPipeError:
            raise  # the reader went away (| head): cli.main ends quietly, as Unix tools do
        except USER_ERRORS as exc:
            if os.environ.get("MINIMODEL_DEBUG", "").strip() not in ("", "0"):
                raise
            return user_error(exc, getattr(args, "lang", None) or "en")
    return run
