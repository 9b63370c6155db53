"""Cases from an exercise's own declaration: inputs described in ``exercise.yaml``, no Python.

An exercise whose arguments no shared generator (:mod:`.cases`) makes declares them instead::

    cases:
      examples: 2
      sizes: {N: [1, 4], V: [2, 30]}         # drawn per case, low..high inclusive
      inputs:                                # every argument the cases pass, in any order
        logits: {shape: [N, V], dtype: float, range: [-3, 3]}
        temperature: {shape: [], dtype: float, range: [0.5, 2.0], python: true}
      example: {sizes: {N: 2, V: 4}}         # the fixed visible example (optional)
      kinds:                                 # one hidden case per kind, on every seed
        float64: {}
        float32: {dtype: float32}            # every `float` input becomes float32
        one row: {sizes: {N: 1}}
        small temperature: {inputs: {temperature: {range: [0.05, 0.1]}}}
        extreme logits: {inputs: {logits: {range: [-1000, 1000], special: [1000, -1000]}}}
        default temperature: {inputs: {temperature: {omit: true}}}
      labels:                                # each kind's Spanish label (float64/32 need none)
        es: {one row: una fila, small temperature: temperatura pequeña, ...}

An input is an array of ``shape`` (sizes by name or number; ``[]`` is 0-d) and ``dtype``
(``float`` = float64 unless the kind says ``dtype: float32``; ``float32``, ``float64``,
``int``), with values uniform in ``range`` (for ``int``: low inclusive, high exclusive; a
bound may name a size, ``[0, V]``, or a size minus a whole number, ``[0, V-1]``); ``special``
values are written first (row-major), so a clause about extreme values is tested on every
seed (a special value may name a size the same way: ``special: [V-1]`` puts the largest id
below V first); ``python: true`` passes a 0-d input as a
Python number; ``omit: true`` leaves an optional argument out (its default is tested). A kind
overrides ``sizes``, ``dtype`` and any input's fields.

:func:`declare` checks the declaration (each problem names the field and the fix) and
registers it in :data:`.cases.GENERATORS` under ``declared:<exercise id>``, so the judge, the
clauses and the site use it like any shared generator.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from minimodel.lab.exercises.cases import GENERATORS, Args, CaseGenerator

DTYPES = {"float": None, "float64": np.float64, "float32": np.float32, "int": np.int64}
INPUT_FIELDS = {"shape", "dtype", "range", "special", "python", "omit"}
# A bound or special value that names a size: "V", or "V-1" (the size minus a whole number).
SIZE_BOUND = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:-\s*(\d+))?\s*")
# Kinds whose label is already a dtype name: the same in every language.
NEUTRAL_KINDS = {"float64", "float32"}
# {kind: {lang: label}} of every declared exercise, read by lab.i18n.case_label.
LABELS: dict[str, dict[str, str]] = {}


def problems(spec: dict[str, Any], args: list[str]) -> list[str]:
    """What is wrong with a ``cases:`` declaration, each with the fix (empty when sound)."""
    out: list[str] = []
    sizes, inputs, kinds = spec.get("sizes") or {}, spec.get("inputs") or {}, spec.get("kinds")
    if not inputs:
        return ["cases.inputs is missing; describe every argument: "
                "{name: {shape: [...], dtype: float, range: [low, high]}}"]
    if not isinstance(kinds, dict) or not kinds:
        out.append("cases.kinds is missing; list one hidden case kind per clause, e.g. "
                   "{float64: {}, float32: {dtype: float32}}")
        kinds = {}
    for name in inputs:
        if name not in args:
            out.append(f"cases.inputs.{name} is not an argument of the function ({args}); "
                       "rename it or add it to args")
    for name, size in sizes.items():
        if not (isinstance(size, list) and len(size) == 2 and size[0] <= size[1]):
            out.append(f"cases.sizes.{name} is {size!r}; write [low, high] with low <= high")
    for where, over in [("example", spec.get("example") or {})] + [
            (f"kinds.{kind}", over or {}) for kind, over in kinds.items()]:
        for name, field in {**inputs, **(over.get("inputs") or {})}.items():
            merged = {**inputs.get(name, {}), **field} if name in inputs else field
            out += _input_problems(f"cases.{where}.inputs.{name}" if name in (
                over.get("inputs") or {}) else f"cases.inputs.{name}", merged,
                {**sizes, **(over.get("sizes") or {})})
        if over.get("dtype") not in (None, "float32", "float64"):
            out.append(f"cases.{where}.dtype is {over['dtype']!r}; use float32 or float64")
    spanish = (spec.get("labels") or {}).get("es") or {}
    out += [f"cases.labels.es has no Spanish label for the kind {kind!r}; add "
            f"'{kind}: <etiqueta>' (the judge's table shows it in Spanish)"
            for kind in kinds if kind not in NEUTRAL_KINDS and kind not in spanish]
    return list(dict.fromkeys(out))


def _input_problems(where: str, field: dict[str, Any], sizes: dict[str, Any]) -> list[str]:
    out = [f"{where}: unknown field {key!r}; the fields are {sorted(INPUT_FIELDS)}"
           for key in field if key not in INPUT_FIELDS]
    if field.get("omit"):
        return out
    if field.get("dtype") not in DTYPES:
        out.append(f"{where}.dtype is {field.get('dtype')!r}; use one of {list(DTYPES)}")
    shape = field.get("shape")
    if not isinstance(shape, list):
        out.append(f"{where}.shape is {shape!r}; write a list of sizes, [] for 0-d")
    else:
        out += [f"{where}.shape names {dim!r}, which cases.sizes does not declare; add it "
                "there as [low, high]" for dim in shape
                if isinstance(dim, str) and dim not in sizes]
    bounds = field.get("range")
    if not (isinstance(bounds, list) and len(bounds) == 2):
        out.append(f"{where}.range is {bounds!r}; write [low, high]")
    else:
        out += [f"{where}.range names {b!r}, which cases.sizes does not declare; write a "
                "number, a size (V) or a size minus a whole number (V-1)"
                for b in bounds if isinstance(b, str) and _sized(b) not in sizes]
    out += [f"{where}.special names {b!r}, which cases.sizes does not declare; write a "
            "number, a size (V) or a size minus a whole number (V-1)"
            for b in field.get("special") or [] if isinstance(b, str) and _sized(b) not in sizes]
    return out


def _sized(bound: str) -> str | None:
    """The size a bound names: "V" -> "V", "V-1" -> "V"; None when it is no such name."""
    match = SIZE_BOUND.fullmatch(bound)
    return match.group(1) if match else None


def _bound(value: Any, sizes: dict[str, int]) -> Any:
    """A number as written, a size by name ("V") or a size minus a whole number ("V-1")."""
    if not isinstance(value, str):
        return value
    name, minus = SIZE_BOUND.fullmatch(value).groups()
    return sizes[name] - int(minus or 0)


def _size(value: Any, rng: np.random.Generator) -> int:
    return int(rng.integers(value[0], value[1] + 1)) if isinstance(value, list) else int(value)


def _values(field: dict[str, Any], sizes: dict[str, int], float_dtype: Any,
            rng: np.random.Generator) -> Any:
    """One input: an array of the declared shape, dtype and range (special values first)."""
    shape = tuple(sizes[d] if isinstance(d, str) else int(d) for d in field["shape"])
    low, high = (_bound(b, sizes) for b in field["range"])
    dtype = DTYPES[field["dtype"]] or float_dtype
    if dtype is np.int64:
        x = rng.integers(int(low), max(int(high), int(low) + 1), size=shape)
    else:
        x = rng.uniform(low, high, size=shape)
    special = [_bound(b, sizes) for b in field.get("special") or []][:x.size]
    if special:
        x.reshape(-1)[:len(special)] = special
    x = np.asarray(x, dtype=dtype)
    if field.get("python") and x.ndim == 0:
        return x.item()
    return x


def _builder(spec: dict[str, Any]):
    inputs, kinds = spec["inputs"], spec["kinds"]

    def build(rng: np.random.Generator, kind: str, params: dict) -> Args:
        over = (spec.get("example") or {}) if kind == "example" else (kinds.get(kind) or {})
        sized = {**(spec.get("sizes") or {}), **(over.get("sizes") or {})}
        sizes = {name: _size(value, rng) for name, value in sized.items()}
        float_dtype = np.float32 if over.get("dtype") == "float32" else np.float64
        args: Args = {}
        for name, field in inputs.items():
            field = {**field, **((over.get("inputs") or {}).get(name) or {})}
            if not field.get("omit"):
                args[name] = _values(field, sizes, float_dtype, rng)
        return args

    return build


def declare(exercise_id: str, spec: dict[str, Any], args: list[str]) -> str:
    """Register the declared cases of ``exercise_id``; returns the generator's name. A
    ValueError lists every problem of the declaration."""
    found = problems(spec, args)
    if found:
        raise ValueError("; ".join(found))
    name = f"declared:{exercise_id}"
    GENERATORS[name] = CaseGenerator(_builder(spec), tuple(spec["kinds"]))
    for kind in spec["kinds"]:
        LABELS[kind] = {"en": kind, **{lang: labels[kind] for lang, labels in
                                       (spec.get("labels") or {}).items() if kind in labels}}
    return name
