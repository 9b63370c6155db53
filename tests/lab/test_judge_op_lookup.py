"""Routes to a forbidden ATen op by its name, refused at the call; honest ``torch.vmap`` passes.

cbow-step forbids torch's gradient kernels (every ATen op named ``*_backward``). Besides
``torch.ops.aten``, torch finds an op by its string name through three C functions
(``torch._C._jit_get_operation``, ``_get_operation_overload``, and ``_dispatch_call_boxed`` on
a handle from ``_dispatch_find_schema_or_throw``), and keeps Python versions of the gradient
kernels in its decomposition tables (``torch._decomp.decomposition_table``, keyed by op).
Each route, reached by names built at run time (so the static scan sees nothing), now lands
on the op's stub (``_enforce.op_lookups_by_name``, ``Enforcer.cover_decompositions``).

The stubs compare equal to the real op as dictionary keys: ``torch.vmap`` registers its
decompositions on first use by looking the ops up in such a table, and an honest solution
that maps one window's computation over the batch with ``torch.vmap`` passes.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from minimodel.lab.exercises import check_solution

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="torch not installed")

# The loss and d loss / d h by hand; the scatter-add of dh / C into the context rows, the
# gradient kernel embedding_dense_backward computes, is what each attack takes from torch.
HEAD = '''\
import sys
import numpy as np
import torch


def cbow_step(context_ids, target_ids, w_in, w_out):
    ctx, tgt = torch.as_tensor(context_ids), torch.as_tensor(target_ids)
    wi, wo = torch.as_tensor(w_in), torch.as_tensor(w_out)
    B, C = ctx.shape
    logits = wi[ctx].mean(dim=1) @ wo.T
    loss = -torch.log_softmax(logits, 1)[torch.arange(B), tgt].mean()
    d = torch.softmax(logits, 1)
    d[torch.arange(B), tgt] -= 1
    rows = ((d / B) @ wo / C)[:, None, :].expand(B, C, -1).reshape(B * C, -1)
    c, name = getattr(torch, "_" + "C"), "aten::embedding_dense_" + "backward"
'''
TAIL = "    return loss.numpy(), grad.numpy()\n"

ATTACKS = {
    "the op by name": '''\
    op, _ = getattr(c, "_jit_get_" + "operation")(name)
    grad = op(rows, ctx.reshape(-1), wi.shape[0], -1, False)  # MARK
''',
    "an overload and its per-key op by name": '''\
    found = getattr(c, "_get_operation_" + "overload")(name, "")
    grad = found[1](c.DispatchKey.CPU, rows, ctx.reshape(-1), wi.shape[0], -1, False)  # MARK
''',
    "a boxed call of the op's handle": '''\
    handle = getattr(c, "_dispatch_find_schema_or" + "_throw")(name, "")
    grad = getattr(c, "_dispatch_call_" + "boxed")(handle, rows, ctx.reshape(-1), wi.shape[0], -1, False)  # MARK
''',
    "torch's Python decomposition, from its table": '''\
    table = vars(sys.modules["torch." + "_decomp"])["decomposition_" + "table"]
    key = next(k for k in table if "embedding_dense_" + "backward" in str(k))
    grad = table[key](rows, ctx.reshape(-1), wi.shape[0], -1, False)  # MARK
''',
}


def check(source: str, tmp_path) -> dict:
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    return check_solution("cbow-step", path, seed=3)


def marked_line(source: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if "# MARK" in text)


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_gradient_kernel_reached_by_name_is_refused_at_the_call(attack, tmp_path):
    source = HEAD + ATTACKS[attack] + TAIL
    result = check(source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"] == [{"name": "torch.ops.aten.embedding_dense_backward",
                                    "line": marked_line(source), "how": "call"}]


HONEST_VMAP = '''\
import numpy as np
import torch


def one_window(ctx, tgt, w_in, w_out):
    """One window: the loss and d loss / d h, (C,), () -> (), (d,)."""
    h = w_in[ctx].mean(dim=0)                      # (d,)
    p = torch.softmax(w_out @ h, dim=0)            # (V,)
    onehot = torch.nn.functional.one_hot(tgt, w_out.shape[0]).to(p.dtype)
    return -torch.log(p[tgt]), (p - onehot) @ w_out


def cbow_step(context_ids, target_ids, w_in, w_out):
    ctx = torch.as_tensor(context_ids)
    losses, dh = torch.vmap(one_window, in_dims=(0, 0, None, None))(
        ctx, torch.as_tensor(target_ids), torch.as_tensor(w_in), torch.as_tensor(w_out))
    B, C = ctx.shape
    grad = np.zeros_like(w_in)
    np.add.at(grad, context_ids, np.repeat((dh.numpy() / (B * C))[:, None, :], C, axis=1))
    return losses.mean().numpy().astype(w_in.dtype), grad
'''


def test_an_honest_vmap_over_the_windows_passes(tmp_path):
    result = check(HONEST_VMAP, tmp_path)
    assert result["passed"] is True, json.dumps(result)[:1500]
    assert {c["status"] for c in result["cases"]} == {"passed"}


# --- the ninth attack: what a stand-in op holds that runs the op -----------------------------

CE_HEAD = '''\
import numpy as np
import torch


def cross_entropy(logits, targets, ignore_index=-100):
    x, t = torch.as_tensor(logits), torch.as_tensor(targets).long()
    aten = getattr(getattr(torch, "op" + "s"), "at" + "en")
    packet = getattr(aten, "cross_entropy_" + "loss")
'''
CE_ROUTES = {
    "the packet's C++ callable": "    loss = getattr(packet, '_o' + 'p')(x, t, None, 1, ignore_index, 0.0)  # MARK\n",
    "an overload's C++ callable": "    loss = packet.default._op(x, t, None, 1, ignore_index, 0.0)  # MARK\n",
    "an overload's op property": "    loss = packet.default.op(x, t, None, 1, ignore_index, 0.0)  # MARK\n",
    "the packet read back from an overload":
        "    loss = packet.default.overloadpacket(x, t, None, 1, ignore_index, 0.0)  # MARK\n",
    "a redispatch below autograd": (
        "    c = getattr(torch, '_' + 'C')\n"
        "    keys = c.DispatchKeySet(c.DispatchKey.CPU)\n"
        "    loss = packet.default.redispatch(keys, x, t, None, 1, ignore_index, 0.0)  # MARK\n"),
    "the dispatcher handle's boxed redispatch": (
        "    c = getattr(torch, '_' + 'C')\n"
        "    keys = c.DispatchKeySet(c.DispatchKey.CPU)\n"
        "    loss = packet.default._handle.redispatch_boxed(keys, x, t, None, 1, ignore_index, 0.0)  # MARK\n"),
    "the kernel for a dispatch key": (
        "    c = getattr(torch, '_' + 'C')\n"
        "    kernel = packet.default._get_dispatch(c.DispatchKey.CPU)\n"
        "    loss = kernel(x, t, None, 1, ignore_index, 0.0)  # MARK\n"),
    "the decomposition by the overload": (
        "    loss = packet.default.decompose(x, t, None, 1, ignore_index, 0.0)  # MARK\n"),
}


@pytest.mark.parametrize("route", list(CE_ROUTES))
def test_what_a_forbidden_op_holds_that_runs_it_reports_when_called(route, tmp_path):
    source = CE_HEAD + CE_ROUTES[route] + "    return loss.numpy()\n"
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    result = check_solution("cross-entropy", path, seed=3)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"][0]["line"] == marked_line(source)
    assert result["forbidden"][0]["how"] == "call"


def test_a_gradient_kernels_overload_callable_is_refused(tmp_path):
    source = HEAD + '''\
    op = getattr(getattr(torch.ops.aten, "embedding_dense_" + "backward").default, "_o" + "p")
    grad = op(rows, ctx.reshape(-1), wi.shape[0], -1, False)  # MARK
''' + TAIL
    result = check(source.replace("torch.ops.aten", 'getattr(getattr(torch, "op" + "s"), "aten")'),
                   tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"] == [{"name": "torch.ops.aten.embedding_dense_backward",
                                    "line": marked_line(source), "how": "call"}]
