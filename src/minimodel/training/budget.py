"""Will a run fit in memory? An estimate made before anything big is allocated.

Sizes typed by mistake (``--batch-size 100000``, ``--d-model 65536``) would otherwise end in a
MemoryError deep inside NumPy, or in minutes of swapping. The estimate counts what a training
step keeps alive, in float32 (4 bytes):

* parameters P, times 5: the weights, their gradients, AdamW's two moments and its scratch;
* activations saved for backward, per block and token: about 20 d (LayerNorms, Q/K/V, the
  MLP's 4d hidden layer and GELU, residuals) plus 3 H T (attention scores, probabilities and
  their gradient) — the usual transformer accounting (Korthikanti et al. 2022), in float32;
* the output head: one chunk of logits (about 16 MiB) with kernels, or 3 B T V floats for the
  composites (``MINIMODEL_KERNELS=0``), which hold the whole logits matrix.

It is an estimate, deliberately generous; it refuses only when it exceeds the memory the
operating system says is available.
"""

from __future__ import annotations

import os
from typing import Any

from minimodel.dispatch import kernels_enabled
from minimodel.messages import PhraseError, phrase

FLOAT = 4


def parameter_count(cfg: Any, vocab_size: int) -> int:
    """Parameters of the model ``cfg`` describes (tied matrices counted once)."""
    d, V = cfg.d_model, vocab_size
    head = 0 if cfg.tied else V * d
    if cfg.model == "cbow":
        return V * d + head
    L, T = cfg.n_layer, cfg.block_size
    per_block = 12 * d * d + 13 * d  # c_attn, c_proj, c_fc, c_proj, biases, two LayerNorms
    return V * d + head + T * d + L * per_block + 2 * d


def estimate_bytes(cfg: Any, vocab_size: int) -> int:
    """Bytes a training step of ``cfg`` keeps alive (see the module docstring)."""
    params = 5 * FLOAT * parameter_count(cfg, vocab_size)
    if cfg.model == "cbow":
        tokens = cfg.batch_size
        activations = FLOAT * tokens * cfg.d_model * (2 * cfg.window + 2)
        rows = tokens
    else:
        tokens = cfg.batch_size * cfg.block_size
        per_token = 20 * cfg.d_model + 3 * cfg.n_head * cfg.block_size
        activations = FLOAT * tokens * cfg.n_layer * per_token
        rows = tokens
    head = 16 * 2**20 if kernels_enabled() else 3 * FLOAT * rows * vocab_size
    return params + activations + head


def available_bytes() -> int | None:
    """Memory the OS can give us now (Linux ``MemAvailable``), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(cfg: Any, vocab_size: int) -> None:
    """Refuse, in one sentence naming the sizes, a run that cannot fit in memory."""
    need, have = estimate_bytes(cfg, vocab_size), available_bytes()
    if have is None or need <= have:
        return
    gib = 2**30
    sizes = (f"--batch-size {cfg.batch_size}, --d-model {cfg.d_model}"
             + ("" if cfg.model == "cbow" else
                f", --block-size {cfg.block_size}, --n-layer {cfg.n_layer}, "
                f"--n-head {cfg.n_head}"))
    raise PhraseError(phrase("train.too_big", need=need / gib, sizes=sizes, vocab=vocab_size,
                             parameters=parameter_count(cfg, vocab_size), have=have / gib))
