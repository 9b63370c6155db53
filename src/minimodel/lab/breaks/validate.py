"""``validate_all()``: every break still works against the *current* library source.

The library keeps changing (performance work, refactors), and a break is a patch against it,
so each break is exercised end to end in a temporary workspace:

1. the text is complete in English and Spanish and no Spanish text is stale;
2. the bug patch applies to the current library;
3. the experiment exits with its declared code and prints the symptom marker;
4. the checks FAIL on the broken workspace (with at least one FAIL line, not a crash);
5. the fix diff (our difflib diff, applied by our own patch code) restores the original library
   text exactly, the checks PASS and the experiment no longer prints the symptom;
6. ``reset`` brings back the just-started files (manifest), and the same fix applied by the
   real ``patch -p1`` command (when it is on PATH) gives the library text byte for byte
   (hence the same passing checks as in step 5).
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minimodel.lab.breaks.catalog import Break, load_all, structure_problems
from minimodel.lab.patching import PatchError, apply_patch_to_texts
from minimodel.lab.breaks.runner import ScriptRun, is_fixed, run_script
from minimodel.lab.breaks.workspace import (Workspace, WorkspaceError, installed_package_dir,
                                            start)
from minimodel.lab.subprocess_runner import clean_env, run_child


def _tail(run: ScriptRun) -> str:
    if run.timed_out:
        return f"timed out after {run.seconds:.0f} s"
    lines = run.stderr_tail(4) or run.stdout.strip().splitlines()[-4:]
    return f"exit code {run.returncode}: " + " / ".join(lines)


def apply_fix_with_own_code(ws: Workspace) -> list[str]:
    """Apply ``ws.fix_diff()`` with our patch code; returns the patched paths."""
    diff = ws.fix_diff()
    texts = {rel: (ws.root / rel).read_text(encoding="utf-8") for rel in ws.state["patched_files"]}
    new = apply_patch_to_texts(diff, texts, strip=1)
    for rel, text in new.items():
        (ws.root / rel).write_bytes(text.encode("utf-8"))
    return sorted(new)


def apply_fix_with_patch_command(ws: Workspace) -> str | None:
    """Apply ``ws.fix_diff()`` with ``patch -p1 -d DIR``; None when patch is not installed,
    else "" on success or patch's complaint."""
    exe = shutil.which("patch")
    if exe is None:
        return None
    done = run_child([exe, "-p1", "--batch", "--forward", "-d", ws.root], timeout=60,
                     env=clean_env(), stdin_text=ws.fix_diff())
    if done.timed_out:
        return "`patch` did not finish within 60 s"
    if done.returncode != 0:
        return (done.stdout + done.stderr).strip() or f"exit code {done.returncode}"
    return ""


def validate_break(brk: Break, use_patch_command: bool = True,
                   package_dir: Path | None = None) -> list[str]:
    """Problems of one break (an empty list when it is sound).

    ``package_dir`` is the library to validate against (default: the imported minimodel).
    """
    problems = structure_problems(brk)
    if any(not brk.path(role).is_file() for role in ("patch", "experiment", "check")):
        return problems
    where = f"break {brk.id}"
    package_dir = (package_dir or installed_package_dir()).resolve()
    with tempfile.TemporaryDirectory(prefix=f"minimodel-break-{brk.id}-") as tmp:
        try:
            ws = start(brk, Path(tmp) / "ws", lang="en", package_dir=package_dir)
        except (PatchError, WorkspaceError) as exc:
            return problems + [f"{where}: the bug patch no longer applies to the current "
                               f"library ({exc}); regenerate {brk.files['patch']}"]
        experiment, check = brk.path("experiment"), brk.path("check")

        run = run_script(ws.root, experiment, "en", brk.timeout)
        if run.returncode != brk.experiment_exit_code:
            problems.append(f"{where}: the experiment exited with {run.returncode}, declared "
                            f"{brk.experiment_exit_code} ({_tail(run)})")
        if not run.symptom_lines(brk.symptom_marker):
            problems.append(f"{where}: the experiment on the broken workspace printed no "
                            f"{brk.symptom_marker!r} line")
        broken = run_script(ws.root, check, "es", brk.timeout)
        if is_fixed(broken):
            problems.append(f"{where}: the checks PASS on the broken workspace; they must fail "
                            "while the bug is present")
        elif not any(not c["ok"] for c in broken.checks):
            problems.append(f"{where}: the checks on the broken workspace reported no FAIL "
                            f"line (crashed? {_tail(broken)})")

        try:
            apply_fix_with_own_code(ws)
        except PatchError as exc:
            return problems + [f"{where}: the fix diff does not apply with our patch code: {exc}"]
        for rel in ws.state["patched_files"]:
            if (ws.root / rel).read_bytes() != (package_dir.parent / rel).read_bytes():
                problems.append(f"{where}: after the fix diff, {rel} differs from the library")
        fixed = run_script(ws.root, check, "en", brk.timeout)
        if not is_fixed(fixed):
            failed = [f"{c['id']}: {c['message']}" for c in fixed.checks if not c["ok"]]
            problems.append(f"{where}: the checks do not pass after the fix diff "
                            f"({'; '.join(failed) or _tail(fixed)})")
        after = run_script(ws.root, experiment, "es", brk.timeout)
        if after.returncode != brk.experiment_exit_code:
            problems.append(f"{where}: the experiment on the fixed workspace exited with "
                            f"{after.returncode} ({_tail(after)})")
        if after.symptom_lines(brk.symptom_marker):
            problems.append(f"{where}: the experiment still prints {brk.symptom_marker!r} after "
                            f"the fix: {after.symptom_lines(brk.symptom_marker)[0]}")

        ws.reset()
        if not ws.matches_manifest():
            problems.append(f"{where}: reset did not restore the start manifest")
        if use_patch_command:
            outcome = apply_fix_with_patch_command(ws)
            if outcome:
                problems.append(f"{where}: `patch -p1` refused the fix diff: {outcome}")
            elif outcome == "":
                # Same bytes as after our own patch code (checked above to pass), so the
                # checks need not run a third time.
                for rel in ws.state["patched_files"]:
                    if (ws.root / rel).read_bytes() != (package_dir.parent / rel).read_bytes():
                        problems.append(f"{where}: after `patch -p1`, {rel} differs from the "
                                        "library")
    return problems


def validate_all(use_patch_command: bool = True, workers: int = 2) -> list[str]:
    """Problems across every break; ``[]`` means the catalogue is sound.

    Breaks are validated in parallel (each in its own temporary workspace and child
    processes), which roughly halves the wall time on a two-core machine.
    """
    try:
        breaks = load_all()
    except ValueError as exc:
        return [str(exc)]
    if not breaks:
        return ["no breaks found in minimodel/lab/content/breaks"]
    problems: list[str] = []
    ids = [b.id for b in breaks]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"break id {dup!r} is used by more than one folder")
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for found in pool.map(lambda b: validate_break(b, use_patch_command), breaks):
            problems.extend(found)
    return problems
