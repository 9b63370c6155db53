"""Exercise registry: load and validate ``content/exercises/<id>/exercise.yaml``.

Each exercise folder holds ``exercise.yaml`` (bilingual text, function signature, tolerance,
case generator, forbidden APIs, known-wrong solutions), ``reference.py`` (a self-contained
NumPy solution), ``wrong/`` (solutions the judge must reject) and optionally
``alternatives/*.py`` (different but correct solutions the judge must accept).

When the library already holds the reference (``parent_reference: module:function``, e.g. the
MLM exercises and :mod:`minimodel.models.mlm_reference`), the exercise has no ``reference.py``:
that library file is the reference, judged and shown as such. A known-wrong solution is either
a short file ``wrong/NAME.py`` or, when it is the reference with one change, a small diff
``wrong/NAME.diff`` against the reference (a line of explanation, then a unified diff),
applied when the solution is needed.

The cases come from a shared generator (``cases: {generator: elementwise}``, Python in
:mod:`.cases`) or from the exercise's own declaration of its inputs (``cases: {sizes, inputs,
kinds, labels}``, no Python: :mod:`.declared`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from minimodel.lab.exercises.declared import declare
from minimodel.lab.i18n import DEFAULT_LANG, LANGS, pick
from minimodel.lab.items import FOLDERS, TEXT_SCHEMA, item_files, read_yaml, schema_problems
from minimodel.lab.lessons import lesson_positions, path_order
from minimodel.lab.patching import PatchError, apply_patch_to_texts
from minimodel.messages import say

CONTENT_DIR = FOLDERS["exercise"][0]
SRC_DIR = Path(__file__).resolve().parents[3]  # the folder holding the minimodel package

# Statuses a whole check can end with and the finer per-case ones.
OVERALL_STATUSES = ("passed", "wrong", "error", "timeout", "forbidden")
CASE_STATUSES = ("passed", "wrong", "shape", "dtype", "error", "forbidden", "timeout",
                 "not run")

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "order", "function", "args", "outputs", "title", "statement", "hints",
                 "stub_doc", "tolerance", "cases", "wrong", "clauses"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "order": {"type": "integer"},
        "function": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "args": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "defaults": {"type": "object"},
        "outputs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["name"], "additionalProperties": False,
            "properties": {"name": {"type": "string"}, "sparse_rows": {"type": "boolean"}}}},
        "title": TEXT_SCHEMA, "statement": TEXT_SCHEMA, "stub_doc": TEXT_SCHEMA,
        "hints": {"type": "object", "required": list(LANGS), "properties": {
            lang: {"type": "array", "minItems": 2, "items": {"type": "string", "minLength": 1}}
            for lang in LANGS}},
        "tolerance": {"type": "object", "required": ["rtol", "atol"], "additionalProperties": False,
                      "properties": {k: {"type": "number", "minimum": 0} for k in
                                     ("rtol", "atol", "rtol_float32", "atol_float32")}},
        "cases": {"type": "object", "properties": {
            "generator": {"type": "string"}, "examples": {"type": "integer", "minimum": 1},
            "params": {"type": "object"},
            # the declared form (lab.exercises.declared): no generator, the inputs described
            "sizes": {"type": "object"}, "inputs": {"type": "object"},
            "example": {"type": "object"}, "kinds": {"type": "object"},
            "labels": {"type": "object"}},
            "oneOf": [{"required": ["generator"], "not": {"required": ["inputs"]}},
                      {"required": ["inputs", "kinds"], "not": {"required": ["generator"]}}],
            "additionalProperties": False},
        "clauses": {"type": "array", "minItems": 2, "items": {
            "type": "object", "required": ["id", "en", "es", "kinds", "wrong"],
            "additionalProperties": False,
            "properties": {"id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
                           "en": {"type": "string", "minLength": 1},
                           "es": {"type": "string", "minLength": 1},
                           "kinds": {"type": "array", "minItems": 1,
                                     "items": {"type": "string"}},
                           "wrong": {"type": "string"},
                           "about": {"enum": ["dtype", "shape", "sparse"]},
                           "nonfinite": {"type": "boolean"}}}},
        "forbidden": {"type": "array", "items": {"type": "string"}},
        "forbidden_ops": {"type": "array", "items": {"type": "string"}},
        "no_autograd": {"type": "boolean"},
        "allowed_modules": {"type": "array", "items": {"type": "string"}},
        "memory_mb": {"type": "integer", "minimum": 256},
        "parent_reference": {"type": "string", "pattern": "^[a-z_.]+:[a-z_]+$"},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "wrong": {"type": "array", "minItems": 2, "items": {
            "type": "object", "required": ["file", "expect"], "additionalProperties": False,
            "properties": {"file": {"type": "string"}, "timeout": {"type": "number"},
                           "expect": {"enum": ["wrong", "shape", "dtype", "error", "timeout",
                                               "forbidden"]},
                           "clause": {"type": "string"},
                           "why": {"type": "string"}}}},
        "alternatives": {"type": "array", "items": {"type": "string"}},
    },
}


@dataclass(frozen=True)
class Exercise:
    """One judged exercise, as declared in its ``exercise.yaml``."""

    id: str
    order: int
    function: str
    args: list[str]
    outputs: list[dict[str, Any]]
    title: dict[str, str]
    statement: dict[str, str]
    hints: dict[str, list[str]]
    stub_doc: dict[str, str]
    tolerance: dict[str, float]
    cases: dict[str, Any]
    wrong: list[dict[str, Any]]
    folder: Path
    defaults: dict[str, Any] = field(default_factory=dict)
    clauses: list[dict[str, Any]] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    forbidden_ops: list[str] = field(default_factory=list)
    no_autograd: bool = False  # the statement says "without autograd": forbidden by rule
    allowed_modules: list[str] = field(default_factory=list)
    memory_mb: int = 2048
    parent_reference: str | None = None
    timeout: float = 20.0
    alternatives: list[str] = field(default_factory=list)

    @property
    def reference_path(self) -> Path:
        """``reference.py``, or the library module named by ``parent_reference``."""
        if self.parent_reference:
            module = self.parent_reference.split(":")[0]
            return SRC_DIR.joinpath(*module.split(".")).with_suffix(".py")
        return self.folder / "reference.py"

    def wrong_source(self, entry: dict[str, Any]) -> str:
        """The text of the known-wrong solution ``entry`` (an item of ``wrong``): the file
        itself, or for a ``.diff`` the reference with that diff applied. A diff that no longer
        fits the reference raises :class:`~minimodel.lab.patching.PatchError` naming both."""
        path = self.folder / "wrong" / entry["file"]
        text = path.read_text(encoding="utf-8")
        if path.suffix != ".diff":
            return text
        reference = self.reference_path
        try:
            patched = apply_patch_to_texts(text, {reference.name:
                                                  reference.read_text(encoding="utf-8")})
        except PatchError as exc:
            raise PatchError(f"{path} does not apply to {reference}: {exc}; update the diff "
                             "to the reference's current text") from None
        return patched[reference.name]

    def text(self, key: str, lang: str) -> str:
        """Title, statement or stub docstring in ``lang``."""
        return pick(getattr(self, key), lang)

    def hint_list(self, lang: str) -> list[str]:
        return self.hints.get(lang) or self.hints["en"]

    def signature(self) -> str:
        """``name(arg1, arg2, opt=default)`` built from ``args`` and ``defaults``."""
        parts = [f"{a}={self.defaults[a]!r}" if a in self.defaults else a for a in self.args]
        return f"{self.function}({', '.join(parts)})"

    def full_tolerance(self) -> dict[str, float]:
        """rtol/atol for float64 and (looser, defaulted) for float32 results."""
        tol = dict(self.tolerance)
        tol.setdefault("rtol_float32", max(tol["rtol"], 1e-4))
        tol.setdefault("atol_float32", max(tol["atol"], 1e-5))
        return tol

    def reference_function(self) -> Callable[..., Any]:
        """The function that computes expected results in the judge's (trusted) process."""
        if self.parent_reference:
            module_name, func = self.parent_reference.split(":")
            return getattr(importlib.import_module(module_name), func)
        return getattr(_load_module(self.reference_path), self.function)


def _load_module(path: Path) -> ModuleType:
    """Import a content file (trusted, shipped with minimodel) under a private module name."""
    name = "_mm_exercise_" + "_".join(path.with_suffix("").parts[-2:]).replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # keep content/ clean
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def parse_exercise(folder: Path) -> Exercise:
    """Read and schema-check one exercise folder; raise ValueError naming the file on problems."""
    path = folder / "exercise.yaml"
    raw = read_yaml(path)
    problems = schema_problems(raw, _SCHEMA)
    if problems:
        raise ValueError(f"{path}: invalid exercise definition: {'; '.join(problems)}")
    if raw["id"] != folder.name:
        raise ValueError(f"{path}: id {raw['id']!r} must equal the folder name {folder.name!r}")
    if len(raw["hints"]["en"]) != len(raw["hints"]["es"]):
        raise ValueError(f"{path}: en has {len(raw['hints']['en'])} hints, es has "
                         f"{len(raw['hints']['es'])}; the ladders must match")
    if "inputs" in raw["cases"]:      # declared inputs: registered as this exercise's generator
        try:
            generator = declare(raw["id"], raw["cases"], raw["args"])
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        raw["cases"] = {**raw["cases"], "generator": generator}
    return Exercise(folder=folder, **raw)


@lru_cache(maxsize=1)
def _parsed() -> tuple[Exercise, ...]:
    return tuple(parse_exercise(path.parent) for path in item_files("exercise", CONTENT_DIR))


def _all() -> list[Exercise]:
    """Every exercise in the lessons' order, then ``order`` (the lessons are read each time:
    the order follows their front matter, the parsed files are cached)."""
    positions = lesson_positions("exercise")
    return sorted(_parsed(), key=lambda e: (path_order(e.id, e.order, positions), e.id))


def all_exercises() -> list[Exercise]:
    """Every exercise, in the lessons' order."""
    return _all()


def get_exercise(exercise_id: str, lang: str = DEFAULT_LANG) -> Exercise:
    """The exercise called ``exercise_id``; ValueError (in ``lang``) listing the known ids
    otherwise."""
    for ex in _all():
        if ex.id == exercise_id:
            return ex
    known = ", ".join(e.id for e in _all())
    raise ValueError(say("exercise.unknown_exercise", lang, id=exercise_id, known=known))


def list_exercises() -> list[dict[str, Any]]:
    """``[{"id", "title" (English), "titles" {"en", "es"}, "function", "signature", "hints"}]``."""
    return [{"id": e.id, "title": e.title["en"], "titles": dict(e.title),
             "function": e.function, "signature": e.signature(), "hints": len(e.hints["en"])}
            for e in _all()]
