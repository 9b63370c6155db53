"""Helpers for the ``experiment.py`` and ``check.py`` scripts of the breaks.

These scripts run in a child process against a learner's *workspace copy* of minimodel, so this
module is imported from that copy and uses the standard library only.

Output protocol (parsed by :mod:`minimodel.lab.breaks.runner`):

    SYMPTOM: <text>                   experiment: the bug showed itself
    PASS <check-id> | <description>
    FAIL <check-id> | <description> | <what went wrong>

The language comes from ``MINIMODEL_BREAK_LANG`` (``en`` or ``es``).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable, NoReturn

SYMPTOM = "SYMPTOM:"
WORKSPACE_ENV = "MINIMODEL_BREAK_WORKSPACE"
LANG_ENV = "MINIMODEL_BREAK_LANG"
WRONG_COPY_EXIT = 97


def lang() -> str:
    value = os.environ.get(LANG_ENV, "en")
    return value if value in ("en", "es") else "en"


def tr(en: str, es: str) -> str:
    """The text in the current language."""
    return es if lang() == "es" else en


def say(en: str, es: str) -> None:
    print(tr(en, es), flush=True)


def symptom(en: str, es: str) -> None:
    """Print the machine-readable symptom line (the marker is the same in both languages)."""
    print(f"{SYMPTOM} {tr(en, es)}", flush=True)


def use_workspace():
    """Import minimodel and stop unless it is the workspace copy; returns the module.

    Why: the whole point of a break is to run the *broken* copy. If ``import minimodel``
    found the installed package instead, the experiment would show nothing and a check would
    pass without any fix.
    """
    import minimodel

    where = os.path.realpath(os.path.dirname(minimodel.__file__))
    workspace = os.environ.get(WORKSPACE_ENV)
    if workspace:
        expected = os.path.join(os.path.realpath(workspace), "minimodel")
        if where != expected:
            print(tr(f"error: `import minimodel` found {where}, not the workspace copy "
                     f"{expected}; run this script through `minimodel break run/check`",
                     f"error: `import minimodel` encontró {where}, no la copia del espacio de "
                     f"trabajo {expected}; ejecuta este script con `minimodel break run/check`"),
                  file=sys.stderr)
            sys.exit(WRONG_COPY_EXIT)
    return minimodel


class CheckFailed(AssertionError):
    """A failed behavioural check, with its message in both languages."""

    def __init__(self, en: str, es: str | None = None) -> None:
        super().__init__(tr(en, es if es is not None else en))


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace(" | ", " / ")


class Checks:
    """Run named checks, print one PASS/FAIL line each, and exit 0 only if all passed."""

    def __init__(self) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []

    def case(self, check_id: str, en: str, es: str
             ) -> Callable[[Callable[[], None]], Callable[[], None]]:
        """Decorator: run the function now as the check ``check_id``."""
        def run(fn: Callable[[], None]) -> Callable[[], None]:
            description = _one_line(tr(en, es))
            try:
                fn()
            except AssertionError as exc:
                self.failed.append(check_id)
                message = _one_line(str(exc)) or "assertion failed"
                print(f"FAIL {check_id} | {description} | {message}", flush=True)
            except Exception as exc:  # noqa: BLE001 - a crash in the learner's code is a failure
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
                self.failed.append(check_id)
                print(f"FAIL {check_id} | {description} | {type(exc).__name__} at {where}: "
                      f"{_one_line(str(exc))}", flush=True)
            else:
                self.passed.append(check_id)
                print(f"PASS {check_id} | {description}", flush=True)
            return fn
        return run

    def finish(self) -> NoReturn:
        total = len(self.passed) + len(self.failed)
        say(f"{len(self.passed)} of {total} checks passed",
            f"{len(self.passed)} de {total} comprobaciones superadas")
        sys.exit(0 if not self.failed and self.passed else 1)
