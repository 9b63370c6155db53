"""Run a break's experiment or checks in a child process against a workspace copy.

The child is ``python -I -B -c BOOTSTRAP SCRIPT`` with ``cwd=DIR``. The bootstrap

1. reads a one-time token from stdin (before any workspace code runs) and hands it to the
   harness, which prints it on every PASS/FAIL line; lines without it are not verdicts;
2. puts a private copy of the **installed** harness and the break's **installed** folder
   (experiment, invariants) first on ``sys.path``;
3. maps the ``minimodel`` package — and nothing else — to ``DIR/minimodel``, the learner's
   copy, with a meta-path finder; a file the learner drops in DIR cannot shadow numpy or the
   harness. It verifies that before running the script, and exits with code 97 otherwise.
   The finder loads the workspace from its ``.py`` sources only: nothing from or in a
   ``__pycache__`` folder, no sourceless ``.pyc``, no extension module, so every line that runs
   is one the tamper scan (:mod:`minimodel.lab.breaks.tamper`) reads.

``-B`` keeps ``__pycache__`` out of the workspace; one BLAS thread keeps tiny experiments fast
and repeatable on a busy machine. Starting, time limit and output capture are
:func:`minimodel.lab.subprocess_runner.run_child`'s.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from minimodel.lab.breaks.harness import (CAUSE_REMAINS, FOREIGN, LANG_ENV, SEED_ENV, SYMPTOM,
                                          WORKSPACE_ENV)
from minimodel.lab.subprocess_runner import ChildResult, clean_env, run_child
from minimodel.messages import say

HARNESS = Path(__file__).with_name("harness.py")
HARNESS_MODULE = "minimodel_break_harness"
WRONG_COPY_EXIT = 97

BOOTSTRAP = f"""\
import importlib.machinery, os, runpy, sys
token = sys.stdin.readline().strip()
workspace = os.path.realpath(os.environ[{WORKSPACE_ENV!r}])
harness_dir, script = sys.argv[1], sys.argv[2]
sys.path[:0] = [harness_dir, os.path.dirname(os.path.realpath(script))]


class SourceOnly(importlib.machinery.SourceFileLoader):
    def path_stats(self, path):  # no source stats: no cached bytecode is read
        raise OSError("the workspace runs from its .py sources")


class WorkspaceMinimodel:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "minimodel":
            path = [workspace]
        elif not name.startswith("minimodel."):
            return None
        elif "__pycache__" in name.split("."):  # a cache folder is never source
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        portions = []
        for entry in path or []:
            spec = importlib.machinery.FileFinder(entry, (SourceOnly, [".py"])).find_spec(name)
            if spec is not None and spec.loader is not None:
                return spec
            if spec is not None:
                portions += list(spec.submodule_search_locations or [])
        if portions:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = portions
            return spec
        raise ModuleNotFoundError("No module named %r" % name, name=name)


sys.meta_path.insert(0, WorkspaceMinimodel)
import {HARNESS_MODULE} as harness
harness.TOKEN = token
import minimodel
where = os.path.realpath(os.path.dirname(minimodel.__file__))
if where != os.path.join(workspace, "minimodel"):
    sys.stderr.write("error: `import minimodel` found %s instead of the workspace copy %s\\n"
                     % (where, os.path.join(workspace, "minimodel")))
    sys.exit({WRONG_COPY_EXIT})
sys.argv = [script] + sys.argv[3:]
runpy.run_path(script, run_name="__main__")
"""

_CHECK_LINE = re.compile(r"^(PASS|FAIL) (\S+) (\S+) \| (.*?)(?: \| (.*))?$")
_FOREIGN_LINE = re.compile(rf"^{FOREIGN} (\S+) (\S+) \| (.*)$")


@dataclass
class ScriptRun(ChildResult):
    """One child run (``returncode`` None after a timeout), its verdict lines and its seed."""

    returncode: int | None
    checks: list[dict[str, Any]] = field(default_factory=list)
    seed: int = 0  # the invariants' random sizes: `break check --seed N` replays them
    # [(module, file)]: minimodel modules the checks loaded from outside the workspace copy
    foreign: list[tuple[str, str]] = field(default_factory=list)

    def symptom_lines(self, marker: str = SYMPTOM) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(marker)]

    def cause_remains(self) -> bool:
        """The story looks fixed but the invariants still fail (a partial fix)."""
        return bool(self.symptom_lines(CAUSE_REMAINS))


def run_script(workdir: str | os.PathLike, script: str | os.PathLike, lang: str = "en",
               timeout: float = 120.0, echo: Callable[[str], None] | None = None,
               seed: int | None = None, env: dict[str, str] | None = None) -> ScriptRun:
    """Run ``script`` against the workspace ``workdir``; never raises for the script's errors.

    With ``echo``, every stdout line is passed to it as soon as the child prints it (an
    experiment that trains for a few seconds shows its progress instead of a silent wait).
    ``seed`` fixes the invariants' random sizes (default: a fresh one, kept in ``run.seed``).
    ``env``: variables added to the child's clean environment (``break run`` passes the
    learner's ``MINIMODEL_KERNELS``; the checks never do, so their verdict does not depend on it).
    """
    workdir = Path(workdir).resolve()
    token = secrets.token_hex(8)
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    # A clean environment (``-I`` ignores PYTHON* variables anyway) plus the workspace, the
    # language and the seed of the invariants' random sizes.
    env = clean_env(keep=("PATH", "HOME", "TMPDIR", "SYSTEMROOT"), **{
        **(env or {}), WORKSPACE_ENV: str(workdir), LANG_ENV: lang, SEED_ENV: str(seed)})
    harness_dir = Path(tempfile.mkdtemp(prefix="minimodel-harness-"))
    try:
        shutil.copyfile(HARNESS, harness_dir / f"{HARNESS_MODULE}.py")
        shown = (lambda line: echo(line.replace(f" {token} ", " "))) if echo else None
        done = run_child([sys.executable, "-I", "-B", "-c", BOOTSTRAP, str(harness_dir),
                          str(script)], cwd=workdir, env=env,
                         timeout=timeout, on_line=shown, stdin_text=token + "\n")
    finally:
        shutil.rmtree(harness_dir, ignore_errors=True)
    return ScriptRun(None if done.timed_out else done.returncode,
                     done.stdout.replace(f" {token} ", " "),  # what the learner reads
                     done.stderr, done.seconds, done.timed_out, done.truncated,
                     checks=parse_checks(done.stdout, token), seed=seed,
                     foreign=parse_foreign(done.stdout, token))


def parse_checks(stdout: str, token: str) -> list[dict[str, Any]]:
    """The PASS/FAIL lines of a check script that carry this run's ``token``, as
    ``[{"id", "ok", "description", "message"}]`` (other lines are not verdicts)."""
    out = []
    for line in stdout.splitlines():
        match = _CHECK_LINE.match(line.rstrip())
        if match and match.group(2) == token:
            status, _, check_id, description, message = match.groups()
            out.append({"id": check_id, "ok": status == "PASS", "description": description,
                        "message": message or ""})
    return out


def parse_foreign(stdout: str, token: str) -> list[tuple[str, str]]:
    """The ``FOREIGN`` lines of this run's ``token``: ``[(module, file)]`` of the minimodel
    modules the checks ran that did not come from the workspace (:func:`harness.foreign_modules`)."""
    found = []
    for line in stdout.splitlines():
        match = _FOREIGN_LINE.match(line.rstrip())
        if match and match.group(1) == token:
            found.append((match.group(2), match.group(3)))
    return found


def check_details(run: ScriptRun, lang: str = "en") -> list[dict[str, Any]]:
    """Per-check details, plus one synthetic entry when the script crashed or timed out."""
    details = list(run.checks)
    if run.timed_out:
        details.append({"id": "timeout", "ok": False,
                        "description": say("break.check_timeout", lang),
                        "message": say("break.check_timeout_msg", lang, seconds=run.seconds)})
    elif run.returncode != 0 and all(d["ok"] for d in details):
        tail = " / ".join(run.stderr_tail(3)) or f"exit code {run.returncode}"
        details.append({"id": "crashed", "ok": False,
                        "description": say("break.check_crashed", lang), "message": tail})
    return details


def is_fixed(run: ScriptRun) -> bool:
    """Fixed = the checks exited 0, reported at least one PASS and no FAIL, and every
    minimodel module they ran came from the workspace (no ``FOREIGN`` line)."""
    return (not run.timed_out and run.returncode == 0 and bool(run.checks)
            and all(c["ok"] for c in run.checks) and not run.foreign)
