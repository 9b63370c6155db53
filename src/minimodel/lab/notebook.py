"""Exercises checked inside a Jupyter notebook, through the same judge and the same progress as
``minimodel exercise`` (modelled on Kaggle Learn's ``check()`` / ``hint()`` / ``solution()``)::

    from minimodel.lab.notebook import exercise
    ex = exercise("embedding-lookup", lang="en")

    def embed(ids, E):
        ...

    ex.check(embed)     # the judge runs it on the public examples and the hidden cases
    ex.hint()           # one rung up the hint ladder per call
    ex.solution()       # the reference, once you have tried (a check or a hint); recorded

``check`` accepts the function itself (its source is sent to the judge, with the imports and
the notebook's own helper functions it uses), a path to a ``.py`` file, or the source as text.
The judge runs it in a separate, sandboxed Python process, exactly as on the command line
(:func:`minimodel.lab.exercises.judge.check_solution`), and the attempt is recorded in the
learner folder (``$MINIMODEL_LEARNER_DIR`` or ``~/.minimodel``) by
:mod:`minimodel.lab.exercise_progress`, the functions the command uses.
"""

from __future__ import annotations

import ast
import dis
import html
import inspect
import os
import sys
import textwrap
import types
from pathlib import Path
from typing import Any, Callable

from minimodel.lab.exercise_progress import (climb_hint, record_check, record_solution_viewed,
                                             viewed_solutions)
from minimodel.lab.exercises import get_exercise
from minimodel.lab.exercises.judge import check_solution
from minimodel.lab.i18n import case_name, case_status_label, status_label
from minimodel.lab.progress import Progress
from minimodel.lab.revealed import shown
from minimodel.messages import say

def _global_names(function: types.FunctionType) -> set[str]:
    """The global names a function's code (and the code nested in it) reads.

    Only loads of globals count, not attribute names: ``x.mean()`` must not pull in a
    notebook variable that happens to be called ``mean``.
    """
    names: set[str] = set()
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        names.update(ins.argval for ins in dis.get_instructions(code)
                     if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return names


def _is_literal(value: Any) -> bool:
    """A constant whose ``repr`` is Python source for an equal value (``C = 0.044715``)."""
    try:
        return type(value) in (bool, int, float, complex, str, bytes, tuple, list, dict) \
            and ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError):
        return False


def _importable(value: Any) -> str | None:
    """``from module import name`` for an object its module exposes by name, else None."""
    module = getattr(value, "__module__", None)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)  # ufuncs
    if not module or not name or module in ("__main__", "builtins"):
        return None
    owner = sys.modules.get(module)
    return f"from {module} import {name}" if getattr(owner, name, None) is value else None


def _imports_for(function: types.FunctionType, lang: str = "en") -> list[str]:
    """The import lines, constants and notebook helpers a function needs, from the globals
    it reads.

    A cell's ``import numpy as np`` lives in the notebook's globals, not in the function's
    source; the judge runs the source in a fresh process, so every global name the function
    (or a helper it calls) reads that is a module, an imported function, a constant or a
    helper defined in the notebook is written out again before it. Anything else (an array,
    ``np.vectorize(...)``) cannot be sent: a clear error says to move it into the function.
    """
    imports: dict[str, str] = {}
    constants: dict[str, str] = {}
    helpers: dict[str, str] = {}
    todo, seen = [function], {function}
    while todo:
        current = todo.pop()
        for name in sorted(_global_names(current)):
            if name not in current.__globals__:
                continue                                  # a builtin, or a typo the judge reports
            value = current.__globals__[name]
            if isinstance(value, types.ModuleType):
                module = value.__name__
                imports[name] = (f"import {module}" if module == name else
                                 f"import {module} as {name}")
            elif (inspect.isfunction(value) or inspect.isclass(value)) \
                    and value.__module__ == "__main__":
                if value not in seen:      # a helper defined in the notebook: its source too
                    seen.add(value)
                    todo += ([f for f in vars(value).values() if inspect.isfunction(f)]
                             if inspect.isclass(value) else [value])
                    try:   # a class's source is not found in a kernel before Python 3.13
                        helpers[name] = textwrap.dedent(inspect.getsource(value))
                    except (OSError, TypeError):
                        raise ValueError(say("notebook.cannot_send", lang, function=function.__name__,
                                              name=name, kind="class")) from None
            elif _importable(value):
                line = _importable(value)
                imports[name] = line + ("" if line.endswith(f" import {name}") else f" as {name}")
            elif _is_literal(value):
                constants[name] = f"{name} = {value!r}"
            else:
                raise ValueError(say("notebook.cannot_send", lang, function=function.__name__,
                                      name=name, kind=type(value).__name__))
    return ([imports[name] for name in sorted(imports)]
            + [constants[name] for name in sorted(constants)] + list(reversed(helpers.values())))


def solution_source(solution: Callable[..., Any] | str | os.PathLike,
                    lang: str = "en") -> tuple[str, str]:
    """``(source, shown_as)`` of a function, a ``.py`` path or a source text."""
    if inspect.isfunction(solution):
        body = textwrap.dedent(inspect.getsource(solution))
        return "\n".join([*_imports_for(solution, lang), "", body]), f"{solution.__name__}()"
    if isinstance(solution, (str, os.PathLike)):
        text = str(solution)
        if "\n" not in text and text.endswith(".py") and Path(text).is_file():
            return Path(text).read_text(encoding="utf-8"), text
        if "def " in text:
            return text, "source"
    raise TypeError(say("notebook.not_solution", lang, kind=type(solution).__name__))


class Verdict:
    """A judge result shown compactly in a notebook (HTML) or a terminal (text)."""

    def __init__(self, result: dict[str, Any], lang: str) -> None:
        self.result = result
        self.lang = lang

    @property
    def passed(self) -> bool:
        return bool(self.result["passed"])

    def _headline(self) -> str:
        """``PASSED: 7 of 7 cases passed``: the judge's message already counts the cases
        ("PASSED: 7/7 cases passed. 7 of 7 cases passed" said it twice)."""
        verdict = say("exercise.passed" if self.passed else "exercise.failed", self.lang)
        if self.passed and self.result.get("revealed"):   # recorded as after the solution
            verdict += f" ({status_label(shown('passed', True), self.lang)})"
        if self.result.get("message"):
            return f"{verdict}: {self.result['message']}"
        cases = self.result.get("cases", [])
        done = sum(case["status"] == "passed" for case in cases)
        return f"{verdict}: {say('notebook.cases', self.lang, passed=done, total=len(cases))}"

    def __repr__(self) -> str:
        lines = [self._headline()]
        for case in self.result.get("cases", []):
            if case["status"] != "passed":
                name = case_name(case["name"], self.lang)   # "caso visible 1", "oculto 1"
                lines.append(f"  {name}: {case_status_label(case['status'], self.lang)}"
                             f" {case['message']}")
        return "\n".join(lines[:8])

    def _repr_html_(self) -> str:
        colour = "#1b7f3a" if self.passed else "#b3261e"
        rows = "".join(
            f"<tr><td>{html.escape(case_name(case['name'], self.lang))}</td>"
            f"<td>{html.escape(case_status_label(case['status'], self.lang))}</td>"
            f"<td>{html.escape(str(case['message']))}</td></tr>"
            for case in self.result.get("cases", []) if case["status"] != "passed")
        table = f"<table>{rows}</table>" if rows else ""
        return (f'<div style="border-left:4px solid {colour};padding:4px 10px">'
                f'<b style="color:{colour}">{html.escape(self._headline())}</b>{table}</div>')


class NotebookExercise:
    """One exercise as seen from a notebook: ``check``, ``hint`` and ``solution``."""

    def __init__(self, exercise_id: str, lang: str = "en",
                 learner_dir: str | os.PathLike | None = None) -> None:
        self.exercise = get_exercise(exercise_id, lang)
        self.lang = lang
        self.progress = Progress(learner_dir)

    def check(self, solution: Callable[..., Any] | str | os.PathLike, *,
              seed: int | None = None, timeout: float | None = None) -> Verdict:
        """Judge ``solution`` on the exercise's cases and record the attempt.

        A solution that cannot be sent to the judge (not a function, a file or a source; or a
        function reading a notebook variable that cannot travel) is a failed verdict saying
        why, not a traceback; nothing is recorded since the judge did not run.
        """
        try:
            source, shown_as = solution_source(solution, self.lang)
        except (TypeError, ValueError) as exc:
            return Verdict({"passed": False, "cases": [], "message": str(exc)}, self.lang)
        result = check_solution(self.exercise, source=source, seed=seed, timeout=timeout,
                                lang=self.lang, viewed=viewed_solutions(self.progress))
        result["file"] = shown_as
        entry = record_check(self.progress, self.exercise.id, result, f"notebook:{shown_as}")
        result["revealed"] = bool(entry.get("revealed"))
        return Verdict(result, self.lang)

    def hint(self) -> None:
        """Print the next rung of the hint ladder (the last one again once at the top).

        Prints and returns None, as ``solution`` does: a returned text would be shown a
        second time, quoted, when the call is a cell's last line.
        """
        hints = self.exercise.hint_list(self.lang)
        level = climb_hint(self.progress, self.exercise.id, len(hints))
        text = f"{say('exercise.hint', self.lang, k=level, n=len(hints))}: " \
               f"{hints[level - 1]}"
        if level == len(hints):
            text += "\n" + say("exercise.last_hint", self.lang)
        print(text)

    def solution(self) -> None:
        """Print the reference solution, once there was at least one check or hint."""
        entry = self.progress.get("exercise", self.exercise.id) or {}
        attempts, hints = int(entry.get("attempts", 0)), int(entry.get("hint_level", 0))
        if attempts == 0 and hints == 0:
            print(say("notebook.try_first", self.lang))
            return
        record_solution_viewed(self.progress, self.exercise.id)
        source = self.exercise.reference_path.read_text(encoding="utf-8")
        print(source.rstrip("\n"))
        print("\n# " + say("notebook.recorded", self.lang, attempts=attempts, hints=hints))


def exercise(exercise_id: str, lang: str = "en",
             learner_dir: str | os.PathLike | None = None) -> NotebookExercise:
    """The exercise ``exercise_id`` for use in a notebook (see the module's docstring)."""
    return NotebookExercise(exercise_id, lang, learner_dir)
