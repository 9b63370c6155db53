"""The README's main-job figures are what `minimodel train` prints: the baselines exactly (they
are float64 sums of counts, the same on every CPU), the validation loss within the tolerance
the README declares beside it (a float32 training run: each CPU's BLAS adds in its own order,
and floating-point addition is not associative; `python benchmarks/main_job_drift.py`
measures the spread across OpenBLAS core types)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from minimodel.cli import main

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _figure(pattern: str) -> re.Match:
    found = re.search(pattern, README)
    assert found, f"the README's main-job table no longer has a row matching {pattern!r}"
    return found


def test_the_readme_declares_its_tolerance_beside_the_figure():
    row = _figure(r"\| validation loss \(whole validation split\) \| \*\*(?P<loss>\d\.\d{4}) "
                  r"nats/token\*\*[^|\n]*?± (?P<tolerance>0\.\d+)")
    assert 0 < float(row["tolerance"]) < 0.05          # a tolerance, not a different figure


@pytest.mark.slow
def test_the_main_job_prints_the_readme_figures(tmp_path, capsys):
    if os.environ.get("MINIMODEL_KERNELS") == "0":
        pytest.skip("the README's figure is the default engine's run (the first pass checks "
                    "it); the composites are checked against the kernels in tests/kernels")
    loss = _figure(r"\| validation loss \(whole validation split\) \| \*\*(?P<value>\d\.\d{4}) "
                   r"nats/token\*\*[^|\n]*?± (?P<tolerance>0\.\d+)")
    unigram = _figure(r"\| unigram baseline \(train-set token frequencies\) \| "
                      r"(?P<value>\d\.\d{4}) nats/token")
    uniform = _figure(r"\| uniform baseline ln V \| (?P<value>\d\.\d{4}) \|")
    assert main(["train", "--out", str(tmp_path / "run")]) == 0      # the README's command
    capsys.readouterr()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert f"{summary['unigram_baseline']:.4f}" == unigram["value"]
    assert f"{summary['uniform_baseline']:.4f}" == uniform["value"]
    assert abs(summary["val_loss"] - float(loss["value"])) <= float(loss["tolerance"]), \
        f"val loss {summary['val_loss']:.6f}, the README says {loss['value']} ± " \
        f"{loss['tolerance']}"
