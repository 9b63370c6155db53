"""A flag a command does not know is refused with the usage of that command (exit 2), not the
top-level ``minimodel [-h] [--version] COMMAND`` usage."""

from __future__ import annotations

import pytest

from minimodel.cli import main


@pytest.mark.parametrize("argv, usage, unknown", [
    # check-lessons takes lessons as words: X is one, --learner-dir is what it does not know
    (["lab", "check-lessons", "--learner-dir", "X"], "usage: minimodel lab check-lessons",
     "--learner-dir"),
    (["lab", "notebook", "05", "--learner-dir", "X"], "usage: minimodel lab notebook",
     "--learner-dir X"),
    (["quiz", "take", "why-tie", "--bogus"], "usage: minimodel quiz take", "--bogus"),
    (["break", "check", "--bogus"], "usage: minimodel break check", "--bogus"),
    (["train", "--bogus"], "usage: minimodel train", "--bogus"),
    (["lab", "--bogus"], "usage: minimodel lab ", "--bogus"),
    (["--bogus"], "usage: minimodel [-h]", "--bogus"),
])
def test_a_bad_flag_shows_the_usage_of_its_command(capsys, argv, usage, unknown):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith(usage), err
    assert err.rstrip().endswith(f"error: unrecognized arguments: {unknown}")


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback(capsys, monkeypatch):
    # Regression: Ctrl-C in the first second of `minimodel break check` (while the command
    # modules were imported, before the handler ran) ended in a KeyboardInterrupt traceback.
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr("minimodel.cli.build_parser", interrupted)
    assert main(["break", "check"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
