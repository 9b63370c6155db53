"""A value an option refuses is said in one line of the reader's language (not argparse's usage
block), and the ``--help`` of a command whose help is not in Spanish yet first says, with
``--lang es``, where the Spanish docs are (the lab's commands speak Spanish: see
tests/commands/test_help_spanish.py)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from minimodel.cli import build_parser, main
from minimodel.commands._parser import expected, lang_in


@pytest.mark.parametrize("argv, first", [
    (["train", "--steps", "abc"], "minimodel train: --steps expects a whole number, got 'abc'"),
    (["train", "--lang", "es", "--steps", "abc"],
     "minimodel train: --steps espera un número entero; se recibió 'abc'"),
    (["train", "--batch-size", "2.5", "--lang=es"],
     "minimodel train: --batch-size espera un número entero; se recibió '2.5'"),
    (["train", "--lr", "fast"], "minimodel train: --lr expects a number, got 'fast'"),
    (["train", "--threads", "0"],
     "minimodel train: --threads expects 'auto' or a whole number ≥ 1, got '0'"),
    (["quiz", "review", "phase-13-embeddings", "--limit", "x"],
     "minimodel quiz review: --limit expects a whole number ≥ 1, got 'x'"),
    (["quiz", "review", "phase-13-embeddings", "--limit", "-3", "--lang", "es"],
     "minimodel quiz review: --limit espera un número entero ≥ 1; se recibió '-3'"),
    (["quiz", "take", "phase-13-embeddings", "--lang", "fr"],
     "minimodel quiz take: --lang expects one of en, es, got 'fr'"),
    (["generate", "run", "--seed", "-1"],
     "minimodel generate: --seed expects a whole number from 0 to 2147483647, got '-1'"),
    (["break", "check", "--seed", "x", "--lang", "es"],
     "minimodel break check: --seed espera un número entero de 0 a 2147483647; se recibió 'x'"),
    (["exercise", "check", "layer-norm", "--timeout", "soon"],
     "minimodel exercise check: --timeout expects a number of seconds, more than 0 and at most "
     "3600, got 'soon'"),
    (["bench", "--steps", "abc"], "minimodel bench: --steps expects a whole number, got 'abc'"),
])
def test_a_bad_value_is_one_line_and_where_the_help_is(capsys, argv, first):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    command = first.split(":")[0]
    see = "consulta" if "--lang" in argv and "es" in argv or "--lang=es" in argv else "see"
    assert stop.value.code == 2 and out == ""
    assert err == f"{first}\n{see} {command} --help\n"


def test_other_usage_errors_keep_the_usage_of_their_command(capsys):
    # an unknown flag or a missing value: the usage is the list of what the command takes
    with pytest.raises(SystemExit) as stop:
        main(["train", "--batch-size"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith("usage: minimodel train")
    assert err.rstrip().endswith("error: argument --batch-size: expected one argument")


def test_every_typed_option_says_what_it_expects_in_both_languages():
    # a new type= without ``expects`` would fall back to argparse's English words
    def typed(parser: argparse.ArgumentParser, path: str):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from typed(sub, f"{path} {name}")
            elif action.type is not None or action.choices is not None:
                yield path, action

    found = list(typed(build_parser(), "minimodel"))
    assert len(found) > 40
    for path, action in found:
        for lang in ("en", "es"):
            assert expected(action, lang), (path, action.option_strings, lang)
    steps = next(a for p, a in found if p == "minimodel train" and "--steps" in a.option_strings)
    assert (expected(steps, "en"), expected(steps, "es")) == ("a whole number", "un número entero")


def test_the_language_is_read_from_the_words_typed():
    assert lang_in(["quiz", "take", "--lang", "es"]) == "es"
    assert lang_in(["--lang=es", "--lang", "en"]) == "en"        # the last one wins
    assert lang_in(["--lang", "fr"]) == lang_in(["--lang"]) == lang_in([]) == "en"


@pytest.mark.parametrize("argv", [["train", "--help", "--lang", "es"],
                                  ["docs", "--help", "--lang", "es"],
                                  ["docs", "serve", "--lang=es", "-h"]])
def test_an_english_help_in_spanish_says_first_where_the_spanish_docs_are(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out = capsys.readouterr().out
    assert stop.value.code == 0
    assert out.splitlines()[0] == ("Documentación en español: docs/index.es.md, o la parte /es/ "
                                   "del sitio (minimodel docs serve).")
    command = [w for w in argv if not w.startswith("-") and w != "es"]
    assert "usage: minimodel " + " ".join(command) in out
    english = [w for w in argv if w not in ("es", "--lang", "--lang=es")]
    with pytest.raises(SystemExit):
        main(english)
    assert capsys.readouterr().out.startswith("usage: ")   # English help: as before


def test_a_bad_value_through_a_pipe_has_no_traceback():
    proc = subprocess.run(f"{sys.executable} -m minimodel quiz review x --limit x --lang es "
                          "2>&1 | head -5", shell=True, capture_output=True, text=True,
                          timeout=120, executable="/bin/bash")
    assert proc.stdout == ("minimodel quiz review: --limit espera un número entero ≥ 1; "
                           "se recibió 'x'\nconsulta minimodel quiz review --help\n")
