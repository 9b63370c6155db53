"""The judge's own process is part of the boundary: what a solution sends back, prints or
leaves behind cannot hang it, exhaust its memory, outlive the verdict or fill the disk.

Each attack runs the judge in a fresh interpreter on a copy of the package (so an attack that
writes reaches only the copy) and reads that interpreter's peak memory (``VmHWM``), in
full isolation, in full isolation without a cgroup (what a learner who is not root gets: only
rlimits) and without bubblewrap, where it matters. The honest gelu body is always returned,
so a verdict other than ``passed`` comes from the attack itself.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from minimodel.lab.exercises import channel as channel_module
from minimodel.lab.exercises import isolation
from minimodel.lab.exercises.channel import Channel
from minimodel.lab.exercises.isolation import PACKAGE_DIR, probe

REQUIRED = os.environ.get("CI") == "true" or bool(os.environ.get("MINIMODEL_REQUIRE_SANDBOX"))
GELU = "0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))"
MIB = 1024 * 1024
# What the judge process may grow by under an attack (its own arrays, tails and caches).
GROWTH_MIB = 160

# Gets the harness's configuration, its report pipe and the frame format; works against the
# judge before this change too (then outputs went to files named in the configuration).
PRELUDE = """
import math
import numpy as np

os = __import__('o' + 's')
json = __import__('js' + 'on')
struct = __import__('str' + 'uct')
CFG = json.load(open(__import__('s' + 'ys').argv[1]))
FD = CFG['channel_fd']
OLD = 'outputs' in CFG['cases'][0]
OUTS = [c.get('outputs') or os.path.join(os.getcwd(), 'out', 'out_%03d.npz' % i)
        for i, c in enumerate(CFG['cases'])]


def frame(kind, payload):
    return struct.pack('>I', len(payload) + 1) + kind + payload


def event(**e):
    text = json.dumps(e).encode()
    return text + b'\\n' if OLD else frame(b'J', text)
"""


def solution(before: str = "", inside: str = "") -> str:
    return (PRELUDE + textwrap.dedent(before) + "\n\ndef gelu(x):\n"
            + textwrap.indent(textwrap.dedent(inside), "    ") + f"\n    return {GELU}\n")


def _mode_ok(mode: str) -> None:
    if mode != "partial" and probe().level != "full":
        if REQUIRED:
            pytest.fail(f"CI must run the judge in full isolation: {probe().reason}")
        pytest.skip(probe().reason)


def unprivileged() -> list[str]:
    """A prefix that runs a command without any capability (as root: file permissions then
    bind it, like a learner who is not root), when we are root and setpriv exists. Used
    without bubblewrap only: bubblewrap needs the capabilities root's user namespace gives."""
    if os.geteuid() == 0 and shutil.which("setpriv"):
        return ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]
    return []


def judge_in_copy(tmp_path: Path, source: str, mode: str, after: str = "") -> dict:
    """Judge ``source`` (gelu-tanh) in a fresh interpreter on a copy of the package, with
    ``mode`` "full", "rlimit" (full isolation, no cgroup: what a learner who is not root
    gets) or "partial" (then without privileges, see :func:`unprivileged`); ``after`` is code
    run
    after the check (its variables: ``result``). Returns the result plus ``growth_mib``
    (peak memory minus the memory before the check) and ``peak_mib``."""
    _mode_ok(mode)
    root = tmp_path / "pkg"
    if not root.exists():
        shutil.copytree(PACKAGE_DIR, root / "minimodel",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    scratch_parent = tmp_path / "scratch"
    scratch_parent.mkdir(exist_ok=True)
    driver = textwrap.dedent(f"""
        import json, resource, sys
        sys.path.insert(0, {str(root)!r})
        import minimodel
        assert minimodel.__file__.startswith({str(root)!r}), minimodel.__file__
        from minimodel.lab.exercises import check_solution, isolation
        real = isolation.probe()
        if {mode!r} == "partial":
            isolation.probe = lambda: isolation.Isolation("partial", "test: forced partial")
        elif {mode!r} == "rlimit":
            assert real.level == "full", real.reason
            isolation.probe = lambda: isolation.Isolation("full", "test: no cgroup",
                                                          bwrap=real.bwrap, cgroup=None)
        else:
            assert real.level == "full", real.reason
        extra = {{}}

        def peak_kib():
            # VmHWM: the peak of this interpreter's own memory. ru_maxrss also keeps the
            # parent's resident size at fork (it survives exec), which can hide growth.
            try:
                with open("/proc/self/status") as status:
                    return next(int(line.split()[1]) for line in status
                                if line.startswith("VmHWM:"))
            except (OSError, StopIteration):
                return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        before = peak_kib()
        try:
            result = check_solution("gelu-tanh", source=sys.stdin.read(), seed=5)
        except BaseException as exc:
            result = {{"raised": type(exc).__name__, "message": str(exc)[:300]}}
        peak = peak_kib()
        result["growth_mib"] = (peak - before) / 1024
        result["peak_mib"] = peak / 1024
        {textwrap.indent(textwrap.dedent(after), "        ").strip()}
        result.update(extra)
        print(json.dumps(result, default=str))
    """)
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(scratch_parent),
           "MINIMODEL_LEARNER_DIR": str(tmp_path / "learner"), "PYTHONDONTWRITEBYTECODE": "1"}
    prefix = unprivileged() if mode == "partial" else []
    done = subprocess.run([*prefix, sys.executable, "-c", driver], input=source,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["leftovers"] = sorted(p.name for p in scratch_parent.iterdir())
    if "raised" not in result:
        assert result["isolation"] == ("partial" if mode == "partial" else "full"), result
    print(f"[{mode}] status={result.get('status')} peak={result['peak_mib']:.0f} MiB "
          f"growth={result['growth_mib']:.0f} MiB: {result.get('message', '')[:160]}")
    return result


# The attacks on the judge's memory, as solution(**ATTACKS[name]) arguments; also run by
# benchmarks/judge_attack_memory.py, which reports the judge's peak memory under each.
ATTACKS = {
    "npz bomb": {"before": """
            def bomb():
                zipfile = __import__('zip' + 'file')
                header = bytearray(b"\\x93NUMPY\\x01\\x00")
                text = "{'descr': '<f8', 'fortran_order': False, 'shape': (67108864,), }"
                text = text.ljust(117) + "\\n"
                header += struct.pack('<H', len(text)) + text.encode()
                zero = bytes(1 << 20)
                for path in OUTS:
                    try:
                        with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:
                            with z.open('out_0.npy', 'w', force_zip64=True) as f:
                                f.write(bytes(header))
                                for _ in range(512):
                                    f.write(zero)
                    except OSError:
                        pass
            __import__('ate' + 'xit').register(bomb)
        """},
    "huge header": {"inside": """
            header = bytearray(b"\\x93NUMPY\\x01\\x00")
            text = "{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000000,), }"
            text = text.ljust(117) + "\\n"
            header += struct.pack('<H', len(text)) + text.encode()
            if OLD:
                zipfile = __import__('zip' + 'file')
                def plant():
                    for path in OUTS:
                        with zipfile.ZipFile(path, 'w') as z:
                            z.writestr('out_0.npy', bytes(header) + bytes(64))
                __import__('ate' + 'xit').register(plant)
            elif not globals().get('SENT'):
                globals()['SENT'] = True
                os.write(FD, event(event='case', index=0, ok=True, n=1, python_scalar=[False])
                         + frame(b'A', bytes(header) + bytes(64)))
        """},
    "long line": {"inside": """
            if not globals().get('PRINTED'):
                globals()['PRINTED'] = True
                chunk = 'x' * (1 << 20)
                for _ in range(256):
                    print(chunk, end='')
        """},
    "event flood": {"inside": """
            one = event(event='noise', pad='.' * 16) * 4096
            try:
                for _ in range(32 * (1 << 20) // len(one)):
                    os.write(FD, one)
            except OSError:
                pass  # the judge closed the pipe
        """},
}


# --- what comes back: files, archives, headers, prints, events -----------------------------

@pytest.mark.parametrize("mode", ["full", "partial"])
def test_a_fifo_in_place_of_the_outputs_cannot_hang_the_judge(tmp_path, mode):
    """At exit the solution swaps every output file for a FIFO (the judge used to open it,
    blocking forever). Results no longer travel through files: the check ends, and passes."""
    before = """
        def swap():
            for path in OUTS:
                try:
                    os.remove(path)
                except OSError:
                    pass
                try:
                    os.mkfifo(path)
                except OSError:
                    pass
        __import__('ate' + 'xit').register(swap)
    """
    result = judge_in_copy(tmp_path, solution(before), mode)
    assert result["status"] == "passed", result
    assert result["leftovers"] == []


def test_a_compressed_bomb_in_place_of_the_outputs_takes_no_memory(tmp_path):
    """At exit each output becomes a 3 MB .npz holding 512 MiB of zeros (it used to be
    unpacked in the judge's process)."""
    result = judge_in_copy(tmp_path, solution(**ATTACKS["npz bomb"]), "full")
    # passed, or timeout when compressing 512 MiB at exit outlasts the limit on a busy machine
    assert result["status"] in ("passed", "timeout"), result
    assert result["growth_mib"] < GROWTH_MIB, result


def test_a_header_declaring_1e13_elements_is_an_error_not_a_crash(tmp_path):
    """The first output claims 10^13 float64 elements (80 TB). The judge used to try to
    allocate them (an uncaught MemoryError); now the header is checked first."""
    result = judge_in_copy(tmp_path, solution(**ATTACKS["huge header"]), "full")
    assert "raised" not in result, result
    assert result["status"] == "error" and not result["passed"], result
    assert "sent back something other than its results" in result["message"], result
    assert result["growth_mib"] < GROWTH_MIB, result


def test_a_huge_single_line_on_stdout_keeps_only_a_tail(tmp_path):
    """256 MiB printed as one line without a newline (the issue's 2 GiB, scaled down): the
    tail is kept by bytes, so the judge's memory does not grow with it."""
    result = judge_in_copy(tmp_path, solution(**ATTACKS["long line"]), "full")
    assert result["status"] == "passed", result
    assert result["growth_mib"] < GROWTH_MIB, result


def test_a_flood_on_the_report_pipe_is_an_error_with_bounded_memory(tmp_path):
    """32 MiB of small events on the report pipe (the judge used to store every one)."""
    result = judge_in_copy(tmp_path, solution(**ATTACKS["event flood"]), "full")
    assert result["status"] == "error", result
    assert result["growth_mib"] < GROWTH_MIB, result


# --- the channel itself, frame by frame (no sandbox) -------------------------------------

def _frame(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload) + 1) + kind + payload


def _event(**e) -> bytes:
    return _frame(b"J", json.dumps(e).encode())


def _npy(array: np.ndarray, header_only: bool = False) -> bytes:
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    data = buffer.getvalue()
    return data[:len(data) - array.nbytes] if header_only else data


def _feed(wants: list[list[np.ndarray]], data: bytes) -> Channel:
    ch = Channel(wants)
    os.write(ch.write_fd, data) if len(data) < 60000 else None
    os.close(ch.write_fd)
    ch.finish()
    return ch


WANT = [[np.zeros((2, 3))]]
OK_CASE = _event(event="case", index=0, ok=True, n=1, python_scalar=[False])


def test_the_channel_accepts_the_expected_frames_and_a_mismatch_as_a_header_alone():
    ch = _feed(WANT, _event(event="ready") + OK_CASE + _frame(b"A", _npy(np.ones((2, 3))))
               + _event(event="done"))
    assert ch.problem is None and np.array_equal(ch.outputs[0][0], np.ones((2, 3)))
    ch = _feed(WANT, OK_CASE + _frame(b"A", _npy(np.ones((5, 5), np.float32), True)))
    got = ch.outputs[0][0]
    assert ch.problem is None and got.shape == (5, 5) and got.dtype == np.float32
    assert got.base is not None and got.strides == (0, 0)  # a stand-in: no memory


@pytest.mark.parametrize("data, problem", [
    (struct.pack(">I", 2**31) + b"J", "a report of 2147483648 bytes"),
    (_frame(b"J", b"not json"), "not JSON"),
    (_event(event="case", index=5, ok=False), "where case 0 was due"),
    (OK_CASE + _frame(b"A", _npy(np.ones((5, 5)))), "came with data"),
    (OK_CASE + _frame(b"A", _npy(np.ones((2, 3)))[:-8]), "came with 40 bytes"),
    (OK_CASE + _frame(b"A", _npy(np.array(["a", "b"]), True)), "not a plain number"),
    (OK_CASE + _frame(b"A", b"PK\x03\x04" + bytes(60)), "not in the .npy format"),
    (OK_CASE + _frame(b"J", b"{}"), "unexpected kind"),
    (OK_CASE, "cut short"),
])
def test_the_channel_refuses_anything_else(data, problem):
    ch = _feed(WANT, data)
    assert ch.problem is not None and problem in ch.problem, ch.problem
    assert ch.read_fd is not None


def test_a_declared_shape_of_1e13_elements_never_allocates():
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10**13,)})
    header = buffer.getvalue()
    with pytest.raises(channel_module.ChannelError, match="came with data"):
        channel_module.array_from_frame(header + bytes(8), np.zeros(3))
    got = channel_module.array_from_frame(header, np.zeros(3))  # a shape mismatch, reported
    assert got.shape == (10**13,) and got.strides == (0,)


def test_the_channel_budget_bounds_the_whole_stream():
    budget = channel_module.output_budget(WANT)
    assert budget < 200 * 1024  # a (2, 3) float64 output and a handful of events
    one = _event(event="noise", pad="." * 100)
    ch = Channel(WANT)
    try:
        for _ in range(2 * budget // len(one)):
            try:
                os.write(ch.write_fd, one)
            except BrokenPipeError:
                break
    finally:
        os.close(ch.write_fd)
        ch.finish()
    assert ch.problem is not None and f"more than {budget} bytes" in ch.problem
    assert ch.received <= budget


# --- what is left behind: disk, memory, processes, environment ------------------------------

def test_tmp_and_dev_are_sized_without_a_cgroup(tmp_path):
    """Full isolation for a learner who is not root (no cgroup, only rlimits): /tmp holds at
    most 64 MiB (it used to take 3 GB of host memory with a 2048 MB limit) and /dev takes
    nothing. The answer is wrong if more got through."""
    inside = """
        if 'WROTE' not in globals():
            globals()['WROTE'] = {}
            for folder in ('/tmp', '/dev'):
                wrote = 0
                try:
                    with open(folder + '/filler', 'wb') as fh:
                        for _ in range(256):
                            fh.write(bytes(1 << 20))
                            fh.flush()
                            wrote += 1 << 20
                except OSError:
                    pass
                WROTE[folder] = wrote
        if WROTE['/tmp'] > 100 * (1 << 20) or WROTE['/dev'] > 0:
            return x * 0 + float(WROTE['/tmp'])
    """
    result = judge_in_copy(tmp_path, solution(inside=inside), "rlimit")
    assert result["status"] == "passed", result


@pytest.mark.parametrize("mode", ["rlimit", "partial"])
def test_no_path_and_nothing_left_behind_even_read_only(tmp_path, mode):
    """The solution sees no PATH; it fills every folder it can write under its working folder
    with 8 MiB and takes the folders' permissions away (the cleanup could not unlink them):
    after the check nothing of the run is left in the temporary folder."""
    inside = """
        if os.environ.get('PATH') is not None:
            return x * 0
        if 'DONE' not in globals():
            globals()['DONE'] = True
            for folder, _, _ in list(os.walk(os.getcwd())):
                try:
                    sub = os.path.join(folder, 'kept')
                    os.makedirs(sub)
                    with open(os.path.join(sub, 'big'), 'wb') as fh:
                        fh.write(bytes(8 << 20))
                    os.chmod(sub, 0o500)
                    os.chmod(folder, 0o500)
                except OSError:
                    pass
    """
    result = judge_in_copy(tmp_path, solution(inside=inside), mode)
    assert result["status"] == "passed", result
    assert result["leftovers"] == [], result


@pytest.mark.parametrize("mode", ["full", "partial"])
def test_a_setsid_grandchild_does_not_outlive_the_verdict(tmp_path, mode):
    """A double fork with setsid() leaves the process group the judge kills (and every time
    limit). Without bubblewrap the judge is the subreaper of its descendants and kills it; with
    it the PID namespace dies with the sandbox. The forks go through libc by ctypes: the run
    refuses os.fork at the call, and this is the route it leaves to the operating system's
    boundary (docs/judge.md), which is what this test holds."""
    marker = tmp_path / "grandchild.pid"
    inside = f"""
        if 'FORKED' not in globals():
            globals()['FORKED'] = True
            libc = __import__('ctyp' + 'es').CDLL(None, use_errno=True)
            if libc.fork() == 0:
                os.setsid()
                if libc.fork() == 0:
                    try:
                        with open({str(marker)!r}, 'w') as fh:
                            fh.write(str(os.getpid()))
                    except OSError:
                        pass
                    __import__('ti' + 'me').sleep(120)
                os._exit(0)
            __import__('ti' + 'me').sleep(0.5)
    """
    after = f"""
        import os, time
        extra["alive"] = None
        try:
            pid = int(open({str(marker)!r}).read())
            os.kill(pid, 0)
            state = open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[0]
            extra["alive"] = state not in ("Z", "X")
            if extra["alive"]:
                os.kill(pid, 9)  # do not leave it running after the test
        except (OSError, ValueError):
            extra["alive"] = False
    """
    result = judge_in_copy(tmp_path, solution(inside=inside), mode, after=after)
    assert result["status"] == "passed", result
    assert result["alive"] is False, result


def test_every_tmpfs_of_the_sandbox_has_a_size(tmp_path):
    iso = isolation.Isolation("full", "test", bwrap="/usr/bin/bwrap")
    cmd = isolation.sandbox_command(iso, ["python"], tmp_path, {}, hide_torch=True)
    tmpfs = [i for i, arg in enumerate(cmd) if arg == "--tmpfs"]
    assert tmpfs and all(cmd[i - 2] == "--size" and int(cmd[i - 1]) > 0 for i in tmpfs), cmd
    assert "--dev" not in cmd and "--bind" not in cmd  # no size-less /dev, no writable host
    assert cmd.index("--remount-ro") > cmd.index("/dev/urandom")


@pytest.mark.parametrize("mode", ["rlimit", "partial"])
def test_a_deep_tree_and_links_in_the_scratch_folder_are_removed_safely(tmp_path, mode):
    """Without bubblewrap a solution can write in its scratch folder. It nests 3,000 folders
    (deeper than Python's recursion limit, and a path longer than PATH_MAX), takes their
    permissions away, and leaves a symbolic link and a hard link to a file of the host and a
    link to a host folder: the check still ends with a verdict (it raised RecursionError and
    left the folder behind), nothing of the run is left, and the host's files are intact."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "keep.txt").write_text("the user's file")
    inside = f"""
        if 'DONE' not in globals():
            globals()['DONE'] = True
            here = os.getcwd()
            for target, name in (({str(host / 'keep.txt')!r}, 'file-link'),
                                 ({str(host)!r}, 'dir-link')):
                try:
                    os.symlink(target, name)
                except OSError:
                    pass
            try:
                os.link({str(host / 'keep.txt')!r}, 'hard-link')
            except OSError:
                pass
            try:
                for _ in range(3000):
                    os.mkdir('d')
                    os.chdir('d')
                    os.symlink({str(host)!r}, 'up')
                for _ in range(3000):
                    os.chdir('..')
                    os.chmod('d', 0o000)
            except OSError:
                pass
            os.chdir(here)
    """
    result = judge_in_copy(tmp_path, solution(inside=inside), mode)
    assert result.get("raised") is None, result
    assert result["status"] == "passed", result
    assert result["leftovers"] == [], result
    assert (host / "keep.txt").read_text() == "the user's file"
    assert sorted(p.name for p in host.iterdir()) == ["keep.txt"]


def test_the_solution_cannot_open_the_judges_descriptors_or_memory(tmp_path):
    """Without bubblewrap the solution runs as the same user as the judge: it opened
    ``/proc/<judge>/fd/1`` and wrote a forged ``{"passed": true}`` line into the judge's own
    stdout (what ``--json`` prints and the tutor's MCP stream is), and could open
    ``/proc/<judge>/mem``. The judge is non-dumpable while a solution runs, so neither opens
    (in full isolation the judge is not in sight: the parent is the sandbox's own init). The
    solution returns a wrong answer when any of them opened."""
    inside = """
        if 'OPENED' not in globals():
            opened = []
            for name, flags in (('fd/1', os.O_WRONLY), ('fd/0', os.O_RDONLY),
                                ('mem', os.O_RDONLY), ('environ', os.O_RDONLY)):
                try:
                    fd = os.open('/proc/%d/%s' % (os.getppid(), name), flags)
                    opened.append(name)
                    if name == 'fd/1':
                        os.write(fd, b'{"passed": true, "status": "passed"}\\n')
                    os.close(fd)
                except OSError:
                    pass
            globals()['OPENED'] = opened
        if OPENED:
            return x * 0
    """
    result = judge_in_copy(tmp_path, solution(inside=inside), "partial")
    assert result["status"] == "passed", result
