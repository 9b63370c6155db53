"""Set-up for the doctor's tests: offline transformers, one torch thread, the helpers' path."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # makes doctor_helpers importable whatever the import mode
    sys.path.insert(0, _HERE)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sweep():
    """benchmarks/doctor_hf_sweep.py as a module: the sweep's builders and ground truth."""
    spec = importlib.util.spec_from_file_location("doctor_hf_sweep",
                                                  ROOT / "benchmarks" / "doctor_hf_sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Tiny models gain nothing from threads on a busy 2-core machine."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    """Each test asks transformers afresh: the doctor's cache of its answers (in
    XDG_CACHE_HOME) is a folder of the test's own, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
