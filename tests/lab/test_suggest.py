"""The commands the lab prints for the learner to run next carry ``--learner-dir`` (when the
folder is not the default) and ``--lang es``, so pasted as printed they record in the same
folder, in the same language."""

from __future__ import annotations

import argparse
import io
import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from minimodel.cli import build_parser, main
from minimodel.lab.suggest import LANG_COMMANDS, LEARNER_DIR_COMMANDS, Suggest
from minimodel.messages import CATALOGUE_PATH

BREAK = "frequent-tokens-learn-slowly"


@pytest.fixture(autouse=True)
def default_folder(tmp_path, monkeypatch) -> Path:
    """The folder a command uses without --learner-dir: a command that lost the flag records
    here, where the tests look for (and must not find) its work."""
    folder = tmp_path / "default-learner"
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(folder))
    return folder


def cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _flags_by_command() -> dict[str, set[str]]:
    """"quiz take" -> its option strings, from the real parsers."""
    out: dict[str, set[str]] = {}

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subs:
            for name, sub in action.choices.items():
                walk(sub, words + [name])
        if words and not subs:
            out[" ".join(words)] = {o for a in parser._actions for o in a.option_strings}
    walk(build_parser(), [])
    return out


def test_the_lists_of_flags_match_the_parsers():
    flags = _flags_by_command()
    assert LEARNER_DIR_COMMANDS == {name for name, opts in flags.items()
                                    if "--learner-dir" in opts}
    assert LANG_COMMANDS == {name for name, opts in flags.items() if "--lang" in opts}


def test_a_command_carries_the_folder_quoted_and_the_language(tmp_path, default_folder):
    mine = tmp_path / "my work"
    assert Suggest("es", mine)("quiz", "take", "why-tie") == \
        f"minimodel quiz take why-tie --learner-dir '{mine}' --lang es"
    assert shlex.split(Suggest("en", mine)("quiz", "take", "why-tie"))[-1] == str(mine)
    # the default folder ($MINIMODEL_LEARNER_DIR here) needs no flag; nor does a command
    # that keeps no progress
    assert Suggest("en", default_folder)("quiz", "take", "why-tie") == \
        "minimodel quiz take why-tie"
    assert Suggest("es", mine)("lab", "notebook", "05") == "minimodel lab notebook 05 --lang es"
    assert Suggest("es", mine)("quiz", "list") == "minimodel quiz list --lang es"


def test_no_message_writes_a_progress_command_by_hand():
    # Every command that takes --learner-dir is built by Suggest (a {field} in the text).
    # The `help` area is --help's examples: printed before any learner folder is known, they
    # show the command as typed, like every CLI's examples.
    catalogue = yaml.safe_load(CATALOGUE_PATH.read_text(encoding="utf-8"))
    catalogue.pop("help")
    by_hand = re.compile(r"minimodel (" + "|".join(sorted(LEARNER_DIR_COMMANDS, key=len,
                                                          reverse=True)) + r")\b")
    found = [f"{area}.{key}" for area, entries in catalogue.items()
             for key, texts in entries.items() for text in texts.values()
             if by_hand.search(" ".join(str(text).split()))]
    assert found == []


def test_an_exercise_started_elsewhere_is_checked_there(capsys, tmp_path, default_folder):
    mine, file = tmp_path / "my work", tmp_path / "gelu.py"
    code, out = cli(capsys, "exercise", "start", "gelu-tanh", "--file", str(file),
                    "--learner-dir", str(mine))
    check = f"minimodel exercise check gelu-tanh --file {file} --learner-dir '{mine}'"
    assert code == 0 and check in out
    assert check in file.read_text(encoding="utf-8")        # the file's header says it too
    code, _ = cli(capsys, *shlex.split(check)[1:])           # pasted as printed
    recorded = json.loads((mine / "progress" / "exercise.json").read_text())
    assert code == 1 and recorded["gelu-tanh"]["status"] == "attempted"
    assert not (default_folder / "progress" / "exercise.json").exists()


def test_a_break_started_elsewhere_names_its_commands_with_the_folder(capsys, tmp_path):
    mine, work = tmp_path / "me", tmp_path / "brk"
    code, out = cli(capsys, "break", "start", BREAK, "--workdir", str(work),
                    "--learner-dir", str(mine), "--lang", "es")
    for verb in ("run", "hint", "check"):   # Spanish commands said --lang es only sometimes
        command = f"minimodel break {verb} --workdir {work} --learner-dir {mine} --lang es"
        assert command in out
    notes = " ".join((work / "NOTES.md").read_text(encoding="utf-8").split())
    assert f"minimodel break run --workdir {work} --learner-dir {mine} --lang es" in notes
    assert f"minimodel break check --workdir {work} --learner-dir {mine} --lang es" in notes


def test_a_quiz_and_the_path_name_their_next_commands_with_the_folder(capsys, monkeypatch,
                                                                     tmp_path, default_folder):
    mine = tmp_path / "me"
    code, out = cli(capsys, "lab", "next", "--learner-dir", str(mine))
    assert f"`minimodel lab next --learner-dir {mine}`" in out
    assert f"`minimodel lab done 01 --learner-dir {mine}`" in out
    assert "minimodel lab notebook 01\n" in out                 # keeps no progress: no flag
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))        # a wrong answer
    code, out = cli(capsys, "quiz", "take", "embedding-lookup", "--learner-dir", str(mine))
    assert code == 0 and f"minimodel quiz review embedding-lookup --learner-dir {mine}" in out
    code, out = cli(capsys, "lab", "status", "--learner-dir", str(mine), "--lang", "es")
    assert f"(minimodel lab next --learner-dir {mine} --lang es)" in out
    # With the folder in $MINIMODEL_LEARNER_DIR the flag is not needed, and not added.
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(mine))
    code, out = cli(capsys, "lab", "status", "--learner-dir", str(mine))
    assert "(minimodel lab next)" in out


def test_a_missing_solution_file_names_the_start_command_with_the_folder(capsys, tmp_path):
    mine, file = tmp_path / "me", tmp_path / "none.py"
    code = main(["exercise", "check", "gelu-tanh", "--file", str(file),
                 "--learner-dir", str(mine), "--lang", "es"])
    err = capsys.readouterr().err
    assert code == 2 and (f"`minimodel exercise start gelu-tanh --file {file} "
                          f"--learner-dir {mine} --lang es`") in err
