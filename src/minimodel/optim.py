"""Optimizers (SGD, AdamW), gradient clipping and the learning-rate schedule.

Each optimizer holds ``param_groups`` (lists of parameters with their own hyper-parameters,
as in PyTorch). A parameter may appear only once across all groups: a tied matrix is one
object, and updating it twice per step would silently double its learning rate.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from minimodel.tensor import Tensor
from minimodel.threads import run_parts


class Optimizer:
    """Base class: parameter groups, per-parameter state, zero_grad and (de)serialisation."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        seen: set[int] = set()
        for index, group in enumerate(groups):
            if not isinstance(group, dict) or "params" not in group:
                raise TypeError("parameter groups must be dicts with a 'params' list")
            unknown = set(group) - set(defaults) - {"params"}
            if unknown:
                raise ValueError(f"parameter group {index} has unknown options {sorted(unknown)}; "
                                 f"known: {sorted(defaults)}")
            params_list = list(group["params"])
            for p in params_list:
                if not isinstance(p, Tensor) or not p.requires_grad:
                    raise TypeError(f"{type(self).__name__} optimises tensors with "
                                    f"requires_grad=True, got {p!r}")
                if id(p) in seen:
                    raise ValueError(
                        f"a parameter of shape {p.shape} was passed to {type(self).__name__} "
                        "twice; it would be updated twice per step. Tied matrices are one "
                        "object: pass model.parameters(), which lists each object once.")
                seen.add(id(p))
            self.param_groups.append({**defaults, **group, "params": params_list})
        self.state: dict[Tensor, dict[str, Any]] = {}

    def _params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def _check_state(self, p: Tensor, state: dict[str, Any]) -> None:
        """Refuse to step with moments of another shape or dtype than the parameter's.

        A parameter resized (``resize_token_embeddings``) or cast (``model.astype``) in place
        stays the same object, so this optimizer still holds it, but its moments were made for
        the old array. Mixing them would be silently wrong; rebuilding the optimizer is right.
        """
        for name, value in state.items():
            if isinstance(value, np.ndarray) and (value.shape != p.shape or value.dtype != p.dtype):
                raise ValueError(
                    f"{type(self).__name__}: a parameter is now {p.shape} {p.dtype} but its "
                    f"optimizer state {name!r} is {value.shape} {value.dtype}: the model was "
                    "resized or cast after this optimizer was created. Create a new optimizer "
                    "from model.parameters() (its moments start again from zero).")

    def zero_grad(self) -> None:
        for p in self._params():
            p.grad = None

    def step(self) -> None:
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """Hyper-parameters and per-parameter state, with parameters named by position."""
        index = {id(p): i for i, p in enumerate(self._params())}
        groups = [{k: v for k, v in g.items() if k != "params"} | {"params": [index[id(p)] for p in g["params"]]}
                  for g in self.param_groups]
        state = {index[id(p)]: {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                for k, v in s.items()}
                 for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned, so training resumes exactly."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("optimizer state does not match: it has groups of sizes "
                             f"{[len(g['params']) for g in groups]}, this optimizer "
                             f"{[len(g['params']) for g in self.param_groups]}")
        params = self._params()
        for saved, group in zip(groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {}
        for key, s in state_dict["state"].items():
            p = params[int(key)]
            for name, value in s.items():
                if isinstance(value, np.ndarray) and value.shape != p.shape:
                    raise ValueError(f"optimizer state {name!r} of parameter {key} has shape "
                                     f"{value.shape}, the parameter has {p.shape}")
            self.state[p] = {k: (np.array(v, dtype=p.dtype) if isinstance(v, np.ndarray) else v)
                             for k, v in s.items()}


class SGD(Optimizer):
    """Stochastic gradient descent with momentum and L2 weight decay (PyTorch semantics).

        g <- g + weight_decay * p
        buf <- momentum * buf + g          (buf = g on the first step)
        p <- p - lr * buf
    """

    def __init__(self, params: Iterable[Any], lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD needs lr, momentum, weight_decay >= 0, got {lr}, {momentum}, "
                             f"{weight_decay}")
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})

    def step(self) -> None:
        for group in self.param_groups:
            lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad + wd * p.data if wd else p.grad
                if momentum:
                    state = self.state.setdefault(p, {})
                    self._check_state(p, state)
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = np.array(g, dtype=p.dtype)
                    else:
                        buf = state["momentum_buffer"]
                        buf *= momentum
                        buf += g
                    g = state["momentum_buffer"]
                p.data -= lr * g


# AdamW is elementwise, so a parameter can be updated piece by piece, and two threads can
# update two halves at once (NumPy's loops release the GIL). Measured on 2 cores, the 5.3 M
# parameters of the d=256 GPT inside its training step: 8.9 ms per AdamW step as whole arrays
# in one thread, 7.3 ms as pieces of 128 Ki elements in two threads (the two share one memory
# bus, so less than 2x). Elementwise float arithmetic gives the same bits whatever the cut,
# so this changes the time only, never a result.
PIECE = 131072  # elements per update call: smaller pays more Python overhead per element
SPLIT_ABOVE = 32768  # larger parameters are halved between the threads; smaller go whole


def plan_threads(updates: list[tuple[np.ndarray, ...]]) -> list[list[tuple[int, slice]]]:
    """Which flat element ranges of which update (by index) each of two threads runs.

    ``updates[i]`` holds the arrays of one parameter's update, the parameter first. A large
    parameter is halved, one half per thread, each cut into runs of at most ``PIECE`` (when
    all its arrays are C-contiguous: a flat view must write into them, not into a copy); any
    other goes whole to the thread with less work so far. The same array listed twice (which
    ``Optimizer`` refuses, but a learner's patch might allow) gets the same ranges in the
    same thread, so it is updated twice in order, never by two threads at once.
    """
    plan: list[list[tuple[int, slice]]] = [[], []]
    load = [0, 0]
    thread_of: dict[int, int] = {}  # id of a parameter updated whole -> its thread
    for i, arrays in enumerate(updates):
        p, n = arrays[0], arrays[0].size
        if n > SPLIT_ABOVE and all(a.flags.c_contiguous for a in arrays):
            for thread, (lo, hi) in enumerate(((0, n // 2), (n // 2, n))):
                plan[thread] += [(i, slice(a, min(a + PIECE, hi))) for a in range(lo, hi, PIECE)]
                load[thread] += hi - lo
        else:
            thread = thread_of.setdefault(id(p), load.index(min(load)))
            plan[thread].append((i, slice(0, n)))
            load[thread] += n
    return plan


def adamw_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray,
                 scratch: np.ndarray, decay: float, b1: float, b2: float, eps_hat: float,
                 step_size: float) -> None:
    """One AdamW update of arrays of one shape (a parameter or a piece of it), in place.

        p <- decay * p                            decay = 1 - lr * weight_decay
        m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
        p <- p - step_size * m / (sqrt(v) + eps_hat)

    with ``step_size = lr sqrt(1 - b2^t) / (1 - b1^t)`` and ``eps_hat = eps sqrt(1 - b2^t)``:
    the bias corrections, moved out of the elementwise work. ``scratch`` is overwritten.
    """
    if decay != 1.0:
        p *= decay
    # Why not the shorter g + b (m - g): in float32 it cancels (0.001 g^2 computed as
    # g^2 - 0.999 g^2 on the first step) and drifts from PyTorch by ~1e-4.
    np.multiply(g, 1.0 - b1, out=scratch)
    m *= b1
    m += scratch  # m = b1 m + (1 - b1) g
    np.multiply(g, g, out=scratch)
    scratch *= 1.0 - b2
    v *= b2
    v += scratch  # v = b2 v + (1 - b2) g^2
    np.sqrt(v, out=scratch)
    scratch += eps_hat
    np.divide(m, scratch, out=scratch)
    scratch *= step_size
    p -= scratch


class AdamW(Optimizer):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter 2019), PyTorch semantics.

        p <- p * (1 - lr * weight_decay)
        m <- b1 m + (1 - b1) g,        v <- b2 v + (1 - b2) g^2
        p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

    The update reuses one scratch buffer per parameter, so a step allocates nothing; it runs
    in two threads over halves of each large parameter (see ``thread_ranges``).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"AdamW needs lr, eps, weight_decay >= 0 and betas in [0, 1), got "
                             f"lr={lr}, betas={betas}, eps={eps}, weight_decay={weight_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay})

    def step(self) -> None:
        updates: list[tuple[tuple[np.ndarray, ...], tuple[float, ...]]] = []
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = {"step": 0, "exp_avg": np.zeros_like(p.data),
                                             "exp_avg_sq": np.zeros_like(p.data)}
                self._check_state(p, state)
                state["step"] += 1
                t = state["step"]
                buf = state.get("_scratch")
                if buf is None:  # not saved in state_dict; rebuilt after a load
                    buf = state["_scratch"] = np.empty_like(p.data)
                sqrt_bias2 = math.sqrt(1.0 - b2 ** t)
                updates.append(((p.data, g, state["exp_avg"], state["exp_avg_sq"], buf),
                                (1.0 - lr * wd, b1, b2, eps * sqrt_bias2,
                                 lr * sqrt_bias2 / (1.0 - b1 ** t))))
        if not updates:
            return

        def run(ranges: list[tuple[int, slice]]) -> None:
            for i, elements in ranges:
                arrays, coefficients = updates[i]
                if elements.stop - elements.start < arrays[0].size:  # a piece: flat views
                    arrays = tuple(a.reshape(-1)[elements] for a in arrays)
                adamw_update(*arrays, *coefficients)

        plan = plan_threads([arrays for arrays, _ in updates])
        run_parts([lambda ranges=ranges: run(ranges) for ranges in plan if ranges])

    def state_dict(self) -> dict[str, Any]:
        sd = super().state_dict()
        for s in sd["state"].values():
            s.pop("_scratch", None)
        return sd


def clip_grad_norm(params: Iterable[Tensor], max_norm: float) -> float:
    """Scale gradients in place so their global L2 norm is at most ``max_norm``.

    The norm is sqrt(sum over *distinct* parameters of |g|^2): a tied matrix is counted once
    even if the iterable names it twice. Returns the norm before clipping.
    """
    unique = {id(p): p for p in params if p.grad is not None}
    grads = [p.grad for p in unique.values()]
    total = math.sqrt(sum(float(np.vdot(g, g)) for g in grads))
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for g in grads:
            g *= coef
    return total


def cosine_with_warmup(step: int, max_lr: float, warmup_steps: int, total_steps: int,
                       min_lr: float = 0.0) -> float:
    """Linear warm-up to ``max_lr`` over ``warmup_steps``, then cosine decay to ``min_lr``."""
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step >= total_steps:
        return min_lr
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
