"""Inside a benchmark worker: process setup, the training steps being timed, and the timer.

Every implementation trains the same network from the same weights on the same batch: the
minimodel GPT of ``shape`` (seed 0), and its PyTorch twins (:mod:`minimodel.bench.peers`)
loaded with that GPT's initial weights, so all report the same first loss.
"""

from __future__ import annotations

import resource
import statistics
import time
from typing import Any, Callable

SEED = 0
LR, WEIGHT_DECAY = 1e-3, 0.01
# Step variants that run minimodel (the rest are PyTorch peers).
MINIMODEL_IMPLS = ("minimodel", "minimodel-default", "minimodel-plain", "masked", "full",
                   "full-chunked")


# --------------------------------------------------------------------------- process setup
def setup_minimodel(threads: int, allocator: bool = True) -> str:
    """minimodel's speed settings, exactly as ``minimodel train`` applies them.

    The allocator preset respects ``MINIMODEL_TUNE_MALLOC=0`` (the runner sets it for the
    "allocator off" variant); ``allocator=False`` skips it whatever the environment says.
    """
    from minimodel.runtime import configure, set_blas_threads

    if not allocator:
        set_blas_threads(threads)
        return f"BLAS threads: {threads}"
    # The benchmark's own record (not a learner's line): no message catalogue to load here.
    choice, _ = configure(threads)
    return f"BLAS threads: {threads}" + ("" if choice == "set" else " (no BLAS library found)")


def setup_torch(threads: int) -> str:
    import torch

    torch.set_num_threads(threads)
    return f"torch threads: {torch.get_num_threads()}"


def setup_for(impl: str, threads: int) -> str:
    return setup_minimodel(threads) if impl in MINIMODEL_IMPLS else setup_torch(threads)


# --------------------------------------------------------------------------- data and models
def shape_of(task: dict):
    from minimodel.bench.spec import Shape

    return Shape(**task["shape"])


def batch(shape, seed: int = SEED):
    """(inputs, next-token targets), each (B, T) int64, uniform over the vocabulary."""
    import numpy as np

    rng = np.random.default_rng(seed)
    seq = rng.integers(0, shape.V, size=(shape.B, shape.T + 1), dtype=np.int64)
    return seq[:, :-1].copy(), seq[:, 1:].copy()


def minimodel_gpt(shape, block_size: int | None = None):
    import numpy as np

    from minimodel.models import GPT, GPTConfig

    config = GPTConfig(vocab_size=shape.V, block_size=block_size or shape.T, n_layer=shape.L,
                       n_head=shape.H, d_model=shape.d, tie_embeddings=True, dropout=0.0)
    return GPT(config, rng=np.random.default_rng(SEED))


def gpt_loss(model, x, y):
    """The training loss without the (B, T, V) logits: ``model.loss(x, y)`` (the chunked tied
    head). Older checkouts (``--against``): ``model(x, y, return_logits=False)``, or
    ``model(x, y)`` before that option."""
    if hasattr(model, "loss"):
        return model.loss(x, y)
    try:
        return model(x, y, return_logits=False)[1]
    except TypeError:
        return model(x, y)[1]


def loss_and_backward(model, x, y) -> float:
    """Loss and gradients as ``minimodel train`` and a learner's own loop compute them:
    ``model.loss(x, y)`` then ``backward()`` (the batch's halves in two threads with kernels
    on: the kernel of ``F.batch_loss``). Older checkouts split the batch in
    ``training.batch_split.loss_and_backward`` instead."""
    try:
        from minimodel.training.batch_split import loss_and_backward as train_loss_and_backward
    except ImportError:
        loss = gpt_loss(model, x, y)
        loss.backward()
        return float(loss.item())
    return train_loss_and_backward(model, x, y)


def build_step(impl: str, shape) -> tuple[Callable[[], float], dict[str, Any]]:
    """A closure running one training step (forward, backward, AdamW, zero_grad) -> loss."""
    x, y = batch(shape)
    if impl in ("minimodel", "minimodel-default", "minimodel-plain"):
        from minimodel import optim

        model = minimodel_gpt(shape)
        opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
        # "minimodel-default": the plain `logits, loss = model(x, y)` a learner writes (the
        # logits are made, as torch's are); "minimodel": what `minimodel train` runs.
        # "minimodel-plain": the two lines `loss = model.loss(x, y); loss.backward()` in any
        # checkout (in older ones `minimodel train` split the batch outside them).
        def loss_of() -> float:
            if impl in ("minimodel-default", "minimodel-plain"):
                loss = model(x, y)[1] if impl == "minimodel-default" else gpt_loss(model, x, y)
                loss.backward()
                return float(loss.item())
            return loss_and_backward(model, x, y)

        def step() -> float:
            value = loss_of()
            opt.step()
            opt.zero_grad()
            return value

        return step, {"optimizer": "minimodel.optim.AdamW"}

    import torch

    from minimodel.bench import peers

    mm_model = minimodel_gpt(shape)  # the weights every implementation starts from
    if impl in ("nanogpt", "torch-compile"):
        model = peers.nanogpt(shape, mm_model.state_dict())
        # torch.compile (inductor, C++ on the CPU) compiles forward and backward during the
        # first warm-up step; the timed steps run the compiled code.
        loss_fn = torch.compile(model) if impl == "torch-compile" else model
    elif impl in ("hf-eager", "hf-sdpa"):
        model = peers.hf_gpt2(shape, impl.split("-")[1], mm_model)

        def loss_fn(idx, targets):
            return peers.hf_loss(model, idx, targets)
    else:
        raise ValueError(f"unknown step implementation {impl!r}")
    del mm_model
    opt, opt_desc = peers.adamw(model.parameters(), LR, WEIGHT_DECAY)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def step() -> float:
        loss = loss_fn(tx, ty)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return float(loss.item())

    blas = [part.split("=", 1)[1] for part in torch.__config__.show().replace(",", " ").split()
            if part.startswith("BLAS_INFO=")]
    return step, {"optimizer": f"torch.optim.AdamW {opt_desc}", "torch": torch.__version__,
                  "torch_blas": blas[0] if blas else "?"}


# --------------------------------------------------------------------------- the timer
def time_steps(step: Callable[[], float], warmup: int, steps: int) -> dict[str, Any]:
    """Run ``warmup`` untimed steps, then ``steps`` timed ones (wall and process-CPU time).

    Process CPU time / wall time above 1 means BLAS threads worked in parallel; minor page
    faults per step show the allocator at work (freshly mapped temporaries fault on first
    touch, see :mod:`minimodel.runtime`).
    """
    losses = [step() for _ in range(warmup)]
    wall, cpu = [], []
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(steps):
        c0, t0 = time.process_time(), time.perf_counter()
        losses.append(step())
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"median_s": statistics.median(wall), "min_s": min(wall), "max_s": max(wall),
            "times_s": wall, "cpu_median_s": statistics.median(cpu),
            "loss_first": float(losses[0]), "loss_last": float(losses[-1]),
            "minor_faults_per_step": (ru.ru_minflt - faults0) / max(steps, 1),
            "max_rss_mib": ru.ru_maxrss / 1024}


def kernel_state() -> dict[str, Any]:
    """What the worker ran with: ``MINIMODEL_KERNELS`` and the kernels minimodel reports as
    active (``minimodel.active_kernels()``; absent in checkouts older than the registry)."""
    import os

    import minimodel

    state: dict[str, Any] = {"env": os.environ.get("MINIMODEL_KERNELS")}
    if callable(getattr(minimodel, "active_kernels", None)):
        state["active"] = sorted(minimodel.active_kernels())
    return state
