"""One exit-code helper for every command (minimodel.commands._exit): the codes, the wrapper,
and a table of user errors across commands that must each give one line and exit code 2."""

from __future__ import annotations

import argparse
import types

import pytest

from minimodel import cli
from minimodel.commands import _exit
from minimodel.commands._exit import FAILED, INTERRUPTED, OK, USAGE, guarded


def test_the_codes_and_their_documentation():
    assert (OK, FAILED, USAGE, INTERRUPTED) == (0, 1, 2, 130)
    for code in ("0 ok", "1 what was checked failed", "2 usage or user error",
                 "130 interrupted"):
        assert code in _exit.EPILOG
    help_text = cli.build_parser().format_help()
    assert "exit codes: 0 ok" in help_text and "130 interrupted" in help_text


@pytest.mark.parametrize("error", [ValueError("bad size 3"), TypeError("bad kind 3"),
                                   FileNotFoundError("no file 3"), FloatingPointError("nan 3"),
                                   ImportError("no torch 3")])
def test_guarded_turns_user_errors_into_one_line_and_code_2(error, capsys):
    def handler(args):
        raise error

    assert guarded(handler)(argparse.Namespace()) == USAGE
    err = capsys.readouterr().err
    assert err == f"error: {error}\n"


def test_guarded_keeps_return_codes_and_lets_bugs_through(monkeypatch):
    assert guarded(lambda args: FAILED)(argparse.Namespace()) == FAILED

    def buggy(args):
        raise KeyError("a bug, not a user error")

    with pytest.raises(KeyError):
        guarded(buggy)(argparse.Namespace())
    monkeypatch.setenv("MINIMODEL_DEBUG", "1")

    def user(args):
        raise ValueError("shown with its traceback in debug mode")

    with pytest.raises(ValueError):
        guarded(user)(argparse.Namespace())


def test_ctrl_c_in_any_command_exits_130(monkeypatch, capsys):
    def register(subparsers):
        parser = subparsers.add_parser("boom")
        parser.set_defaults(func=guarded(lambda args: (_ for _ in ()).throw(KeyboardInterrupt)))

    fake = types.SimpleNamespace(ORDER=1, register=register, __name__="fake")
    monkeypatch.setattr(cli, "_command_modules", lambda: [fake])
    assert cli.main(["boom"]) == INTERRUPTED
    assert "interrupted" in capsys.readouterr().err


def _leaf_parsers(parser: argparse.ArgumentParser, path=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaf_parsers(child, path + (name,))


def test_every_command_uses_the_shared_helper():
    leaves = list(_leaf_parsers(cli.build_parser()))
    assert len(leaves) > 20
    for path, parser in leaves:
        func = parser.get_default("func")
        assert getattr(func, "__wrapped__", None) is not None, " ".join(path)


@pytest.mark.parametrize("argv, needle", [
    (["train", "--corpus", "/nonexistent/corpus.txt", "--steps", "1"], "corpus.txt"),
    (["generate", "/nonexistent/run", "--prompt", "x"], "/nonexistent/run"),
    (["inspect", "/nonexistent/model.safetensors"], "/nonexistent/model.safetensors"),
    (["quiz", "take", "no-such-quiz", "--answers", "/nonexistent.json"], "no-such-quiz"),
    (["exercise", "show", "no-such-exercise"], "no-such-exercise"),
    (["exercise", "check", "gelu-tanh", "--file", "/nonexistent/gelu.py"], "/nonexistent/gelu.py"),
    (["break", "hint", "--workdir", "/nonexistent/ws"], "/nonexistent/ws"),
    (["export", "/nonexistent/run", "/tmp/out-never-written"], "/nonexistent/run"),
    (["bench", "--steps", "0"], "--steps"),
])
def test_user_errors_across_commands_exit_2_with_one_line(argv, needle, capsys, tmp_path):
    assert cli.main(argv + (["--learner-dir", str(tmp_path)] if argv[0] in ("exercise", "break")
                            and argv[1] not in ("show",) else [])) == USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, needle", [
    (["generate", "/nonexistent/run", "--prompt", "hi", "--seed", "-1"],
     "--seed expects a whole number from 0 to 2147483647, got '-1'"),
    (["generate", "/nonexistent/run", "--prompt", "hi", "--seed", "one"],
     "--seed expects a whole number from 0 to 2147483647, got 'one'"),
    (["bench", "--cases", "foo"],
     "--cases expects a comma-separated list drawn from step, memory, mlm, util, generate "
     "(or all), got 'foo'"),
    (["exercise", "check", "gelu-tanh", "--file", "x.py", "--seed", "-1"],
     "--seed expects a whole number from 0 to 2147483647, got '-1'"),
])
def test_bad_option_values_are_refused_by_argparse_naming_the_value(argv, needle, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == USAGE
    out, err = capsys.readouterr()
    assert needle in err and out == ""  # nothing generated before the refusal
