"""The worked examples in the two files that tell the story of a tie run as written."""

import doctest

import pytest

import minimodel as mm
from minimodel.nn import embedding, lm_head


@pytest.mark.parametrize("kernels_on", [True, False], ids=["kernels", "composites"])
@pytest.mark.parametrize("module", [embedding, lm_head], ids=lambda m: m.__name__)
def test_worked_examples_in_the_docstrings(module, kernels_on):
    with mm.kernels(kernels_on):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0
