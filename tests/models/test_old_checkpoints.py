"""Checkpoints written before the engine rewrite (commit 1b4a049) still load, tied where they
were tied, and give the logits they gave then."""

import json
from pathlib import Path

import numpy as np
import pytest

import minimodel as mm

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED["logits"]))
def test_checkpoint_from_before_the_rewrite_loads_and_agrees(name):
    model = mm.load(FIXTURES / f"{name}.safetensors")
    assert model.tied == ("_tied" in name)
    if model.tied:
        assert model.get_output_embeddings().weight is model.get_input_embeddings().weight
    ids = np.array(EXPECTED["ids"])
    if name.startswith("cbow"):
        got = model(ids[:, :2])[0].data[0]
    else:
        got = model(ids)[0].data[0, :2]
    np.testing.assert_allclose(got, np.array(EXPECTED["logits"][name]), rtol=1e-5, atol=1e-6)
