"""torch's compiler stacks are not a library an answer calls, and a module named by a family
defines members of it (the twelfth attack).

``torch._inductor.fx_passes.fuse_attention._sfdp_pattern_1(q, k, v, scale)`` is softmax(q k^T
/ s) v in plain torch ops, under a name without the family's word; the module's name holds it
(``fuse_attention``). ``torch.nn.utils.fusion.fuse_linear_bn_weights`` computes
``(b - mean) * rsqrt(var + eps) * w + b_bn``, a layer norm's normalise step, under ``bn``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.lab.exercises import _enforce as _enforce_module
from minimodel.lab.exercises import get_exercise
from minimodel.lab.exercises.family import family_word, module_in_family
from judge_probes import PROBE_PRELUDE, first_static_finding, refused, verdict

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="torch not installed")

MHA_HEAD = "import math\nimport torch\n{imports}\nFRAMEWORK = 'torch'\n"
MHA_BODY = '''

def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    x = torch.as_tensor(x)
    n, t, d = x.shape
    dh = d // num_heads
    sp = lambda z: z.reshape(n, t, num_heads, dh).transpose(1, 2)
    q, k, v = (sp(x @ torch.as_tensor(w)) for w in (w_q, w_k, w_v))
    c = core(q, k, v, math.sqrt(dh))
    return (c.transpose(1, 2).reshape(n, t, d) @ torch.as_tensor(w_o)).numpy()
'''


@needs_torch
@pytest.mark.parametrize("imports, api", [
    # the attack as written: the import line is refused by the static scan
    ("from torch._inductor.fx_passes.fuse_attention import _sfdp_pattern_1 as core",
     "torch._inductor.fx_passes.fuse_attention"),
    # the name built at run time: the import hook refuses the solution's own import
    ("core = getattr(__import__('torch._ind' + 'uctor.fx_passes.fuse_' + 'attention', "
     "fromlist=['x']), '_sfdp_' + 'pattern_1')", "torch._inductor"),
    # a stack torch has loaded already (torch._functorch): builtins.__import__ sees the line
    ("core = getattr(__import__('torch._func' + 'torch.apis', fromlist=['x']), 'vmap')",
     "torch._functorch"),
    ("core = __import__('torch', fromlist=['_dyn' + 'amo'])._dynamo", "torch._dynamo"),
    # the sixth attack's route to forward mode, as it was written
    ("from torch._functorch import predispatch as core", "torch._functorch"),
])
def test_importing_a_compiler_stack_is_refused_at_the_solutions_line(imports, api, tmp_path):
    source = MHA_HEAD.format(imports=imports) + MHA_BODY
    result = verdict("multi-head-self-attention", source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert refused(result) == [(api, 3)]


PROBE = PROBE_PRELUDE + """
enforcer = load("_enforce").enforce(rule["entries"], rule["refused"], calls.append,
                                    load("family"))
import torch._inductor.fx_passes.fuse_attention as fa  # torch's own import, after the install
import torch._inductor.fx_passes.efficient_conv_bn_eval as ecb
import torch.nn.utils.fusion as fusion
wn = sys.modules["torch.nn.utils.weight_norm"]  # its name is the function's in torch.nn.utils
import torch.distributions.normal as normal, torch.nn.attention as attention
stub = lambda obj: id(obj) in enforcer.stub_ids
patterns = sorted(n for n in vars(fa) if n.startswith("_sfdp_pattern_"))
q = torch.randn(1, 2, 3, 4)
fa._sfdp_pattern_1(q, q, q, 2.0)
fusion.fuse_linear_bn_weights(torch.zeros(1, 1), torch.zeros(1), torch.zeros(1),
                              torch.ones(1), 1e-5, torch.ones(1), torch.zeros(1))
print(json.dumps({
    "patterns": len(patterns), "stubbed": [n for n in patterns if stub(vars(fa)[n])],
    "conv_bn": stub(ecb.efficient_conv_bn_eval),
    "fusion": {n: stub(vars(fusion)[n]) for n in ("fuse_conv_bn_weights",
               "fuse_linear_bn_weights", "fuse_conv_bn_eval", "fuse_linear_bn_eval")},
    "honest": [stub(wn.weight_norm), stub(normal.Normal), stub(attention.sdpa_kernel),
               stub(torch.nn.functional.normalize)],
    "calls": calls}))
"""


@needs_torch
def test_what_a_module_named_by_a_family_defines_is_a_stub_at_run_time():
    """Reached without an import line of the solution (torch loaded the module itself),
    every ``_sfdp_pattern_*`` of ``fuse_attention`` is a stub, so are inductor's
    ``efficient_conv_bn_eval`` and the BatchNorm-folding helpers; a vector norm's module
    (``weight_norm``), the normal distribution and ``torch.nn.attention``'s backend switch
    are not."""
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.judge import runtime_rule

    rule = runtime_rule(get_exercise("mlm-forward-pass"), aliases.table())
    here = Path(_enforce_module.__file__).parent
    done = subprocess.run([sys.executable, "-c", PROBE, str(here), json.dumps(rule)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["patterns"] > 20 and len(out["stubbed"]) == out["patterns"]
    assert out["conv_bn"] is True
    assert out["fusion"] == dict.fromkeys(out["fusion"], True) and len(out["fusion"]) == 4
    assert out["honest"] == [False, False, False, False]
    assert out["calls"] == ["torch.nn.MultiheadAttention",
                            "torch.nn.utils.fusion.fuse_linear_bn_weights"]


@needs_torch
@pytest.mark.parametrize("code, refused_as", [
    ("torch._inductor.fx_passes.fuse_attention._sfdp_pattern_7(x, x, x)", "torch._inductor"),
    ("torch._functorch.apis.vmap(f)", "torch._functorch"),
    ("torch._higher_order_ops.cond(x, f, f, ())", "torch._higher_order_ops"),
    ("torch.nn.utils.fusion.fuse_linear_bn_weights(x, x, x, x, 1e-5, x, x)",
     "torch.nn.utils.fusion.fuse_linear_bn_weights"),
    ("torch.nn.utils.fuse_conv_bn_eval(x, x)", "torch.nn.utils.fuse_conv_bn_eval"),
    # honest: the public vmap, an L2 normalisation, the normal distribution, a weight norm
    ("torch.vmap(f)", None),
    ("torch.nn.functional.normalize(x)", None),
    ("torch.distributions.normal.Normal(0.0, 1.0)", None),
    ("torch.nn.utils.weight_norm(x)", None),
])
def test_the_static_scan_refuses_the_stacks_and_the_bn_folding(code, refused_as):
    expected = [(refused_as, 4)] if refused_as else []
    assert first_static_finding(code, "mlm-forward-pass") == expected


def test_the_run_time_and_static_lists_of_stacks_are_one_list():
    from minimodel.lab.exercises.astscan import COMPILER_STACKS, FENCE_FORBIDDEN

    assert tuple(COMPILER_STACKS) == _enforce_module.COMPILER_STACKS
    assert set(COMPILER_STACKS) <= set(FENCE_FORBIDDEN)
    assert _enforce_module.stack_of("torch._inductor.fx_passes") == "torch._inductor"
    assert _enforce_module.stack_of("torch._inductorx") is None


@pytest.mark.parametrize("part, forbidden_name, expected", [
    ("fuse_attention", "MultiheadAttention", True),
    ("flex_attention", "scaled_dot_product_attention", True),
    ("batchnorm", "LayerNorm", True),
    ("normalization", "batch_norm_elemt", True),
    ("efficient_conv_bn_eval", "LayerNorm", True),
    ("layer_norm_expanded_weights", "LayerNorm", True),
    ("embedding_ops", "embedding", True),
    ("fuse_attention", "LayerNorm", False),       # another family's word
    ("attention", "MultiheadAttention", False),   # the bare word: a package of tools
    ("normal", "LayerNorm", False),               # the distribution
    ("weight_norm", "LayerNorm", False),          # vector norms
    ("spectral_norm", "LayerNorm", False),
    ("_normalizations", "LayerNorm", False),      # torch._numpy's argument handling
    ("fusion", "LayerNorm", False),
    ("fuse_attention", "TransformerEncoder", False),  # a member without the family's word
])
def test_a_module_name_holding_a_familys_word_names_the_family(part, forbidden_name,
                                                               expected):
    assert module_in_family(part, forbidden_name) is expected


def test_each_familys_word_is_read_from_a_members_name():
    assert [family_word(n) for n in ("MultiheadAttention", "batch_norm_elemt",
                                     "CrossMapLRN2d", "gelu", "embedding_bag",
                                     "TransformerEncoder")] == [
        "attention", "norm", "norm", "gelu", "embedding", None]
