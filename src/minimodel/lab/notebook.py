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

import html
import inspect
import os
import textwrap
import types
from pathlib import Path
from typing import Any, Callable

from minimodel.lab.exercise_progress import climb_hint, record_check, record_solution_viewed
from minimodel.lab.exercises import get_exercise
from minimodel.lab.exercises.judge import check_solution
from minimodel.lab.i18n import case_status_label
from minimodel.lab.progress import Progress
from minimodel.messages import say

def _global_names(function: types.FunctionType) -> set[str]:
    """The global names a function's code (and the code nested in it) reads."""
    names: set[str] = set()
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return names


def _imports_for(function: types.FunctionType) -> list[str]:
    """The import lines and notebook helpers a function needs, from the names it uses.

    A cell's ``import numpy as np`` lives in the notebook's globals, not in the function's
    source; the judge runs the source in a fresh process, so every global name the function
    (or a helper it calls) reads that is a module, an imported function or a helper defined
    in the notebook is written out again before it.
    """
    imports: dict[str, str] = {}
    helpers: dict[str, str] = {}
    todo, seen = [function], {function}
    while todo:
        current = todo.pop()
        for name in sorted(_global_names(current)):
            value = current.__globals__.get(name)
            if isinstance(value, types.ModuleType):
                module = value.__name__
                imports[name] = (f"import {module}" if module == name else
                                 f"import {module} as {name}")
            elif inspect.isfunction(value) and value.__module__ == "__main__":
                if value not in seen:      # a helper defined in the notebook: its source too
                    seen.add(value)
                    todo.append(value)
                    helpers[name] = textwrap.dedent(inspect.getsource(value))
            elif callable(value) and getattr(value, "__module__", None) not in (None,
                                                                                "builtins"):
                imports[name] = (f"from {value.__module__} import {value.__qualname__}"
                                 + ("" if value.__qualname__ == name else f" as {name}"))
    return [imports[name] for name in sorted(imports)] + list(reversed(helpers.values()))


def solution_source(solution: Callable[..., Any] | str | os.PathLike) -> tuple[str, str]:
    """``(source, shown_as)`` of a function, a ``.py`` path or a source text."""
    if inspect.isfunction(solution):
        body = textwrap.dedent(inspect.getsource(solution))
        return "\n".join([*_imports_for(solution), "", body]), f"{solution.__name__}()"
    if isinstance(solution, (str, os.PathLike)):
        text = str(solution)
        if "\n" not in text and text.endswith(".py") and Path(text).is_file():
            return Path(text).read_text(encoding="utf-8"), text
        if "def " in text:
            return text, "source"
    raise TypeError(say("notebook.not_solution", "en", kind=type(solution).__name__))


class Verdict:
    """A judge result shown compactly in a notebook (HTML) or a terminal (text)."""

    def __init__(self, result: dict[str, Any], lang: str) -> None:
        self.result = result
        self.lang = lang

    @property
    def passed(self) -> bool:
        return bool(self.result["passed"])

    def _headline(self) -> str:
        verdict = say("exercise.passed" if self.passed else "exercise.failed", self.lang)
        cases = self.result.get("cases", [])
        done = sum(case["status"] == "passed" for case in cases)
        count = say("notebook.cases", self.lang, passed=done, total=len(cases))
        return f"{verdict}: {count}. {self.result.get('message', '')}".strip()

    def __repr__(self) -> str:
        lines = [self._headline()]
        for case in self.result.get("cases", []):
            if case["status"] != "passed":
                lines.append(f"  {case['name']}: {case_status_label(case['status'], self.lang)}"
                             f" {case['message']}")
        return "\n".join(lines[:8])

    def _repr_html_(self) -> str:
        colour = "#1b7f3a" if self.passed else "#b3261e"
        rows = "".join(
            f"<tr><td>{html.escape(str(case['name']))}</td>"
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
        """Judge ``solution`` on the exercise's cases and record the attempt."""
        source, shown_as = solution_source(solution)
        result = check_solution(self.exercise, source=source, seed=seed, timeout=timeout,
                                lang=self.lang)
        result["file"] = shown_as
        record_check(self.progress, self.exercise.id, result, f"notebook:{shown_as}")
        return Verdict(result, self.lang)

    def hint(self) -> str:
        """The next rung of the hint ladder (the last one again once at the top)."""
        hints = self.exercise.hint_list(self.lang)
        level = climb_hint(self.progress, self.exercise.id, len(hints))
        text = f"{say('exercise.hint', self.lang, k=level, n=len(hints))}: " \
               f"{hints[level - 1]}"
        if level == len(hints):
            text += "\n" + say("exercise.last_hint", self.lang)
        print(text)
        return text

    def solution(self) -> str | None:
        """The reference solution, once there was at least one check or hint."""
        entry = self.progress.get("exercise", self.exercise.id) or {}
        attempts, hints = int(entry.get("attempts", 0)), int(entry.get("hint_level", 0))
        if attempts == 0 and hints == 0:
            print(say("notebook.try_first", self.lang))
            return None
        record_solution_viewed(self.progress, self.exercise.id)
        source = self.exercise.reference_path.read_text(encoding="utf-8")
        print(source.rstrip("\n"))
        print("\n# " + say("notebook.recorded", self.lang, attempts=attempts, hints=hints))
        return source


def exercise(exercise_id: str, lang: str = "en",
             learner_dir: str | os.PathLike | None = None) -> NotebookExercise:
    """The exercise ``exercise_id`` for use in a notebook (see the module's docstring)."""
    return NotebookExercise(exercise_id, lang, learner_dir)
