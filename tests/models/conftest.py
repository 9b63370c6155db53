"""Every model test runs twice: with the fast kernels (the default) and on the composites only
(``mm.kernels(False)``, the teaching mode), so both codes are known to train the models."""

import pytest

import minimodel as mm


@pytest.fixture(autouse=True, params=["kernels", "composites"])
def kernel_mode(request):
    with mm.kernels(request.param == "kernels"):
        yield request.param
