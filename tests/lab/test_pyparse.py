"""parse_python: ast.parse that several threads can call at once (CPython gh-106905)."""

import threading
import time
from pathlib import Path

import pytest

import minimodel.lab.exercises.sandbox as sandbox_module
from minimodel.lab.pyparse import parse_python


class _FinalisedCycle:
    """Cyclic garbage whose finaliser yields the GIL: the garbage collector runs it in the
    middle of another thread's parse, which is how CI once hit the shared-depth bug."""

    def __del__(self):
        time.sleep(0)


def test_parallel_parses_never_corrupt_each_other():
    source = Path(sandbox_module.__file__).read_text() * 2
    expected = len(parse_python(source).body)
    errors, sizes = [], []

    def work():
        for _ in range(15):
            for _ in range(300):
                cycle = _FinalisedCycle()
                cycle.self = cycle
            try:
                sizes.append(len(parse_python(source).body))
            except SystemError as exc:   # "AST constructor recursion depth mismatch"
                errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sizes == [expected] * 90


def test_syntax_errors_still_surface():
    with pytest.raises(SyntaxError):
        parse_python("def broken(:\n")
