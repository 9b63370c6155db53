"""Optimizers (SGD, AdamW), gradient clipping and the learning-rate schedule.

Each optimizer holds ``param_groups`` (lists of parameters with their own hyper-parameters,
as in PyTorch) and, per parameter, the state its update rule needs (AdamW's moments and step).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from minimodel.dispatch import replaceable
from minimodel.tensor import Tensor


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


@replaceable
def adamw(params: list[np.ndarray], grads: list[np.ndarray], exp_avgs: list[np.ndarray],
          exp_avg_sqs: list[np.ndarray], steps: list[int], lr: float, beta1: float,
          beta2: float, eps: float, weight_decay: float) -> None:
    r"""One AdamW update of every array in ``params``, in place (the definition).

    For each parameter p with gradient g, moments m, v and step count t (first step: t = 1):

        p <- p * (1 - lr * weight_decay)                  decoupled weight decay
        m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
        p <- p - lr * m_hat / (sqrt(v_hat) + eps),   m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)

    ``m_hat`` and ``v_hat`` undo the moments' bias towards their zero start.
    """
    for p, g, m, v, t in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
        p *= 1 - lr * weight_decay
        m *= beta1
        m += (1 - beta1) * g
        v *= beta2
        v += (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t)
        v_hat = v / (1 - beta2 ** t)
        p -= lr * m_hat / (np.sqrt(v_hat) + eps)


class AdamW(Optimizer):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter 2019), PyTorch semantics; the
    update itself is :func:`adamw`, one call per parameter group."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"AdamW needs lr, eps, weight_decay >= 0 and betas in [0, 1), got "
                             f"lr={lr}, betas={betas}, eps={eps}, weight_decay={weight_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay})

    def step(self) -> None:
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            states = [self._moments(p) for p in params]
            for state in states:
                state["step"] += 1
            adamw([p.data for p in params], [p.grad for p in params],
                  [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                  [s["step"] for s in states], lr=group["lr"], beta1=group["betas"][0],
                  beta2=group["betas"][1], eps=group["eps"], weight_decay=group["weight_decay"])

    def _moments(self, p: Tensor) -> dict[str, Any]:
        """``p``'s state: step count and the two moments (zeros before the first step)."""
        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {"step": 0, "exp_avg": np.zeros_like(p.data),
                                     "exp_avg_sq": np.zeros_like(p.data)}
        self._check_state(p, state)
        return state


def clip_grad_norm(params: Iterable[Tensor], max_norm: float) -> float:
    """Scale gradients in place so their global L2 norm is at most ``max_norm``.

    The norm is sqrt(sum over the *distinct* Parameter objects given of |g|^2), each object's
    gradient counted once. Returns the norm before clipping.
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
