"""Without autograd, gradient recording stays off whatever asks for it.

cbow-step is an exercise "without autograd": the judged child turns grad mode (and forward
gradients) off in every thread. The sixth attack turned it back on through torch's own code
(``Optimizer.step(closure)`` runs the closure under ``torch.enable_grad()``; so does
``torch.distributions.utils.lazy_property``), built a graph from a ``torch.nn.Parameter`` and
called its ``grad_fn`` nodes by hand; or entered a forward-mode dual level through
``torch._functorch.predispatch``. The rule now sits at the switches themselves
(``_enforce.grad_switches``), where every Python route ends: grad mode asked on stays off (so
the walk finds no graph, and torch's own helpers that ask for it keep working in honest code),
and forward mode switched on gets ``forbidden``. Turning recording off is never refused.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from minimodel.lab.exercises import check_solution, get_exercise
from own_work import retyped

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="torch not installed")

HEAD = '''\
import threading
import numpy as np
import torch
from torch.distributions.utils import lazy_property
FRAMEWORK = "torch"


def loss_of(w, w_out, ctx, tgt):
    h = w[ctx].mean(1)
    lg = h @ w_out.T
    lg = lg - lg.amax(-1, keepdim=True).expand_as(lg)
    lp = lg - torch.log(torch.exp(lg).sum(-1, keepdim=True)).expand_as(lg)
    return -lp[torch.arange(tgt.shape[0]), tgt.long()].mean()


def walk(loss, w):
    """Push d loss down the graph by calling torch's own grad_fn nodes."""
    acc = [torch.zeros_like(w)]

    def push(node, g):
        if node is None or g is None:
            return
        if type(node).__name__ == "AccumulateGrad":
            acc[0] = acc[0] + g
            return
        outs = node(g)
        for (nxt, _), o in zip(node.next_functions, outs if isinstance(outs, tuple) else (outs,)):
            push(nxt, o)
    push(loss.grad_fn, torch.ones((), dtype=w.dtype))
    return acc[0]

'''

# Each way of switching recording on, then the graph walk (or a dual number): before the rule
# at the switch, each of these passed cbow-step (the forward-mode ones at least ran).
ATTACKS = {
    # the sixth attack's three files, condensed
    "optimizer step(closure)": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    box = {}
    def closure():
        box["w"] = w = torch.nn.Parameter(w_in.clone())
        box["loss"] = loss_of(w, w_out, context_ids, target_ids)
        return box["loss"]
    torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0).step(closure)  # MARK
    return box["loss"].detach(), walk(box["loss"], box["w"])
''',
    "distributions lazy_property": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    class Step:
        @lazy_property
        def graph(self):
            w = torch.nn.Parameter(w_in.clone())
            return w, loss_of(w, w_out, context_ids, target_ids)
    w, loss = Step().graph  # MARK
    return loss.detach(), walk(loss, w)
''',
    # the attack imported torch._functorch.predispatch: that import line is refused now
    # (torch's compiler stacks, test_judge_compiler_stacks); the module torch has loaded is
    # reached here without one, so the switch itself is what refuses
    "predispatch dual level": '''
import sys
P = sys.modules["torch._func" + "torch.predispatch"]

def cbow_step(context_ids, target_ids, w_in, w_out):
    loss = loss_of(w_in, w_out, context_ids, target_ids)
    g = torch.zeros_like(w_in)
    lvl = P._enter_dual_level()  # MARK
    for r in torch.unique(context_ids).tolist():
        for c in range(w_in.shape[1]):
            t = torch.zeros_like(w_in); t[r, c] = 1
            out = loss_of(P._make_dual(w_in, t, level=lvl), w_out, context_ids, target_ids)
            g[r, c] = P._unpack_dual(out, level=lvl)[1]
    P._exit_dual_level(level=lvl)
    return loss, g
''',
    # spellings of our own
    "set_grad_enabled(True) as a decorator": '''
@torch.set_grad_enabled(True)  # MARK
def graph(w_in, w_out, ctx, tgt):
    w = torch.nn.Parameter(w_in.clone())
    return w, loss_of(w, w_out, ctx, tgt)

def cbow_step(context_ids, target_ids, w_in, w_out):
    w, loss = graph(w_in, w_out, context_ids, target_ids)
    return loss.detach(), walk(loss, w)
''',
    "enable_grad by a built name": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    on = vars(vars(torch)["auto" + "grad"].grad_mode)["enable_" + "grad"]
    with on():  # MARK
        w = torch.nn.Parameter(w_in.clone())
        loss = loss_of(w, w_out, context_ids, target_ids)
    return loss.detach(), walk(loss, w)
''',
    "a Parameter in a thread": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    box = {}
    def work():
        torch.set_grad_enabled(True)  # MARK
        box["w"] = w = torch.nn.Parameter(w_in.clone())
        box["loss"] = loss_of(w, w_out, context_ids, target_ids)
    t = threading.Thread(target=work); t.start(); t.join()
    return box["loss"].detach(), walk(box["loss"], box["w"])
''',
    "inference_mode(False)": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    with torch.inference_mode(False):  # MARK
        w = torch.nn.Parameter(w_in.clone())
        loss = loss_of(w, w_out, context_ids, target_ids)
    return loss.detach(), walk(loss, w)
''',
    "the C switch by a built name": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    getattr(vars(torch)["_" + "C"], "_set_grad_" + "enabled")(True)  # MARK
    w = torch.nn.Parameter(w_in.clone())
    loss = loss_of(w, w_out, context_ids, target_ids)
    return loss.detach(), walk(loss, w)
''',
    "forward gradients on by a built name": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    fw = vars(vars(torch)["auto" + "grad"])["forward_" + "ad"]
    with getattr(fw, "_set_fwd_grad_" + "enabled")(True):  # MARK
        return loss_of(w_in, w_out, context_ids, target_ids), torch.zeros_like(w_in)
''',
    "a dual number without a level": '''
def cbow_step(context_ids, target_ids, w_in, w_out):
    d = getattr(torch, "_make_" + "dual")(w_in, torch.ones_like(w_in), level=0)  # MARK
    return loss_of(d, w_out, context_ids, target_ids), torch.zeros_like(w_in)
''',
}

NAMES = {"forward gradients on by a built name": "torch.autograd.forward_ad",
         "predispatch dual level": "torch.autograd.forward_ad",
         "a dual number without a level": "torch.ops.aten._make_dual"}


def check(source: str, tmp_path, name: str = "solution.py") -> dict:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return check_solution("cbow-step", path, seed=3)


def marked_line(source: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if "# MARK" in text)


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a in NAMES])
def test_turning_forward_mode_on_is_refused_at_the_switch(attack, tmp_path):
    source = HEAD + ATTACKS[attack]
    result = check(source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"] == [{"name": NAMES[attack], "line": marked_line(source),
                                    "how": "call"}]


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a not in NAMES])
def test_grad_mode_asked_on_stays_off_and_the_walk_finds_no_graph(attack, tmp_path):
    result = check(HEAD + ATTACKS[attack], tmp_path)
    assert result["passed"] is False and result["status"] in ("error", "wrong"), \
        json.dumps(result)[:1500]
    assert "grad_fn" in json.dumps(result) or result["status"] == "wrong"


def test_the_grad_mode_path_written_plainly_is_refused_before_it_runs(tmp_path):
    source = HEAD + ATTACKS["enable_grad by a built name"].replace(
        'vars(vars(torch)["auto" + "grad"].grad_mode)["enable_" + "grad"]',
        "torch.autograd.grad_mode.enable_grad")
    result = check(source, tmp_path)
    assert result["status"] == "forbidden"
    assert result["forbidden"][0]["name"] == "torch.autograd"


def test_the_refusal_speaks_spanish(tmp_path):
    path = tmp_path / "solution.py"
    path.write_text(HEAD + ATTACKS["forward gradients on by a built name"], encoding="utf-8")
    result = check_solution("cbow-step", path, seed=3, lang="es")
    assert "activó el registro de gradientes de torch" in result["message"]


# Honest code: grad mode turned OFF in every spelling torch offers, NumPy, a thread.
HONEST_TORCH = '''\
import threading
import numpy as np
import torch
FRAMEWORK = "torch"


@torch.set_grad_enabled(False)
def dh_of(logits, target_ids, w_out):
    """(softmax - onehot) / B @ w_out: d loss / d h."""
    B = logits.shape[0]
    p = torch.softmax(logits, -1)
    p[torch.arange(B), target_ids.long()] -= 1
    return (p / B) @ w_out


@torch.no_grad()
def cbow_step(context_ids, target_ids, w_in, w_out):
    with torch.inference_mode():
        B, C = context_ids.shape
        h = w_in[context_ids].mean(1)
        logits = h @ w_out.T
        loss = -torch.log_softmax(logits, -1)[torch.arange(B), target_ids.long()].mean()
    with torch.set_grad_enabled(False), torch.inference_mode(True):
        dh = dh_of(logits.clone(), target_ids, w_out)
    box = {}

    def scatter():
        g = torch.zeros_like(w_in)
        g.index_add_(0, context_ids.reshape(-1).long(), (dh / C).repeat_interleave(C, 0))
        box["g"] = g
    t = threading.Thread(target=scatter); t.start(); t.join()
    return loss.clone(), box["g"]
'''


HONEST_CATEGORICAL = HONEST_TORCH.replace(
    "        loss = -torch.log_softmax(logits, -1)[torch.arange(B), target_ids.long()].mean()",
    "        probs = torch.softmax(logits, -1)\n"
    "        loss = -torch.distributions.Categorical(probs=probs).log_prob(target_ids.long()).mean()")


@pytest.mark.parametrize("style", ["torch, grad mode turned off", "numpy",
                                   "Categorical(probs=...), whose logits torch computes "
                                   "under enable_grad"])
def test_honest_solutions_without_autograd_pass(style, tmp_path):
    if style == "numpy":
        source = retyped(get_exercise("cbow-step").reference_path.read_text(encoding="utf-8"))
    elif style.startswith("Categorical"):
        assert HONEST_CATEGORICAL != HONEST_TORCH
        source = HONEST_CATEGORICAL
    else:
        source = HONEST_TORCH
    result = check(source, tmp_path)
    assert result["passed"] is True and result["practice"] is True, \
        json.dumps(result)[:1500]  # practice: a chosen seed
    assert {c["status"] for c in result["cases"]} == {"passed"}

