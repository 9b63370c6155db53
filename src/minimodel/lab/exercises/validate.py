"""Content validation: every exercise must be solvable, and its known mistakes must be caught.

``validate_all()`` runs the real subprocess judge on each exercise's reference (must pass),
``alternatives/*.py`` (must pass), the ``start`` stub (must end in "error", not crash the
judge) and every known-wrong solution, file or diff (must fail with the status declared in
``exercise.yaml``); it checks every clause of every statement over many seeds
(:mod:`minimodel.lab.exercises.clauses`) and runs each statement's public example against the
reference (:mod:`minimodel.lab.exercises.statement_example`).
"""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab.exercises.astscan import scan_source
from minimodel.lab.exercises.clauses import clause_problems
from minimodel.lab.exercises.judge import check_solution, forbidden_names
from minimodel.lab.exercises.registry import OVERALL_STATUSES, Exercise, all_exercises
from minimodel.lab.exercises.statement_example import example_problems
from minimodel.lab.exercises.stubs import stub_text
from minimodel.lab.items import text_problems
from minimodel.lab.patching import PatchError


@dataclass
class _Task:
    ex: Exercise
    label: str
    expect: str
    path: Path | None = None
    source: str | None = None
    timeout: float | None = None

    def text(self) -> str:
        return self.source if self.source is not None else self.path.read_text()


def _text_problems(ex: Exercise) -> list[str]:
    """Blank English or Spanish (the schema has made sure both are there)."""
    texts = {"title": ex.title, "statement": ex.statement, "stub_doc": ex.stub_doc,
             "clauses": ex.clauses}
    return text_problems(texts, ex.id)


def _tasks(ex: Exercise) -> tuple[list[_Task], list[str]]:
    tasks, problems = [], []
    if not ex.reference_path.is_file():
        return [], [f"{ex.id}: missing reference {ex.reference_path}"]
    tasks.append(_Task(ex, ex.reference_path.name, "passed", path=ex.reference_path))
    for alt in ex.alternatives:
        tasks.append(_Task(ex, f"alternatives/{alt}", "passed",
                           path=ex.folder / "alternatives" / alt))
    tasks.append(_Task(ex, "start stub", "error", source=stub_text(ex)))
    for wrong in ex.wrong:
        label = f"wrong/{wrong['file']}"
        if not (ex.folder / "wrong" / wrong["file"]).is_file():
            problems.append(f"{ex.id}: {label} does not exist")
            continue
        try:
            source = ex.wrong_source(wrong)
        except PatchError as exc:
            problems.append(f"{ex.id}: {exc}")
            continue
        tasks.append(_Task(ex, label, wrong["expect"], source=source,
                           timeout=wrong.get("timeout")))
    for task in tasks:
        if task.path is not None and not task.path.is_file():
            problems.append(f"{ex.id}: {task.label} does not exist")
    tasks = [t for t in tasks if t.path is None or t.path.is_file()]
    if importlib.util.find_spec("torch") is None:  # torch solutions need torch, unless refused
        tasks = [t for t in tasks if "torch" not in t.text() or scan_source(t.text(),
                                                                            forbidden_names(ex))]
    return tasks, problems


def default_problems(ex: Exercise) -> list[str]:
    """Every optional argument is left to its default in some hidden case, and a clause names
    that case's kind (so a solution with a wrong default fails a named rule)."""
    from minimodel.lab.exercises.judge import build_cases

    if not ex.defaults:
        return []
    cases = build_cases(ex, 0, examples=0)
    problems = []
    for arg in ex.defaults:
        omitted = {c.kind for c in cases if arg not in c.args}
        if not omitted:
            problems.append(f"{ex.id}: no hidden case leaves {arg!r} to its default; add a kind "
                            f"with inputs: {{{arg}: {{omit: true}}}}")
        elif not any(omitted & set(c["kinds"]) for c in ex.clauses):
            problems.append(f"{ex.id}: no clause names a kind that leaves {arg!r} to its default "
                            f"({', '.join(sorted(omitted))}); add it to the clause about the "
                            "default")
    return problems


def _example_problems(ex: Exercise) -> list[str]:
    """The statement's public example, run against the reference (a reference that does not
    even load is reported here once; the judge's runs name it too)."""
    try:
        return example_problems(ex)
    except Exception as exc:  # noqa: BLE001 - a broken reference must not hide the others
        return [f"{ex.id}: the statement's example could not run against the reference "
                f"({type(exc).__name__}: {exc})"]


def _run(task: _Task, seed: int) -> str | None:
    """None when the judge's verdict is the expected one, else a description of the problem."""
    result = check_solution(task.ex, task.path if task.source is None else task.label,
                            source=task.source, seed=seed, timeout=task.timeout)
    status, cases = result["status"], result["cases"]
    if task.expect in OVERALL_STATUSES:
        ok = status == task.expect
    else:  # "shape" / "dtype" / "wrong": a wrong verdict with that kind of failing case
        ok = status == "wrong" and any(c["status"] == task.expect for c in cases)
    if ok:
        return None
    failing = [f"{c['name']}: {c['status']}: {c['message']}" for c in cases
               if c["status"] != "passed"][:2]
    return (f"{task.ex.id}: {task.label} expected {task.expect!r}, judge said {status!r} "
            f"({result['message']}) {failing}")


def validate_all(ids: list[str] | None = None, seed: int = 1234, jobs: int = 2) -> list[str]:
    """Problems found in the exercise content (an empty list means all is well).

    Args:
        ids: only these exercises (default: all).
        seed: hidden-case seed used for every run, so the validation is reproducible.
        jobs: solutions judged in parallel (each in its own process).
    """
    try:
        exercises = all_exercises()
    except ValueError as exc:
        return [str(exc)]
    if ids is not None:
        known = {e.id for e in exercises}
        problems = [f"unknown exercise {i!r}" for i in ids if i not in known]
        exercises = [e for e in exercises if e.id in ids]
    else:
        problems = []
    tasks: list[_Task] = []
    for ex in exercises:
        problems += _text_problems(ex)
        problems += clause_problems(ex)
        problems += _example_problems(ex) + default_problems(ex)
        ex_tasks, ex_problems = _tasks(ex)
        tasks += ex_tasks
        problems += ex_problems
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for problem in pool.map(lambda t: _run(t, seed), tasks):
            if problem:
                problems.append(problem)
    return problems
