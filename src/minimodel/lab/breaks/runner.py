"""Run a break's experiment or checks in a child process against a workspace copy.

The child is ``python -B -c BOOTSTRAP SCRIPT`` with ``cwd=DIR`` and ``PYTHONPATH=DIR`` (and
nothing else on it), so ``import minimodel`` finds ``DIR/minimodel`` — the broken copy — and not
the installed package. The bootstrap verifies that before running the script, and exits with
code 97 otherwise. ``-B`` keeps ``__pycache__`` out of the workspace; one BLAS thread keeps tiny
experiments fast and repeatable on a busy machine. Starting, time limit and output capture
are :func:`minimodel.lab.subprocess_runner.run_child`'s.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from minimodel.lab.breaks.harness import LANG_ENV, SYMPTOM, WORKSPACE_ENV, WRONG_COPY_EXIT
from minimodel.lab.subprocess_runner import clean_env, run_child

BOOTSTRAP = f"""\
import os, runpy, sys
workspace = os.path.realpath(os.environ[{WORKSPACE_ENV!r}])
sys.path.insert(0, workspace)
import minimodel
where = os.path.realpath(os.path.dirname(minimodel.__file__))
if where != os.path.join(workspace, "minimodel"):
    sys.stderr.write("error: `import minimodel` found %s instead of the workspace copy %s\\n"
                     % (where, os.path.join(workspace, "minimodel")))
    sys.exit({WRONG_COPY_EXIT})
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""

_CHECK_LINE = re.compile(r"^(PASS|FAIL) (\S+) \| (.*?)(?: \| (.*))?$")


@dataclass
class ScriptRun:
    """Outcome of one child run."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    checks: list[dict[str, Any]] = field(default_factory=list)

    def symptom_lines(self, marker: str = SYMPTOM) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(marker)]

    def stderr_tail(self, lines: int = 12) -> list[str]:
        return self.stderr.strip().splitlines()[-lines:]


def child_env(workdir: Path, lang: str) -> dict[str, str]:
    """A clean environment whose only Python path is the workspace."""
    return clean_env(keep=("PATH", "HOME", "TMPDIR", "SYSTEMROOT"), PYTHONPATH=str(workdir),
                     PYTHONDONTWRITEBYTECODE="1", **{WORKSPACE_ENV: str(workdir), LANG_ENV: lang})


def run_script(workdir: str | os.PathLike, script: str | os.PathLike, lang: str = "en",
               timeout: float = 120.0, echo: Callable[[str], None] | None = None) -> ScriptRun:
    """Run ``script`` against the workspace ``workdir``; never raises for the script's errors.

    With ``echo``, every stdout line is passed to it as soon as the child prints it (an
    experiment that trains for a few seconds shows its progress instead of a silent wait).
    """
    workdir = Path(workdir).resolve()
    done = run_child([sys.executable, "-B", "-c", BOOTSTRAP, str(script)], cwd=workdir,
                     env=child_env(workdir, lang), timeout=timeout, on_line=echo)
    run = ScriptRun(None if done.timed_out else done.returncode, done.stdout, done.stderr,
                    done.seconds, timed_out=done.timed_out)
    run.checks = parse_checks(run.stdout)
    return run


def parse_checks(stdout: str) -> list[dict[str, Any]]:
    """The PASS/FAIL lines of a check script as ``[{"id", "ok", "description", "message"}]``."""
    out = []
    for line in stdout.splitlines():
        match = _CHECK_LINE.match(line.rstrip())
        if match:
            status, check_id, description, message = match.groups()
            out.append({"id": check_id, "ok": status == "PASS", "description": description,
                        "message": message or ""})
    return out


def check_details(run: ScriptRun, lang: str = "en") -> list[dict[str, Any]]:
    """Per-check details, plus one synthetic entry when the script crashed or timed out."""
    from minimodel.lab.breaks.messages import t

    details = list(run.checks)
    if run.timed_out:
        details.append({"id": "timeout", "ok": False, "description": t("check_timeout", lang),
                        "message": t("check_timeout_msg", lang, seconds=run.seconds)})
    elif run.returncode != 0 and all(d["ok"] for d in details):
        tail = " / ".join(run.stderr_tail(3)) or f"exit code {run.returncode}"
        details.append({"id": "crashed", "ok": False,
                        "description": t("check_crashed", lang), "message": tail})
    return details


def is_fixed(run: ScriptRun) -> bool:
    """Fixed = the checks exited 0, reported at least one PASS and no FAIL."""
    return (not run.timed_out and run.returncode == 0 and bool(run.checks)
            and all(c["ok"] for c in run.checks))
