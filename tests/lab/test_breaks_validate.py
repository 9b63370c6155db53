"""Every break still works against the current library source (see lab/breaks/validate.py).

This is the drift alarm: when someone edits nn/layers.py, ops.py, optim.py, nn/module.py,
models/gpt.py or data/masking.py, a break whose patch no longer applies, whose experiment no
longer shows its symptom, or whose checks no longer separate broken from fixed shows up here.
"""

from __future__ import annotations

from minimodel.lab.breaks import validate_all


def test_validate_all_finds_no_problems():
    problems = validate_all()
    assert problems == [], "\n".join(problems)
