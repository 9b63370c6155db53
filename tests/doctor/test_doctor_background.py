"""transformers asked in a child process (doctor.background): the same report as the serial
path, the built-in table when the child crashes or hangs, Ctrl-C leaves nothing behind; and
the memo that lets the checks rehearsed on a guess serve the real run (doctor.memo)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from doctor_helpers import build_hf, tensors

from minimodel.doctor import background, diagnose
from minimodel.doctor.memo import remembered, remembering
from minimodel.doctor.report import print_report

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")


@pytest.fixture
def spawned(monkeypatch):
    """Start the child even though this test process has imported transformers; the children
    started, for the test to inspect."""
    children: list[subprocess.Popen] = []
    spawn = background.Question._spawn

    def recording(self):
        spawn(self)
        children.append(self.child)

    monkeypatch.setattr(background, "transformers_imported", lambda: False)
    monkeypatch.setattr(background.Question, "_spawn", recording)
    return children


def _cache_files() -> list[Path]:
    return sorted((Path(os.environ["XDG_CACHE_HOME"]) / "minimodel" / "doctor").glob("*"))


@pytest.mark.parametrize("family,tied", [("gpt2", False), ("t5", True), ("bert", False)])
def test_the_child_gives_the_serial_report(tmp_path, monkeypatch, spawned, family, tied):
    folder = build_hf(family, tied=tied, folder=tmp_path / family)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "serial-cache"))
    serial = diagnose(folder, overlap=False)
    assert spawned == []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "child-cache"))
    overlapped = diagnose(folder)
    assert len(spawned) == 1 and spawned[0].returncode == 0
    assert overlapped.subject.roles.source.startswith("transformers ")
    assert overlapped.to_dict() == serial.to_dict()
    # the child's answer was cached as the serial one was: same file name, same content
    serial_files = sorted((tmp_path / "serial-cache").rglob("*.json"))
    child_files = sorted((tmp_path / "child-cache").rglob("*.json"))
    assert [p.name for p in child_files] == [p.name for p in serial_files]
    assert json.loads(child_files[0].read_text()) == json.loads(serial_files[0].read_text())


# The child's own steps, with a GPT-2 config: what transformers then sees of the hidden packages
# (its own availability tests), which of them got imported, and the answer.
HIDING_CHILD = """
import json, runpy, sys
arch = runpy.run_path(sys.argv[1], run_name="test_child")
arch["hide_unused_packages"]()
from transformers.utils import import_utils
config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 96,
          "n_embd": 32, "n_layer": 1, "n_head": 2, "n_positions": 64}
found = arch["ask_transformers"](config, None, lambda: ["transformer.wte.weight"])
seen = [import_utils.is_accelerate_available(), import_utils.is_scipy_available(),
        import_utils.is_jinja_available()]
imported = sorted({m.split(".")[0] for m, module in sys.modules.items() if module is not None}
                  & {"accelerate", "scipy", "jinja2"})
print(json.dumps([seen, imported, found.embedding, found.head, found.tied]))
"""


def test_the_child_hides_the_packages_building_does_not_use():
    """accelerate, scipy and jinja2 look uninstalled to the child's transformers and are never
    imported there; it still names GPT-2's matrices and tie (the serial-report test above and
    the sweep compare whole answers)."""
    from minimodel.doctor import architecture

    assert architecture.UNUSED_FOR_BUILDING == ("accelerate", "scipy", "jinja2")
    out = subprocess.run([sys.executable, "-c", HIDING_CHILD, architecture.__file__],
                         capture_output=True, text=True, check=True, timeout=600)
    assert json.loads(out.stdout) == [[False, False, False], [], "transformer.wte.weight",
                                      "lm_head.weight", True]


def test_the_checks_rehearsed_while_the_child_imports_use_one_blas_thread(tmp_path, spawned):
    """OpenBLAS's extra threads would spin on the core the child imports on."""
    from minimodel import runtime
    from minimodel.doctor.subject import examine

    folder = build_hf("gpt2", tied=True, folder=tmp_path / "gpt2")
    seen: list[int | None] = []
    with runtime.blas_libraries().limit(limits=2):
        examine(folder, while_waiting=lambda guess: seen.append(runtime.blas_threads()))
        after = runtime.blas_threads()
    assert len(spawned) == 1
    assert seen == [1] and after == 2


@pytest.mark.parametrize("child,failure", [
    ("import sys; sys.stderr.write('boom\\n'); sys.exit(3)",
     {"kind": "crashed", "code": 3, "message": "boom"}),
    ("print('not json')", {"kind": "crashed", "code": 0, "message": "-"}),
    ("import time; time.sleep(60)", {"kind": "timeout", "seconds": 0.5}),
])
def test_a_failing_child_leaves_the_table_to_answer(tmp_path, monkeypatch, spawned, capsys,
                                                   child, failure):
    folder = build_hf("gpt2", tied=True, folder=tmp_path / "gpt2")
    monkeypatch.setattr(background, "CHILD", [sys.executable, "-c", child])
    monkeypatch.setattr(background, "TIMEOUT_S", 0.5)
    report = diagnose(folder)
    assert spawned[0].poll() is not None  # stopped, not left running
    assert report.subject.arch_failure == failure
    assert report.subject.roles.source == "the built-in table"
    assert report.to_dict()["transformers_failed"] == failure
    assert report.keys() == ["tie.tied_stored_once", "sizes.agree", "rows.none", "reach.all"]
    assert _cache_files() == []  # a failed answer is not cached: the next run asks again
    print_report(report, "es")
    shown = " ".join(capsys.readouterr().out.split())
    assert "transformers no respondió" in shown and "la tabla incorporada" in shown


@pytest.mark.parametrize("legacy", [False, True])
def test_a_pickle_torch_must_read_is_asked_about_in_this_process(tmp_path, spawned, legacy):
    """A zip-format pickle is mapped by NumPy: the child is started as for safetensors. torch
    reads a legacy one here: a child would hold torch a second time, so none is started."""
    folder = build_hf("gpt2", tied=False, folder=tmp_path / "gpt2")
    state = {k: torch.from_numpy(v) for k, v in tensors(folder).items()}
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin", _use_new_zipfile_serialization=not legacy)
    report = diagnose(folder)
    assert len(spawned) == (0 if legacy else 1)
    assert ("torch.load" in report.subject.files.note) is legacy
    assert report.subject.roles.source.startswith("transformers ")
    assert report.keys() == ["tie.untied_ok", "sizes.agree", "rows.none", "reach.all"]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_ctrl_c_stops_the_child_and_writes_nothing(tmp_path):
    folder = build_hf("gpt2", tied=True, folder=tmp_path / "gpt2")
    cache = tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, "-m", "minimodel", "doctor", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    helper: list[int] = []
    for _ in range(600):  # up to a minute on a loaded machine: wait for the child to exist
        helper = _children(proc.pid)
        if helper or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert helper, "the doctor started no child process"
    proc.send_signal(signal.SIGINT)  # to the doctor alone: it must stop its child itself
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip() == "interrupted" and "Traceback" not in err
    assert not Path(f"/proc/{helper[0]}").exists() or \
        "State:\tZ" in Path(f"/proc/{helper[0]}/status").read_text()
    assert list(cache.rglob("*")) in ([], [cache / "minimodel"], [cache / "minimodel",
                                                                 cache / "minimodel" / "doctor"])


def test_the_memo_computes_once_per_matrix_and_per_vector_values():
    calls = []

    @remembered
    def total(a, extra=None):
        calls.append(1)
        return {"sum": float(a.sum()) + (0.0 if extra is None else float(extra.sum()))}

    E = np.arange(12.0).reshape(4, 3)  # (V, d)
    assert total(E) == total(E) == {"sum": 66.0} and len(calls) == 2  # outside: no memo
    with remembering():
        first = total(E, np.array([1.0]))
        first["sum"] = -1.0  # a caller changing its result changes no one else's
        assert total(E, np.array([1.0])) == {"sum": 67.0}  # same matrix, same vector values
        assert len(calls) == 3
        total(E[:3], np.array([1.0]))  # another view: another matrix
        total(E.copy(), np.array([1.0]))  # same values, other memory: computed again
        total(E, np.array([2.0]))  # other vector values
        assert len(calls) == 6
    with remembering():
        total(E, np.array([1.0]))  # a new diagnosis forgets the last one's numbers
    assert len(calls) == 7
