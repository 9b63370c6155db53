"""Shared setup for the core-library tests (engine, ops, nn, optim).

Makes the helper module ``core_gradcheck`` importable from every test file here, whatever
pytest import mode is in use, and registers a fast Hypothesis profile.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, so every failure is reproducible."""
    return np.random.default_rng(1234)
