"""The exercise judge: scan, run in the sandbox, compare with the reference, report.

Result (JSON contract of ``minimodel exercise check ID --file FILE --json``)::

    {"exercise": id, "passed": bool,
     "status": "passed" | "wrong" | "error" | "timeout" | "forbidden",
     "reason": finer cause of a failure ("shape", "dtype", "wrong", ...) or null,
     "seed": int, "tolerance": {"rtol", "atol", "rtol_float32", "atol_float32"},
     "timeout": seconds, "message": summary, "forbidden": [{"name", "line", "how"}],
     "hung_at": [...], "cases": [{"name", "hidden", "label", "status", "message", "inputs"}]}

A case passes when every output has the expected shape and dtype and
``|got - expected| <= atol + rtol * |expected|`` elementwise (``numpy.isclose``); float32
cases use the looser float32 tolerance. Shape and dtype problems get their own case status so
the learner knows to look at reshapes and casts before the maths.
"""

from __future__ import annotations

import copy
import secrets
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel.lab.exercises.astscan import (DEFAULT_ALLOWED_MODULES, DEFAULT_FORBIDDEN,
                                             DEFAULT_FORBIDDEN_OPS, scan_source)
from minimodel.lab.exercises.cases import Case, make_cases
from minimodel.lab.exercises.registry import Exercise, get_exercise
from minimodel.lab import integrity
from minimodel.lab.exercises import isolation
from minimodel.lab.exercises.sandbox import FORBIDDEN_EXIT, ChildRun, run_solution

MSG: dict[str, dict[str, str]] = {
    "ok": {"en": "matches within tolerance", "es": "coincide dentro de la tolerancia"},
    "n_outputs": {"en": "expected {want} outputs ({names}), got {got}",
                  "es": "se esperaban {want} salidas ({names}), se obtuvieron {got}"},
    "shape": {"en": "{name}: expected shape {want}, got {got}",
              "es": "{name}: forma esperada {want}, obtenida {got}"},
    "dtype": {"en": "{name}: expected dtype {want}, got {got} (keep the inputs' float dtype)",
              "es": "{name}: dtype esperado {want}, obtenido {got} (conserva el dtype de "
                    "las entradas)"},
    "nonfinite": {"en": "{name}: got {got} at index {idx}, expected {want}",
                  "es": "{name}: se obtuvo {got} en el índice {idx}, se esperaba {want}"},
    "wrong": {"en": "{name}: largest error {err:.3g} at index {idx}: expected {want:.8g}, "
                    "got {got:.8g}",
              "es": "{name}: mayor error {err:.3g} en el índice {idx}: se esperaba {want:.8g}, "
                    "se obtuvo {got:.8g}"},
    "sparse": {"en": "{name}: rows {rows} must be exactly zero (those ids are in no context)",
               "es": "{name}: las filas {rows} deben ser exactamente cero (esos ids no están "
                     "en ningún contexto)"},
    "raised": {"en": "raised {type}: {message}", "es": "lanzó {type}: {message}"},
    "not_run": {"en": "not run (the process stopped earlier)",
                "es": "no ejecutado (el proceso se detuvo antes)"},
    "timeout": {"en": "still running after {timeout:g} s", "es": "seguía en marcha tras {timeout:g} s"},
    "forbidden_static": {"en": "uses {name} (line {line}), which this exercise forbids",
                         "es": "usa {name} (línea {line}), prohibido en este ejercicio"},
    "forbidden_runtime": {"en": "{name} was used at run time ({how}); this exercise forbids it",
                          "es": "se usó {name} durante la ejecución ({how}); este ejercicio lo "
                                "prohíbe"},
    "load_error": {"en": "could not load the file: {type}: {message}",
                   "es": "no se pudo cargar el archivo: {type}: {message}"},
    "crashed": {"en": "the process ended abruptly (exit code {code})",
                "es": "el proceso terminó de golpe (código de salida {code})"},
    "memory": {"en": "the process ran out of its memory limit ({mb} MB)",
               "es": "el proceso agotó su límite de memoria ({mb} MB)"},
    "summary": {"en": "{passed} of {total} cases passed", "es": "{passed} de {total} casos correctos"},
    "file_is_folder": {"en": "solution file {path} is a folder; pass the .py file inside it "
                             "with --file",
                       "es": "el archivo de solución {path} es una carpeta; pasa con --file el "
                             "archivo .py que contiene"},
    "file_missing": {"en": "solution file {path} does not exist; create it with "
                           "`minimodel exercise start {id} --file {path}`",
                     "es": "el archivo de solución {path} no existe; créalo con "
                           "`minimodel exercise start {id} --file {path}`"},
    "file_not_utf8": {"en": "solution file {path} is not a UTF-8 Python source file (byte "
                            "{byte} at position {pos} is not UTF-8); pass the .py file with your "
                            "function, saved as UTF-8 text",
                      "es": "el archivo de solución {path} no es un archivo fuente de Python en "
                            "UTF-8 (el byte {byte} en la posición {pos} no es UTF-8); pasa el "
                            "archivo .py con tu función, guardado como texto UTF-8"},
    "no_function": {"en": "the file defines no function named {function!r}",
                    "es": "el archivo no define ninguna función llamada {function!r}"},
    "needs_torch": {"en": "FRAMEWORK = 'torch' needs `import torch` at the top of the file",
                    "es": "FRAMEWORK = 'torch' necesita `import torch` al principio del archivo"},
    "stub": {"en": "the starter stub is not filled in yet: replace "
                   "`raise NotImplementedError(...)` with your code ({passed} of {total} cases "
                   "passed)",
             "es": "el esqueleto inicial aún está sin completar: sustituye `raise "
                   "NotImplementedError(...)` por tu código ({passed} de {total} casos correctos)"},
}


# Load errors the sandboxed child reports with a "key" (it knows no language).
LOAD_ERRORS = ("no_function", "needs_torch")


def msg(key: str, lang: str, **kw: Any) -> str:
    table = MSG[key]
    return (table.get(lang) or table["en"]).format(**kw)


def _how(event: dict[str, Any], lang: str) -> str:
    """``call`` / ``import``, plus the solution's line when the tripwire could see it."""
    line = event.get("line")
    return event["how"] + (f", {'línea' if lang == 'es' else 'line'} {line}" if line else "")


def forbidden_names(ex: Exercise) -> list[str]:
    """Default forbidden APIs plus the exercise's own list."""
    return list(dict.fromkeys(DEFAULT_FORBIDDEN + list(ex.forbidden)))


def exercise_files(ex: Exercise) -> list[Path]:
    """What a verdict on ``ex`` depends on: its definition, its reference, the child harness
    and the case generators (checked against the manifest before grading)."""
    here = Path(__file__).resolve().parent
    return [ex.folder / "exercise.yaml", ex.reference_path, here / "_child.py",
            here / "_child_guard.py", here / "cases.py"]


def forbidden_ops(ex: Exercise) -> list[str]:
    """torch operators refused at the dispatcher: the defaults plus the exercise's."""
    return list(dict.fromkeys(DEFAULT_FORBIDDEN_OPS + list(ex.forbidden_ops)))


def allowed_modules(ex: Exercise) -> list[str]:
    return list(dict.fromkeys(DEFAULT_ALLOWED_MODULES + list(ex.allowed_modules)))


def build_cases(ex: Exercise, seed: int, examples: int | None = None) -> list[Case]:
    """The cases of ``ex`` for ``seed``, each with every argument in the declared order (an
    optional argument the case leaves out gets its default, e.g. ``weight=None``)."""
    spec = ex.cases
    cases = make_cases(spec["generator"], seed,
                       spec.get("examples", 2) if examples is None else examples,
                       spec.get("params"))
    for case in cases:
        missing = [a for a in ex.args if a not in case.args and a not in ex.defaults]
        if missing:
            raise ValueError(f"{ex.id}: case generator gave no {missing} (and no default)")
        case.args = {a: case.args[a] if a in case.args else ex.defaults[a] for a in ex.args}
    return cases


def expected_outputs(ex: Exercise, cases: list[Case]) -> list[list[np.ndarray]]:
    """Run the trusted reference in this process, on copies so it cannot alter the inputs."""
    fn = ex.reference_function()
    results = []
    for case in cases:
        out = fn(*copy.deepcopy(list(case.args.values())))
        outs = list(out) if len(ex.outputs) > 1 else [out]
        results.append([np.asarray(o) for o in outs])
    return results


def _fmt_index(idx: tuple) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]" if idx else "[]"


def compare_case(ex: Exercise, expected: list[np.ndarray], got: list[np.ndarray],
                 python_scalar: list[bool], lang: str) -> tuple[str, str]:
    """``(status, message)`` for one case: shape, then dtype, then values."""
    names = [o["name"] for o in ex.outputs]
    if len(got) != len(expected):
        return "shape", msg("n_outputs", lang, want=len(expected), names=", ".join(names),
                            got=len(got))
    tol = ex.full_tolerance()
    for spec, want, have, is_py in zip(ex.outputs, expected, got, python_scalar + [False] * 9):
        name = spec["name"]
        if have.shape != want.shape:
            return "shape", msg("shape", lang, name=name, want=want.shape, got=have.shape)
        # A 0-d result (a loss, a rank) may come back as a Python number; an array keeps the
        # expected dtype (a float64 0-d array for float32 inputs is a dtype error).
        if have.dtype != want.dtype and not (is_py and want.ndim == 0):
            return "dtype", msg("dtype", lang, name=name, want=want.dtype, got=have.dtype)
        single = want.dtype == np.float32 or have.dtype == np.float32
        rtol = tol["rtol_float32"] if single else tol["rtol"]
        atol = tol["atol_float32"] if single else tol["atol"]
        want64, have64 = want.astype(np.float64), have.astype(np.float64)
        if spec.get("sparse_rows") and want.ndim == 2:  # zero rows must stay exactly zero
            extra = np.flatnonzero(~np.any(want64 != 0, axis=1) & np.any(have64 != 0, axis=1))
            if extra.size:
                return "wrong", msg("sparse", lang, name=name, rows=extra[:8].tolist())
        close = np.isclose(have64, want64, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            bad = ~close
            err = np.where(bad, np.abs(have64 - want64), -1.0)
            err = np.where(np.isnan(err), np.inf, err)
            idx = np.unravel_index(int(np.argmax(err)), want.shape) if want.ndim else ()
            if not np.isfinite(have64[idx]):
                return "wrong", msg("nonfinite", lang, name=name, got=have64[idx],
                                    idx=_fmt_index(idx), want=f"{want64[idx]:.8g}")
            return "wrong", msg("wrong", lang, name=name, err=float(err[idx]),
                                idx=_fmt_index(idx), want=float(want64[idx]),
                                got=float(have64[idx]))
    return "passed", msg("ok", lang)


def _case_entry(case: Case, status: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"name": case.name, "hidden": case.hidden, "label": case.label, "status": status,
            "message": message, "inputs": case.describe_inputs(), **extra}


def _judge_run(ex: Exercise, cases: list[Case], run: ChildRun, lang: str,
               timeout: float) -> tuple[str, str, list[dict[str, Any]]]:
    """Turn the child's events into (overall status, message, case entries)."""
    expected = expected_outputs(ex, cases)
    case_events = {ev["index"]: ev for ev in run.events if ev.get("event") == "case"}
    forbidden = [ev for ev in run.events if ev.get("event") == "forbidden"]
    load_error = next((ev for ev in run.events if ev.get("event") == "load_error"), None)
    finished = any(ev.get("event") == "done" for ev in run.events)
    entries, statuses, stopped_at = [], [], None
    for i, case in enumerate(cases):
        ev = case_events.get(i)
        if ev is None:
            if stopped_at is None and not load_error:
                stopped_at = i  # the case that was running when the child stopped
            if i == stopped_at and forbidden:
                status, text = "forbidden", msg("forbidden_runtime", lang,
                                                name=forbidden[0]["name"],
                                                how=_how(forbidden[0], lang))
            elif i == stopped_at and run.timed_out:
                status, text = "timeout", msg("timeout", lang, timeout=timeout)
            elif i == stopped_at and not finished and run.out_of_memory:
                status, text = "error", msg("memory", lang, mb=ex.memory_mb)
            elif i == stopped_at and not finished:
                status, text = "error", msg("crashed", lang, code=run.returncode)
            else:
                status, text = "not run", msg("not_run", lang)
            entries.append(_case_entry(case, status, text, where=run.hung_at[:3]
                                       if status == "timeout" else []))
        elif not ev["ok"]:
            status = "error"
            entries.append(_case_entry(case, status, msg("raised", lang, type=ev["type"],
                                                         message=ev["message"]),
                                       where=ev.get("where", [])))
        else:
            status, text = compare_case(ex, expected[i], run.outputs[i],
                                        ev.get("python_scalar", []), lang)
            entries.append(_case_entry(case, status, text))
        statuses.append(status)

    if forbidden:
        return "forbidden", msg("forbidden_runtime", lang, name=forbidden[0]["name"],
                                how=_how(forbidden[0], lang)), entries
    if run.timed_out:
        where = "; ".join(run.hung_at[:1])
        return "timeout", msg("timeout", lang, timeout=timeout) + (f" ({where})" if where else
                                                                    ""), entries
    if load_error:
        key = load_error.get("key")  # the child's own messages, in English: said in lang here
        message = (msg(key, lang, function=ex.function) if key in LOAD_ERRORS
                   else load_error["message"])
        return "error", msg("load_error", lang, type=load_error["type"],
                            message=message), entries
    passed = statuses.count("passed")
    summary = msg("summary", lang, passed=passed, total=len(cases))
    if not finished and run.returncode == FORBIDDEN_EXIT:  # a violation whose report was lost
        return "forbidden", msg("forbidden_runtime", lang, name="?", how="runtime"), entries
    if not finished:
        why = msg("memory", lang, mb=ex.memory_mb) if run.out_of_memory else \
            msg("crashed", lang, code=run.returncode)
        return "error", f"{why}; {summary}", entries
    if "error" in statuses:
        if all(e["status"] == "error" and "NotImplementedError" in e["message"]
               for e in entries):
            return "error", msg("stub", lang, passed=passed, total=len(cases)), entries
        return "error", summary, entries
    if passed < len(cases):
        return "wrong", summary, entries
    return "passed", summary, entries


def check_solution(exercise: Exercise | str, file: str | Path | None = None, *,
                   source: str | None = None, seed: int | None = None,
                   timeout: float | None = None, lang: str = "en",
                   progress: Callable[[int, int, float, float], None] | None = None
                   ) -> dict[str, Any]:
    """Judge one solution file (or ``source`` text) for ``exercise``; returns the result dict.

    Args:
        exercise: an :class:`Exercise` or its id.
        file: path of the learner's ``.py`` file.
        source: the file's text instead of ``file`` (used by validation).
        seed: seed of the hidden cases; a fresh random one (reported) when None.
        timeout: wall-clock limit in seconds; the exercise's own default when None.
        lang: "en" or "es" for the messages.
        progress: optional ``progress(cases_done, cases_total, elapsed_s, timeout_s)`` called
            while the solution runs (see :func:`run_solution`).
    """
    ex = get_exercise(exercise, lang) if isinstance(exercise, str) else exercise
    if source is None:
        if file is None:
            raise ValueError("give the solution as file=PATH or source=TEXT")
        path = Path(file)
        if path.is_dir():
            raise IsADirectoryError(msg("file_is_folder", lang, path=path))
        if not path.is_file():
            raise FileNotFoundError(msg("file_missing", lang, path=path, id=ex.id))
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:  # a binary file, or text in another encoding
            byte = f"0x{exc.object[exc.start]:02x}" if exc.start < len(exc.object) else "?"
            raise ValueError(msg("file_not_utf8", lang, path=path, byte=byte,
                                 pos=exc.start)) from None
    shown_as = str(file) if file is not None else "solution.py"
    seed = secrets.randbelow(1_000_000) if seed is None else int(seed)
    timeout = float(timeout if timeout is not None else ex.timeout)
    result: dict[str, Any] = {"exercise": ex.id, "passed": False, "status": "error",
                              "reason": None, "seed": seed, "tolerance": ex.full_tolerance(),
                              "timeout": timeout, "file": shown_as, "message": "",
                              "forbidden": [], "hung_at": [], "cases": [],
                              **isolation.probe().as_dict()}

    findings = scan_source(source, forbidden_names(ex))
    if findings:
        first = findings[0]
        result.update(status="forbidden", reason="forbidden",
                      forbidden=[f.as_dict() for f in findings],
                      message=msg("forbidden_static", lang, name=first.name, line=first.line))
        return result

    integrity.verify(exercise_files(ex))  # the reference and the harness are what was shipped
    cases = build_cases(ex, seed)
    run = run_solution(source, shown_as, ex.function, cases, len(ex.outputs),
                       forbidden_names(ex), timeout, progress=progress,
                       allowed_modules=allowed_modules(ex), forbidden_ops=forbidden_ops(ex),
                       memory_mb=ex.memory_mb)
    status, message, entries = _judge_run(ex, cases, run, lang, timeout)
    reason = next((e["status"] for e in entries if e["status"] not in ("passed", "not run")),
                  None)
    result.update(status=status, passed=status == "passed", message=message, cases=entries,
                  reason=reason if status != "passed" else None, hung_at=run.hung_at,
                  forbidden=[{"name": ev["name"], "line": ev.get("line"),
                              "how": ev.get("how", "runtime")}
                             for ev in run.events if ev.get("event") == "forbidden"],
                  duration_s=round(run.duration, 3), **run.isolation)
    if status in ("error", "timeout") and not any(e.get("where") for e in entries):
        result["stderr_tail"] = run.stderr_tail
    return result
