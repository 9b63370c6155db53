"""Helpers for the ``experiment.py`` and ``invariants.py`` scripts of the breaks.

They run in a child process (:mod:`minimodel.lab.breaks.runner`) where only ``minimodel`` comes
from the learner's workspace; this module and the scripts come from the installed package, so
editing the workspace's copy of the lab cannot change a verdict. Besides the standard library
it imports numpy, and keeps the numpy functions its comparisons use (:func:`allclose`,
:func:`array_equal`): the bootstrap imports this module before the workspace, so library code
that rebinds ``np.allclose`` later cannot change what these compare with (the tamper scan
refuses such a write too).

Output protocol (parsed by the runner); a verdict line carries the run's one-time token, so
that a line printed by library code is not taken for one:

    SYMPTOM: <text>                          experiment: the story's symptom, as seen
    CAUSE REMAINS: <text>                    experiment: the story looks fixed, the cause is not
    PASS <token> <check-id> | <description>
    FAIL <token> <check-id> | <description> | <what went wrong>
    FOREIGN <token> <module> | <file>       check: a minimodel module not from the workspace

The language comes from ``MINIMODEL_BREAK_LANG`` (``en`` or ``es``). The invariants draw their
sizes and data from ``Checks.seed``: a fresh random seed on every run (so no fix can be tuned
to "the sizes the check uses"), or ``MINIMODEL_BREAK_SEED`` to replay a failure.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable, NoReturn

import numpy as np

SYMPTOM = "SYMPTOM:"
CAUSE_REMAINS = "CAUSE REMAINS:"
TOKEN = ""  # set by the runner's bootstrap before any workspace code runs
LANG_ENV = "MINIMODEL_BREAK_LANG"
WORKSPACE_ENV = "MINIMODEL_BREAK_WORKSPACE"
FOREIGN = "FOREIGN"
SEED_ENV = "MINIMODEL_BREAK_SEED"


# Captured at import, before any workspace code runs. ufuncs and ndarray methods are C objects
# whose attributes cannot be set, so these references stay numpy's own.
_asarray, _absolute, _subtract, _multiply, _add = (np.asarray, np.absolute, np.subtract,
                                                  np.multiply, np.add)
_less_equal, _equal, _logical_or, _errstate = (np.less_equal, np.equal, np.logical_or,
                                                np.errstate)


def allclose(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """``np.allclose(got, want, rtol, atol)`` from the functions captured above: every
    ``|got - want| <= atol + rtol * |want|`` (broadcast as numpy does; equal infinities are
    close, a NaN never is)."""
    got, want = _asarray(got), _asarray(want)
    with _errstate(invalid="ignore"):  # inf - inf is NaN; equal infinities pass by _equal
        limit = _add(atol, _multiply(rtol, _absolute(want)))
        near = _less_equal(_absolute(_subtract(got, want)), limit)
    return bool(_logical_or(near, _equal(got, want)).all())


def array_equal(a: Any, b: Any) -> bool:
    """``np.array_equal(a, b)`` from the functions captured above: same shape, equal entries."""
    a, b = _asarray(a), _asarray(b)
    return a.shape == b.shape and bool(_equal(a, b).all())


# Sizes every invariant that builds a model or a layer draws besides its small ones, so that no
# fix gated on the width or the vocabulary ("if d < 32") passes: the main job's d_model, one
# above GPT-2 small's 768 drawn afresh on every run, and a vocabulary of at least 1024.
MAIN_WIDTH = 128
WIDE_WIDTHS = (768, 1100)
WIDE_VOCAB = 1024


def wide_widths(rng, multiple: int = 1) -> list[int]:
    """``[128, d]`` with ``d`` drawn from ``rng`` in [768, 1100], rounded up to a multiple of
    ``multiple`` (the number of attention heads, say)."""
    wide = int(rng.integers(WIDE_WIDTHS[0], WIDE_WIDTHS[1] + 1))
    return [MAIN_WIDTH, -(-wide // multiple) * multiple]


def tr(en: str, es: str) -> str:
    """The text in the run's language."""
    return es if os.environ.get(LANG_ENV) == "es" else en


def say(en: str, es: str) -> None:
    print(tr(en, es), flush=True)


def es_num(value: float, spec: str) -> str:
    """``value`` formatted with ``spec`` as Spanish prose writes numbers: decimal comma and a
    space between thousands (``es_num(6.2383, ".3f")`` -> ``6,238``; ``",.1f"`` of 2097152.0
    -> ``2 097 152,0``; a percentage is set off by a space, ``15 %``, as the RAE writes it).
    Only for the Spanish text of a ``tr``/``say`` pair; code values stay as Python prints
    them."""
    text = format(value, spec).replace(",", " ").replace(".", ",")
    return text[:-1] + " %" if spec.endswith("%") else text


def use_workspace():
    """The ``minimodel`` module the script tests: the runner's bootstrap has already mapped it
    to the workspace copy and refused to start otherwise."""
    import minimodel

    return minimodel


def foreign_modules() -> list[tuple[str, str]]:
    """``[(module, where it came from)]`` for every loaded ``minimodel`` module whose file is
    not inside the workspace's copy (``$MINIMODEL_BREAK_WORKSPACE/minimodel``).

    A verdict is about the workspace: if the checks ran against another copy of the library
    (a workspace ``__init__.py`` that points ``__path__`` at the installed package, say), they
    did not check the learner's code, whatever they printed. A namespace package counts by its
    folders; a module with no file at all (made in memory) is not from the workspace either.
    """
    root = os.path.join(os.path.realpath(os.environ.get(WORKSPACE_ENV, "")), "minimodel")
    foreign = []
    for name, module in sorted(sys.modules.items()):
        if name != "minimodel" and not name.startswith("minimodel."):
            continue
        spec = getattr(module, "__spec__", None)
        files = ([module.__file__] if getattr(module, "__file__", None)
                 else list(getattr(spec, "submodule_search_locations", None) or []))
        outside = [f for f in files
                   if os.path.commonpath([root, os.path.realpath(f)]) != root]
        if outside or not files:
            foreign.append((name, outside[0] if outside else "(no file: made in memory)"))
    return foreign


class CheckFailed(AssertionError):
    """A failed behavioural check, with its message in both languages."""

    def __init__(self, en: str, es: str | None = None) -> None:
        super().__init__(tr(en, es if es is not None else en))


def calls_of(function: Callable[..., Any], call: Callable[[], Any]) -> int:
    """How many times ``function`` (a Python function) runs while ``call()`` runs.

    Counted by its code object through a profile hook, not by wrapping it: the dispatch table
    and the function stay exactly as the workspace made them.
    """
    code, calls = function.__code__, 0

    def profile(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is code:
            calls += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(previous)
    return calls


def require_kernel_runs(name: str, kernel_module: Any, call: Callable[[], Any]) -> None:
    """Raise :class:`CheckFailed` unless, with the kernels on, the composite ``name`` is
    replaced by a kernel defined in ``kernel_module`` (the workspace's kernel file) and that
    kernel runs while ``call()`` runs.

    A break whose bug lives in a kernel compares kernels on with kernels off. Once the kernel
    is unregistered (its ``@register_kernel`` line commented out) or never reached, both sides
    run the composite and agree, while the bug stays in the kernel's code: the comparison only
    means something when this holds too.
    """
    import minimodel.dispatch as dispatch  # the workspace's, imported after the bootstrap

    fix_en = "a fix keeps the kernel and corrects it"
    fix_es = "un arreglo conserva el kernel y lo corrige"
    kernel = dispatch.registered_kernels().get(name)
    if kernel is None:
        raise CheckFailed(f"the fast kernel for {name} is not registered: {fix_en}",
                          f"el kernel rápido de {name} no está registrado: {fix_es}")
    where = f"{getattr(kernel, '__module__', '?')}.{getattr(kernel, '__qualname__', kernel)}"
    if getattr(kernel, "__module__", None) != kernel_module.__name__ or \
            not hasattr(kernel, "__code__"):  # a Python function of the kernel's file
        raise CheckFailed(f"the kernel registered for {name} is {where}, not a function of "
                          f"{kernel_module.__name__}: {fix_en}",
                          f"el kernel registrado para {name} es {where}, no una función de "
                          f"{kernel_module.__name__}: {fix_es}")
    with dispatch.kernels(True):
        runs = calls_of(kernel, call)
    if runs == 0:
        raise CheckFailed(f"with the kernels on, {name} did not run its registered kernel "
                          f"{where}: {fix_en}",
                          f"con los kernels activados, {name} no ejecutó su kernel registrado "
                          f"{where}: {fix_es}")


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace(" | ", " / ")


class Checks:
    """Named checks of one break's invariants.

    ``@checks.case(id, en, es)`` registers a check (it does not run yet). Run as the check
    script, :meth:`finish` runs them all, prints one PASS/FAIL line each and exits 0 only if
    all passed. The experiment calls :meth:`failing` to decide whether the cause is still
    there, so ``break run`` and ``break check`` can never disagree.
    """

    def __init__(self) -> None:
        self.cases: list[tuple[str, str, Callable[[], None]]] = []
        given = os.environ.get(SEED_ENV, "").strip()
        self.seed = int(given) if given.isdigit() else int.from_bytes(os.urandom(4), "little")

    def case(self, check_id: str, en: str, es: str
             ) -> Callable[[Callable[[], None]], Callable[[], None]]:
        def register(fn: Callable[[], None]) -> Callable[[], None]:
            self.cases.append((check_id, _one_line(tr(en, es)), fn))
            return fn
        return register

    @staticmethod
    def _run_one(fn: Callable[[], None]) -> str | None:
        """None when the check holds, else what went wrong."""
        try:
            fn()
        except AssertionError as exc:
            return _one_line(str(exc)) or tr("assertion failed", "la aserción falló")
        except Exception as exc:  # noqa: BLE001 - a crash in the learner's code is a failure
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
            return tr(f"{type(exc).__name__} at {where}: {_one_line(str(exc))}",
                      f"{type(exc).__name__} en {where}: {_one_line(str(exc))}")
        return None

    def failing(self) -> list[tuple[str, str]]:
        """``[(check_id, message)]`` of the checks that do not hold, silently."""
        return [(check_id, problem) for check_id, _, fn in self.cases
                if (problem := self._run_one(fn)) is not None]

    def finish(self) -> NoReturn:
        passed = failed = 0
        for check_id, description, fn in self.cases:
            problem = self._run_one(fn)
            if problem is None:
                passed += 1
                print(f"PASS {TOKEN} {check_id} | {description}", flush=True)
            else:
                failed += 1
                print(f"FAIL {TOKEN} {check_id} | {description} | {problem}", flush=True)
        foreign = foreign_modules()  # after the checks: every module they imported counts
        for name, where in foreign:
            print(f"{FOREIGN} {TOKEN} {name} | {where}", flush=True)
        say(f"{passed} of {passed + failed} checks passed (seed {self.seed})",
            f"{passed} de {passed + failed} comprobaciones superadas (semilla {self.seed})")
        sys.exit(0 if not failed and passed and not foreign else 1)


def conclude(checks: Checks, story_failed: bool, symptom_en: str, symptom_es: str,
             ok_en: str, ok_es: str) -> None:
    """The last word of an experiment, read from the same invariants as ``break check``.

    The story's own measurement (``story_failed``) is one example; the invariants test the
    cause on fresh random sizes in every code path. The symptom text says only what was seen
    (the hints, not ``break run``, lead to the cause). "OK" is printed only when both agree, so
    a fix that merely hides the story's symptom gets a ``CAUSE REMAINS:`` line instead.
    """
    if story_failed:
        print(f"{SYMPTOM} {tr(symptom_en, symptom_es)}", flush=True)  # marker not translated
    elif checks.failing():
        print(CAUSE_REMAINS + " " + tr(
            "this example no longer shows the problem, but it is still there on other sizes "
            "or code paths (`minimodel break check` shows where)",
            "este ejemplo ya no muestra el problema, pero sigue ahí con otros tamaños o en "
            "otros caminos del código (`minimodel break check` muestra dónde)"), flush=True)
    else:
        say(ok_en, ok_es)
