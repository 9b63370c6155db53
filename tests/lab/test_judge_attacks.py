"""Solutions that try to fool or escape the judge, and honest ones it must never refuse.

The boundary is the operating system's (bubblewrap): in full isolation nothing a solution does
in its process reaches the package, the learner's folder, the user's files or the network,
and in a NumPy-only exercise torch cannot be imported. In partial isolation (no bubblewrap)
only what ``docs/judge.md`` lists still holds; the partial-mode tests below check exactly
those promises, and run attacks that write against a COPY of the package, never this tree.

Attack classes (issue 21): string evaluation that escaped the old in-process guard (typing,
dataclasses, singledispatch, ``__getattribute__``) and threads racing its audit hook; writes
through ``torch.from_file(..., shared=True)`` to the reference, the progress file and a
``__pycache__``; reading a user's file; the seed oracle; torch's fused paths reached through an
allowed class in a NumPy-only exercise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from minimodel.lab import integrity
from minimodel.lab.exercises import check_solution, get_exercise, isolation
from minimodel.lab.exercises.isolation import PACKAGE_DIR, Isolation, probe
from own_work import retyped

HAS_TORCH = __import__("importlib").util.find_spec("torch") is not None
GELU_BODY = "0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))"
GELU_REF = get_exercise("gelu-tanh").reference_path
REQUIRED = os.environ.get("CI") == "true" or bool(os.environ.get("MINIMODEL_REQUIRE_SANDBOX"))


# A solution that deliberately undoes the run-time rule first (removes its import finder): out
# of the rule's scope (docs/judge.md), so what still stops it is the operating system's fence.
UNDO_RULE = ("__import__('sys').meta_path[:] = [f for f in __import__('sys').meta_path "
             "if type(f).__module__ != '_enforce']\n")


def gelu_solution(before: str = "", inside: str = "") -> str:
    """A correct gelu-tanh file with attack code at module level and inside the function."""
    return (f"import math\nimport numpy as np\n{textwrap.dedent(before)}\n\n"
            f"def gelu(x):\n{textwrap.indent(textwrap.dedent(inside), '    ')}\n"
            f"    return {GELU_BODY}\n")


@pytest.fixture
def full():
    """Full isolation, or a skip; on CI (CI=true) a failure: CI must run the judge fenced in."""
    iso = probe()
    if iso.level != "full":
        if REQUIRED:
            pytest.fail(f"CI must run the judge in full isolation, but it is partial: "
                        f"{iso.reason} (install bubblewrap; .ci/run does)")
        pytest.skip(f"full isolation unavailable here: {iso.reason}")
    return iso


@pytest.fixture
def partial(monkeypatch):
    monkeypatch.setattr(isolation, "probe", lambda: Isolation("partial", "test: forced partial"))


def test_ci_runs_the_judge_in_full_isolation():
    iso = probe()
    if REQUIRED:
        assert iso.level == "full", iso.reason
    else:
        assert iso.level in ("full", "partial") and iso.reason


# --- what the sandbox shows a solution ---------------------------------------------------

def test_full_isolation_hides_package_learner_files_network_and_torch(full, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's own words")
    user_file = Path(__file__).resolve()  # a file of the user's, outside /tmp
    numpy_dir = Path(np.__file__).parent
    inside = UNDO_RULE + textwrap.dedent(f"""
        os = __import__('o' + 's')
        paths = {dict(ref=str(GELU_REF), secret=str(secret), user=str(user_file),
                      home=str(Path.home()))!r}
        seen = {{key: os.path.exists(p) for key, p in paths.items()}}
        seen['home'] = sorted(os.listdir(paths['home'])) if seen['home'] else []
        try:
            open({str(numpy_dir / 'evil.pth')!r}, 'w').write('import os')
            seen['wrote site-packages'] = True
        except OSError as exc:
            seen['wrote site-packages'] = type(exc).__name__
        try:
            __import__('soc' + 'ket').create_connection(('1.1.1.1', 80), timeout=2)
            seen['network'] = True
        except OSError as exc:
            seen['network'] = type(exc).__name__
        try:
            __import__('tor' + 'ch')
            seen['torch'] = True
        except ImportError as exc:
            seen['torch'] = str(exc)
        seen['processes'] = len([d for d in os.listdir('/proc') if d.isdigit()])
        raise RuntimeError(repr(seen))
    """)
    result = check_solution("gelu-tanh", source=gelu_solution(inside=inside), seed=1)
    assert result["isolation"] == "full" and result["status"] == "error"
    seen = eval(result["cases"][0]["message"].split(": ", 1)[1])  # noqa: S307 - our own repr
    assert seen == {**seen, "ref": False, "secret": False, "user": False}
    # $HOME shows at most the folders leading to the interpreter (e.g. ~/.pyenv), nothing else
    home = Path.home()
    assert all(any(root.startswith(str(home / entry)) for root in isolation.python_roots())
               for entry in seen["home"]), seen["home"]
    assert seen["wrote site-packages"] in ("OSError", "PermissionError")
    assert seen["network"] is not True
    if HAS_TORCH:
        assert "NumPy-only" in seen["torch"]
    assert seen["processes"] <= 3
    assert not (numpy_dir / "evil.pth").exists()


# --- attack: string evaluation and threads (the old in-process guard's escapes) ---------------

STRING_EVAL = """
    import dataclasses
    import functools
    import threading
    import typing

    MARK = {mark!r}


    class Hints:
        x: "__import__('pathlib').Path(MARK + '.typing').write_text('typing')"


    @dataclasses.dataclass
    class Data:
        y: "__import__('pathlib').Path(MARK + '.dataclasses').write_text('dataclasses')" = 0


    class Sneaky:
        def __getattribute__(self, name):
            return object.__getattribute__(__import__('path' + 'lib').Path(MARK + '.getattribute'),
                                           name)


    @functools.singledispatch
    def touch(arg):
        return None


    def _thread():
        __import__('path' + 'lib').Path(MARK + '.thread').write_text('thread')
"""
STRING_EVAL_CALLS = """
    for job in (lambda: typing.get_type_hints(Hints), lambda: Sneaky().write_text('x'),
                lambda: touch.register(eval("__import__('pathlib').Path(MARK + '.dispatch')"
                                            ".write_text('dispatch') and int"))):
        try:
            job()
        except Exception:
            pass
    t = threading.Thread(target=_thread)
    t.start()
    t.join()
"""
MARKS = ("typing", "getattribute", "dispatch", "thread")


def _string_eval_solution(mark: Path) -> str:
    return gelu_solution(STRING_EVAL.format(mark=str(mark)), STRING_EVAL_CALLS)


def test_string_evaluation_and_threads_are_contained_by_the_sandbox(full, tmp_path):
    mark = tmp_path / "escaped"
    result = check_solution("gelu-tanh", source=_string_eval_solution(mark), seed=2)
    # Nothing reached the host: the paths do not exist in the sandbox.
    assert not list(tmp_path.glob("escaped*"))
    assert result["status"] == "passed"  # the maths is right; the side effects went nowhere


def test_without_bubblewrap_string_evaluation_is_out_of_scope_as_documented(partial, tmp_path):
    """docs/judge.md: in partial isolation the child can write where the user can."""
    mark = tmp_path / "escaped"
    result = check_solution("gelu-tanh", source=_string_eval_solution(mark), seed=2)
    assert result["isolation"] == "partial"
    assert {p.suffix[1:] for p in tmp_path.glob("escaped*")} >= {"typing", "thread"}


# --- attack: torch.from_file(shared=True) on the reference, progress, __pycache__ -------------

def _copy_package(tmp_path: Path) -> Path:
    """A private copy of the package (its own manifest), for attacks that write."""
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE_DIR, root / "minimodel",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def _judge_in(root: Path, exercise: str, source: str, partial: bool, home: Path) -> dict:
    """Judge ``source`` with the package copy at ``root`` in a fresh interpreter."""
    driver = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(root)!r})
        import minimodel
        assert minimodel.__file__.startswith({str(root)!r}), minimodel.__file__
        from minimodel.lab.exercises import check_solution, isolation
        if {partial!r}:
            isolation.probe = lambda: isolation.Isolation("partial", "test: forced partial")
        try:
            result = check_solution({exercise!r}, source=sys.stdin.read(), seed=3)
        except Exception as exc:
            result = {{"raised": type(exc).__name__, "message": str(exc)}}
        print(json.dumps(result, default=str))
    """)
    env = {**os.environ, "HOME": str(home), "MINIMODEL_LEARNER_DIR": str(home / ".minimodel"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", driver], input=source, capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _from_file_attack(target: Path, payload: bytes) -> str:
    """A tied-head solution that overwrites ``target`` in place through a shared mapping,
    then returns a wrong answer (the untransposed product would be a shape error; h sum)."""
    return textwrap.dedent(f"""
        import torch

        FRAMEWORK = "torch"
        PAYLOAD = {payload!r}


        def tied_logits(h, E):
            try:
                m = torch.from_file({str(target)!r}, shared=True, size=len(PAYLOAD),
                                    dtype=torch.uint8)
                m[:] = torch.tensor(list(PAYLOAD), dtype=torch.uint8)
            except Exception:
                pass
            return (h @ E.T) * 1.5
    """)


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
@pytest.mark.parametrize("mode", ["full", "partial"])
def test_from_file_cannot_change_the_verdict_and_tampering_is_caught(mode, tmp_path):
    if mode == "full" and probe().level != "full":
        if REQUIRED:
            pytest.fail(probe().reason)
        pytest.skip(probe().reason)
    root = _copy_package(tmp_path)
    reference = root / "minimodel/lab/content/exercises/tied-head-logits/reference.py"
    original = reference.read_bytes()
    payload = b'"""x"""\n\n\ndef tied_logits(h, E):\n    return (h @ E.T) * 1.5 #'
    payload += b" " * (len(original) - len(payload))
    first = _judge_in(root, "tied-head-logits", _from_file_attack(reference, payload),
                      partial=mode == "partial", home=tmp_path)
    # The expected outputs were computed before the child started: the verdict stands.
    assert first["status"] == "wrong", first
    if mode == "full":
        assert reference.read_bytes() == original  # the package is not even visible
        return
    # Partial: the copy's reference was rewritten (documented), and the next check refuses.
    assert reference.read_bytes() != original
    second = _judge_in(root, "tied-head-logits", "def tied_logits(h, E):\n    return h @ E.T\n",
                       partial=True, home=tmp_path)
    assert second.get("raised") == "ContentTampered", second


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_from_file_cannot_reach_progress_pycache_or_a_user_file(full):
    """Stand-ins outside /tmp for the learner's progress, a package __pycache__ file and a
    user's file (made here, never the real ones): the sandbox has none of them."""
    home = Path.home() / f".minimodel-judge-test-{os.getpid()}"
    targets = [home / "progress" / "exercise.json", home / "__pycache__" / "display.pyc",
               home / "notes.txt"]
    try:
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"original " * 4)
        for target in targets:
            result = check_solution("tied-head-logits",
                                    source=_from_file_attack(target, b"forged"), seed=4)
            assert result["status"] == "wrong" and result["isolation"] == "full"
            assert "original" not in json.dumps(result)
        assert all(t.read_bytes() == b"original " * 4 for t in targets)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("encoding,json_out", [("cp437", False), ("utf-8", True)])
def test_the_cli_imports_no_module_at_all_after_the_child_runs(tmp_path, encoding, json_out):
    """No module whatsoever (minimodel's, Rich's emoji table, a codec such as
    encodings.cp437 ...) is imported after the child starts: without bubblewrap a solution
    could have planted a file for it in a Python the learner owns. The child writes no
    bytecode either."""
    wrong = get_exercise("gelu-tanh").folder / "wrong" / "flattens.py"
    script = textwrap.dedent(f"""
        import sys
        from minimodel.cli import main
        from minimodel.lab.exercises import judge
        real, seen = judge.run_solution, {{}}
        def spy(*a, **k):
            seen["before"] = set(sys.modules)
            return real(*a, **k)
        judge.run_solution = spy
        code = main(["exercise", "check", "gelu-tanh", "--file", {str(wrong)!r}]
                    + (["--json"] if {json_out!r} else []))
        print("LATE", sorted(set(sys.modules) - seen["before"]), code, file=sys.stderr)
    """)
    env = {**os.environ, "MINIMODEL_LEARNER_DIR": str(tmp_path / "learner"),
           "PYTHONIOENCODING": encoding}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600, encoding="utf-8", errors="replace")
    late = [ln for ln in done.stderr.splitlines() if ln.startswith("LATE")]
    assert late == ["LATE [] 1"], (done.stdout[-1500:], done.stderr[-1500:])


def test_the_reference_is_compiled_from_verified_bytes_not_pycache(tmp_path, monkeypatch):
    from minimodel.lab.exercises import judge

    ex = get_exercise("tied-head-logits")
    calls = []
    real = integrity.verified_bytes

    def spy(path):
        calls.append(Path(path))
        return real(path)
    monkeypatch.setattr(integrity, "verified_bytes", spy)
    fn = judge.reference_function(ex)
    assert calls == [ex.reference_path] and fn.__code__.co_filename == str(ex.reference_path)


# --- attack: the seed oracle --------------------------------------------------------------

def test_hidden_feedback_names_clauses_never_expected_values(tmp_path):
    ex = get_exercise("cross-entropy")
    table = "import numpy as np\n\n\ndef cross_entropy(logits, targets, ignore_index=-100):\n" \
            "    return np.asarray(1.2345, dtype=logits.dtype)\n"
    result = check_solution(ex, source=table, seed=7)
    assert result["status"] == "wrong" and result["practice"] is True
    from minimodel.lab.exercises.judge import build_cases, expected_outputs

    cases = build_cases(ex, 7)
    expected = expected_outputs(ex, cases)
    named: set[str] = set()
    for case, entry, want in zip(cases, result["cases"], expected):
        if not entry["hidden"]:
            continue
        assert "expected" not in entry["message"] and "se esperaba" not in entry["message"]
        for digits in (f"{float(want.like[0]):.8g}", f"{float(want.like[0]):.4g}"):
            assert len(digits) < 4 or digits not in entry["message"], (entry, digits)
        tested = [c["en"] for c in ex.clauses if case.kind in c["kinds"]]
        assert entry["clauses"] == tested
        new = [c for c in tested if c not in named]   # each clause is named once, first
        if new and entry["status"] == "wrong":
            assert "this case tests: " + "; ".join(new) in entry["message"], entry
            named.update(new)


def test_a_perfect_table_for_a_chosen_seed_is_never_a_recorded_pass(tmp_path, monkeypatch,
                                                                    capsys):
    """Four --seed 7 checks could at best make a table exact for seed 7: even the reference
    itself, checked with --seed, is practice and leaves the exercise unpassed."""
    from minimodel.cli import main
    from minimodel.lab.progress import Progress

    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    ref = get_exercise("cross-entropy").reference_path
    for _ in range(4):
        assert main(["exercise", "check", "cross-entropy", "--file", str(ref), "--seed", "7",
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["passed"] is True and out["practice"] is True
    entry = Progress(tmp_path / "learner").get("exercise", "cross-entropy")
    assert entry["status"] == "attempted" and entry["practice"] is True
    # the lab's own reference is practice even without a seed, and so is a copy of it
    # anywhere (by content); the learner's own file is not
    copy = tmp_path / "copied.py"
    copy.write_bytes(ref.read_bytes())
    for path in (ref, copy):
        assert main(["exercise", "check", "cross-entropy", "--file", str(path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["practice"] is True
    assert Progress(tmp_path / "learner").get("exercise", "cross-entropy")["status"] != "passed"
    mine = tmp_path / "cross_entropy.py"
    mine.write_text(retyped(ref.read_text(encoding="utf-8")), encoding="utf-8")
    assert main(["exercise", "check", "cross-entropy", "--file", str(mine), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["practice"] is False
    assert Progress(tmp_path / "learner").get("exercise", "cross-entropy")["status"] == "passed"


# --- attack: torch's fused paths through an allowed class, in a NumPy-only exercise --------

FUSED = """import numpy as np


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    torch = __import__("tor" + "ch")
    layer = getattr(torch.nn, "TransformerEncoder" + "Layer")(x.shape[-1], 1, batch_first=True)
    xt = torch.from_numpy(np.ascontiguousarray(x))
    norm = layer.norm1.to(xt.dtype)
    norm.eps = eps
    with torch.no_grad():
        norm.weight.fill_(1.0)
        norm.bias.zero_()
        y = norm(xt).numpy()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(x.dtype)
"""


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_only_exercise_has_no_torch_in_full_isolation(full):
    # any spelling of the import is refused by the run-time rule ...
    result = check_solution("layer-norm", source=FUSED, seed=5)
    assert result["status"] == "forbidden" and result["forbidden"][0]["name"] == "torch"
    # ... and with the rule undone on purpose, the sandbox has no torch to give
    result = check_solution("layer-norm", source=UNDO_RULE + FUSED, seed=5)
    assert result["status"] == "error" and not result["passed"]
    assert "NumPy-only" in result["cases"][0]["message"]


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_only_is_not_enforced_without_bubblewrap_as_documented(partial):
    result = check_solution("layer-norm", source=FUSED, seed=5)
    assert result["isolation"] == "partial" and result["status"] == "forbidden"
    # the rule undone on purpose: nothing else stops torch without the sandbox (documented)
    result = check_solution("layer-norm", source=UNDO_RULE + FUSED, seed=5)
    assert result["status"] == "passed", result["cases"][:2]


def test_the_static_rule_refuses_torch_by_name_in_a_numpy_only_exercise():
    result = check_solution("layer-norm", source="import torch\n\n\ndef layer_norm(x):\n"
                                                  "    return x\n", seed=5)
    assert result["status"] == "forbidden" and result["forbidden"][0]["name"] == "torch"


# --- honest code always runs ----------------------------------------------------------------

HONEST = {
    "utf-8 BOM": "\ufeff" + GELU_REF.read_text(),
    "name mangling": gelu_solution("""
        class Gelu:
            def __init__(self):
                self.__c = math.sqrt(2 / math.pi)

            def __call__(self, x):
                return 0.5 * x * (1.0 + np.tanh(self.__c * (x + 0.044715 * x**3)))
        """, "assert np.allclose(Gelu()(x), " + GELU_BODY + ")"),
    "postponed annotations": "from __future__ import annotations\n" + gelu_solution("""
        import dataclasses
        import typing


        @dataclasses.dataclass
        class Coef:
            c: float
            nxt: Coef | None = None


        def scale(x: np.ndarray, k: Coef) -> np.ndarray:
            return k.c * x
        """, "typing.get_type_hints(scale)\nCoef(1.0, Coef(2.0))"),
    "own attributes": gelu_solution("""
        class Helper:
            pass
        """, "h = Helper()\nh._x = x\nh.__dict__['_y'] = 1\nx = h._x"),
    "recursion, generators, float64": gelu_solution("""
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)


        def squares(xs):
            for v in xs:
                yield float(v) ** 2
        """, "assert depth(200) == 200\nlist(squares(x.reshape(-1).astype(np.float64)))"),
}
TORCH_STYLE = ("import math\nimport torch\n\nFRAMEWORK = 'torch'\n\n\ndef tied_logits(h, E):\n"
               "    return torch.einsum('ntd,vd->ntv', h, E)\n")


@pytest.mark.parametrize("mode", ["full", "partial"])
def test_honest_solutions_still_pass(mode, monkeypatch):
    """BOM, name mangling, postponed annotations, attributes on own objects, recursion,
    generators, float64 inside, NumPy and PyTorch style. The limit is the exercise's own:
    torch's import happens before the clock starts, so a busy machine does not flip this."""
    if mode == "partial":
        monkeypatch.setattr(isolation, "probe",
                            lambda: Isolation("partial", "test: forced partial"))
    elif probe().level != "full":
        if REQUIRED:
            pytest.fail(probe().reason)
        pytest.skip(probe().reason)
    for name, source in HONEST.items():
        result = check_solution("gelu-tanh", source=source, seed=6)
        assert result["status"] == "passed", (name, result["message"], result["cases"][:3])
        assert result["isolation"] == mode
    if HAS_TORCH:
        result = check_solution("tied-head-logits", source=TORCH_STYLE, seed=6)
        assert result["status"] == "passed", result["message"]


@pytest.mark.parametrize("mode", ["full", "partial"])
def test_python_in_a_venv_under_tmp_runs(mode, tmp_path):
    """A venv under /tmp (a CI runner's layout) runs the judge in both modes; this process's
    own interpreter lives under $HOME or a venv folder and runs everywhere above."""
    if mode == "full" and probe().level != "full":
        if REQUIRED:
            pytest.fail(probe().reason)
        pytest.skip(probe().reason)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=300)
    src = str(PACKAGE_DIR.parent)
    site = [p for p in sys.path if p.endswith("site-packages")]
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{src!r}] + {site!r}
        from minimodel.lab.exercises import check_solution, isolation
        if {mode == "partial"!r}:
            isolation.probe = lambda: isolation.Isolation("partial", "test: forced partial")
        assert sys.prefix == {str(venv)!r}, sys.prefix
        r = check_solution("gelu-tanh", {str(GELU_REF)!r}, seed=8)
        print(r["status"], r["isolation"], r["message"])
    """)
    done = subprocess.run([str(venv / "bin" / "python"), "-c", script], capture_output=True,
                          text=True, timeout=600)
    assert done.stdout.split()[:2] == ["passed", mode], (done.stdout, done.stderr[-1500:])


# --- resources ------------------------------------------------------------------------------

def test_memory_limit_does_not_depend_on_words_in_the_source():
    hog = "import numpy as np\n\n\ndef gelu(x):\n    np.ones(2**33, dtype=np.uint8)\n    return x\n"
    for source in (hog, "# torch torch torch\n" + hog):
        result = check_solution("gelu-tanh", source=source, seed=0)
        text = result["message"] + " ".join(c["message"] for c in result["cases"])
        assert result["status"] == "error" and ("MemoryError" in text or "memory" in text)


def _judge_cgroups() -> list[Path]:
    iso = probe()
    if iso.cgroup is None:
        return []
    return [p for parent in iso.cgroup.dirs.values()
            for p in parent.glob(f"minimodel-judge-{os.getpid()}-*")]  # ours, not other judges'



def test_no_judge_cgroup_is_left_behind(tmp_path):
    iso = probe()
    if iso.cgroup is None:
        pytest.skip("no writable cgroup here: the judge uses rlimits")
    assert _judge_cgroups() == []
    loop = "def gelu(x):\n    while True:\n        pass\n"
    forks = ("def gelu(x):\n    os = __import__('o' + 's')\n    for _ in range(3):\n"
             "        if os.fork() == 0:\n            while True:\n                pass\n"
             "    return x\n")
    for source, timeout in ((GELU_REF.read_text(), None), (loop, 2.0), (forks, 5.0)):
        check_solution("gelu-tanh", source=source, seed=0, timeout=timeout)
        assert _judge_cgroups() == []
    # A judge killed before it could clean up leaves an empty cgroup: the next probe removes it.
    parent = next(iter(iso.cgroup.dirs.values()))
    stale = parent / "minimodel-judge-999999999-dead"
    stale.mkdir()
    isolation.CgroupLimits(iso.cgroup.dirs, iso.cgroup.version).sweep(min_age=0)
    assert not stale.exists()


def test_an_installed_package_inside_the_python_prefix_is_still_hidden(full, monkeypatch):
    """pip install (not editable) puts minimodel inside site-packages, which the sandbox
    mounts: the package folder is then covered by an empty tmpfs."""
    roots = isolation.python_roots() + [str(PACKAGE_DIR.parent)]
    monkeypatch.setattr(isolation, "python_roots", lambda: roots)
    inside = f"""
        os = __import__('o' + 's')
        raise RuntimeError(repr([os.path.exists({str(GELU_REF)!r}),
                                 os.path.isdir({str(PACKAGE_DIR)!r}),
                                 os.path.exists({str(PACKAGE_DIR.parent.parent / 'README.md')!r})]))
    """
    result = check_solution("gelu-tanh", source=gelu_solution(inside=inside), seed=1)
    assert result["cases"][0]["message"].endswith("[False, True, False]"), result["cases"][0]


# --- attack: terminal escape sequences in what the solution's process says -------------------

ESCAPES = "\x1b[1A\x1b[2K\x1b]52;c;cHduZWQ=\x07\r\x08\x9b2K\u202e"
FAKE_PASS = ESCAPES + "\x1b[32mPASSED: 7 of 7 cases passed\x1b[8m"
CONTROLS = "\x1b\x07\r\x08\x9b\u202e"  # the characters of ESCAPES a terminal acts on


def _controls(value) -> list[str]:
    """Every string in ``value`` that holds a character a terminal would act on."""
    if isinstance(value, str):
        return [value] if any(c in value for c in CONTROLS) else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _controls(k) + _controls(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _controls(v)]
    return []


@pytest.mark.parametrize("where", ["load", "case", "stderr", "channel"])
@pytest.mark.parametrize("mode", ["full", "partial"])
def test_escape_sequences_from_the_solution_never_reach_the_terminal(mode, where, monkeypatch,
                                                                   capsys):
    """A failing solution puts cursor moves, erase-line, an OSC 52 clipboard write, CR,
    backspace, a C1 CSI and a bidi override in its exception message (at load time, the
    verdict line shows it; in a case, the table does), on stderr (the tail is shown) or in a
    frame the channel refuses (its problem quotes it). Rich escapes markup, not these: the
    terminal erased the verdict line and printed a green pass. Every string of the result is
    now free of them, and so is what ``print_result`` writes."""
    if mode == "full" and probe().level != "full":
        if REQUIRED:
            pytest.fail(probe().reason)
        pytest.skip(probe().reason)
    if mode == "partial":
        monkeypatch.setattr(isolation, "probe", lambda: Isolation("partial", "test: forced"))
    fake = repr(FAKE_PASS)
    before = {"load": f"raise ValueError({fake})\n",
              "stderr": f"__import__('s' + 'ys').stderr.write({fake} * 3 + '\\n')\n"
                        "__import__('o' + 's')._exit(3)\n",
              "channel": f"""
os = __import__('o' + 's')
CFG = __import__('js' + 'on').load(open(__import__('s' + 'ys').argv[1]))
st = __import__('str' + 'uct')
body = b'J' + __import__('js' + 'on').dumps({{'event': 'case', 'index': {fake}}}).encode()
os.write(CFG['channel_fd'], st.pack('>I', len(body)) + body)
"""}.get(where, "")
    inside = f"raise ValueError({fake})" if where == "case" else ""
    result = check_solution("gelu-tanh", source=gelu_solution(before, inside), seed=3)
    assert result["status"] == "error", result
    assert _controls(result) == [], _controls(result)[:3]
    from minimodel.lab.exercises.display import print_result
    capsys.readouterr()
    print_result(result, "en")
    shown = capsys.readouterr().out
    assert not any(c in shown for c in CONTROLS), shown[-600:]
    assert "\\x1b" in shown or where == "channel" and "\\x1b" in result["message"]
