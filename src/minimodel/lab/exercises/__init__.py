"""Judged coding exercises: registry, sandboxed judge, case generation and validation.

Typical use::

    from minimodel.lab.exercises import list_exercises, check_solution, validate_all
    list_exercises()                          # [{"id": "embedding-lookup", "title": ...}, ...]
    check_solution("gelu-tanh", "gelu.py")    # {"passed": ..., "status": ..., "cases": [...]}
    validate_all()                            # [] when every reference passes, every wrong fails
"""

from __future__ import annotations

from minimodel.lab.exercises.judge import check_solution
from minimodel.lab.exercises.registry import (CASE_STATUSES, OVERALL_STATUSES, Exercise,
                                              all_exercises, get_exercise, list_exercises)
from minimodel.lab.exercises.stubs import default_stub_path, stub_text, write_stub
from minimodel.lab.exercises.validate import validate_all

__all__ = ["Exercise", "all_exercises", "get_exercise", "list_exercises", "check_solution",
           "validate_all", "stub_text", "write_stub", "default_stub_path", "OVERALL_STATUSES",
           "CASE_STATUSES"]
