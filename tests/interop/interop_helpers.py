"""Constants and small helpers shared by the interop tests (imported by conftest and tests)."""

from __future__ import annotations

from typing import Any

import numpy as np

# (vocab, block, layers, heads, d_model): spans the sizes of the brief.
SIZES = [
    (50, 8, 1, 1, 16),
    (300, 32, 3, 4, 32),
    (300, 16, 2, 2, 16),
    (50, 24, 2, 4, 32),
]

VARIED_TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "¿Dónde está el niño? ¡Está en el jardín con su pingüino! Año 2024, señor Muñoz.",
    "Straße, Ærø, naïve café, déjà vu — «quotes» and “curly” ones…",
    "digits 0 1 12 123 1234 12345 3.14159 -42 1e-5 x²+½ ①②",
    "punctuation!!! ??? ... ,;: () [] {} <> @#$%^&*_+=|\\/~`'\"",
    "it's they'll I'M we've you'd DON'T  'quoted'",
    "line one\nline two\n\n\nafter blank lines\r\nwindows\tTab\t\tdouble",
    "   leading spaces and trailing spaces   ",
    "emoji 😀👍🏽🇪🇸 family 👨‍👩‍👧 and ZWJ, 中文字符, 日本語, русский, العربية",
    "",
    " ",
    "\n",
]


def perturb_numpy(model: Any, seed: int) -> None:
    """Add N(0, 0.1^2) noise to every parameter (LayerNorm scales/biases start at 1/0)."""
    rng = np.random.default_rng(seed)
    for _, p in model.named_parameters():
        p.data[...] += (rng.standard_normal(p.shape) * 0.1).astype(p.data.dtype)
