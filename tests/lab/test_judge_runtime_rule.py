"""A forbidden API is refused whatever name reaches it, and honest code is never refused.

The static scan reads names as written; the judged child replaces the forbidden callables
before the solution runs (``_enforce.py``), so every spelling that ends up calling one reports
``forbidden`` with the API and the solution's line. Each class of spelling is tried against
two exercises with forbidden APIs (mlm-forward-pass: GELU, LayerNorm; cross-entropy: NLL and
cross-entropy), with spellings of our own. Honest variants pass: a coding cookie, a BOM, the
standard library's diagnostics, float64 inside, an allowed torch function that runs the same
kernel as a forbidden one, the reference's algorithm typed in another style; a copy of the
lab's own solution, verbatim or reformatted, is practice.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minimodel.lab.exercises import _enforce as _enforce_module
from minimodel.lab.exercises import check_solution, get_exercise
from minimodel.lab.exercises import family as family_rule
from minimodel.lab.exercises.judge import python_text
from minimodel.lab.progress import Progress
from minimodel.messages import say
from judge_probes import PROBE_PRELUDE
from own_work import retyped, without_docstrings

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")

# exercise -> (signature, the arguments of the forbidden call, the API, its name, its C
# binding's name: nll_loss_nd is the same computation by the family rule)
EXERCISES = {
    "mlm-forward-pass": (
        "mlm_forward(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, w_head, "
        "num_heads)", "w_emb", "torch.nn.functional.gelu", "gelu", "gelu"),
    "cross-entropy": (
        "cross_entropy(logits, targets, ignore_index=-100)",
        "torch.log_softmax(logits.reshape(-1, logits.shape[-1]), -1), targets.reshape(-1)",
        "torch.nn.functional.nll_loss", "nll_loss", "nll_loss_nd"),
}

# Each class of spelling: module-level lines defining ``act`` (which calls the forbidden API
# with its arguments). ``# CALL`` marks the line the verdict must name ({name}: the API's last
# name; {twin}: its C binding's name); a template with no mark in it is called from the
# function's body, whose line is then the one named.
SPELLINGS = {
    "star import": """
        from torch.nn.functional import *

        def act(*a):
            return {name}(*a)  # CALL
        """,
    "annotated assignment": """
        nnf: "module" = torch.nn.functional

        def act(*a):
            return nnf.{name}(*a)  # CALL
        """,
    "tuple assignment": """
        depth, nnf = 2, torch.nn.functional

        def act(*a):
            return nnf.{name}(*a)  # CALL
        """,
    "walrus": """
        def act(*a):
            if (nnf := torch.nn.functional) is not None:
                return nnf.{name}(*a)  # CALL
        """,
    "for target": """
        def act(*a):
            for nnf in (torch.nn.functional,):
                return nnf.{name}(*a)  # CALL
        """,
    "default argument": """
        def act(*a, lib=torch.nn.functional):
            return lib.{name}(*a)  # CALL
        """,
    "attribute of own object": """
        class Block:
            def __init__(self):
                self.ops = torch.nn.functional

            def __call__(self, *a):
                return self.ops.{name}(*a)  # CALL

        act = Block()
        """,
    "__import__ with fromlist": """
        nnf = __import__("torch.nn.functional", fromlist=["{name}"])

        def act(*a):
            return nnf.{name}(*a)  # CALL
        """,
    "importlib reached through sys": """
        import sys

        def act(*a):
            lib = sys.modules["importlib"].import_module("torch.nn.functional")
            return lib.{name}(*a)  # CALL
        """,
    "sys.modules": """
        import sys

        def act(*a):
            return sys.modules["torch.nn.functional"].{name}(*a)  # CALL
        """,
    "vars()": """
        def act(*a):
            return vars(torch.nn.functional)["{name}"](*a)  # CALL
        """,
    "getattr with a built string": """
        def act(*a):
            return getattr(torch.nn.functional, "".join(reversed("{reversed}")))(*a)  # CALL
        """,
    "function returned from a helper": """
        def library():
            return torch.nn.functional

        def act(*a):
            return library().{name}(*a)  # CALL
        """,
    "lambda wrapper": """
        act = (lambda lib: lambda *a: getattr(lib, "{name}")(*a))(torch.nn.functional)  # CALL
        """,
    "functools.partial": """
        import functools

        act = functools.partial(vars(torch.nn.functional)["{name}"])
        """,
    "C binding through vars(torch)": """
        def act(*a):
            return vars(torch)["_C"]._nn.{twin}(*a)  # CALL
        """,
    "ATen packet through sys.modules": """
        import sys

        def act(*a):
            return sys.modules["torch"].ops.aten.{name}(*a)  # CALL
        """,
    "ATen overload through sys.modules": """
        import sys

        def act(*a):
            return sys.modules["torch"].ops.aten.{name}.default(*a)  # CALL
        """,
    "a fresh ATen namespace object": """
        def act(*a):
            fresh = type(getattr(torch, "o" + "ps").aten)("aten")
            return getattr(fresh, "{name}")(*a)  # CALL
        """,
    "torch's packet lookup by name": """
        def act(*a):
            lookup = getattr(getattr(torch, "_o" + "ps"), "_get_packet")
            op, _ = lookup("aten::{name}", "torch._ops.aten")  # CALL
            return op(*a)
        """,
    "exec of a string": """
        def act(*a):
            scope = {{"lib": torch.nn.functional}}
            exec("g = lib.{name}", scope)
            return scope["g"](*a)  # CALL
        """,
    "torch imported under a built name": """
        def act(*a):
            lib = __import__("to" + "rch", fromlist=["nn"]).nn.functional
            return lib.{name}(*a)  # CALL
        """,
}


def solution(exercise: str, spelling: str) -> tuple[str, int]:
    """The solution's text and the line the verdict must name."""
    signature, args, _, name, twin = EXERCISES[exercise]
    header = "import torch\n\nFRAMEWORK = 'torch'\n"
    if spelling == "torch imported under a built name":  # NumPy inputs: torch is not named
        header, args = "", signature.split("(")[1].split(",")[0]
    body = textwrap.dedent(SPELLINGS[spelling]).format(name=name, twin=twin,
                                                       reversed=name[::-1])
    call = "    return act(" + args + ")"
    if "# CALL" not in body:
        call += "  # CALL"
    source = f"{header}\n{body}\n\ndef {signature}:\n{call}\n"
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# CALL" in text)
    return source, line


def verdict(exercise: str, source: str, tmp_path, name: str = "solution.py") -> dict:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return check_solution(exercise, path, seed=3)


@needs_torch
@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_a_forbidden_api_is_refused_whatever_name_reaches_it(exercise, spelling, tmp_path):
    source, line = solution(exercise, spelling)
    result = verdict(exercise, source, tmp_path)
    api = EXERCISES[exercise][2]
    assert result["status"] == "forbidden", (source, json.dumps(result)[:1500])
    assert result["passed"] is False and result["reason"] == "forbidden"
    # none of these spellings is read by the static scan: the stub at the call refuses it,
    # naming the API and the line of the call
    assert result["forbidden"] == [{"name": api, "line": line, "how": "call"}], (source, result)
    assert f"(line {line})" in result["message"]


@needs_torch
@pytest.mark.parametrize("spelling", ["star import", "getattr with a built string",
                                      "vars()", "functools.partial"])
def test_these_spellings_are_refused_at_the_call_and_the_verdict_names_the_api(spelling,
                                                                               tmp_path):
    """The spellings no static reading follows reach the stubs: the verdict comes from the
    child, names the API and the line, in English and in Spanish."""
    source, line = solution("mlm-forward-pass", spelling)
    path = tmp_path / "mlm.py"
    path.write_text(source, encoding="utf-8")
    for lang, words in (("en", "called torch.nn.functional.gelu"),
                        ("es", "llamó a torch.nn.functional.gelu")):
        result = check_solution("mlm-forward-pass", path, seed=5, lang=lang)
        assert result["forbidden"] == [{"name": "torch.nn.functional.gelu", "line": line,
                                        "how": "call"}], result["forbidden"]
        assert words in result["message"] and str(line) in result["message"]
        stopped = [c for c in result["cases"] if c["status"] == "forbidden"]
        assert len(stopped) == 1 and all(c["status"] in ("forbidden", "not run")
                                         for c in result["cases"])


@needs_torch
@pytest.mark.parametrize("exercise, source, api", [
    # a class keeps its identity: built through any name, or subclassed, it reports
    ("mlm-forward-pass", "import torch\nFRAMEWORK = 'torch'\n\ndef mlm_forward(*args):\n"
     "    norm = vars(torch.nn)['Layer' + 'Norm'](4)  # CALL\n    return norm(args[2])\n",
     "torch.nn.LayerNorm"),
    ("mlm-forward-pass", "import torch\nFRAMEWORK = 'torch'\n\n"
     "class Mine(getattr(torch.nn, 'Layer' + 'Norm')):\n    pass\n\n"
     "def mlm_forward(*args):\n    return Mine(4)(args[2])  # CALL\n", "torch.nn.LayerNorm"),
    ("cross-entropy", "import torch\nFRAMEWORK = 'torch'\nLOSS = vars(torch.nn)\n\n"
     "def cross_entropy(logits, targets, ignore_index=-100):\n"
     "    crit = LOSS['CrossEntropyLoss'](ignore_index=ignore_index)  # CALL\n"
     "    return crit(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))\n",
     "torch.nn.CrossEntropyLoss"),
    # an allowed name that computes the forbidden thing inside torch's Python reaches it too
    ("cbow-step", "import sys\nimport torch\nFRAMEWORK = 'torch'\n\n"
     "def cbow_step(c, t, w_in, w_out):\n    h = w_in[c].mean(dim=1)\n"
     "    f = sys.modules['torch.nn.functional']\n"
     "    loss = f.linear_cross_entropy(h, w_out, t)  # CALL\n    return loss, w_in\n",
     "torch.nn.functional.cross_entropy"),
    # a normalisation in disguise: an RMS norm of a centred input is a layer norm
    ("mlm-forward-pass", "import torch\nFRAMEWORK = 'torch'\n\ndef mlm_forward(*args):\n"
     "    x = args[2] - args[2].mean(-1, keepdim=True)\n"
     "    return vars(torch.nn.functional)['rms' + '_norm'](x, x.shape[-1:])  # CALL\n",
     "torch.nn.functional.rms_norm"),
    # every method a forbidden class defines reports, not only __init__ and forward: the
    # quantizable MultiheadAttention built without __init__, its _forward_impl reached by name
    ("mlm-forward-pass", "import torch\nimport torch.ao.nn.quantizable as qz\n"
     "FRAMEWORK = 'torch'\n\ndef mlm_forward(*args):\n"
     "    cls = vars(qz)['Multihead' + 'Attention']\n    m = cls.__new__(cls)\n"
     "    return vars(cls)['_forward_' + 'impl'](m, None, None, None, None)  # CALL\n",
     "torch.nn.MultiheadAttention"),
    # ... and a static method of a forbidden autograd Function (the cross-map LRN's backward)
    ("mlm-forward-pass", "import torch\nFRAMEWORK = 'torch'\n\ndef mlm_forward(*args):\n"
     "    fn = vars(torch.nn.modules)['_functions'].CrossMapLRN2d\n"
     "    return fn.backward(None, torch.ones(1, 4, 1, 1))  # CALL\n",
     "torch.nn.modules._functions.CrossMapLRN2d"),
    # a whole exercise "without autograd": the gradient calls, whatever their name
    ("cbow-step", "import torch\nFRAMEWORK = 'torch'\n\ndef cbow_step(c, t, w_in, w_out):\n"
     "    w = w_in.clone()\n    loss = (w * w).sum()\n"
     "    g = vars(torch)['autograd'].grad(loss, [w])  # CALL\n    return loss, g[0]\n",
     "torch.autograd.grad"),
    # the import rule is an allow-list at run time: a library the exercise does not allow,
    # named by a built string (the third attack imported scikit-learn's log_loss this way)
    ("cross-entropy", "import numpy as np\n\n"
     "_m = __import__('sk' + 'learn.metrics', fromlist=['x'])  # CALL\n\n"
     "def cross_entropy(logits, targets, ignore_index=-100):\n"
     "    return np.asarray(_m.log_loss([0], [[1.0]], labels=[0, 1]))\n", "sklearn"),
    ("layer-norm", "import numpy as np\n\ndef layer_norm(x, weight=None, bias=None, eps=1e-5):"
     "\n    special = __import__(''.join(['sc', 'ipy']) + '.special')  # CALL\n    return x\n",
     "scipy"),
    # a module allowed only as torch's dependency: torch may import it, the solution may not
    # (the eighth attack differentiated cbow's loss with sympy imported by a built name)
    ("cbow-step", "import numpy as np\n\n"
     "_sp = __import__('sym' + 'py.core', fromlist=['x'])  # CALL\n\n"
     "def cbow_step(context_ids, target_ids, w_in, w_out):\n    return 0.0, w_in\n",
     "sympy"),
    ("mlm-forward-pass", "import torch\nFRAMEWORK = 'torch'\n\ndef mlm_forward(*args):\n"
     "    nx = __import__('network' + 'x')  # CALL\n    return args[2]\n", "networkx"),
    # a NumPy-only exercise: torch under a built name is refused, not merely hidden
    ("layer-norm", "import numpy as np\n\ndef layer_norm(x, weight=None, bias=None, eps=1e-5):"
     "\n    torch = __import__('tor' + 'ch')  # CALL\n    return x\n", "torch"),
])
def test_classes_gradients_and_hidden_libraries_are_refused_at_the_call(exercise, source,
                                                                        api, tmp_path):
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# CALL" in text)
    result = verdict(exercise, source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"] == [{"name": api, "line": line, "how": "call"}]


def test_the_run_time_allow_list_is_derived_from_the_installed_metadata():
    """torch and what it needs (read from its requirements, recursively: sympy's mpmath,
    jinja2's markupsafe; torch's own torchgen), the standard library and NumPy; nothing else
    a machine happens to have installed."""
    from minimodel.lab.exercises.requirements import (library_only, required_name,
                                                      runtime_allowed)

    assert required_name('sympy>=1.13.3') == "sympy"
    assert required_name('optree>=0.13.0; extra == "optree"') is None
    numpy_only = set(runtime_allowed(False, []))
    assert {"numpy", "math", "logging", "os"} <= numpy_only and "torch" not in numpy_only
    assert not {"sklearn", "scipy", "minimodel", "sympy"} & numpy_only
    if HAS_TORCH:
        with_torch = set(runtime_allowed(True, []))
        assert {"torch", "torchgen", "sympy", "mpmath", "typing_extensions"} <= with_torch
        assert not {"sklearn", "scipy", "minimodel", "matplotlib"} & with_torch
        # of them, torch's dependencies are torch's to import (the solution's import reports)
        only = set(library_only(True, []))
        assert {"sympy", "mpmath", "networkx", "jinja2"} <= only <= with_torch
        assert not {"torch", "torchgen", "functorch", "numpy", "math"} & only
        assert "sympy" not in library_only(True, ["sympy"])  # an exercise may allow it
    assert library_only(False, []) == []


ENFORCE_PROBE = PROBE_PRELUDE + """
enforcer = load("_enforce").enforce(rule["entries"], rule["refused"], calls.append,
                                    load("family"))
x = torch.randn(3, 4)
honest = [torch.nn.functional.relu(x), torch.log_softmax(x, -1), x.norm(), 1 - x,
          torch.nn.functional.normalize(x),
          torch.nn.functional.nll_loss(torch.log_softmax(x, -1), torch.tensor([0, 1, 2]))]
for reach in (lambda: torch.nn.functional.gelu(x), lambda: torch._VF.layer_norm(x, (4,)),
              lambda: torch._C._VariableFunctions.layer_norm(x, (4,)),
              lambda: torch.ops.aten.gelu.default(x), lambda: vars(torch.nn)["GELU"](),
              lambda: torch._C._nn.scaled_dot_product_attention(x, x, x)):
    reach()
print(json.dumps({"replaced": enforcer.replaced, "calls": calls}))
"""


@needs_torch
def test_the_stubs_cover_every_namespace_and_leave_honest_calls_alone():
    """In a process of its own: what the child's rule replaces for mlm-forward-pass, and that
    torch's allowed functions (relu, log_softmax, norm, 1 - x, nll_loss) run untouched."""
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.judge import runtime_rule

    here = Path(_enforce_module.__file__).parent
    rule = runtime_rule(get_exercise("mlm-forward-pass"), aliases.table())
    done = subprocess.run([sys.executable, "-c", ENFORCE_PROBE, str(here), json.dumps(rule)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    replaced = out["replaced"]
    for path in ("torch.nn.functional.gelu", "torch._C._nn.gelu", "torch.ops.aten.gelu",
                 "torch.nn.functional.layer_norm", "torch.layer_norm",
                 "torch._C._VariableFunctions.layer_norm", "torch.nn.modules.activation.GELU", "torch.nn.LayerNorm",
                 "torch._native_multi_head_attention", "torch.ops.aten.native_layer_norm"):
        assert path in replaced, path
    assert replaced["torch._C._nn.gelu"] == "torch.nn.functional.gelu"
    for honest in ("torch.nn.functional.relu", "torch.nn.functional.log_softmax",
                   "torch.nn.functional.nll_loss", "torch.overrides._get_overloaded_args",
                   "torch.functional.norm", "Tensor.norm", "torch.load"):
        assert honest not in replaced or honest == "torch.load", honest
    # the honest calls ran; each forbidden spelling reported once, by its API
    assert out["calls"] == ["torch.nn.functional.gelu", "torch.layer_norm", "torch.layer_norm",
                            "torch.nn.functional.gelu", "torch.nn.GELU",
                            "torch.nn.functional.scaled_dot_product_attention"]


WALK_PROBE = PROBE_PRELUDE + """
import re, types
enforcer = load("_enforce").enforce(rule["entries"], rule["refused"], calls.append,
                                    load("family"), backward_kernels=rule["grad_off"])
import torch.nn.attention.flex_attention  # a module imported after the install is covered too
named = re.compile("attention|attn|norm|gelu|lrn|embedding", re.I)
found = {}
for name, module in list(sys.modules.items()):
    if not name.startswith("torch") or not isinstance(module, types.ModuleType):
        continue
    for attr, obj in list(vars(module).items()):
        if attr.startswith("__") or not named.search(attr) or not callable(obj) \\
                or isinstance(obj, types.ModuleType):
            continue
        stub = id(obj) in enforcer.stub_ids or id(obj) in enforcer.patched \\
            or id(type(obj)) in enforcer.patched  # a higher-order op: its class patched
        found[f"{name}.{attr}"] = [stub, str(getattr(obj, "__module__", "") or "")]
print(json.dumps(found))
"""


@needs_torch
@pytest.mark.parametrize("exercise", ["mlm-forward-pass", "embedding-lookup", "cbow-step"])
def test_every_callable_the_static_scan_refuses_by_name_is_a_stub_at_run_time(exercise):
    """Walk torch's attention-, norm-, GELU- and embedding-named callables in every loaded
    module after the install (flex attention's module imported after it): each one the static
    scan refuses by an entry or by the family rule (``math_attention`` under the
    ``flex_attention`` module's path) is a stub. Exceptions, by design: the fences and the
    whole modules the scan refuses as packages (``torch._refs``, ``torch.func``: at run time
    only their members of a family are replaced), and objects another library defines that a
    torch module holds (a ``typing.Literal`` alias named ``_FlashAttentionImpl``)."""
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.astscan import FENCE_FORBIDDEN, _Rule
    from minimodel.lab.exercises.judge import forbidden_names, runtime_rule

    table = aliases.table()
    ex = get_exercise(exercise)
    here = Path(_enforce_module.__file__).parent
    done = subprocess.run([sys.executable, "-c", WALK_PROBE, str(here),
                           json.dumps(runtime_rule(ex, table))],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    static, modules = _Rule(forbidden_names(ex), table), set(table["modules"])
    missed = []
    for path, (stub, owner) in sorted(found.items()):
        bad = static.match(path)
        if bad is None or stub or bad in FENCE_FORBIDDEN or bad in modules \
                or owner.split(".")[0] != "torch":
            continue
        missed.append((path, bad))
    assert missed == []
    assert found["torch._higher_order_ops.flex_attention.math_attention"][0]
    assert len(found) > 300  # the walk saw torch's names, not an empty namespace


OP_STUB_PROBE = PROBE_PRELUDE + """
load("_enforce").enforce(rule["entries"], rule["refused"], calls.append, load("family"))
import torch.distributed.tensor  # reads the schema of every op it registers, gelu's too
gelu = torch.ops.aten.gelu
schema = [a.name for a in gelu.default._schema.arguments]
gelu.default(torch.ones(2))
print(json.dumps({"schema": schema, "overloads": sorted(gelu.overloads()), "calls": calls}))
"""


@needs_torch
def test_a_stubbed_aten_op_reads_like_the_real_one_and_refuses_only_a_call():
    """torch.distributed.tensor imported under the rule: it reads each op's schema (a stub
    that answered every attribute with itself crashed it: 'ForbiddenOp' is not iterable)."""
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.judge import runtime_rule

    here = Path(_enforce_module.__file__).parent
    rule = runtime_rule(get_exercise("mlm-forward-pass"), aliases.table())
    done = subprocess.run([sys.executable, "-c", OP_STUB_PROBE, str(here), json.dumps(rule)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["schema"][:2] == ["self", "approximate"] and "default" in out["overloads"]
    assert out["calls"] == ["torch.nn.functional.gelu"]


ALLOW_LIST_PROBE = """
import importlib.util, json, sys, sysconfig
here, allowed = sys.argv[1], json.loads(sys.argv[2])

def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{here}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

import numpy
calls = []
load("_enforce").enforce([], ["minimodel"], calls.append, load("family"), allowed,
                         "/learner/solution.py")
out = {"vars": bool(sysconfig.get_config_vars())}  # imports _sysconfigdata_<platform>
probe = importlib.util.find_spec("sklearn")        # a library probing an optional module
out["probe_origin"] = None if probe is None else probe.origin
out["absent"] = importlib.util.find_spec("surely_not_installed_anywhere") is None
try:
    import sklearn  # noqa: F401 - library code (this file is not the solution)
    out["library_import"] = "loaded"
except ModuleNotFoundError as exc:
    out["library_import"] = str(exc)
try:  # the real report ends the process; this one only records, then the import fails
    exec(compile("__import__('sk' + 'learn')", "/learner/solution.py", "exec"), {})
except ModuleNotFoundError:
    pass
out["calls"] = calls
print(json.dumps(out))
"""


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="needs scikit-learn")
def test_the_allow_list_refuses_the_solution_and_lets_libraries_probe():
    """Off the list: imported by the solution's line, reported; imported by library code, not
    installed as far as it can tell (a find_spec probe gets a spec without origin); the
    standard library's private modules load."""
    from minimodel.lab.exercises.requirements import runtime_allowed

    here = Path(_enforce_module.__file__).parent
    done = subprocess.run([sys.executable, "-c", ALLOW_LIST_PROBE, str(here),
                           json.dumps(runtime_allowed(False, []))],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["vars"] and out["absent"] and out["probe_origin"] is None
    assert "not allowed in this exercise" in out["library_import"]
    assert out["calls"] == ["sklearn"]


def test_the_family_rule_sees_dimension_suffixes_and_nd_variants():
    for name, api in (("nll_loss_nd", "nll_loss"), ("nll_loss2d", "nll_loss"),
                      ("BatchNorm1d", "batch_norm"), ("InstanceNorm3d", "instance_norm")):
        assert family_rule.same_family(name, api), name
    assert not family_rule.same_family("embedding_bag", "embedding")
    assert not family_rule.same_family("relu", "gelu")


# --- honest code is never refused --------------------------------------------------------

CE_OWN = '''"""Mi entropía cruzada, escrita a mi manera."""
import logging
import math
import warnings
from dataclasses import dataclass
from functools import reduce
from typing import Optional

import numpy as np

log = logging.getLogger(__name__)


@dataclass
class Kept:
    rows: np.ndarray
    cols: np.ndarray


def _kept(logits, targets, ignore_index) -> Kept:
    width = logits.shape[-1]
    flat = logits.reshape(reduce(lambda a, b: a * b, logits.shape[:-1], 1), width)
    target = targets.reshape(-1)
    mask = target != ignore_index
    return Kept(flat[mask].astype(np.float64), target[mask])  # float64 inside


def cross_entropy(logits, targets, ignore_index: Optional[int] = -100):
    kept = _kept(logits, targets, ignore_index)
    if kept.cols.size == 0:
        warnings.warn("nothing kept")
    shift = kept.rows.max(axis=1, keepdims=True)
    total = 0.0
    for row, top, col in zip(kept.rows, shift[:, 0], kept.cols):  # café: a comment
        total += top + math.log(np.exp(row - top).sum()) - row[col]
    log.debug("kept %d positions", kept.cols.size)
    return np.asarray(total / max(kept.cols.size, 1), dtype=logits.dtype)
'''

CBOW_TORCH = '''import torch
import torch.nn.functional as F

FRAMEWORK = "torch"


def cbow_step(context_ids, target_ids, w_in, w_out):
    batch, width = context_ids.shape
    hidden = w_in[context_ids].mean(dim=1)                    # (B, d)
    logp = F.log_softmax(hidden @ w_out.T, dim=-1)             # (B, V)
    loss = F.nll_loss(logp, target_ids)                        # the kernel cross_entropy runs
    dlogits = logp.exp()
    dlogits[torch.arange(batch), target_ids] -= 1.0
    dh = (dlogits / batch) @ w_out                             # (B, d)
    grad = torch.zeros_like(w_in)
    grad.index_add_(0, context_ids.reshape(-1), (dh / width).repeat_interleave(width, 0))
    return loss, grad
'''

CE_TORCH = '''import torch

FRAMEWORK = "torch"


def cross_entropy(logits, targets, ignore_index=-100):
    flat = logits.reshape(-1, logits.shape[-1])
    target = targets.reshape(-1)
    keep = target != ignore_index
    logp = torch.log_softmax(flat[keep], dim=-1)
    return -logp.gather(1, target[keep].unsqueeze(1)).mean()
'''


@pytest.mark.parametrize("name, exercise, data", [
    ("latin-1 cookie", "cross-entropy",
     ("# -*- coding: latin-1 -*-\n" + CE_OWN).encode("latin-1")),
    ("cp1252 cookie on line 2", "cross-entropy",
     ("#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n" + CE_OWN).encode("cp1252")),
    ("UTF-8 BOM", "cross-entropy", b"\xef\xbb\xbf" + CE_OWN.encode("utf-8")),
    ("torch: an allowed function running the forbidden one's kernel", "cbow-step",
     CBOW_TORCH.encode()),
    ("torch: log_softmax and gather", "cross-entropy", CE_TORCH.encode()),
])
def test_honest_code_passes_and_counts(name, exercise, data, tmp_path, monkeypatch):
    if "torch" in name and not HAS_TORCH:
        pytest.skip("torch not installed")
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    path = tmp_path / "mine.py"
    path.write_bytes(data)
    result = check_solution(exercise, path)
    assert result["status"] == "passed", (name, json.dumps(result)[:2000])
    assert result["practice"] is False


def test_a_file_is_decoded_as_python_decodes_it():
    text = "# -*- coding: latin-1 -*-\nname = 'café'\n"
    assert python_text(text.encode("latin-1")) == text
    assert python_text(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"
    assert python_text("x = 'é'\n".encode()) == "x = 'é'\n"
    with pytest.raises(UnicodeDecodeError):
        python_text("x = 'é'\n".encode("latin-1"))  # no cookie: UTF-8, as Python reads it
    with pytest.raises(SyntaxError):
        python_text(b"# coding: no-such-codec\nx = 1\n")


@pytest.mark.parametrize("data, words", [
    ("x = 'é'\n".encode("latin-1"), "byte 0xe9 at position 5 is not utf-8"),
    (b"# coding: no-such-codec\nx = 1\n", "unknown encoding: no-such-codec"),
])
def test_a_file_python_cannot_read_gets_one_clear_line(data, words, tmp_path, capsys):
    from minimodel.cli import main

    path = tmp_path / "bad.py"
    path.write_bytes(data)
    assert main(["exercise", "check", "gelu-tanh", "--file", str(path)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("module", ["os", "pathlib", "importlib", "inspect", "subprocess",
                                    "pickle", "ctypes"])
def test_modules_that_reach_outside_the_function_are_refused_with_the_reason(module):
    source = f"import {module}\nimport numpy as np\n\n\ndef gelu(x):\n    return x\n"
    result = check_solution("gelu-tanh", source=source, seed=1)
    assert result["status"] == "forbidden" and result["forbidden"][0]["name"] == module
    assert "reach files, processes, the network or other code" in result["message"]
    es = check_solution("gelu-tanh", source=source, seed=1, lang="es")
    assert "archivos, procesos, la red u otro código" in es["message"]


# --- a copy of the lab's solution is practice, by content -------------------------------

def _reformatted(source: str) -> str:
    """The same program, reformatted: no docstrings or comments, other quotes and spacing,
    a self-test at the end."""
    text = without_docstrings(source).replace("    ", "\t")
    return "# my file\n" + text + "\n\nif __name__ == '__main__':\n\tprint('self-test')\n"


@pytest.mark.parametrize("exercise, which", [
    ("cross-entropy", "verbatim"), ("cross-entropy", "reformatted"),
    ("cbow-step", "alternative"), ("counted-bigram-loss", "reformatted"),
])
def test_a_copy_of_the_labs_solution_is_practice_wherever_it_lies(exercise, which, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    ex = get_exercise(exercise)
    original = (ex.folder / "alternatives" / ex.alternatives[0]) if which == "alternative" \
        else ex.reference_path
    text = original.read_text(encoding="utf-8")
    copy = tmp_path / "clone" / "src" / "mine.py"  # e.g. a clone's src/ after pip install .
    copy.parent.mkdir(parents=True)
    copy.write_text(text if which != "reformatted" else _reformatted(text), encoding="utf-8")
    assert copy.read_text(encoding="utf-8") != text or which != "reformatted"
    from minimodel.cli import main

    assert main(["exercise", "check", exercise, "--file", str(copy), "--json"]) == 0
    assert Progress(tmp_path / "learner").get("exercise", exercise)["status"] != "passed"
    result = check_solution(exercise, copy, lang="es")
    assert result["passed"] is True and result["practice"] is True
    assert say("judge.lab_copy", "es") in result["message"]
    # the same algorithm typed in one's own way is the learner's work, and counts
    own = tmp_path / "own.py"
    own.write_text(retyped(text), encoding="utf-8")
    mine = check_solution(exercise, own)
    assert mine["passed"] is True and mine["practice"] is False, mine["message"]


def test_the_tutor_records_a_copy_as_practice(tmp_path, monkeypatch):
    from minimodel.tutor.exercise_tools import ExerciseDesk
    from minimodel.tutor.learner import Learner

    learner = Learner(tmp_path / "learner")
    desk = ExerciseDesk(learner)
    ex = get_exercise("cross-entropy")
    copy = tmp_path / "cross_entropy.py"
    copy.write_text(ex.reference_path.read_text(encoding="utf-8"), encoding="utf-8")
    out = desk.check(ex.id, file=str(copy))
    assert out["passed"] is True and out["practice"] is True
    assert learner.progress().get("exercise", ex.id)["status"] != "passed"
    copy.write_text(retyped(ex.reference_path.read_text(encoding="utf-8")), encoding="utf-8")
    out = desk.check(ex.id, file=str(copy))
    assert out["passed"] is True and out["practice"] is False
    assert learner.progress().get("exercise", ex.id)["status"] == "passed"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


@needs_torch
def test_without_autograd_no_graph_is_recorded_so_none_can_be_walked(tmp_path):
    """A fresh attacker's hole: an nn.Parameter (no `requires_grad` written) and the loss's
    grad_fn nodes called by hand passed cbow-step, an exercise "without autograd". The child
    now records no graph in such an exercise: the walk finds nothing to call."""
    result = verdict("cbow-step", GRAPH_WALK, tmp_path)
    assert result["status"] != "passed"


GRAPH_WALK = '''\
import torch
FRAMEWORK = "torch"

def _loss(context_ids, target_ids, w_in, w_out):
    h = w_in[context_ids].mean(1)
    logits = h @ w_out.T
    m = logits.max(1, keepdim=True).values.detach()
    lse = (logits - m).exp().sum(1).log() + m[:, 0]
    picked = logits.gather(1, target_ids.long()[:, None])[:, 0]
    return (lse - picked).mean()

def cbow_step(context_ids, target_ids, w_in, w_out):
    p = torch.nn.Parameter(w_in.clone())
    loss = _loss(context_ids, target_ids, p, w_out)
    node0 = loss.grad_fn
    # topological order
    order, seen = [], set()
    def visit(n):
        if n is None or id(n) in seen: return
        seen.add(id(n))
        for nxt, _ in n.next_functions: visit(nxt)
        order.append(n)
    visit(node0)
    grads = {id(node0): [torch.ones_like(loss)]}
    out = torch.zeros_like(w_in)
    for n in reversed(order):
        gs = grads.pop(id(n), None)
        if gs is None: continue
        g = gs[0]
        for x in gs[1:]: g = g + x
        if hasattr(n, "variable"):
            out = out + g; continue
        res = n(g)
        if not isinstance(res, tuple): res = (res,)
        for (nxt, _), r in zip(n.next_functions, res):
            if nxt is not None and r is not None:
                grads.setdefault(id(nxt), []).append(r)
    return loss.detach(), out.detach()
'''


# The fifth attack's H1: the graph walk above, run in a thread of its own. Grad mode is per
# thread in torch and a new thread starts with it on; every way of starting one is listed.
THREAD_STARTS = {
    "threading.Thread": "t = threading.Thread(target=work); t.start(); t.join()",
    "Thread subclass": ("class T(threading.Thread):\n        def run(self):\n"
                        "            work()\n    t = T(); t.start(); t.join()"),
    "threading.Timer": "t = threading.Timer(0.0, work); t.start(); t.join()",
    # concurrent.futures (allowed as written too), here named by a built string
    "ThreadPoolExecutor": ("cf = __import__('concurrent' + '.futures', fromlist=['x'])\n"
                           "    with cf.ThreadPoolExecutor(2) as pool:\n"
                           "        pool.submit(work).result()"),
    "_thread by a built name": ("lock = threading.Lock(); lock.acquire()\n"
                                "    def done():\n        work(); lock.release()\n"
                                "    __import__('_th' + 'read').start_new_thread(done, ())\n"
                                "    lock.acquire()"),
}


def _in_a_thread(start: str) -> str:
    walk = GRAPH_WALK.split("def cbow_step", 1)
    body = textwrap.indent("def cbow_step" + walk[1], "    ")
    return (walk[0].replace("import torch", "import threading\nimport torch") +
            "def cbow_step(context_ids, target_ids, w_in, w_out):\n"
            "    box = {}\n"
            "    def work():\n"
            "        box['r'] = inner(context_ids, target_ids, w_in, w_out)\n"
            + textwrap.indent(body.replace("def cbow_step(", "def inner(", 1), "    ")
            .replace("        def inner", "    def inner", 1)
            + f"    {start}\n    return box['r']\n")


@needs_torch
@pytest.mark.parametrize("start", list(THREAD_STARTS))
def test_without_autograd_every_thread_starts_with_grad_mode_off(start, tmp_path):
    """The probe runs in the judged child's own setting: every thread, however started, sees
    grad mode off, and an honest function run in a thread still runs."""
    probe = ("import threading\nimport numpy as np\nimport torch\nFRAMEWORK = 'torch'\n\n"
             "def cbow_step(context_ids, target_ids, w_in, w_out):\n"
             "    box = {}\n"
             "    def work():\n"
             "        box['on'] = torch.is_grad_enabled()\n"
             f"    {THREAD_STARTS[start]}\n"
             "    if box['on']:\n        raise RuntimeError('grad mode is on in a thread')\n"
             "    return torch.zeros((), dtype=w_in.dtype), torch.zeros_like(w_in)\n")
    result = verdict("cbow-step", probe, tmp_path)
    # the zeros are wrong answers, computed: no case stopped on the RuntimeError
    assert {c["status"] for c in result["cases"]} == {"wrong"}, json.dumps(result)[:1500]


@needs_torch
@pytest.mark.parametrize("start", ["threading.Thread", "ThreadPoolExecutor"])
def test_the_graph_walk_in_a_thread_finds_no_graph(start, tmp_path):
    source = _in_a_thread(THREAD_STARTS[start])
    compile(source, "walk.py", "exec")
    result = verdict("cbow-step", source, tmp_path)
    assert result["status"] != "passed", source


# --- the fifth attack's H2/H3: a concept is forbidden as a whole family --------------------

MHA_SIGNATURE = "multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads)"
MLM_SIGNATURE = EXERCISES["mlm-forward-pass"][0]


@needs_torch
@pytest.mark.parametrize("exercise, call, api", [
    # the fused encoder-layer kernel runs attention (it passed multi-head-self-attention)
    ("multi-head-self-attention", "torch._transformer_encoder_layer_fwd(x)",
     "torch._transformer_encoder_layer_fwd"),
    ("multi-head-self-attention", "vars(torch)['_transformer_' + 'encoder_layer_fwd'](x)",
     "torch._transformer_encoder_layer_fwd"),
    ("multi-head-self-attention",
     "vars(torch.nn)['Transformer' + 'DecoderLayer'](4, 2)", "torch.nn.TransformerDecoderLayer"),
    ("multi-head-self-attention", "vars(torch)['_scaled_dot_product_' + 'attention_math'](x, x, x)",
     "torch._scaled_dot_product_attention_math"),
    # a response window over the whole row divides by sqrt(var + eps) (it passed the MLM)
    ("mlm-forward-pass", "torch.nn.functional.local_response_norm(w_emb, 3)",
     "torch.nn.functional.local_response_norm"),
    ("mlm-forward-pass", "vars(torch.nn.functional)['local_response' + '_norm'](w_emb, 3)",
     "torch.nn.functional.local_response_norm"),
    ("mlm-forward-pass", "getattr(torch.nn, 'Local' + 'ResponseNorm')(3)",
     "torch.nn.LocalResponseNorm"),
    # the two halves of a batch norm, statistics then (x - mean) * invstd: in any exercise
    ("multi-head-self-attention", "getattr(torch, 'batch_norm_' + 'stats')(x, 1e-5)",
     "torch.batch_norm_stats"),
    ("cross-entropy", "getattr(torch, 'batch_norm_' + 'elemt')(logits, None, None, "
     "logits, logits, 1e-5)", "torch.batch_norm_elemt"),
    ("mlm-forward-pass", "getattr(torch.nn, 'Lazy' + 'BatchNorm1d')()",
     "torch.nn.LazyBatchNorm1d"),
    # flex attention: its module imports, calling it is refused
    ("multi-head-self-attention", "__import__('torch.nn.attention.flex_' + 'attention', "
     "fromlist=['x']).flex_attention(x, x, x)",
     "torch.nn.attention.flex_attention.flex_attention"),
    # what flex attention's own module defines computes it (its dense kernel, by a built name)
    ("multi-head-self-attention", "vars(__import__('sys').modules['torch._higher_order_ops."
     "flex_' + 'attention'])['sdpa' + '_dense'](x, x, x)",
     "torch.nn.attention.flex_attention.flex_attention"),
    # the eighth attack: the cross-map LRN is a local response norm (LRN is read as its
    # words), as a module and as torch's autograd Function under a built name
    ("mlm-forward-pass", "vars(torch.nn)['CrossMap' + 'LRN2d'](3)", "torch.nn.CrossMapLRN2d"),
    ("mlm-forward-pass", "vars(torch.nn.modules)['_func' + 'tions'].CrossMapLRN2d.apply("
     "torch.ones(1, 4, 1, 1), 9)", "torch.nn.modules._functions.CrossMapLRN2d"),
    # torch's reference layer-norm core, by identity (its word is the L2 normalize's)
    ("mlm-forward-pass", "getattr(__import__('torch._r' + 'efs', fromlist=['x']), "
     "'_norm' + 'alize')(torch.ones(2, 4), [1], 1e-5)", "torch._refs._normalize"),
    # torch's Python re-implementations: a public helper holding a family's words computes it
    # (a batch norm of the transposed rows is their layer norm)
    ("mlm-forward-pass", "vars(__import__('sys').modules['torch._decomp.decompositions'])["
     "'native_batch_norm_' + 'helper'](torch.ones(4, 3), None, None, None, None, True, "
     "0.1, 1e-5, False)", "torch.nn.BatchNorm1d"),
    # an embedding bag of one id per bag is the lookup
    ("embedding-lookup", "vars(torch)['embedding' + '_bag'](torch.as_tensor(E), "
     "torch.as_tensor(ids).reshape(-1), torch.arange(0, ids.numel()))",
     "torch.embedding_bag"),
    ("embedding-lookup", "getattr(torch.nn, 'Embedding' + 'Bag').from_pretrained("
     "torch.as_tensor(E))(torch.as_tensor(ids))", "torch.nn.EmbeddingBag"),
])
def test_every_member_of_a_forbidden_family_is_refused(exercise, call, api, tmp_path):
    signature = {"multi-head-self-attention": MHA_SIGNATURE, "mlm-forward-pass": MLM_SIGNATURE,
                 "cross-entropy": EXERCISES["cross-entropy"][0],
                 "embedding-lookup": "embed(ids, E)"}[exercise]
    source = (f"import torch\nFRAMEWORK = 'torch'\n\n\ndef {signature}:\n"
              f"    return {call}\n")
    result = verdict(exercise, source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert [(f["name"], f["line"]) for f in result["forbidden"]] == [(api, 6)], result["forbidden"]


def test_naming_one_member_of_a_family_names_the_whole_family():
    from minimodel.lab.exercises.astscan import DEFAULT_FORBIDDEN
    from minimodel.lab.exercises.concepts import ATTENTION, GELU, NORMALISATION, whole_families

    assert set(ATTENTION) | set(NORMALISATION) <= set(DEFAULT_FORBIDDEN)
    assert {"torch._transformer_encoder_layer_fwd", "torch.nn.TransformerEncoderLayer",
            "torch.nn.attention.flex_attention.flex_attention"} <= set(ATTENTION)
    assert {"torch.nn.functional.local_response_norm", "torch.nn.functional.group_norm",
            "torch.nn.functional.instance_norm", "torch.batch_norm_elemt",
            "torch._fused_rms_norm", "torch.native_layer_norm"} <= set(NORMALISATION)
    widened = whole_families(["torch.nn.GELU", "torch.nn.functional.cross_entropy"])
    assert widened[:2] == ["torch.nn.GELU", "torch.nn.functional.cross_entropy"]
    assert set(GELU) <= set(widened) and not set(ATTENTION) & set(widened)
    # honest tools stay out: a norm and a division is not a normalisation layer
    assert not {"torch.nn.functional.normalize", "torch.linalg.vector_norm",
                "torch.norm"} & set(DEFAULT_FORBIDDEN)


@pytest.mark.parametrize("exercise, code, refused", [
    ("mlm-forward-pass", "torch.nn.CrossMapLRN2d(3)", "torch.nn.CrossMapLRN2d"),
    ("mlm-forward-pass", "torch.nn.modules.normalization.CrossMapLRN2d(3)",
     "torch.nn.modules.normalization.CrossMapLRN2d"),
    # the static scan refuses torch._refs as a whole (a fence); the run time, _normalize
    ("mlm-forward-pass", "torch._refs._normalize(x, [1], 1e-5)", "torch._refs"),
    ("embedding-lookup", "torch.nn.functional.embedding_bag(x, x)",
     "torch.nn.functional.embedding_bag"),
    ("embedding-lookup", "torch.nn.EmbeddingBag(3, 2)", "torch.nn.EmbeddingBag"),
    # honest: the L2 normalisation shares _normalize's word, not its identity
    ("mlm-forward-pass", "torch.nn.functional.normalize(x)", None),
    ("embedding-lookup", "torch.nn.functional.normalize(x)", None),
])
def test_the_static_scan_knows_the_lrn_the_refs_core_and_the_embedding_bag(exercise, code,
                                                                          refused):
    from minimodel.lab.exercises import aliases
    from minimodel.lab.exercises.astscan import scan_source
    from minimodel.lab.exercises.judge import forbidden_names

    found = scan_source(f"import torch\n\nx = 1\ny = {code}\n",
                        forbidden_names(get_exercise(exercise)), None, aliases.table())
    assert [(f.name, f.line) for f in found] == ([(refused, 4)] if refused else [])


@needs_torch
@pytest.mark.parametrize("line", ["import torch.nn.attention",
                                  "import torch.nn.attention.flex_attention",
                                  "from torch.nn.attention import sdpa_kernel, SDPBackend",
                                  "from torch.nn.attention import flex_attention as fa_module",
                                  # registers a formula for every stubbed attention packet
                                  "_flops = __import__('torch.utils.' + 'flop_counter')"])
def test_importing_a_torch_module_is_never_refused_only_calling_a_member(line, tmp_path):
    """The stubs of the attention family do not break importing torch's attention modules
    (flop_counter registers formulas for the stubbed ATen packets, which keep torch's type),
    and an honest solution that imports one passes."""
    reference = get_exercise("multi-head-self-attention").reference_path.read_text()
    source = reference.replace("import numpy as np", f"import numpy as np\n{line}\n", 1)
    source = source.replace("dh = d // num_heads", "dh = d // num_heads  # my own copy")
    result = verdict("multi-head-self-attention", source, tmp_path)
    assert result["status"] == "passed", json.dumps(result)[:1500]


# The seventh attack: a fresh Python has no stubs (subprocess running the real
# F.cross_entropy), and TorchScript compiled from a string calls ATen from torch's registry.
CE_SUBPROCESS = '''import sys
import numpy as np

SRC = ("import sys, json, torch\\n"
       "a = json.loads(sys.stdin.read())\\n"
       "x = torch.tensor(a['x'], dtype=torch.float64).reshape(-1, a['V'])\\n"
       "t = torch.tensor(a['t']).reshape(-1)\\n"
       "print(float(torch.nn.functional.cross_entropy(x, t, ignore_index=a['ii'])))\\n")


def cross_entropy(logits, targets, ignore_index=-100):
    sp = __import__("sub" + "process")
    x, t = np.asarray(logits), np.asarray(targets)
    payload = '{"x": %s, "t": %s, "V": %d, "ii": %d}' % (
        x.astype(float).ravel().tolist(), t.ravel().tolist(), x.shape[-1], ignore_index)
    out = sp.run([sys.executable, "-c", SRC], input=payload, capture_output=True, text=True)  # CALL
    return np.asarray(float(out.stdout), dtype=x.dtype)
'''

CE_JIT = '''import torch
FRAMEWORK = "torch"

SRC = """
def ce(x: Tensor, t: Tensor, ii: int) -> Tensor:
    return torch.ops.aten.%s(x, t, None, 1, ii, 0.0)
""" % ("cross_entropy" + "_loss")


def cross_entropy(logits, targets, ignore_index=-100):
    cu = getattr(torch, "ji" + "t").CompilationUnit(SRC)  # CALL
    V = logits.shape[-1]
    return cu.ce(logits.reshape(-1, V), targets.reshape(-1).long(), int(ignore_index))
'''

CBOW_JIT = '''import torch
FRAMEWORK = "torch"

SRC = """
def step(c: Tensor, t: Tensor, w_in: Tensor, w_out: Tensor):
    h = w_in[c].mean(1)
    lsm = torch.log_softmax(h @ w_out.t(), 1)
    return -lsm.gather(1, t.unsqueeze(1)).mean(), w_in
"""


def cbow_step(context_ids, target_ids, w_in, w_out):
    cu = getattr(torch, "ji" + "t").CompilationUnit(SRC)  # CALL
    return cu.step(context_ids.long(), target_ids.long(), w_in, w_out)
'''

CE_CALLING = '''import numpy as np

def cross_entropy(logits, targets, ignore_index=-100):
    {call}  # CALL
    return np.asarray(0.0)
'''

CE_TORCH_CALLING = '''import torch
FRAMEWORK = "torch"

def cross_entropy(logits, targets, ignore_index=-100):
    {call}  # CALL
    return logits.sum()
'''


@pytest.mark.parametrize("exercise, source, api", [
    ("cross-entropy", CE_SUBPROCESS, "_posixsubprocess.fork_exec"),
    ("cross-entropy", CE_CALLING.format(call='getattr(__import__("o" + "s"), "sys" + "tem")'
                                             '("true")'), "os.system"),
    ("cross-entropy", CE_CALLING.format(call='__import__("po" + "six").system("true")'),
     "os.system"),
    ("cross-entropy", CE_CALLING.format(call='getattr(__import__("o" + "s"), "exec" + "v")'
                                             '("/bin/true", ["true"])'), "os.execv"),
    ("cross-entropy", CE_CALLING.format(call='__import__("multi" + "processing").Process('
                                             'target=print).start()'),
     "multiprocessing.Process.start"),
    ("cross-entropy", CE_CALLING.format(call='getattr(__import__("concur" + "rent.futures", '
                                             'fromlist=["x"]), "ProcessPool" + "Executor")(1)'),
     "concurrent.futures.ProcessPoolExecutor"),
    ("cross-entropy", CE_CALLING.format(call='__import__("p" + "ty").fork()'), "pty.fork"),
])
def test_starting_a_process_is_refused_at_the_call(exercise, source, api, tmp_path):
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# CALL" in text)
    result = verdict(exercise, source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"] == [{"name": api, "line": line, "how": "call"}]


@needs_torch
@pytest.mark.parametrize("exercise, source, api", [
    ("cross-entropy", CE_SUBPROCESS.replace("import numpy as np", "import numpy as np\n"
                                            "import torch"), "_posixsubprocess.fork_exec"),
    ("cross-entropy", CE_JIT, "torch.jit.CompilationUnit"),
    ("cbow-step", CBOW_JIT, "torch.jit.CompilationUnit"),
    ("cross-entropy", CE_TORCH_CALLING.format(call='getattr(torch, "com" + "pile")(len)'),
     "torch.compile"),
    ("cross-entropy", CE_TORCH_CALLING.format(call='vars(getattr(torch, "ji" + "t"))["scr" + "ipt"](len)'),
     "torch.jit.script"),
    ("cross-entropy", CE_TORCH_CALLING.format(
        call='getattr(getattr(torch, "f" + "x"), "symbolic" + "_trace")(len)'),
     "torch.fx.symbolic_trace"),
    ("cross-entropy", CE_TORCH_CALLING.format(
        call='vars(torch)["ex" + "port"].export(torch.nn.Identity(), (logits,))'),
     "torch.export.export"),
])
def test_compilers_and_processes_are_refused_where_torch_is_loaded(exercise, source, api,
                                                                  tmp_path):
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# CALL" in text)
    result = verdict(exercise, source, tmp_path)
    assert result["status"] == "forbidden", json.dumps(result)[:1500]
    assert result["forbidden"] == [{"name": api, "line": line, "how": "call"}]
