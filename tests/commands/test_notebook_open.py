"""`minimodel lab notebook` opens JupyterLab: as root it passes --allow-root and says so, and a
JupyterLab that fails to start gets a sentence saying what to do, not a silent exit 1."""

from __future__ import annotations

import pytest

from minimodel.cli import main
from minimodel.commands import _lab_notebook

pytest.importorskip("jupytext")


@pytest.mark.parametrize("uid, code", [(0, 0), (1000, 0), (0, 1)])
def test_notebook_opens_jupyterlab_as_root_and_says_what_to_do_when_it_fails(
        uid, code, monkeypatch, tmp_path, capsys):
    calls = []
    monkeypatch.setattr(_lab_notebook.os, "geteuid", lambda: uid)
    monkeypatch.setattr(_lab_notebook, "_has", lambda module: True)
    monkeypatch.setattr(_lab_notebook.subprocess, "call", lambda cmd: calls.append(cmd) or code)
    exit_code = main(["lab", "notebook", "01", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    (command,) = calls
    assert command[1:3] == ["-m", "jupyterlab"] and command[-1].endswith(".ipynb")
    assert ("--allow-root" in command) == (uid == 0)
    assert ("--allow-root" in out) == (uid == 0)
    if code:
        assert exit_code == 1 and "JupyterLab stopped with exit code 1" in err
        assert "jupyter lab --allow-root" in err and "VS Code" in err
    else:
        assert exit_code == 0 and err == ""
