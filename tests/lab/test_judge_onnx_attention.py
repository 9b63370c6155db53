"""The ONNX exporter's reference attention is attention (the thirteenth attack).

``torch.onnx.ops.attention(q, k, v, torch.zeros(T, T), q_num_heads=H, kv_num_heads=H)[0]`` is
ONNX Attention-23's reference implementation: with a float mask it runs softmax(q k^T / sqrt(d)
+ mask) v over H heads in plain ops, not through ``F.scaled_dot_product_attention``. The
exporter is a compiler stack (its import is refused), and a torch callable named exactly by a
family's word (``attention``) is a member of the family, however torch was led to load it; the
module ``torch.nn.attention`` and a learner's own ``attention`` stay allowed.
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
from minimodel.lab.exercises.family import bare_family_word, named_by_family_word
from judge_probes import PROBE_PRELUDE, first_static_finding, refused, verdict

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="torch not installed")

MHA = '''import torch
{imports}
FRAMEWORK = "torch"


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    x, w_q, w_k, w_v, w_o = (torch.as_tensor(a) for a in (x, w_q, w_k, w_v, w_o))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    t = x.shape[1]
    zero_bias = torch.zeros(t, t, dtype=x.dtype)  # a float mask takes the plain path
    ctx = {onnx}.attention(q, k, v, zero_bias, q_num_heads=num_heads,
                           kv_num_heads=num_heads)[0]
    return (ctx @ w_o).numpy()
'''

MLM = '''import math

import torch
import torch.onnx.ops

FRAMEWORK = "torch"


def norm(x):
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5)


def act(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def mlm_forward(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, w_head, num_heads):
    w_emb, pos_embed, blocks_weights, w_head = map(torch.as_tensor,
                                                   (w_emb, pos_embed, blocks_weights, w_head))
    x = w_emb[torch.as_tensor(input_ids)] + pos_embed[: input_ids.shape[1]]
    t = x.shape[1]
    bias = torch.zeros(t, t, dtype=x.dtype)
    for w_q, w_k, w_v, w_o, w1, w2 in blocks_weights:
        a = norm(x)
        ctx = torch.onnx.ops.attention(a @ w_q, a @ w_k, a @ w_v, bias,
                                       q_num_heads=num_heads, kv_num_heads=num_heads)[0]
        x = x + ctx @ w_o
        x = x + act(norm(x) @ w1) @ w2
    return (x[torch.as_tensor(mask_indicator) > 0.5] @ w_head).numpy()
'''

# the learner's own function called attention: softmax(q k^T / sqrt(dh)) v per head
HONEST_MHA = '''import torch

FRAMEWORK = "torch"


def attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    x, w_q, w_k, w_v, w_o = (torch.as_tensor(a) for a in (x, w_q, w_k, w_v, w_o))
    n, t, d = x.shape
    split = lambda m: m.reshape(n, t, num_heads, d // num_heads).transpose(1, 2)
    ctx = attention(split(x @ w_q), split(x @ w_k), split(x @ w_v))
    return (ctx.transpose(1, 2).reshape(n, t, d) @ w_o).numpy()
'''


@needs_torch
def test_the_attack_on_multi_head_attention_is_refused_at_its_import(tmp_path):
    source = MHA.format(imports="import torch.onnx.ops as oops", onnx="oops")
    result = verdict("multi-head-self-attention", source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert refused(result)[0] == ("torch.onnx.ops", 2)


@needs_torch
def test_the_attack_on_the_mlm_forward_pass_is_refused_at_its_import(tmp_path):
    result = verdict("mlm-forward-pass", MLM, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert refused(result)[0] == ("torch.onnx.ops", 4)


@needs_torch
def test_the_exporter_reached_without_an_import_line_is_refused_when_called(tmp_path):
    """``getattr(torch, "on" + "nx")`` makes torch import its exporter itself (no import line
    of the solution, no name the scan can read): its ``attention`` is a stub all the same."""
    source = MHA.format(imports="", onnx='getattr(torch, "on" + "nx").ops')
    result = verdict("multi-head-self-attention", source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert refused(result) == [("torch.nn.MultiheadAttention", 11)]


@needs_torch
def test_an_honest_attention_of_the_learners_own_passes(tmp_path):
    result = verdict("multi-head-self-attention", HONEST_MHA, tmp_path)
    assert result["status"] == "passed", json.dumps(result)[:1500]
    assert result["forbidden"] == []


PROBE = PROBE_PRELUDE + """
enforcer = load("_enforce").enforce(rule["entries"], rule["refused"], calls.append,
                                    load("family"))
import torch.onnx.ops as oops  # torch's own import, after the install
import torch.nn.attention as attention
stub = lambda obj: id(obj) in enforcer.stub_ids
print(json.dumps({"onnx": stub(oops.attention), "sdpa_kernel": stub(attention.sdpa_kernel),
                  "norm": stub(torch.norm)}))
"""


@needs_torch
def test_torchs_callable_named_attention_is_a_stub_and_its_attention_module_is_not():
    """At run time ``torch.onnx.ops.attention`` is replaced wherever torch loads it; the backend
    switch of the module ``torch.nn.attention`` and ``torch.norm`` (a vector norm: ``norm`` is
    no bare family word) are not."""
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.judge import runtime_rule

    rule = runtime_rule(get_exercise("multi-head-self-attention"), aliases.table())
    here = Path(_enforce_module.__file__).parent
    done = subprocess.run([sys.executable, "-c", PROBE, str(here), json.dumps(rule)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"onnx": True, "sdpa_kernel": False, "norm": False}


@needs_torch
@pytest.mark.parametrize("code, refused_as", [
    ("torch.onnx.ops.attention(x, x, x)", "torch.onnx"),
    ("torch.onnx.export(f, x)", "torch.onnx"),
    # honest: the module of attention's tools, a vector norm
    ("torch.nn.attention.sdpa_kernel(x)", None),
    ("torch.norm(x)", None),
])
def test_the_static_scan_refuses_the_exporter(code, refused_as):
    expected = [(refused_as, 4)] if refused_as else []
    assert first_static_finding(code, "multi-head-self-attention") == expected


@pytest.mark.parametrize("name, forbidden_name, expected", [
    ("attention", "scaled_dot_product_attention", True),
    ("Attention", "MultiheadAttention", True),
    ("_attention", "MultiheadAttention", True),   # a private spelling
    ("gelu", "gelu", True),
    ("embedding", "embedding_bag", True),
    ("attention", "LayerNorm", False),            # another family
    ("norm", "LayerNorm", False),                 # torch.norm: a vector norm
    ("self_attention", "MultiheadAttention", False),  # not the bare word
    ("attention", "TransformerEncoder", False),   # a member without the family's word
])
def test_a_callable_named_exactly_by_a_familys_word_is_a_member(name, forbidden_name,
                                                                expected):
    assert named_by_family_word(name, forbidden_name) is expected


def test_the_bare_family_words_leave_norm_out():
    assert [bare_family_word(n) for n in ("attention", "GELU", "Embedding", "norm",
                                          "layer_norm", "sdpa_kernel")] == [
        "attention", "gelu", "embedding", None, None, None]
