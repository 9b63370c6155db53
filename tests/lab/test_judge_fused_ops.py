"""A forbidden computation fused into another op, or in another op namespace, is refused.

GELU fused into a matmul has names without the word: oneDNN's
``torch.ops.mkldnn._linear_pointwise(a, w, None, "gelu", [], "tanh")`` and
``torch._addmm_activation(out, a, w, use_gelu=True)``. Every op whose schema takes the
activation to apply as an argument (``family.fused_activation_ops``) is a member of the gelu
family: refused statically where its name is written plainly, and at the call under any name.
The families' other kernels are covered in every op namespace torch lists (``quantized``,
``static_runtime`` ...), their gradient kernels included (``native_layer_norm_backward``), and a
dimension suffix before a noise word no longer hides a member (``nll_loss2d_forward``).

Threads are allowed (``concurrent.futures.ThreadPoolExecutor``); a process pool is refused when
it is built.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.lab.exercises import _enforce as _enforce_module
from minimodel.lab.exercises import check_solution, get_exercise
from judge_probes import PROBE_PRELUDE

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")

# The MLM forward pass written by hand (pre-LN blocks, tanh GELU in float64); {act} is the
# body of the GELU-and-matmul step for float32, where each attack takes it from torch.
MLM = '''\
import math
import numpy as np
import torch

FRAMEWORK = "torch"


def _act_matmul(a, w):
    if a.dtype == torch.float32:
{act}
    h = a @ w
    return 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))


def _ln(x):
    m = x.mean(-1, keepdim=True)
    v = ((x - m) ** 2).mean(-1, keepdim=True)
    return (x - m) / torch.sqrt(v + 1e-5)


def mlm_forward(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, w_head, num_heads):
    E, P = torch.as_tensor(np.asarray(w_emb)), torch.as_tensor(np.asarray(pos_embed))
    B, H = torch.as_tensor(np.asarray(blocks_weights)), torch.as_tensor(np.asarray(w_head))
    x = E[torch.as_tensor(np.asarray(input_ids)).long()] + P
    n, t, d = x.shape
    dh = d // num_heads
    for wq, wk, wv, wo, w1, w2 in B:
        a = _ln(x)
        q, k, v = ((a @ w).reshape(n, t, num_heads, dh).transpose(1, 2) for w in (wq, wk, wv))
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        p = torch.exp(s - s.amax(-1, keepdim=True))
        o = ((p / p.sum(-1, keepdim=True)) @ v).transpose(1, 2).reshape(n, t, d)
        x = x + o @ wo
        x = x + _act_matmul(_ln(x).reshape(-1, d), w1).reshape(n, t, d) @ w2
    return (x[torch.as_tensor(np.asarray(mask_indicator)) > 0.5] @ H).numpy()
'''

FUSED = {
    # oneDNN's fused linear + tanh GELU, every name built at run time: refused at the call
    "mkldnn _linear_pointwise, names built": (
        '        ops = getattr(torch, "o" + "ps")\n'
        '        fused = getattr(getattr(ops, "mk" + "ldnn"), "_linear" + "_pointwise")\n'
        '        return fused(a, w.T.contiguous(), None, "ge" + "lu", [], "tanh")  # MARK\n',
        "call", "torch.ops.mkldnn._linear_pointwise"),
    # torch._addmm_activation(use_gelu=True) is F.gelu (erf) fused into a matmul
    "_addmm_activation, written plainly": (
        '        out = torch.zeros(a.shape[0], w.shape[1], dtype=a.dtype)\n'
        '        return torch._addmm_activation(out, a, w, use_gelu=True)  # MARK\n',
        "attribute", "torch._addmm_activation"),
    "_addmm_activation, name built": (
        '        out = torch.zeros(a.shape[0], w.shape[1], dtype=a.dtype)\n'
        '        fused = getattr(torch, "_addmm_" + "activation")\n'
        '        return fused(out, a, w, use_gelu=True)  # MARK\n',
        "call", "torch.ops.aten._addmm_activation"),
}


def check(exercise: str, source: str, tmp_path) -> dict:
    """A practice check (a chosen seed: nothing is recorded)."""
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    return check_solution(exercise, path, seed=3)


def marked_line(source: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if "# MARK" in text)


@needs_torch
@pytest.mark.parametrize("attack", list(FUSED))
def test_gelu_fused_into_a_matmul_is_forbidden(attack, tmp_path):
    act, how, name = FUSED[attack]
    source = MLM.format(act=act)
    result = check("mlm-forward-pass", source, tmp_path)
    assert result["status"] == "forbidden" and not result["passed"], result["message"]
    assert result["forbidden"] == [{"name": name, "line": marked_line(source), "how": how}]


@needs_torch
def test_the_same_forward_pass_with_gelu_written_by_hand_passes(tmp_path):
    """The control: the attacks' own file with the float32 branch written like the float64
    one passes, so the refusals above are the fused op's."""
    act = ("        h = a @ w\n        return 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi)"
           " * (h + 0.044715 * h ** 3)))\n")
    result = check("mlm-forward-pass", MLM.format(act=act), tmp_path)
    assert result["status"] == "passed", result["message"]


# An argument that may choose an activation (a string or a flag), found by its name
ACTIVATION_LIKE = re.compile(r"attr|post_op|activation|gelu|approximate|algorithm")
# Listed by that pattern, and not GELU: what the argument chooses is something else
NOT_GELU = {
    "export::access_subclass_inner_tensor": "attr names one of a tensor's attributes",
    "aten::_sparse_semi_structured_tile": "algorithm names a tiling of a sparse matrix",
}


def activation_schemas() -> list[str]:
    """Every op of the installed torch with an argument that may choose an activation."""
    if not HAS_TORCH:
        return []
    import torch

    found = set()
    for schema in torch._C._jit_get_all_schemas():
        if any(ACTIVATION_LIKE.search(arg.name)
               and str(arg.type) in ("str", "Optional[str]", "bool")
               for arg in schema.arguments):
            found.add(schema.name)
    return sorted(found - set(NOT_GELU))


@needs_torch
def test_the_activation_schemas_include_the_known_fused_ops():
    listed = activation_schemas()
    for op in ("mkldnn::_linear_pointwise", "aten::_addmm_activation",
               "onednn::qlinear_pointwise", "mkldnn::_convolution_pointwise", "aten::gelu"):
        assert op in listed, op


@needs_torch
@pytest.mark.parametrize("op", activation_schemas())
def test_every_op_with_an_activation_argument_is_refused_in_the_judged_child(op, tmp_path):
    """Called by a name built at run time (the static scan sees nothing), in an exercise that
    forbids GELU: the stub reports before the op reads its arguments."""
    space, _, name = op.partition("::")
    source = ('import torch\nFRAMEWORK = "torch"\n'
              f'namespace = getattr(getattr(torch, "o" + "ps"), "{space}")\n'
              f'getattr(namespace, "{name}")()  # MARK\n\n\n'
              'def mlm_forward(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights,'
              ' w_head, num_heads):\n    return None\n')
    result = check("mlm-forward-pass", source, tmp_path)
    assert result["status"] == "forbidden", result["message"]
    assert result["forbidden"][0]["how"] == "call"
    assert result["forbidden"][0]["line"] == marked_line(source)


# In a process of its own, under an exercise's run-time rule: every op in every namespace
# torch's registry lists whose name holds one of ``words`` is called with no arguments; a
# stub reports (calls grows), a real op raises on the missing arguments.
OPS_PROBE = PROBE_PRELUDE + """
import re
words = re.compile(sys.argv[3])
load("_enforce").enforce(rule["entries"], rule["refused"], calls.append, load("family"),
                         backward_kernels=rule["grad_off"])
ops = sorted({n.split(".")[0] for n in torch._C._dispatch_get_all_op_names()
              if words.search(n.split("::")[1])})
refused = {}
for qualified in ops:
    space, _, name = qualified.partition("::")
    before = len(calls)
    try:
        getattr(getattr(torch.ops, space), name)()
    except Exception:
        pass
    refused[qualified] = len(calls) > before
print(json.dumps(refused))
"""

# exercise -> (the words of its families, the ops holding them that are not members, why)
FAMILY_OPS = {
    "mlm-forward-pass": (
        r"gelu|layer_norm|group_norm|instance_norm|batch_norm|rms_norm|attention|multi_head"
        r"|transformer_encoder|pointwise",
        {"aten::batch_norm_backward_reduce": "sums of the gradient, given the statistics",
         # more words than GELU's and backward: not the family's gradient kernel, and no GELU
         "aten::infinitely_differentiable_gelu_backward": "GELU's derivative"}),
    "embedding-lookup": (
        r"embedding",
        {"aten::cosine_embedding_loss": "a loss on two embeddings, no lookup",
         "aten::hinge_embedding_loss": "a loss, no lookup",
         "aten::embedding_renorm": "rescales rows in place, no lookup",
         "aten::embedding_renorm_": "rescales rows in place, no lookup",
         "aten::embedding_dense_backward": "a scatter-add of gradients, not the lookup",
         "aten::embedding_sparse_backward": "a scatter-add of gradients, not the lookup"}),
    "cross-entropy": (
        r"cross_entropy|nll_loss",
        {"aten::binary_cross_entropy": "a sigmoid's loss, not softmax's",
         "aten::binary_cross_entropy_backward": "a sigmoid's loss, not softmax's",
         "aten::binary_cross_entropy_with_logits": "a sigmoid's loss, not softmax's",
         "aten::poisson_nll_loss": "a Poisson likelihood"}),
    "cbow-step": (
        r"cross_entropy_loss|backward_data|embedding_dense_backward|nll_loss_backward", {}),
}


@needs_torch
@pytest.mark.parametrize("exercise", list(FAMILY_OPS))
def test_every_op_of_a_forbidden_family_is_refused_in_every_namespace(exercise):
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.judge import runtime_rule

    words, not_members = FAMILY_OPS[exercise]
    here = Path(_enforce_module.__file__).parent
    rule = runtime_rule(get_exercise(exercise), aliases.table())
    done = subprocess.run([sys.executable, "-c", OPS_PROBE, str(here), json.dumps(rule), words],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    refused = json.loads(done.stdout.strip().splitlines()[-1])
    allowed = sorted(op for op, stub in refused.items() if not stub)
    assert allowed == sorted(op for op in not_members if op in refused)
    named = {"mlm-forward-pass": ["quantized::layer_norm", "aten::native_layer_norm_backward",
                                  "quantized::batch_norm1d_relu", "mkldnn::_linear_pointwise",
                                  "aten::_transformer_encoder_layer_fwd"],
             "embedding-lookup": ["static_runtime::embedding_bag", "quantized::embedding_byte"],
             "cross-entropy": ["aten::nll_loss2d_forward", "aten::cross_entropy_loss"],
             "cbow-step": ["aten::_softmax_backward_data", "aten::cross_entropy_loss"]}
    for op in named[exercise]:
        assert refused.get(op) is True, op


GELU_BY_THREADS = '''\
import math
from concurrent.futures import {pool}

import numpy as np


def _g(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu(x):
    x = np.asarray(x)
    if x.ndim == 0:
        return _g(x)
    with {pool}(max_workers=2) as workers:  # MARK
        parts = list(workers.map(_g, list(x)))
    return np.stack(parts).astype(x.dtype, copy=False)
'''


def test_an_honest_gelu_on_a_thread_pool_passes(tmp_path):
    result = check("gelu-tanh", GELU_BY_THREADS.format(pool="ThreadPoolExecutor"), tmp_path)
    assert result["status"] == "passed", result["message"]


def test_a_process_pool_is_refused_when_it_is_built(tmp_path):
    source = GELU_BY_THREADS.format(pool="ProcessPoolExecutor")
    result = check("gelu-tanh", source, tmp_path)
    assert result["status"] == "forbidden", result["message"]
    assert result["forbidden"] == [{"name": "concurrent.futures.ProcessPoolExecutor",
                                    "line": marked_line(source), "how": "call"}]
