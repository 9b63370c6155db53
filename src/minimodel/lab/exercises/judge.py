"""The exercise judge: scan, compute the expected outputs, run in the sandbox, compare.

Result (JSON contract of ``minimodel exercise check ID --file FILE --json``)::

    {"exercise": id, "passed": bool,
     "status": "passed" | "wrong" | "error" | "timeout" | "forbidden",
     "reason": finer cause of a failure ("shape", "dtype", "wrong", ...) or null,
     "seed": int, "practice": bool, "copy_viewed": bool,
     "tolerance": {"rtol", "atol", "rtol_float32", "atol_float32"}, "timeout": seconds, "message": summary,
     "forbidden": [{"name", "line", "how"}], "hung_at": [...],
     "isolation": "full" | "partial", "isolation_reason": text,
     "blame": [{"id", "text"}] (the clauses the failures implicate, likeliest first),
     "cases": [{"name", "hidden", "label", "status", "message", "inputs", "clauses", "kind",
                "nonfinite", "repeats"}]}

A case passes when every output has the expected shape and dtype and, elementwise,
``|got - exact| <= atol + rtol * |exact|``. ``exact`` is the reference computed in float64
from the case's own inputs (float32 inputs are widened, which is exact), so the answer does
not carry the reference's own float32 rounding. A float32 case is looser, by what float32
itself costs there: the float32 atol; the float32 rtol times the largest magnitude in the
output (a logit of 1.2 in an output that holds 1200 is rounded like 1200); and
``ROUNDING_FACTOR`` times the case's ``rounding`` (the reference's own float32 error on the
case). Large logits or
near ties in a softmax after several blocks cost more than a small matmul, and any honest
float32 implementation (another summation order, log-softmax, torch) rounds by about as much,
while a wrong formula is off by far more and an inf/NaN never passes. Shape and dtype problems
get their own case status so the learner knows to look at reshapes and casts before the maths.

Order matters: the static scan, then the expected outputs, computed here from the reference's
manifest-checked bytes (never a ``__pycache__``), all before the solution's process starts; the
child replaces the forbidden APIs by stubs before it imports the solution (a call reports
``forbidden``: :func:`runtime_rule`) and only returns plain arrays. A copy of the lab's own
solution, recognised by content (:mod:`.copies`), is practice. A hidden case's feedback names
the statement's clauses it tests and the size of the error, never the expected numbers (the
visible examples show them).
After the declared cases, one hidden case is repeated in the same process with new values at
the same sizes (:func:`with_repeat`): a function whose result depends only on its inputs'
shapes (a cache keyed by shape and dtype) fails there, blamed on the judge's own clause
:func:`values_clause`.
A seed the learner chose replays the cases for debugging: the result says ``practice`` and
the lab does not record it as a pass.
"""

from __future__ import annotations

import copy
import io
import secrets
import tokenize
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Collection
from typing import Any, Callable, NamedTuple

import numpy as np

from minimodel.lab import integrity
from minimodel.lab.exercises import aliases, blame, isolation
from minimodel.lab.exercises._enforce import FORWARD_AD_ON
from minimodel.lab.exercises.astscan import (AUTOGRAD_CALLABLES, AUTOGRAD_FORBIDDEN,
                                             DEFAULT_ALLOWED_MODULES, DEFAULT_FORBIDDEN,
                                             TORCH_COMPILERS, runtime_entries, scan_source)
from minimodel.lab.exercises.cases import REPEAT_KIND, Case, make_cases, with_new_values
from minimodel.lab.exercises.concepts import whole_families
from minimodel.lab.exercises.copies import all_shown, lab_copies
from minimodel.lab.exercises.registry import Exercise, get_exercise
from minimodel.lab.exercises.requirements import library_only, runtime_allowed
from minimodel.lab.exercises.sandbox import CHILD_FILES, ChildRun, run_solution
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

# Load errors the sandboxed child reports with a "key" (it knows no language).
LOAD_ERRORS = ("no_function", "needs_torch", "framework_unknown")

# How many times the reference's own float32 rounding error an honest float32 solution may make
# on a case (a different summation order or softmax form rounds differently, by the same order).
ROUNDING_FACTOR = 16.0


@dataclass(frozen=True)
class Expected:
    """What one case must return, per output.

    ``like``: the reference on the case's own inputs (its dtype and shape are the contract);
    ``exact``: the same maths in float64 from the same inputs (the values compared against);
    ``rounding``: max |like - exact| for a float32 output (0.0 otherwise) — what float32
    costs the reference on this case.
    """

    like: list[np.ndarray]
    exact: list[np.ndarray]
    rounding: list[float]

    def allowed(self, i: int, tol: dict[str, float], single: bool) -> np.ndarray:
        """Elementwise allowed error of output ``i``: ``atol + rtol |exact|`` in float64.

        A ``single``-precision comparison scales rtol by the largest magnitude in the whole
        output: float32 rounds every value computed from large ones like those (attention mixes
        positions, a matmul sums them), so a logit of 1.2 in an output that holds 1200 carries
        the rounding of 1200. It adds ``ROUNDING_FACTOR * rounding``."""
        exact = np.abs(self.exact[i].astype(np.float64))
        if not single:
            return tol["atol"] + tol["rtol"] * exact
        scale = float(exact.max()) if exact.size else 0.0
        return (tol["atol_float32"] + tol["rtol_float32"] * np.full(exact.shape, scale)
                + ROUNDING_FACTOR * self.rounding[i])


class Verdict(NamedTuple):
    status: str
    message: str
    nonfinite: bool = False  # the failing output holds inf or NaN where the answer is finite
    about: str | None = None  # a finer kind of failure a clause may be about ("sparse")


def forbidden_names(ex: Exercise) -> list[str]:
    """Default forbidden APIs plus the exercise's own list, each member widened to its whole
    family (:mod:`.concepts`), and the autograd rule when the statement says "without
    autograd")."""
    rule = AUTOGRAD_FORBIDDEN if ex.no_autograd else []
    return whole_families(list(dict.fromkeys(DEFAULT_FORBIDDEN + list(ex.forbidden) + rule)))


def runtime_rule(ex: Exercise, table: dict) -> dict[str, Any]:
    """What the child replaces by stubs before the solution runs (``_enforce.py``): every
    forbidden function or class with the paths the alias ``table`` knows for it and its family
    name, the autograd entry points of an exercise "without autograd", torch's compilers
    (``TORCH_COMPILERS``), and the packages whose
    import is refused (``minimodel``; ``torch`` in a NumPy-only exercise), and the top-level
    modules the solution may import at all (:func:`requirements.runtime_allowed`), and of
    them those only torch's code may import (:func:`requirements.library_only`)."""
    names = forbidden_names(ex)
    entries = runtime_entries(names, table)
    if ex.no_autograd:
        entries += [{"api": name, "paths": [name], "family": None}
                    for name in AUTOGRAD_CALLABLES]
    if names and not numpy_only(ex):  # compiled code calls ATen past the stubs
        entries += [{"api": name, "paths": [name], "family": None} for name in TORCH_COMPILERS]
    # "without autograd": torch records no graph at all while the solution runs (grad mode
    # and forward gradients off, and every switch that turns them on refused), so no gradient
    # can be read off a graph by any spelling (grad_fn nodes called by hand...)
    return {"entries": entries, "refused": [n for n in names if "." not in n],
            "grad_off": ex.no_autograd,
            "allowed": runtime_allowed(not numpy_only(ex), allowed_modules(ex)),
            "library_only": library_only(not numpy_only(ex), allowed_modules(ex))}


def numpy_only(ex: Exercise) -> bool:
    """An exercise that forbids torch itself: its child cannot import torch (full isolation)."""
    return "torch" in ex.forbidden


def exercise_files(ex: Exercise) -> list[Path]:
    """What a verdict on ``ex`` depends on: its definition, its reference, the child harness
    and the case generators (checked against the manifest before grading)."""
    here = Path(__file__).resolve().parent
    return [ex.folder / "exercise.yaml", ex.reference_path, here / "cases.py",
            *(here / name for name in CHILD_FILES)]


def allowed_modules(ex: Exercise) -> list[str]:
    return list(dict.fromkeys(DEFAULT_ALLOWED_MODULES + list(ex.allowed_modules)))


def build_cases(ex: Exercise, seed: int, examples: int | None = None) -> list[Case]:
    """The cases of ``ex`` for ``seed``. Arguments are passed in the declared order, up to the
    last one the case gives: a gap before it gets the default (e.g. ``weight=None`` before
    ``eps``), and trailing optional arguments the case leaves out are not passed at all, so
    the solution's own defaults are tested. Required arguments go by position; the optional
    ones by position in the visible cases and every other hidden case, and by the statement's
    keyword (``ignore_index=3``) in the rest, as callers write both: a parameter renamed
    (``ignore=-100``) fails there."""
    spec = ex.cases
    cases = make_cases(spec["generator"], seed,
                       spec.get("examples", 2) if examples is None else examples,
                       spec.get("params"))
    hidden = 0
    for case in cases:
        case.args = _call_args(ex, case.args)
        if case.hidden:
            hidden += 1
            if hidden % 2 == 0:
                case.keywords = tuple(a for a in case.args if a in ex.defaults)
    return cases


def _call_args(ex: Exercise, args: dict[str, Any]) -> dict[str, Any]:
    """A generator's ``args`` in the declared order, gaps filled with defaults (see
    :func:`build_cases`)."""
    missing = [a for a in ex.args if a not in args and a not in ex.defaults]
    if missing:
        raise ValueError(f"{ex.id}: case generator gave no {missing} (and no default)")
    last = max(ex.args.index(a) for a in args)
    return {a: args[a] if a in args else ex.defaults[a] for a in ex.args[:last + 1]}


def _missing_keyword(case: Case, event: dict[str, Any]) -> str | None:
    """The statement's parameter name a solution refused as a keyword (``TypeError: ...
    unexpected keyword argument 'ignore_index'``), or None."""
    if event.get("type") != "TypeError":
        return None
    return next((name for name in case.keywords
                 if f"unexpected keyword argument '{name}'" in str(event.get("message"))), None)


def with_repeat(ex: Exercise, cases: list[Case], expected: list[Expected], seed: int
                ) -> tuple[list[Case], list[Expected]]:
    """``cases`` and ``expected`` followed by one hidden case repeated with new values at the
    same sizes (:func:`.cases.with_new_values`), run last in the same process: the first, from
    the hidden case the seed picks on, for which the earlier case's answer is wrong (a repeat
    whose new values give the same answer, an orthonormal matrix's effective rank, would let
    a function that ignores the values pass)."""
    hidden = [i for i, case in enumerate(cases) if case.hidden]
    if not hidden:
        return cases, expected
    fn = reference_function(ex)
    start = seed % len(hidden)
    for i in hidden[start:] + hidden[:start]:
        case = with_new_values(ex.cases["generator"], cases[i], seed,
                               f"hidden {len(hidden) + 1}", ex.cases.get("params"))
        if case is None:
            continue
        case.args = _call_args(ex, case.args)
        new = expected_for(ex, fn, case.args)
        earlier = expected[i].like
        if compare_case(ex, new, earlier, [False] * len(earlier), "en").status != "passed":
            return cases + [case], expected + [new]
    return cases, expected


def values_clause() -> dict[str, Any]:
    """The judge's own clause, tested in every exercise by the repeated case: a function's
    result depends on its inputs' values."""
    return {"id": "values-not-shapes", "kinds": [REPEAT_KIND],
            "en": say("judge.clause_values", "en"), "es": say("judge.clause_values", "es")}


def all_clauses(ex: Exercise) -> list[dict[str, Any]]:
    """The statement's clauses, then the judge's own (:func:`values_clause`)."""
    return [*ex.clauses, values_clause()]


def reference_function(ex: Exercise) -> Callable[..., Any]:
    """The reference, compiled from the very bytes the manifest vouches for (never from a
    ``__pycache__`` file, which a sandbox-less run could have replaced)."""
    path = ex.reference_path
    code = compile(integrity.verified_bytes(path), str(path), "exec")
    namespace: dict[str, Any] = {"__name__": f"_mm_reference_{ex.id.replace('-', '_')}"}
    exec(code, namespace)  # noqa: S102 - shipped, verified content
    return namespace[ex.parent_reference.split(":")[1] if ex.parent_reference else ex.function]


def _widened(value: Any) -> Any:
    """A float32 array as float64 (exact: every float32 is a float64); anything else as is."""
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.astype(np.float64)
    return copy.deepcopy(value)


def expected_for(ex: Exercise, fn: Callable[..., Any], args: dict[str, Any]) -> Expected:
    """:class:`Expected` for one case from the reference ``fn`` (run on copies, so it cannot
    alter the inputs): once as given, and in float64 when the case has float32 inputs."""
    def run(values: list[Any]) -> list[np.ndarray]:
        with np.errstate(all="ignore"):  # an inf or NaN a case holds on purpose (0 * inf)
            out = fn(*values)
        return [np.asarray(o) for o in (list(out) if len(ex.outputs) > 1 else [out])]

    like = run(copy.deepcopy(list(args.values())))
    if not any(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in args.values()):
        return Expected(like, [o.astype(np.float64) if o.dtype.kind == "f" else o
                               for o in like], [0.0] * len(like))
    exact = [o.astype(np.float64) for o in run([_widened(v) for v in args.values()])]
    rounding = []
    for want, answer in zip(like, exact):
        if want.dtype != np.float32 or not answer.size:
            rounding.append(0.0)
            continue
        with np.errstate(invalid="ignore"):
            err = np.abs(want.astype(np.float64) - answer)
        rounding.append(float(err.max()) if np.isfinite(err).all() else 0.0)
    return Expected(like, exact, rounding)


def expected_outputs(ex: Exercise, cases: list[Case]) -> list[Expected]:
    """Run the trusted reference in this process on every case (see :func:`expected_for`)."""
    fn = reference_function(ex)
    return [expected_for(ex, fn, case.args) for case in cases]


def clauses_of(ex: Exercise, case: Case, lang: str, nonfinite: bool = True) -> list[str]:
    """The statement's clauses a hidden case tests (by its kind), in ``lang``. A clause marked
    ``nonfinite: true`` (a stable softmax) is about inf/NaN only: it is named for a failure
    only when the output was not finite (``nonfinite``)."""
    if not case.hidden:
        return []
    tested, _ = blame.case_clauses(all_clauses(ex), case.kind, nonfinite)
    return [c.get(lang) or c["en"] for c in tested]


def _at_index(idx: tuple, lang: str) -> str:
    """" at index [2, 5]" where the value sits in an array; nothing for a scalar result."""
    if not idx:
        return ""
    return say("judge.at_index", lang, idx="[" + ", ".join(str(int(i)) for i in idx) + "]")


def compare_case(ex: Exercise, expected: Expected, got: list[np.ndarray],
                 python_scalar: list[bool], lang: str, hidden: bool = False) -> Verdict:
    """The :class:`Verdict` on one case: shape, then dtype, then values. A ``hidden`` case's
    message gives the size and place of the error, never the expected value."""
    names = [o["name"] for o in ex.outputs]
    if len(got) != len(expected.like):
        return Verdict("shape", say("judge.n_outputs", lang, want=len(expected.like),
                                    names=", ".join(names), got=len(got)))
    tol = ex.full_tolerance()
    for i, (spec, want, have, is_py) in enumerate(zip(ex.outputs, expected.like, got,
                                                      python_scalar + [False] * 9)):
        name = spec["name"]
        if have.shape != want.shape:
            return Verdict("shape", say("judge.shape", lang, name=name, want=want.shape,
                                        got=have.shape))
        # A 0-d result (a loss, a rank) may come back as a Python number; an array keeps the
        # expected dtype (a float64 0-d array for float32 inputs is a dtype error).
        if have.dtype != want.dtype and not (is_py and want.ndim == 0):
            return Verdict("dtype", say("judge.dtype", lang, name=name, want=want.dtype,
                                        got=have.dtype))
        single = want.dtype == np.float32 or have.dtype == np.float32
        allowed = expected.allowed(i, tol, single)
        want64, have64 = expected.exact[i].astype(np.float64), have.astype(np.float64)
        if spec.get("sparse_rows") and want.ndim == 2:  # zero rows must stay exactly zero
            extra = np.flatnonzero(~np.any(want64 != 0, axis=1) & np.any(have64 != 0, axis=1))
            if extra.size:
                return Verdict("wrong", say("judge.sparse", lang, name=name,
                                            rows=extra[:8].tolist()), about="sparse")
        with np.errstate(invalid="ignore"):
            err = np.abs(have64 - want64)
            close = (err <= allowed) | (np.isnan(have64) & np.isnan(want64)) | (have64 == want64)
        if close.all():
            continue
        err = np.where(close, -1.0, np.where(np.isnan(err), np.inf, err))
        idx = np.unravel_index(int(np.argmax(err)), want.shape) if want.ndim else ()
        where = _at_index(idx, lang)
        if not np.isfinite(have64[idx]):
            return Verdict("wrong", say("judge.nonfinite_hidden" if hidden else
                                        "judge.nonfinite", lang, name=name, got=have64[idx],
                                        idx=where, want=f"{want64[idx]:.8g}"), nonfinite=True)
        if np.isnan(want64[idx]):  # the error is no number: say what differs instead
            return Verdict("wrong", say("judge.finite_for_nan", lang, name=name,
                                        got=float(have64[idx]), idx=where))
        if hidden:
            return Verdict("wrong", say("judge.wrong_hidden", lang, name=name,
                                        err=float(err[idx]), idx=where,
                                        allowed=float(np.broadcast_to(allowed, want.shape)[idx])))
        return Verdict("wrong", say("judge.wrong", lang, name=name, err=float(err[idx]),
                                    idx=where, want=float(want64[idx]),
                                    got=float(have64[idx])))
    return Verdict("passed", say("judge.ok", lang))


def _case_entry(ex: Exercise, case: Case, status: str, message: str, lang: str,
                nonfinite: bool = True, **extra: Any) -> dict[str, Any]:
    """One case's report (the clauses a failed hidden case points at are added once every
    case has run, by :func:`_name_clauses`)."""
    return {"name": case.name, "hidden": case.hidden, "label": case.label, "status": status,
            "message": message, "inputs": case.describe_inputs(),
            "clauses": clauses_of(ex, case, lang, nonfinite), "kind": case.kind,
            "nonfinite": nonfinite, "repeats": case.repeats, **extra}


def _failed_hidden(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed hidden cases; none for the untouched starter stub (its failures say nothing
    about any clause: it raised before computing anything), nor a repeat with new values of a
    case that failed already (:func:`_repeat_of_failed`)."""
    if _untouched_stub(entries):
        return []
    return [e for e in entries if e["hidden"] and e["status"] not in ("passed", "not run")
            and not _repeat_of_failed(e, entries)]


def _repeat_of_failed(entry: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
    """Is ``entry`` the repeat with new values of a case that did not pass? Its failure then
    says nothing about the values: that case's own clauses come first."""
    return bool(entry.get("repeats")) and any(
        e["name"] == entry["repeats"] and e["status"] != "passed" for e in entries)


def _untouched_stub(entries: list[dict[str, Any]]) -> bool:
    """Did every case raise the starter stub's NotImplementedError?"""
    return all(e["status"] == "error" and "NotImplementedError" in e["message"]
               for e in entries)


def _name_clauses(ex: Exercise, entries: list[dict[str, Any]], lang: str) -> None:
    """Add to each failed hidden case's message the clauses it tests, the likeliest first
    (the verdict's order, :func:`blame_of`), each clause named by one case only, and not a
    clause whose own (dedicated) case passed unless nothing else is left; a general case
    says so.

    A case may test several clauses: cross-entropy's custom ignore_index case also has an
    ignored position. When the likeliest of them was already named by a case above, this
    case points there instead of naming the next one: a sum over every position fails the
    ignore_index case too, and "uses the ignore_index it is given" was once named for it,
    on a solution that did."""
    from minimodel.lab.i18n import case_name

    clauses = all_clauses(ex)
    failed = _failed_hidden(entries)
    for entry in [] if _untouched_stub(entries) else entries:
        if entry["status"] not in ("passed", "not run") and _repeat_of_failed(entry, entries):
            entry["message"] += "; " + say("judge.see_case", lang,
                                           case=case_name(entry["repeats"], lang))
    ranked = blame.blamed_clauses(clauses, [(e["kind"], e["nonfinite"], e["failure"])
                                            for e in failed])
    rank = {c["id"]: i for i, c in enumerate(ranked)}
    own = blame.dedicated_kinds(clauses)
    # a clause whose own case passed is not this case's mistake (it is named for the others)
    cleared = {own[e["kind"]] for e in entries
               if e["hidden"] and e["status"] == "passed" and e["kind"] in own}
    named: dict[str, str] = {}  # clause id -> the case that named it
    for entry in failed:
        tested, dedicated = blame.case_clauses(clauses, entry["kind"], entry["nonfinite"])
        tested = sorted([c for c in tested if c["id"] not in cleared] or tested,
                        key=lambda c: rank.get(c["id"], len(rank)))
        if not dedicated:
            entry["message"] += "; " + say("judge.general", lang)
        if tested and tested[0]["id"] in named:
            entry["message"] += "; " + say("judge.see_case", lang,
                                           case=case_name(named[tested[0]["id"]], lang))
            continue
        new = [c for c in tested if c["id"] not in named]
        if new:
            entry["message"] += "; " + say("judge.tests", lang,
                                           clauses="; ".join(c.get(lang) or c["en"] for c in new))
            named.update((c["id"], entry["name"]) for c in new)


def blame_of(ex: Exercise, entries: list[dict[str, Any]], lang: str) -> list[dict[str, str]]:
    """The clauses the failed hidden cases implicate, the likeliest first
    (:func:`minimodel.lab.exercises.blame.blamed_clauses`)."""
    failures = [(e["kind"], e["nonfinite"], e["failure"]) for e in _failed_hidden(entries)]
    return [{"id": c["id"], "text": c.get(lang) or c["en"]}
            for c in blame.blamed_clauses(all_clauses(ex), failures)]


def forbidden_call(run: ChildRun) -> dict[str, Any] | None:
    """``{"name", "line", "how": "call"}`` when the solution called a forbidden API at run
    time (the child's ``forbidden`` event, checked: a string name and an integer line)."""
    ev = next((ev for ev in run.events if ev.get("event") == "forbidden"), None)
    if ev is None or not isinstance(ev.get("name"), str) or type(ev.get("line")) is not int:
        return None
    return {"name": ev["name"][:200], "line": ev["line"], "how": "call"}


def runtime_message(forbidden: dict[str, Any], lang: str) -> str:
    """The verdict line of a call the run-time rule stopped (a package import, or an API)."""
    if "." not in forbidden["name"]:
        return say("judge.forbidden_import_runtime", lang, name=forbidden["name"],
                   line=forbidden["line"])
    if forbidden["name"] == FORWARD_AD_ON:  # a switch, not a function's name
        return say("judge.forbidden_grad_on", lang, name=forbidden["name"],
                   line=forbidden["line"])
    return say("judge.forbidden_runtime", lang, name=forbidden["name"], line=forbidden["line"])


def _judge_run(ex: Exercise, cases: list[Case], expected: list[Expected],
               run: ChildRun, lang: str, timeout: float
               ) -> tuple[str, str, list[dict[str, Any]]]:
    """Turn the child's events into (overall status, message, case entries)."""
    case_events = {ev.get("index"): ev for ev in run.events if ev.get("event") == "case"}
    load_error = next((ev for ev in run.events if ev.get("event") == "load_error"), None)
    finished = any(ev.get("event") == "done" for ev in run.events)
    forbidden = forbidden_call(run)
    entries, statuses, stopped_at = [], [], None
    for i, case in enumerate(cases):
        ev = case_events.get(i)
        where: list[str] = []
        nonfinite = True  # errors, crashes and timeouts may come from an overflow
        about = renamed = None
        if ev is None:
            if stopped_at is None and not load_error:
                stopped_at = i  # the case that was running when the child stopped
            if i == stopped_at and forbidden:
                status, text = "forbidden", runtime_message(forbidden, lang)
            elif i == stopped_at and run.timed_out and run.started:
                status, text, where = "timeout", say("judge.timeout", lang, timeout=timeout), \
                    run.hung_at[:3]
            elif i == stopped_at and not finished and run.out_of_memory:
                status, text = "error", say("judge.memory", lang, mb=ex.memory_mb)
            elif i == stopped_at and not finished and run.started:
                status, text = "error", say("judge.crashed", lang, code=run.returncode)
            else:
                status, text = "not run", say("judge.not_run", lang)
        elif not ev.get("ok"):
            status, where = "error", list(ev.get("where", []))
            text = say("judge.raised", lang, type=ev.get("type"), message=ev.get("message"))
            renamed = _missing_keyword(case, ev)
            if renamed:
                text = say("judge.keyword_renamed", lang, name=renamed,
                           signature=ex.signature()) + "; " + text
        else:
            status, text, nonfinite, about = compare_case(
                ex, expected[i], run.outputs[i], list(ev.get("python_scalar", [])), lang,
                case.hidden)
        entries.append(_case_entry(ex, case, status, text, lang, nonfinite,
                                   where=where, failure=about or status))
        if renamed:
            entries[-1]["keyword"] = renamed   # the statement's parameter name it refused
        statuses.append(status)
    _name_clauses(ex, entries, lang)

    if run.channel_problem:  # never a pass: what came back is not what was asked for
        return "error", say("judge.channel", lang, problem=run.channel_problem), entries
    if not run.started:
        return "error", say("judge.startup", lang, code=run.returncode), entries
    if forbidden:  # a stub replaced a forbidden API; the process ended at the call
        return "forbidden", runtime_message(forbidden, lang), entries
    if run.timed_out:
        hung = "; ".join(run.hung_at[:1])
        return "timeout", say("judge.timeout", lang, timeout=timeout) + (f" ({hung})" if hung else
                                                                    ""), entries
    if load_error:
        key = load_error.get("key")  # the child's own messages, in English: said in lang here
        message = (say(f"judge.{key}", lang, function=ex.function,
                       value=str(load_error.get("value", ""))) if key in LOAD_ERRORS
                   else load_error.get("message"))
        return "error", say("judge.load_error", lang, type=load_error.get("type"),
                            message=message), entries
    passed = statuses.count("passed")
    summary = say("judge.summary", lang, passed=passed, total=len(cases))
    if not finished:
        why = say("judge.memory", lang, mb=ex.memory_mb) if run.out_of_memory else \
            say("judge.crashed", lang, code=run.returncode)
        return "error", f"{why}; {summary}", entries
    if "error" in statuses:
        if _untouched_stub(entries):
            return "error", say("judge.stub", lang, passed=passed, total=len(cases)), entries
        return "error", summary, entries
    if passed < len(cases):
        return "wrong", summary, entries
    return "passed", summary, entries


def _inside_package(path: Path) -> bool:
    """Is ``path`` (links resolved) a file of the installed minimodel package?"""
    try:
        return path.resolve().is_relative_to(isolation.PACKAGE_DIR)
    except (OSError, RuntimeError):
        return False


def read_solution(path: Path, ex: Exercise, lang: str,
                  learner_dir: str | Path | None = None) -> str:
    """The learner's file as text, decoded as Python decodes it (:func:`python_text`); clear
    errors for folders, missing files and bytes that are not text in the file's encoding."""
    if path.is_dir():
        raise IsADirectoryError(say("judge.file_is_folder", lang, path=path))
    if not path.is_file():
        start = Suggest(lang, learner_dir)("exercise", "start", ex.id, "--file", path)
        raise FileNotFoundError(say("judge.file_missing", lang, path=path, command=start))
    data = path.read_bytes()
    try:
        return python_text(data)
    except UnicodeDecodeError as exc:  # a binary file, or text in another encoding
        byte = f"0x{exc.object[exc.start]:02x}" if exc.start < len(exc.object) else "?"
        raise ValueError(say("judge.file_not_utf8", lang, path=path, byte=byte,
                             pos=exc.start, encoding=exc.encoding)) from None
    except SyntaxError as exc:  # a coding cookie naming no codec Python knows
        raise ValueError(say("judge.file_bad_cookie", lang, path=path,
                             problem=exc.msg)) from None


def python_text(data: bytes) -> str:
    """``data`` decoded the way Python decodes a source file: a UTF-8 BOM, else the PEP 263
    coding cookie of the first two lines (``# -*- coding: latin-1 -*-``), else UTF-8. The
    text keeps its cookie line: compiling text (not bytes) ignores it."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # no cookie and bytes that are not UTF-8: say which byte
        if "invalid or missing encoding declaration" not in str(exc):
            raise  # a cookie naming no codec, or a BOM with another cookie
        encoding = "utf-8"
    return data.decode(encoding).removeprefix("\ufeff")


def refusal_message(ex: Exercise, first: Any, file: Path | None, lang: str) -> str:
    """The line that says why the static rule refused ``first`` (a :class:`Finding`): a module
    of the learner's own beside the file (the judge runs the one file alone), ``numpy.testing``
    (what else it holds), another module off the list, or a forbidden API."""
    name, line = first.name, first.line
    top = name.split(".")[0]
    module = first.how in ("import", "dynamic import") and name == top \
        and name not in allowed_modules(ex) and name not in forbidden_names(ex)
    folder = file.parent if file is not None else None
    if module and folder is not None and ((folder / f"{top}.py").is_file()
                                          or (folder / top / "__init__.py").is_file()):
        return say("judge.own_module", lang, name=name, line=line, folder=folder)
    if name == "numpy.testing" or name.startswith("numpy.testing."):
        return say("judge.numpy_testing", lang, name=name, line=line)
    if module:
        return say("judge.module_refused", lang, name=name, line=line)
    return say("judge.forbidden_static", lang, name=name, line=line)


def check_solution(exercise: Exercise | str, file: str | Path | None = None, *,
                   source: str | None = None, seed: int | None = None,
                   timeout: float | None = None, lang: str = "en",
                   progress: Callable[[int, int, float, float], None] | None = None,
                   learner_dir: str | Path | None = None,
                   viewed: Collection[str] = ()) -> dict[str, Any]:
    """Judge one solution file (or ``source`` text) for ``exercise``; returns the result dict.

    Args:
        exercise: an :class:`Exercise` or its id.
        file: path of the learner's ``.py`` file.
        source: the file's text instead of ``file`` (used by validation).
        seed: seed of the hidden cases. None: a fresh random one (reported), and a pass
            counts. A chosen seed replays cases: the result has ``practice: True``.
        timeout: wall-clock limit in seconds for the solution (the harness's own imports,
            torch's included, are not counted); the exercise's own default when None.
        lang: "en" or "es" for the messages.
        progress: optional ``progress(cases_done, cases_total, elapsed_s, timeout_s)`` called
            while the solution runs (see :func:`run_solution`).
        learner_dir: the learner folder the commands suggested in errors name (None: the
            default one).
        viewed: the exercises whose solution the learner has been shown
            (:func:`minimodel.lab.exercise_progress.viewed_solutions`). A file holding a
            function of the lab's solutions (:mod:`.copies`) all shown there passes *after
            viewing the solution* (``copy_viewed: True``); any other copy is practice. A
            function shown there is recognised up to a consistent renaming of its names.
    """
    ex = get_exercise(exercise, lang) if isinstance(exercise, str) else exercise
    if source is None:
        if file is None:
            raise ValueError("give the solution as file=PATH or source=TEXT")
        source = read_solution(Path(file), ex, lang, learner_dir)
    source = source.removeprefix("\ufeff")
    shown_as = str(file) if file is not None else "solution.py"
    # A copy of a function of the lab's solutions (any exercise's reference or alternative,
    # recognised by its content wherever it lies) is judged (the lab's own validation does);
    # it is recorded only as a pass after viewing the solution, when every copied function
    # was shown to the learner; otherwise it is practice.
    copied = lab_copies(ex, source, viewed)
    copy_viewed = all_shown(copied, viewed)
    lab_copy = bool(copied) and not copy_viewed
    practice = seed is not None or lab_copy
    seed = secrets.randbelow(1_000_000) if seed is None else int(seed)
    timeout = float(timeout if timeout is not None else ex.timeout)
    result: dict[str, Any] = {"exercise": ex.id, "passed": False, "status": "error",
                              "reason": None, "seed": seed, "practice": practice,
                              "copy_viewed": copy_viewed,
                              "tolerance": ex.full_tolerance(), "timeout": timeout,
                              "file": shown_as, "message": "", "forbidden": [], "hung_at": [], "blame": [],
                              "cases": [], **isolation.probe().as_dict()}

    # What names ARE (aliases.table): built from the libraries in this process, cached.
    libraries = aliases.LIBRARIES if "torch" in source else ("numpy",)
    table = aliases.table(libraries)
    findings = scan_source(source, forbidden_names(ex), allowed_modules(ex), table)
    if findings:
        first = findings[0]
        message = refusal_message(ex, first, Path(file) if file is not None else None, lang)
        result.update(status="forbidden", reason="forbidden",
                      forbidden=[f.as_dict() for f in findings], message=message)
        return result

    integrity.verify(exercise_files(ex))  # the reference and the harness are what was shipped
    cases = build_cases(ex, seed)
    expected = expected_outputs(ex, cases)  # before the solution's process exists
    cases, expected = with_repeat(ex, cases, expected, seed)
    run = run_solution(source, shown_as, ex.function, cases, [e.like for e in expected],
                       timeout, progress=progress, memory_mb=ex.memory_mb,
                       hide_torch=numpy_only(ex), runtime_rule=runtime_rule(ex, table))
    status, message, entries = _judge_run(ex, cases, expected, run, lang, timeout)
    reason = "forbidden" if status == "forbidden" else next(
        (e["status"] for e in entries if e["status"] not in ("passed", "not run")), None)
    if practice and status == "passed":
        message += " (" + say("judge.lab_copy" if lab_copy else "judge.practice",
                              lang) + ")"
    blamed = blame_of(ex, entries, lang) if status not in ("passed", "forbidden") else []
    renamed = next((e["keyword"] for e in entries if e.get("keyword")), None)
    if renamed:   # no clause is to blame: the function cannot be called as the statement says
        message += "; " + say("judge.keyword_renamed", lang, name=renamed,
                              signature=ex.signature())
    elif blamed:
        message += "; " + say("judge.look_first", lang, clause=blamed[0]["text"])
    called = forbidden_call(run) if status == "forbidden" else None
    result.update(status=status, passed=status == "passed", message=message, cases=entries,
                  blame=blamed, forbidden=[called] if called else [],
                  reason=reason if status != "passed" else None, hung_at=run.hung_at,
                  duration_s=round(run.duration, 3), **run.isolation)
    if status in ("error", "timeout") and not any(e.get("where") for e in entries):
        result["stderr_tail"] = run.stderr_tail
    return result
