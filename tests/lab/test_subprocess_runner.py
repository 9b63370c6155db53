"""The lab's one subprocess runner: process group, timeout that kills the whole group,
output capture, live lines, stdin, and a clean environment."""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

from minimodel.lab.subprocess_runner import ChildResult, clean_env, run_child

PY = sys.executable


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            state = next(line for line in fh if line.startswith("State:"))
        return "Z" not in state.split()[1]
    except (FileNotFoundError, StopIteration):
        return False


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


SPAWNER = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(child.pid, flush=True)
    {after}
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_timeout_kills_the_child_and_its_grandchildren():
    start = time.monotonic()
    # 5 s: room for the child to start Python and spawn the grandchild on a loaded machine.
    result = run_child([PY, "-c", SPAWNER.format(after="time.sleep(120)")], timeout=5.0)
    assert result.timed_out is True
    assert result.returncode == -9  # SIGKILL, sent to the whole group
    assert 5.0 <= result.seconds < 20 and time.monotonic() - start < 20
    grandchild = int(result.stdout.split()[0])
    assert _wait_gone(grandchild), f"grandchild {grandchild} survived the timeout"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_grandchild_left_behind_is_killed_when_the_child_exits():
    # The grandchild keeps the output pipe open; without killing the group the parent
    # would wait for it (120 s) instead of returning.
    start = time.monotonic()
    result = run_child([PY, "-c", SPAWNER.format(after="sys.exit(3)")], timeout=60)
    assert time.monotonic() - start < 15
    assert (result.returncode, result.timed_out) == (3, False)
    assert _wait_gone(int(result.stdout.split()[0]))


def test_output_is_captured_and_streamed_line_by_line():
    seen: list[tuple[str, float]] = []
    code = ("import sys, time\nprint('first', flush=True)\ntime.sleep(0.6)\n"
            "print('second', flush=True)\nprint('oops', file=sys.stderr)\nsys.exit(2)")
    start = time.monotonic()
    result = run_child([PY, "-c", code], timeout=30,
                       on_line=lambda line: seen.append((line, time.monotonic() - start)))
    assert isinstance(result, ChildResult)
    assert (result.returncode, result.stdout, result.stderr) == (2, "first\nsecond\n", "oops\n")
    assert [line for line, _ in seen] == ["first", "second"]
    assert seen[0][1] < seen[1][1] - 0.4  # "first" arrived before the child finished
    assert result.stderr_tail() == ["oops"]


def test_stdin_text_and_polling():
    polls: list[float] = []
    result = run_child([PY, "-c", "import sys, time; time.sleep(0.5); "
                                  "print(sys.stdin.read().upper())"],
                       timeout=30, stdin_text="a diff\n", poll=polls.append)
    assert result.stdout == "A DIFF\n\n" and result.returncode == 0
    assert len(polls) >= 2 and polls == sorted(polls)


def test_only_the_tail_of_a_runaway_print_is_kept():
    result = run_child([PY, "-c", "for i in range(20000): print(f'line {i:05d}')"],
                       timeout=60, max_chars=1000)
    assert result.truncated is True
    assert len(result.stdout) <= 1000 + 20
    assert result.stdout.endswith("line 19999\n")


def test_clean_env_keeps_only_what_is_named(monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "do-not-pass")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    env = clean_env(keep=("PATH", "HOME"), PYTHONPATH="/workspace")
    assert "SECRET_TOKEN" not in env and env["PYTHONPATH"] == "/workspace"
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["PYTHONHASHSEED"] == "0"
    assert env["PATH"] == os.environ["PATH"]
    result = run_child([PY, "-c", "import os; print(os.environ.get('SECRET_TOKEN'))"],
                       timeout=30, env=clean_env())
    assert result.stdout == "None\n"
