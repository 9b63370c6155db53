"""`minimodel tutor --print-config`: the client configuration names this installation's
command by its full path, since a desktop client does not run inside the learner's venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_the_printed_config_starts_this_installation_from_outside_the_venv(tmp_path):
    out = subprocess.run([sys.executable, "-m", "minimodel", "tutor", "--print-config",
                          "--lang", "es", "--learner-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    server = json.loads(out)["mcpServers"]["minimodel"]
    command = Path(server["command"])
    assert command.is_absolute() and command.is_file()
    assert server["args"] == ["tutor", "--lang", "es", "--learner-dir", str(tmp_path.resolve())]
    # a client with a bare PATH (no venv bin/) still starts it
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    shown = subprocess.run([str(command), *server["args"], "--help"], env=bare,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "--print-config" in shown.stdout


def test_the_default_language_and_folder_add_no_arguments():
    out = subprocess.run([sys.executable, "-m", "minimodel", "tutor", "--print-config"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert json.loads(out)["mcpServers"]["minimodel"]["args"] == ["tutor"]


def test_a_learner_folder_from_the_environment_reaches_the_client(tmp_path):
    """A desktop client does not inherit the shell's MINIMODEL_LEARNER_DIR: without "env" in
    the printed entry, its tutor would read and record progress in ~/.minimodel."""
    env = {**os.environ, "MINIMODEL_LEARNER_DIR": str(tmp_path / "me")}
    out = subprocess.run([sys.executable, "-m", "minimodel", "tutor", "--print-config"], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    server = json.loads(out)["mcpServers"]["minimodel"]
    assert server["args"] == ["tutor"]
    assert server["env"] == {"MINIMODEL_LEARNER_DIR": str((tmp_path / "me").resolve())}
    # --learner-dir names the folder in "args"; no second, possibly different, one in "env"
    out = subprocess.run([sys.executable, "-m", "minimodel", "tutor", "--print-config",
                          "--learner-dir", str(tmp_path / "other")], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    server = json.loads(out)["mcpServers"]["minimodel"]
    assert "env" not in server and server["args"][-1] == str((tmp_path / "other").resolve())
