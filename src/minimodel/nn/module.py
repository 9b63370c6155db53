"""``Module``: the container that finds, names, saves and loads parameters.

Assigning a :class:`Parameter` or a ``Module`` to an attribute registers it::

    class Net(Module):
        def __init__(self):
            super().__init__()
            self.emb = Embedding(100, 16)     # registered as a submodule "emb"
            self.scale = Parameter(np.ones(16))  # registered as parameter "scale"

Weight tying is *structural*: one Parameter object reachable under two names (for example
``token_emb.weight`` and ``lm_head.weight``). Saving and counting use the first name that
reaches it.
"""

from __future__ import annotations

import contextlib
import difflib
from collections import OrderedDict
from typing import Any, Iterator, Mapping

import numpy as np

from minimodel.nn.parameter import Parameter


class Module:
    """Base class of every layer and model. Subclasses implement ``forward``."""

    training: bool
    embedding_table = False  # True for lookup tables (nn.Embedding), see num_params

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                                 f"before assigning attribute {name!r}")
        target = (self._parameters if isinstance(value, Parameter)
                  else self._modules if isinstance(value, Module) else None)
        for registry in (self._parameters, self._modules, self._buffers):
            if registry is not target:
                registry.pop(name, None)
        if target is None:
            object.__setattr__(self, name, value)
            return
        # Replacing keeps the name's place in registration order: the first name that reaches a
        # tied Parameter is its canonical name in state_dict, so order must not shift.
        target[name] = value
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails. Private names fail fast (this also keeps
        # pickle/deepcopy safe before __init__ has run).
        if not name.startswith("_"):
            for registry in ("_parameters", "_modules", "_buffers"):
                found = self.__dict__.get(registry, {})
                if name in found:
                    return found[name]
        known = [n for r in ("_parameters", "_modules", "_buffers") for n in self.__dict__.get(r, {})]
        known += [n for n in dir(type(self)) if not n.startswith("_")]
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}{hint}")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._modules, self._buffers):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, value: np.ndarray | None) -> None:
        """A non-trainable array saved in ``state_dict`` (e.g. a running statistic)."""
        self._buffers[name] = value

    # ------------------------------------------------------------------ traversal
    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        """Parameters this module uses directly. ``TiedHead`` overrides it to borrow a weight."""
        yield from self._parameters.items()

    def named_modules(self, prefix: str = "", _seen: set[int] | None = None
                      ) -> Iterator[tuple[str, "Module"]]:
        seen = set() if _seen is None else _seen
        if id(self) in seen:
            return
        seen.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name, seen)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def children(self) -> Iterator["Module"]:
        yield from self._modules.values()

    def named_parameters(self, prefix: str = "", remove_duplicate: bool = True
                         ) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(name, parameter)`` for this module and its submodules, in registration order.

        ``remove_duplicate=False`` yields every name a parameter is reachable under (PyTorch's
        flag of the same name).
        """
        seen: set[int] = set()
        for mod_name, module in self.named_modules(prefix):
            for name, param in module._local_parameters():
                if remove_duplicate and id(param) in seen:
                    continue
                seen.add(id(param))
                yield (f"{mod_name}.{name}" if mod_name else name), param

    def parameters(self) -> Iterator[Parameter]:
        for _, param in self.named_parameters():
            yield param

    def named_buffers(self) -> Iterator[tuple[str, np.ndarray]]:
        for mod_name, module in self.named_modules():
            for name, buf in module._buffers.items():
                if buf is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), buf

    def tie_groups(self) -> list[list[str]]:
        """Names that share one Parameter object, e.g. ``[['token_emb.weight', 'lm_head.weight']]``."""
        groups: dict[int, list[str]] = {}
        for name, param in self.named_parameters(remove_duplicate=False):
            groups.setdefault(id(param), []).append(name)
        return [names for names in groups.values() if len(names) > 1]

    # ------------------------------------------------------------------ state
    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """Parameters and buffers by name; a tied matrix appears once (no head key)."""
        state: OrderedDict[str, np.ndarray] = OrderedDict()
        for name, param in self.named_parameters():
            state[name] = param.data
        for name, buf in self.named_buffers():
            state[name] = buf
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> dict:
        """Copy arrays into the existing parameters in place (so ties and optimizers survive).

        A tied alias key (``lm_head.weight`` in a tied model) is accepted when it equals the
        matrix it is tied to and refused, with the largest difference, when it does not.

        Returns:
            ``{"missing_keys": [...], "unexpected_keys": [...]}`` (both empty when strict).
        """
        own = self.state_dict()
        aliases = self._alias_names()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own and k not in aliases]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing keys: {', '.join(missing)}")
            if unexpected:
                parts.append(f"unexpected keys: {', '.join(unexpected)}")
            # ValueError, not KeyError: user errors are ValueError/TypeError here, and
            # str(KeyError) would wrap the whole message in quotes.
            raise ValueError(f"load_state_dict({type(self).__name__}): " + "; ".join(parts)
                           + ". Was the checkpoint saved from a model with the same config? "
                           "Pass strict=False to load the matching keys only.")
        params = dict(self.named_parameters())
        buffers = dict(self.named_buffers())
        # Check every key before writing any, so a refused checkpoint (tied
        # keys that differ, a wrong shape) leaves the model unchanged instead of half-loaded.
        writes: list[tuple[np.ndarray, np.ndarray]] = []
        for name, value in state_dict.items():
            value = np.asarray(value)
            if name in aliases:
                target = aliases[name]
                if name not in own and target in state_dict:
                    self._check_alias(name, value, target, np.asarray(state_dict[target]))
                    continue
                name = target
            if name not in own:
                continue
            current = params[name].data if name in params else buffers[name]
            if value.shape != current.shape:
                raise ValueError(f"load_state_dict: {name!r} has shape {value.shape} in the "
                                 f"checkpoint but {current.shape} in the model; build the model "
                                 "with the checkpoint's config")
            writes.append((current, value))
        for current, value in writes:
            current[...] = value  # in place: the Parameter object (and any tie) is kept
        return {"missing_keys": missing, "unexpected_keys": unexpected}

    def _alias_names(self) -> dict[str, str]:
        """Map every secondary name of a tied parameter to its canonical name."""
        canonical: dict[int, str] = {}
        aliases: dict[str, str] = {}
        for name, param in self.named_parameters(remove_duplicate=False):
            if id(param) in canonical:
                aliases[name] = canonical[id(param)]
            else:
                canonical[id(param)] = name
        return aliases

    @staticmethod
    def _check_alias(name: str, value: np.ndarray, target: str, target_value: np.ndarray) -> None:
        if value.shape != target_value.shape:
            raise ValueError(f"{name!r} is tied to {target!r} in this model, but the checkpoint "
                             f"holds them with different shapes {value.shape} and "
                             f"{target_value.shape}; it was saved from an untied model")
        diff = float(np.max(np.abs(value - target_value))) if value.size else 0.0
        if diff > 0.0:
            raise ValueError(f"{name!r} is tied to {target!r} in this model, but the checkpoint "
                             f"holds different values for them (max |difference| = {diff:.3g}); "
                             "load it into an untied model (tie_embeddings=False) instead")

    # ------------------------------------------------------------------ modes and helpers
    def train(self, mode: bool = True) -> "Module":
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    @contextlib.contextmanager
    def evaluating(self) -> Iterator["Module"]:
        """Eval mode inside the block; afterwards every module's mode is what it was."""
        modes = [(module, module.training) for module in self.modules()]
        self.eval()
        try:
            yield self
        finally:
            for module, mode in modes:
                object.__setattr__(module, "training", mode)

    def zero_grad(self) -> None:
        """Drop every gradient (``grad = None``), like PyTorch's ``set_to_none=True``."""
        for param in self.parameters():
            param.grad = None

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Freeze (False) or unfreeze every parameter. A tied matrix freezes for both uses."""
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    def num_params(self, non_embedding: bool = False) -> int:
        """Number of parameters, each tied matrix counted once.

        With ``non_embedding=True`` the parameters of lookup tables (modules whose class sets
        ``embedding_table = True``: token and position embeddings, hence also a tied head's
        matrix) are left out, as in Kaplan et al. (2020); an untied head's own matrix is a
        projection and still counts.
        """
        skip: set[int] = set()
        if non_embedding:
            for module in self.modules():
                if module.embedding_table:
                    skip.update(id(p) for _, p in module._local_parameters())
        return sum(p.size for p in self.parameters() if id(p) not in skip)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    # ------------------------------------------------------------------ display
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        if self._modules:
            for name, child in self._modules.items():
                child_repr = repr(child).replace("\n", "\n  ")
                lines.append(f"  ({name}): {child_repr}")
            return "\n".join(lines) + "\n)"
        return lines[0] + ")"


class ModuleList(Module):
    """An ordered list of submodules registered as "0", "1", ... (e.g. ``blocks.0.ln_1``)."""

    def __init__(self, modules: list[Module] | None = None) -> None:
        super().__init__()
        for module in modules or []:
            self.append(module)

    def append(self, module: Module) -> None:
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules, got {type(module).__name__}")
        self._modules[str(len(self._modules))] = module

    def __getitem__(self, index: int) -> Module:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())
