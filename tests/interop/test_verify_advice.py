"""`export --verify` without torch/transformers suggests the CPU wheel, never an install that
pulls several GB of CUDA packages on a CPU machine."""

import sys

import pytest

from minimodel.interop.verify import verify_hf_export
from minimodel.models import GPT, GPTConfig


def test_missing_transformers_gets_cpu_install_advice(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers -> ImportError
    with pytest.raises(ImportError) as err:
        verify_hf_export(GPT(GPTConfig(11, 4, 1, 1, 4)), tmp_path)
    text = str(err.value)
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    assert ".[hf]" not in text and "pip install torch\n" not in text
