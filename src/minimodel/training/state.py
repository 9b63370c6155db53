"""The batch sampler's random state, saved so that ``--resume`` draws the very next batch.

Resuming reproduces the uninterrupted run bit for bit only if the weights, the optimizer
moments, the step counter (hence the learning rate) *and* the sampler's position are all
restored. The first three live in the checkpoint (:mod:`minimodel.training.checkpoint`); this
module turns the NumPy generator into JSON and back.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def rng_state_to_json(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's full state (PCG64 integers are exact in JSON)."""
    return rng.bit_generator.state


def rng_from_json(state: Any) -> np.random.Generator:
    """A generator in the saved state; a damaged state is a clear ValueError."""
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        name = state.get("bit_generator") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"the saved batch-sampler state is {name!r}, expected a PCG64 state; "
                         "the run state is damaged")
    bitgen = np.random.PCG64()
    try:
        bitgen.state = state
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"the saved batch-sampler state is damaged ({exc})") from None
    return np.random.Generator(bitgen)
