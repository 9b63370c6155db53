"""`minimodel kernels` lists every composite, its kernel and the switch's state."""

import json
import os
import subprocess
import sys

from minimodel import dispatch


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "minimodel", "kernels", *args],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


def test_lists_each_composite_with_its_kernel():
    proc = run("--json", env={"MINIMODEL_KERNELS": "1"})
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["enabled"] is True
    rows = {r["name"]: r for r in info["composites"]}
    assert set(rows) == set(dispatch.composites())
    assert rows["cross_entropy"]["kernel"] == "minimodel.kernels.losses.cross_entropy"
    assert rows["cross_entropy"]["active"] is True
    assert rows["scaled_dot_product_attention"]["kernel"] is None


def test_switched_off_by_the_environment():
    proc = run(env={"MINIMODEL_KERNELS": "0"})
    assert proc.returncode == 0
    assert proc.stdout.startswith("kernels: off")
    assert "runs composite (kernel off)" in proc.stdout and "runs kernel" not in proc.stdout
