"""Solutions that try to fool or escape the judge: every one ends without a pass, and leaves
the package, the environment and the machine as they were.

Classes of attack (issue 11): rewriting package files (the reference, a ``.pth`` in
site-packages), reaching forbidden operations through torch internals or introspection,
removing the guards, running the reference's source, leaving processes behind, opening
sockets, reading the judge's environment through /proc, writing outside the scratch folder,
signalling the judge, forging the verdict, exhausting memory.
"""

from __future__ import annotations

import hashlib
import site
import sys
from pathlib import Path

import pytest

from minimodel.lab.exercises import check_solution, get_exercise
from minimodel.lab.exercises.isolation import PACKAGE_DIR, probe

GELU = get_exercise("gelu-tanh")
REFERENCE = GELU.reference_path
HAS_TORCH = "torch" in sys.modules or __import__("importlib").util.find_spec("torch") is not None


def tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*.py")):
        h.update(p.as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def package_hash():
    return tree_hash(PACKAGE_DIR)


def judge(body: str, seed: int = 0) -> dict:
    """Judge a gelu-tanh 'solution' whose body is ``body`` (a full file)."""
    return check_solution(GELU, source=body, seed=seed, timeout=15)


REF = str(REFERENCE)
SITE = site.getsitepackages()[0]
ATTACKS = {
    # --- the package and the Python environment
    "rewrite the reference with numpy": f"import numpy as np\ndef gelu(x):\n    np.savetxt({REF!r}, [0])\n    return x\n",
    "drop a .pth into site-packages": f"import numpy as np\ndef gelu(x):\n    np.savetxt({SITE + '/evil.pth'!r}, [0])\n    return x\n",
    "open() a package file": f"def gelu(x):\n    open({REF!r}, 'w').write('')\n    return x\n",
    "read the reference's source": f"import numpy as np\ndef gelu(x):\n    np.loadtxt({REF!r}, dtype=str, delimiter='~')\n    return x\n",
    "exec the reference": f"def gelu(x):\n    exec(compile('1', {REF!r}, 'exec'))\n    return x\n",
    # --- forbidden operations through internals and aliases
    "torch._C": "import torch\ndef gelu(x):\n    return torch._C._nn.gelu(x)\n",
    "torch.ops.aten": "import torch\ndef gelu(x):\n    return torch.ops.aten.gelu(x, approximate='tanh')\n",
    "getattr with a built name": "import torch\ndef gelu(x):\n    f = getattr(torch, 'o' + 'ps')\n    return x\n",
    "from torch import _C": "from torch import _C\ndef gelu(x):\n    return x\n",
    "F.gelu by a module alias": "import torch.nn.modules.activation as a\ndef gelu(x):\n    return a.GELU(approximate='tanh')(x)\n",
    "native_layer_norm": "import torch\ndef gelu(x):\n    torch.native_layer_norm(x, [1], None, None, 1e-5)\n    return x\n",
    "group_norm as a layer norm": "import torch\ndef gelu(x):\n    torch.nn.functional.group_norm(x.reshape(1, -1, 1), 1)\n    return x\n",
    # --- removing the guards, introspection
    "import sys (meta_path)": "import sys\ndef gelu(x):\n    sys.meta_path.clear()\n    return x\n",
    "shadow the guard": "__mm_getattr__ = getattr\ndef gelu(x):\n    return x\n",
    "function __globals__": "def gelu(x):\n    g = (lambda: 0).__globals__\n    return x\n",
    "subclasses walk": "def gelu(x):\n    ().__class__.__bases__[0].__subclasses__()\n    return x\n",
    "traceback frames": "def gelu(x):\n    try:\n        1 / 0\n    except Exception as e:\n        e.__traceback__.tb_frame.f_globals\n    return x\n",
    "numpy private module": "import numpy as np\ndef gelu(x):\n    np._core\n    return x\n",
    "ctypes through numpy": "import numpy as np\ndef gelu(x):\n    np.ctypeslib\n    return x\n",
    "os through torch": "import torch\ndef gelu(x):\n    torch.os.system('true')\n    return x\n",
    "pickle through numpy.load": "import numpy as np\ndef gelu(x):\n    np.load('x.npy', allow_pickle=True)\n    return x\n",
    # --- processes, network, the judge's process
    "subprocess": "import subprocess\ndef gelu(x):\n    subprocess.Popen(['sleep', '60'])\n    return x\n",
    "os.fork": "import os\ndef gelu(x):\n    os.fork()\n    return x\n",
    "socket": "import socket\ndef gelu(x):\n    socket.create_connection(('1.1.1.1', 80))\n    return x\n",
    "parent environ via /proc": "import numpy as np\ndef gelu(x):\n    np.fromfile('/proc/1/environ', dtype=np.uint8)\n    return x\n",
    "write outside scratch": "import numpy as np\ndef gelu(x):\n    np.save('/tmp/escaped.npy', x)\n    return x\n",
    "gc.get_objects": "import gc\ndef gelu(x):\n    gc.get_objects()\n    return x\n",
    "builtins module": "import builtins\ndef gelu(x):\n    return x\n",
    "importlib": "import importlib\ndef gelu(x):\n    return x\n",
}
NEEDS_TORCH = {k for k, v in ATTACKS.items() if "torch" in v}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_fails_closed_and_changes_nothing(name, package_hash):
    if name in NEEDS_TORCH and not HAS_TORCH:
        pytest.skip("torch not installed")
    pth = Path(SITE) / "evil.pth"
    escaped = Path("/tmp/escaped.npy")
    escaped.unlink(missing_ok=True)
    result = judge(ATTACKS[name])
    # Refused (forbidden), or it simply cannot work in here (the file is not visible, the
    # builtin does not exist): either way no pass.
    assert result["passed"] is False and result["status"] in ("forbidden", "error"), result
    assert not any(c["status"] == "passed" for c in result["cases"]), name
    assert not pth.exists() and not escaped.exists()
    assert tree_hash(PACKAGE_DIR) == package_hash


def test_honest_solutions_still_pass():
    """The fence is not in the way of work within the rules (NumPy, torch, loops, float64)."""
    numpy_ref = REFERENCE.read_text()
    assert judge(numpy_ref)["status"] == "passed"
    loops = ("import math\nimport numpy as np\n\n\ndef gelu(x):\n    out = np.empty_like(x)\n"
             "    for i, v in enumerate(x.reshape(-1).astype(np.float64)):\n"
             "        out.reshape(-1)[i] = 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) "
             "* (v + 0.044715 * v ** 3)))\n    return out\n")
    assert judge(loops)["status"] == "passed"
    if HAS_TORCH:
        torch_ok = ("import math\nimport torch\nFRAMEWORK = 'torch'\n\n\ndef gelu(x):\n"
                    "    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * "
                    "(x + 0.044715 * x ** 3)))\n")
        assert judge(torch_ok)["status"] == "passed"


def test_memory_limit_does_not_depend_on_words_in_the_source():
    hog = "import numpy as np\ndef gelu(x):\n    np.ones(2**33, dtype=np.uint8)\n    return x\n"
    for source in (hog, "# torch torch torch\n" + hog):
        result = judge(source)
        text = result["message"] + " ".join(c["message"] for c in result["cases"])
        assert result["status"] == "error" and ("MemoryError" in text or "memory" in text)


def test_the_isolation_level_is_reported():
    result = judge(REFERENCE.read_text())
    iso = probe()
    assert result["isolation"] == iso.level and result["isolation_reason"] == iso.reason
    if sys.platform.startswith("linux") and iso.bwrap:
        assert result["isolation"] == "full" or "process-count" in result["isolation_reason"]


@pytest.mark.parametrize("name", ["rewrite the reference with numpy", "read the reference's source",
                                  "write outside scratch", "parent environ via /proc",
                                  "drop a .pth into site-packages", "torch._C"])
def test_without_namespaces_the_in_process_guard_still_refuses(name, package_hash, monkeypatch):
    """Partial isolation (no bubblewrap/unshare, e.g. macOS): the audit hook and the attribute
    guard alone must still stop these, and the result says the isolation was partial."""
    from minimodel.lab.exercises import isolation

    if name in NEEDS_TORCH and not HAS_TORCH:
        pytest.skip("torch not installed")
    monkeypatch.setattr(isolation, "probe",
                        lambda: isolation.Isolation("partial", "test: no namespaces"))
    result = judge(ATTACKS[name])
    assert result["status"] in ("forbidden", "error"), (name, result["message"])
    assert not any(c["status"] == "passed" for c in result["cases"]), name
    if "write" in name or "rewrite" in name or ".pth" in name or "_C" in name:
        assert result["status"] == "forbidden", (name, result["message"], result["cases"][:1])
    assert result["isolation"] == "partial" and result["isolation_reason"] == "test: no namespaces"
    assert tree_hash(PACKAGE_DIR) == package_hash
    assert not (Path(SITE) / "evil.pth").exists() and not Path("/tmp/escaped.npy").exists()
