"""``validate_all()``: every break still works against the *current* library source.

The library keeps changing and a break is a patch against it, so each break is exercised end
to end in a temporary workspace: its fields and files are there; the bug patch applies; the
experiment exits 0 and prints ``SYMPTOM:``; exactly the invariants named in ``fails_under_bug``
FAIL (a check that silently stopped working is caught even while another one fails); every
fake fix (``fakes/NAME.patch``, on top of the bug) fails some invariant and leaves a symptom;
the fix diff, applied by our patch code and by ``patch -p1`` when installed, restores the
library byte for byte, after which the checks PASS and the symptom is gone; ``reset`` brings
back the start manifest; and nothing the learner sees before the second hint (the surface:
:mod:`.surface`) names the cause. The invariants draw fresh random sizes on every run; a problem names
the seed, which ``minimodel break check --seed N`` replays.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minimodel.lab.breaks.catalog import FILES, Break, load_all, structure_problems
from minimodel.lab.breaks.harness import CAUSE_REMAINS, SYMPTOM
from minimodel.lab.breaks.surface import surface_problems
from minimodel.lab.patching import PatchError, apply_patch_to_texts, parse_patch
from minimodel.lab.breaks.runner import ScriptRun, is_fixed, run_script
from minimodel.lab.breaks.tamper import scan_file
from minimodel.lab.breaks.workspace import (Workspace, WorkspaceError, installed_package_dir,
                                            start)
from minimodel.lab.subprocess_runner import clean_env, run_child


def _tail(run: ScriptRun) -> str:
    if run.timed_out:
        return f"timed out after {run.seconds:.0f} s"
    lines = run.stderr_tail(4) or run.stdout.strip().splitlines()[-4:]
    return f"exit code {run.returncode}: " + " / ".join(lines)


def apply_diff_with_own_code(ws: Workspace, diff: str) -> None:
    """Apply a ``a/minimodel/...`` diff to the workspace with our patch code."""
    texts = {fp.target(1): (ws.root / fp.target(1)).read_text(encoding="utf-8")
             for fp in parse_patch(diff)}
    for rel, text in apply_patch_to_texts(diff, texts, strip=1).items():
        (ws.root / rel).write_bytes(text.encode("utf-8"))


def _differ_from_library(ws: Workspace, package_dir: Path) -> list[str]:
    """The patched files of ``ws`` whose bytes are not the library's."""
    return [rel for rel in ws.patched_files()
            if (ws.root / rel).read_bytes() != (package_dir.parent / rel).read_bytes()]


def _patch_command_problems(ws: Workspace, where: str, package_dir: Path) -> list[str]:
    """``patch -p1 -d DIR`` applies the fix diff and gives the library's bytes (nothing to check
    when ``patch`` is not installed). The same bytes as after our own patch code, whose checks
    passed, so the checks need not run a third time."""
    exe = shutil.which("patch")
    if exe is None:
        return []
    done = run_child([exe, "-p1", "--batch", "--forward", "-d", ws.root], timeout=60,
                     env=clean_env(), stdin_text=ws.fix_diff())
    if done.timed_out or done.returncode != 0:
        said = ("`patch` did not finish within 60 s" if done.timed_out
                else (done.stdout + done.stderr).strip() or f"exit code {done.returncode}")
        return [f"{where}: `patch -p1` refused the fix diff: {said}"]
    return [f"{where}: after `patch -p1`, {rel} differs from the library"
            for rel in _differ_from_library(ws, package_dir)]


def validate_break(brk: Break, package_dir: Path | None = None,
                   warnings: list[str] | None = None) -> list[str]:
    """Problems of one break (an empty list when it is sound).

    ``package_dir`` is the library to validate against (default: the imported minimodel).
    The surface before rung 2 is searched for the break's secret and cause words
    (:mod:`.surface`), with the experiment's output on the broken workspace; the findings
    that are only warnings are appended to ``warnings`` when it is given.
    """
    problems = structure_problems(brk)
    if any(not brk.path(role).is_file() for role in FILES):
        return problems
    where = f"break {brk.id}"
    package_dir = (package_dir or installed_package_dir()).resolve()
    problems += _fix_looks_like_tampering(brk, package_dir)
    with tempfile.TemporaryDirectory(prefix=f"minimodel-break-{brk.id}-") as tmp:
        try:
            ws = start(brk, Path(tmp) / "ws", lang="en", package_dir=package_dir)
        except (PatchError, WorkspaceError) as exc:
            return problems + [f"{where}: the bug patch no longer applies to the current "
                               f"library ({exc}); regenerate {FILES['patch']}"]
        experiment, check = brk.path("experiment"), brk.path("check")

        run = run_script(ws.root, experiment, "en", brk.timeout)
        if run.returncode != 0:
            problems.append(f"{where}: the experiment exited with {run.returncode}, not 0 "
                            f"({_tail(run)})")
        if not run.symptom_lines():
            problems.append(f"{where}: the experiment on the broken workspace printed no "
                            f"{SYMPTOM!r} line")
        leaks, noted = surface_problems(brk, ws.root, run.stdout)
        problems += leaks
        if warnings is not None:
            warnings += noted
        problems += _declared_failures(brk, run_script(ws.root, check, "es", brk.timeout))
        for fake in brk.fakes:
            problems += _fake_rejected(brk, ws, fake["name"])

        try:
            apply_diff_with_own_code(ws, ws.fix_diff())
        except PatchError as exc:
            return problems + [f"{where}: the fix diff does not apply with our patch code: {exc}"]
        problems += [f"{where}: after the fix diff, {rel} differs from the library"
                     for rel in _differ_from_library(ws, package_dir)]
        fixed = run_script(ws.root, check, "en", brk.timeout)
        if not is_fixed(fixed):
            failed = [f"{c['id']}: {c['message']}" for c in fixed.checks if not c["ok"]]
            problems.append(f"{where}: the checks do not pass after the fix diff "
                            f"({'; '.join(failed) or _tail(fixed)}){_seed(fixed)}")
        after = run_script(ws.root, experiment, "es", brk.timeout)
        if after.returncode != 0:
            problems.append(f"{where}: the experiment on the fixed workspace exited with "
                            f"{after.returncode} ({_tail(after)})")
        if after.symptom_lines() or after.cause_remains():
            problems.append(f"{where}: the experiment still reports a problem after the fix: "
                            f"{(after.symptom_lines() or after.symptom_lines(CAUSE_REMAINS))[0]}")

        try:
            ws.reset()  # raises unless the start manifest is back
        except WorkspaceError as exc:
            return problems + [f"{where}: reset did not restore the start manifest ({exc})"]
        return problems + _patch_command_problems(ws, where, package_dir)


def _fix_looks_like_tampering(brk: Break, package_dir: Path) -> list[str]:
    """The real fix (the library's own text) must pass ``break check``'s tampering scan: a bug
    patch that removes a name the scan watches (``sys``, ``exit``...) would make the learner's
    correct fix be refused."""
    try:
        library = {fp.target(1): (package_dir.parent / fp.target(1)).read_text(encoding="utf-8")
                   for fp in parse_patch(brk.patch_text)}
        broken = apply_patch_to_texts(brk.patch_text, library)
    except (OSError, PatchError):
        return []          # reported below, when the bug patch is applied to a workspace
    return [f"break {brk.id}: the fix restores {finding.name!r} in {rel}, which `break check` "
            "refuses as tampering; plant the bug without removing that name"
            for rel, text in broken.items() for finding in scan_file(rel, library[rel], text)]


def _no_verdict(brk: Break, run: ScriptRun) -> str:
    """Why a check script printed no PASS/FAIL line, with the fix: the usual authoring slip
    is a script that never calls ``checks.finish()``, which runs the invariants and prints
    the verdicts (it then ends quietly with exit code 0: nothing crashed)."""
    script = brk.path("check")
    if ".finish()" not in script.read_text(encoding="utf-8"):
        return (f"{script.name} never calls checks.finish(), so its invariants never ran and "
                "it printed no PASS/FAIL line; end the script with the footer\n\n"
                "    if __name__ == \"__main__\":\n        checks.finish()\n")
    return f"{script.name} printed no PASS/FAIL line ({_tail(run)})"


def _seed(run: ScriptRun) -> str:
    return f" (seed {run.seed}: `minimodel break check --seed {run.seed}` replays it)"


def _declared_failures(brk: Break, broken: ScriptRun) -> list[str]:
    """Exactly the invariants in ``fails_under_bug`` fail on the broken workspace."""
    where = f"break {brk.id}"
    if not broken.checks:
        return [f"{where}: on the broken workspace, {_no_verdict(brk, broken)}"]
    ids = [c["id"] for c in broken.checks]
    problems = [f"{where}: fails_under_bug names {name!r}, which is not one of its invariants "
                f"{ids}" for name in brk.fails_under_bug if name not in ids]
    for c in broken.checks:
        declared = c["id"] in brk.fails_under_bug
        if declared and c["ok"]:
            problems.append(f"{where}: invariant {c['id']!r} PASSES on the broken workspace, but "
                            f"the break declares that the bug breaks it{_seed(broken)}")
        elif not declared and not c["ok"]:
            problems.append(f"{where}: invariant {c['id']!r} FAILS on the broken workspace "
                            f"without being declared in fails_under_bug: {c['message']}"
                            f"{_seed(broken)}")
    return problems


def _fake_rejected(brk: Break, ws: Workspace, name: str) -> list[str]:
    """One fake fix, on top of the bug: some invariant fails, the experiment still complains."""
    where = f"break {brk.id} fake {name!r}"
    ws.reset()
    try:
        apply_diff_with_own_code(ws, brk.fake_path(name).read_text(encoding="utf-8"))
    except (OSError, PatchError) as exc:
        return [f"{where}: does not apply to the broken library ({exc}); regenerate it with "
                "scripts/make_break_fakes.py"]
    problems = []
    checked = run_script(ws.root, brk.path("check"), "en", brk.timeout)
    if is_fixed(checked):
        problems.append(f"{where}: the invariants ACCEPT this fake fix{_seed(checked)}")
    elif not checked.checks:
        problems.append(f"{where}: {_no_verdict(brk, checked)}")
    elif not any(not c["ok"] for c in checked.checks):
        problems.append(f"{where}: the invariants crashed instead of failing ({_tail(checked)})")
    story = run_script(ws.root, brk.path("experiment"), "en", brk.timeout)
    if not story.symptom_lines() and not story.cause_remains():
        problems.append(f"{where}: the experiment prints neither {SYMPTOM!r} nor "
                        f"{CAUSE_REMAINS!r} under this fake fix, so `break run` would look "
                        f"fixed{_seed(story)}")
    ws.reset()
    return problems


def validate_all(workers: int = 2, warnings: list[str] | None = None) -> list[str]:
    """Problems across every break; ``[]`` means the catalogue is sound. The surface
    findings that are only warnings go to ``warnings`` when it is given.

    Breaks are validated in parallel (each in its own temporary workspace and child
    processes), which roughly halves the wall time on a two-core machine.
    """
    try:
        breaks = load_all()
    except ValueError as exc:
        return [str(exc)]
    if not breaks:
        return ["no breaks found in minimodel/lab/content/breaks"]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        noted: list[list[str]] = [[] for _ in breaks]
        found = list(pool.map(lambda pair: validate_break(pair[0], warnings=pair[1]),
                              zip(breaks, noted)))
    if warnings is not None:
        warnings += [w for ws in noted for w in ws]
    return [problem for problems in found for problem in problems]
