"""The forbidden-API rule is exact for what one writes plainly: a name is judged by what it IS
(module paths, module aliases, top-level twins, private fused ops of the same family), an
exercise "without autograd" forbids autograd by rule, and the stdlib a learner uses for
debugging and arithmetic is allowed. It is a teaching rule, not a security boundary."""

from __future__ import annotations

import importlib.util
import json

import pytest

from minimodel.lab.exercises import aliases, check_solution, get_exercise

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")


def verdict(exercise: str, source: str) -> dict:
    return check_solution(exercise, source=source, seed=1)


@needs_torch
@pytest.mark.parametrize("exercise, source, name", [
    ("cbow-step", "import torch\nFRAMEWORK = 'torch'\n\ndef cbow_step(c, t, w_in, w_out):\n"
     "    loss = w_in.sum()\n    loss.backward()\n    return loss, w_in.grad\n",
     "torch.Tensor.backward"),
    ("cbow-step", "import torch\nFRAMEWORK = 'torch'\n\ndef cbow_step(c, t, w_in, w_out):\n"
     "    g, loss = torch.func.grad_and_value(lambda w: w.sum())(w_in)\n    return loss, g\n",
     "torch.func"),
    ("cbow-step", "import torch\n\ndef cbow_step(c, t, w_in, w_out):\n"
     "    return w_in.sum(), torch.mkldnn_linear_backward_weights(w_in, w_in, w_in, False)\n",
     "torch.mkldnn_linear_backward_weights"),
    ("cross-entropy", "import torch\nFRAMEWORK = 'torch'\n\ndef cross_entropy(logits, t, "
     "ignore_index=-100):\n    return torch.nn.modules.loss.CrossEntropyLoss("
     "ignore_index=ignore_index)(logits, t)\n", "torch.nn.modules.loss.CrossEntropyLoss"),
    ("embedding-lookup", "import torch\nFRAMEWORK = 'torch'\n\ndef embedding_lookup(ids, E):"
     "\n    return torch.embedding(E, ids)\n", "torch.embedding"),
    ("multi-head-self-attention", "import torch\nFRAMEWORK = 'torch'\n\n"
     "def multi_head_self_attention(x, w_q, w_k, w_v, w_o, num_heads):\n"
     "    return torch._native_multi_head_attention(x, x, x, 1, num_heads, w_q, None, w_o, "
     "None)[0]\n", "torch._native_multi_head_attention"),
    ("mlm-forward-pass", "from torch.nn.modules.transformer import TransformerEncoderLayer\n",
     "torch.nn.modules.transformer.TransformerEncoderLayer"),
    ("mlm-forward-pass", "import torch\n\ndef f(x):\n    return "
     "torch.nn.modules.activation.F.gelu(x)\n", "torch.nn.modules.activation.F.gelu"),
])
def test_plain_forbidden_use_is_refused_whatever_its_spelling(exercise, source, name):
    result = verdict(exercise, source)
    assert result["status"] == "forbidden", result["message"]
    assert result["forbidden"][0]["name"] == name, result["forbidden"]


def test_the_statement_of_an_exercise_without_autograd_says_the_rule():
    ex = get_exercise("cbow-step")
    assert ex.no_autograd
    for lang, words in (("en", "refuses"), ("es", "rechaza")):
        text = ex.text("statement", lang)
        assert words in text and all(api in text for api in (
            ".backward()", "requires_grad", "torch.autograd", "torch.func")), text


HONEST_EXTRAS = '''
import functools
import itertools
import math
import operator
import sys
import warnings


def _size(shape):
    return functools.reduce(operator.mul, shape, 1)


if __name__ == "__main__":
    np.testing.assert_allclose(gelu(np.zeros(2)), np.zeros(2))
    print("self-test", _size((2, 3)), list(itertools.islice(range(9), 2)), file=sys.stderr)
    warnings.warn("debugging")
'''


def test_stdlib_for_debugging_and_a_numpy_testing_self_test_are_allowed():
    source = ("import math\nimport numpy as np\n\n\ndef gelu(x):\n"
              "    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * "
              "(x + 0.044715 * x**3)))\n" + HONEST_EXTRAS)
    result = verdict("gelu-tanh", source)
    assert result["status"] == "passed", json.dumps(result)[:2000]


def test_numpy_testing_outside_main_is_still_refused():
    result = verdict("gelu-tanh", "import numpy as np\n\n\ndef gelu(x):\n"
                                  "    np.testing.assert_allclose(x, x)\n    return x\n")
    assert result["status"] == "forbidden"


@needs_torch
def test_the_alias_table_is_built_from_torch_and_cached_per_version(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    aliases.table.cache_clear()
    try:
        data = aliases.table()
        files = list((tmp_path / "minimodel").glob("aliases-*torch*.json"))
        assert len(files) == 1 and json.loads(files[0].read_text()) == data
        import torch
        assert torch.__version__.split("+")[0] in files[0].name
    finally:
        aliases.table.cache_clear()
    paths = data["paths"]
    assert aliases.canonical("torch.nn.modules.loss.CrossEntropyLoss", paths) == \
        aliases.canonical("torch.nn.CrossEntropyLoss", paths)
    assert aliases.canonical("torch.nn.modules.activation.F.gelu", paths) == \
        "torch.nn.functional.gelu"


@pytest.mark.parametrize("name, forbidden, same", [
    ("embedding", "embedding", True), ("cross_entropy_loss", "CrossEntropyLoss", True),
    ("_native_multi_head_attention", "MultiheadAttention", True),
    ("_scaled_dot_product_flash_attention", "scaled_dot_product_attention", True),
    ("NLLLoss", "nll_loss", True), ("relu", "gelu", False), ("embedding_bag", "embedding",
                                                             False),
    ("tanh", "gelu", False), ("softmax", "log_softmax", False),
])
def test_the_family_rule(name, forbidden, same):
    assert aliases.same_family(name, forbidden) is same


# The third attack's honest file: hand-written backprop in pure NumPy, with a layer object
# whose method is called backward. "Without autograd" is about torch's autograd, not a name.
OWN_BACKWARD = '''\
import numpy as np


class SoftmaxCE:
    def forward(self, logits, targets):
        m = logits.max(-1, keepdims=True)
        e = np.exp(logits - m)
        self.p = e / e.sum(-1, keepdims=True)
        self.t = targets
        B = len(targets)
        return (np.log(e.sum(-1)) + m[:, 0] - logits[np.arange(B), targets]).mean()

    def backward(self):
        g = self.p.copy()
        B = len(self.t)
        g[np.arange(B), self.t] -= 1
        return g / B


def cbow_step(context_ids, target_ids, w_in, w_out):
    B, C = context_ids.shape
    h = w_in[context_ids].mean(1)
    crit = SoftmaxCE()
    loss = crit.forward(h @ w_out.T, target_ids)
    dh = crit.backward() @ w_out
    grad = np.zeros_like(w_in)
    np.add.at(grad, context_ids.reshape(-1), np.repeat(dh / C, C, axis=0))
    return w_in.dtype.type(loss), grad
'''


def test_a_backward_method_of_ones_own_layer_is_honest_backprop():
    result = verdict("cbow-step", OWN_BACKWARD)
    assert result["status"] == "passed", result["message"]


@needs_torch
@pytest.mark.parametrize("reach, api", [
    # forward-mode autograd, reached by built names (grad mode off does not disable it)
    ("_ad = getattr(getattr(torch, 'auto' + 'grad'), 'forward' + '_ad')\n"
     "    with _ad.dual_level():\n"
     "        out = _ad.make_dual(w_in, torch.ones_like(w_in))  # CALL\n",
     "torch.autograd.forward_ad.dual_level"),
    ("_ad = vars(vars(torch)['auto' + 'grad'])['forward_ad']\n"
     "    out = _ad.make_dual(w_in, torch.ones_like(w_in))  # CALL\n",
     "torch.autograd.forward_ad.make_dual"),
    # a Jacobian by finite differences is a gradient computed for you too
    ("gc = __import__('sys').modules['torch.autograd.' + 'gradcheck']\n"
     "    out = gc.get_numerical_jacobian(lambda w: w.sum(), (w_in,))  # CALL\n",
     "torch.autograd.gradcheck.get_numerical_jacobian"),
])
def test_torchs_autograd_is_refused_at_the_call_in_every_mode(reach, api):
    source = ("import torch\nFRAMEWORK = 'torch'\n\ndef cbow_step(c, t, w_in, w_out):\n    "
              + reach + "    return w_in.sum(), w_in\n")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# CALL" in text)
    result = verdict("cbow-step", source)
    assert result["status"] == "forbidden", result["message"]
    first = result["forbidden"][0]
    assert first["name"] == api and first["how"] == "call"
    assert first["line"] == (line - 1 if api.endswith("dual_level") else line)


# An ATen gradient kernel computes the gradient the exercise asks for: in an exercise without
# autograd every op of torch's registry named *_backward is refused, reached by any name.
ATEN_GRAD = """import torch

FRAMEWORK = "torch"
A = getattr(torch, "op" + "s").aten


def cbow_step(context_ids, target_ids, w_in, w_out):
    B, C = context_ids.shape
    lp = torch.log_softmax(w_in[context_ids].mean(dim=1) @ w_out.T, dim=-1)
    loss = -lp[torch.arange(B), target_ids].mean()
    g = lp.exp()
    g[torch.arange(B), target_ids] -= 1.0
    slot = ((g / B) @ w_out / C).unsqueeze(1).expand(B, C, -1)
    {line}
"""


@needs_torch
@pytest.mark.parametrize("line, api", [
    ("return loss, A.embedding_dense_backward(slot, context_ids, w_in.shape[0], -1, False)",
     "torch.ops.aten.embedding_dense_backward"),
    ("return loss, A.nll_loss_backward(torch.ones((), dtype=lp.dtype), lp, target_ids, None, "
     "1, -100, torch.tensor(float(B), dtype=lp.dtype)) @ w_out.T",
     "torch.ops.aten.nll_loss_backward"),
])
def test_every_aten_gradient_kernel_is_refused_at_the_call(line, api):
    source = ATEN_GRAD.replace("{line}", line)
    result = verdict("cbow-step", source)
    assert result["status"] == "forbidden", result["message"]
    first = result["forbidden"][0]
    assert (first["name"], first["how"], first["line"]) == (api, "call", 14)


@needs_torch
def test_the_gradient_kernels_come_from_torchs_op_registry():
    import torch
    listed = set(aliases.aten_backward())
    registry = {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names()
                if n.startswith("aten::") and "backward" in n}
    assert {"embedding_dense_backward", "nll_loss_backward", "_log_softmax_backward_data",
            "convolution_backward"} <= listed
    assert listed == {op for op in registry if "backward" in op.split("_")}


OWN_TENSOR = """import numpy as np


class Leaf:
    \"\"\"A NumPy array that remembers whether it wants a gradient.\"\"\"

    def __init__(self, data, requires_grad=False):
        self.data, self.requires_grad = data, requires_grad
        self.grad = np.zeros_like(data) if self.requires_grad else None


def cbow_step(context_ids, target_ids, w_in, w_out):
    w = Leaf(w_in, requires_grad=True)
    B, C = context_ids.shape
    h = w.data[context_ids].mean(1)
    z = h @ w_out.T
    m = z.max(1, keepdims=True)
    p = np.exp(z - m)
    p /= p.sum(1, keepdims=True)
    loss = -np.log(p[np.arange(B), target_ids]).mean()
    p[np.arange(B), target_ids] -= 1
    np.add.at(w.grad, context_ids.reshape(-1), np.repeat((p / B) @ w_out / C, C, axis=0))
    return w_in.dtype.type(loss), w.grad
"""


@needs_torch
@pytest.mark.parametrize("source", [
    OWN_TENSOR,
    # torch's own flag is harmless: grad mode is off while the solution runs
    OWN_TENSOR.replace("import numpy as np", "import numpy as np\nimport torch").replace(
        "    w = Leaf(w_in, requires_grad=True)\n",
        "    w = Leaf(w_in, requires_grad=True)\n"
        "    assert not torch.tensor(1.0, requires_grad=True).mul(2).requires_grad\n"),
])
def test_an_attribute_called_requires_grad_is_honest(source):
    result = verdict("cbow-step", source)
    assert result["status"] == "passed", result["message"]


CE_NUMPY = """import numpy as np
{head}

def cross_entropy(logits, targets, ignore_index=-100):
    z = logits.reshape(-1, logits.shape[-1])
    t = targets.reshape(-1)
    z, t = z[t != ignore_index], t[t != ignore_index]
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return (lse - z[np.arange(len(t)), t]).mean()
{tail}"""


@needs_torch
@pytest.mark.parametrize("head, tail", [
    ("", '\nif __name__ == "__main__":\n    import torch\n    import torch.nn.functional as F\n'
         '    x, y = np.random.randn(4, 5), np.array([0, 1, -100, 3])\n'
         '    print(cross_entropy(x, y), F.cross_entropy(torch.tensor(x), torch.tensor(y)))\n'),
    ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
     "    import torch.nn.functional as F\n", ""),
    ("import typing\n\nif typing.TYPE_CHECKING:\n    from torch.nn import CrossEntropyLoss\n"
     "else:\n    pass\n", ""),
    # the fifth attack's H9: the same guards spelt another way are the same guards
    ("", '\nif __name__ in ("__main__",):\n    import torch.nn.functional as F\n'
         '    print(F.cross_entropy)\n'),
    ("", '\nif __name__ in ["__main__"]:\n    import numpy.testing as npt\n'
         '    npt.assert_allclose(1.0, 1.0)\n'),
    ("from typing import TYPE_CHECKING as TYPING\n\nif TYPING:\n"
     "    import torch.nn.functional as F\n", ""),
    ("import typing as t\n\nif t.TYPE_CHECKING:\n    from torch.nn import CrossEntropyLoss\n", ""),
])
def test_code_that_never_runs_on_import_is_not_scanned(head, tail):
    result = verdict("cross-entropy", CE_NUMPY.replace("{head}", head).replace("{tail}", tail))
    assert result["status"] == "passed", result["message"]


@needs_torch
def test_the_run_time_rule_still_covers_a_guard_made_true():
    source = ("import torch\nFRAMEWORK = 'torch'\nTYPE_CHECKING = True\nif TYPE_CHECKING:\n"
              "    import torch.nn.functional as F\n\n\n"
              "def cross_entropy(logits, targets, ignore_index=-100):\n"
              "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
              "targets.reshape(-1), ignore_index=ignore_index)\n")
    result = verdict("cross-entropy", source)
    assert result["status"] == "forbidden" and result["forbidden"][0]["how"] == "call", \
        result["message"]


def test_the_hidden_cases_reach_every_rank_the_statement_allows():
    """Cross-entropy's logits are (..., V): a solution written for 2-d and 3-d only fails."""
    source = CE_NUMPY.replace("{head}", "").replace("{tail}", "").replace(
        "    z = logits.reshape(-1, logits.shape[-1])\n",
        "    if logits.ndim not in (2, 3):\n        raise ValueError(logits.ndim)\n"
        "    z = logits.reshape(-1, logits.shape[-1])\n")
    result = verdict("cross-entropy", source)
    failed = {c["kind"] for c in result["cases"] if c["status"] != "passed"}
    assert result["status"] != "passed" and failed == {"1-d", "4-d"}, failed


def test_a_guard_that_runs_on_import_is_still_scanned():
    """Only a guard that is false on import is skipped: ``__name__ in ("__main__", "solution")``
    is true when the judge imports the file (as ``solution``)."""
    tail = ('\nif __name__ in ("__main__", "solution"):\n    import torch.nn.functional as F\n'
            '    print(F.cross_entropy)\n')
    result = verdict("cross-entropy", CE_NUMPY.replace("{head}", "").replace("{tail}", tail))
    assert result["status"] == "forbidden", result["message"]


def test_a_module_of_ones_own_beside_the_file_is_named_as_such(tmp_path):
    """The judge runs the one file alone: a helper module next to it is not found there, so the
    refusal says that (not the files-and-network wording of os or socket)."""
    (tmp_path / "helpers.py").write_text("def f(x):\n    return x\n", encoding="utf-8")
    path = tmp_path / "ce.py"
    path.write_text("import helpers\n" + CE_NUMPY.replace("{head}", "").replace("{tail}", ""),
                    encoding="utf-8")
    for lang, words in (("en", "a module of your own"), ("es", "un módulo tuyo")):
        result = check_solution("cross-entropy", path, seed=1, lang=lang)
        assert result["status"] == "forbidden" and words in result["message"], result["message"]
        assert ("runs your one file alone" if lang == "en" else "ejecuta tu archivo solo") \
            in result["message"]
    path.write_text("import helpers_elsewhere\n" + CE_NUMPY.replace("{head}", "")
                    .replace("{tail}", ""), encoding="utf-8")
    assert "a module of your own" not in check_solution("cross-entropy", path, seed=1)["message"]


def test_numpy_testing_in_the_function_says_precisely_why_not():
    source = CE_NUMPY.replace("{head}", "").replace("{tail}", "").replace(
        "    return (lse", "    np.testing.assert_allclose(lse, lse)\n    return (lse")
    result = verdict("cross-entropy", source)
    assert result["status"] == "forbidden", result["message"]
    assert "numpy.testing holds, besides its asserts" in result["message"]
    assert "assert np.allclose(a, b)" in result["message"]


@pytest.mark.parametrize("value", ["PyTorch", "Torch", "np", "jax"])
def test_an_unknown_framework_gets_one_line_naming_the_values(value, tmp_path):
    source = (f"import numpy as np\nFRAMEWORK = {value!r}\n"
              + CE_NUMPY.replace("{head}", "").replace("{tail}", "").replace(
                  "import numpy as np\n", "", 1))
    result = verdict("cross-entropy", source)
    assert result["status"] == "error", result["message"]
    assert f"FRAMEWORK = {value!r} is not a framework the judge knows" in result["message"]
    assert 'FRAMEWORK = "torch"' in result["message"] and 'FRAMEWORK = "numpy"' in \
        result["message"]
