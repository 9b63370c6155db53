"""``minimodel lab|quiz|break|exercise --help`` in Spanish with ``--lang es`` (before or after
``-h``), every text from the message catalogue (``help.*``), and the English help as before."""

from __future__ import annotations

import argparse
import re

import pytest

from minimodel.cli import build_parser, main
from minimodel.commands._help import ARGPARSE_WORDS, HelpText, _Key, help_text
from minimodel.messages import catalogue

COMMANDS = ("lab", "quiz", "break", "exercise")

# Words of an English help page that Spanish prose never uses. Commands, options, ids, paths
# and JSON keys are dropped before the check (see spanish_words); the names of the commands and
# subcommands (break, check, list, run, show, take...) are typed as they are, so not listed here.
ENGLISH = set("""the and of to with is are your you from for not when each every this that which
these those it its be by as at after before into than then only if or on in an usage options
optional positional arguments shows print prints default folder language message exit codes
examples lesson lessons file files question questions breaks exercises quizzes hints write
runs checks mark read step steps learner progress text texts statement reference seed
time limit sections section workspace predictions prediction notes without where here there
what""".split())
# Metavars that read the same in both languages (a letter, an abbreviation).
SAME_IN_BOTH = {"N", "ID", "id"}


def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(words, parser) for ``parser`` and every subcommand under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, path + (name,))


def lab_parsers():
    root = dict(parsers(build_parser()))
    return {words: parser for words, parser in root.items() if words and words[0] in COMMANDS}


def summaries():
    """(command, its summary in ``minimodel --help``) for the four commands."""
    top = next(action for action in build_parser()._actions
               if isinstance(action, argparse._SubParsersAction))
    return [(choice.dest, choice.help) for choice in top._choices_actions
            if choice.dest in COMMANDS]


def shown_texts(parser: argparse.ArgumentParser):
    """(what, text) for every text ``parser``'s help shows that is not argparse's own."""
    yield "description", parser.description
    yield "epilog", parser.epilog
    for action in parser._actions:
        name = max(action.option_strings, key=len) if action.option_strings else action.dest
        if action.help not in (None, argparse.SUPPRESS) and action.help not in ARGPARSE_WORDS:
            yield f"{name} help", action.help
        for choice in getattr(action, "_choices_actions", []):
            yield f"{choice.dest} summary", choice.help
        shown = action.metavar if action.metavar is not None else (
            None if action.choices is not None or action.option_strings else action.dest)
        if shown is not None and shown not in SAME_IN_BOTH:
            yield f"{name} metavar", shown


def keys(text: HelpText) -> set[str]:
    return {f"help.{part.name}" for part in text.parts if isinstance(part, _Key)}


def help_page(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    return capsys.readouterr().out


def spanish_words(page: str) -> list[str]:
    """The prose words of a help page: without the example command lines, code between
    backticks, quoted strings, and any token holding an option, a path, an id or a JSON key
    (-, /, _, ., =, $, ~, <, braces or brackets)."""
    prose = []
    for line in page.splitlines():
        if re.match(r"\s*(minimodel|OPENBLAS_CORETYPE=)", line):
            line = line.partition("#")[2]           # an example: only its comment is prose
        line = re.sub(r"`[^`]*`|\"[^\"]*\"|'[^']*'", " ", line)
        prose += [token.strip(",.;:()¿?¡!«»") for token in line.split()
                  if not re.search(r"[-/_.=$~<>{}\[\]]", token)]
    return [word for word in prose if word]


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")   # argparse wraps to the terminal's width


def test_every_text_of_the_lab_commands_help_comes_from_the_catalogue():
    found = {f"{' '.join(words)}: {what}": text
             for words, parser in lab_parsers().items() for what, text in shown_texts(parser)}
    found |= {f"{command}: summary": text for command, text in summaries()}
    assert len(found) > 130
    plain = sorted(where for where, text in found.items() if not isinstance(text, HelpText))
    assert plain == []
    missing = sorted(key for text in found.values() for key in keys(text)
                     if key not in catalogue())
    assert missing == []


def test_every_help_text_in_the_catalogue_is_shown_by_a_command():
    used = {key for words, parser in lab_parsers().items()
            for _, text in shown_texts(parser) for key in keys(text)}
    used |= {key for _, text in summaries() for key in keys(text)}
    used |= {key for text in ARGPARSE_WORDS.values() for key in keys(text)}
    written = {key for key in catalogue() if key.startswith("help.")}
    assert written - used == set()


@pytest.mark.parametrize("words", sorted(lab_parsers()), ids=" ".join)
def test_the_spanish_help_has_no_english_prose_left(capsys, words):
    spanish = help_page(capsys, [*words, "--help", "--lang", "es"])
    english = help_page(capsys, [*words, "--help"])
    assert spanish.startswith(f"uso: minimodel {' '.join(words)}")
    assert "opciones:" in spanish and "muestra este mensaje de ayuda y sale" in spanish
    assert [w for w in spanish_words(spanish) if w.lower() in ENGLISH] == []
    assert [w for w in spanish_words(english) if w.lower() in ENGLISH] != []  # the check sees
    assert "Documentación en español" not in spanish           # the pointer: not needed here


@pytest.mark.parametrize("argv", [["lab", "done", "--lang", "es", "-h"],
                                  ["lab", "done", "-h", "--lang", "es"],
                                  ["lab", "done", "--help", "--lang=es"]])
def test_lang_es_before_or_after_h_gives_the_same_spanish_help(capsys, argv):
    assert help_page(capsys, argv) == """\
uso: minimodel lab done [-h] [--json] [--lang {en,es}] [--learner-dir CARPETA] LECCIÓN

Marca una lección como leída (por su número, su slug o el nombre de su archivo sin extensión).

argumentos posicionales:
  LECCIÓN

opciones:
  -h, --help            muestra este mensaje de ayuda y sale
  --json                muestra {"lesson", "status"}
  --lang {en,es}        idioma (por defecto: en)
  --learner-dir CARPETA
                        carpeta de progreso (por defecto: $MINIMODEL_LEARNER_DIR o ~/.minimodel)

ejemplos:
  minimodel lab done 05
  minimodel lab done lm-head-and-logits
"""


def test_the_english_help_is_as_before(capsys):
    assert help_page(capsys, ["break", "hint", "--help"]) == """\
usage: minimodel break hint [-h] [--lang {en,es}] [--learner-dir DIR] [--workdir DIR] [--json]

Climb one rung of the break's hint ladder (3-4 hints) and print it as 'hint N of
M'. The rung is kept in DIR/.break.json and your progress; after the last hint,
the last one is repeated.

options:
  -h, --help         show this help message and exit
  --lang {en,es}     language of the texts (default: the workspace's, else en)
  --learner-dir DIR  learner folder with your progress (default: $MINIMODEL_LEARNER_DIR or
                     ~/.minimodel)
  --workdir DIR      the break workspace (default: the current folder)
  --json             print {"break", "hint", "total", "text"}

examples:
  minimodel break hint --workdir /tmp/b1
  minimodel break hint --json
"""
    assert help_page(capsys, ["exercise", "--help"]).endswith("""
check exits 0 when every case passes and 1 otherwise. Solutions run in a separate, isolated
Python process with CPU, memory and time limits.
exit codes: 0 ok; 1 what was checked failed (not passed, not fixed, problems found); 2 usage or \
user error; 130 interrupted
""")


def test_a_value_in_a_help_text_is_filled_in_in_each_language(capsys):
    assert "more than 0 and at most 3600 (default:" in help_page(
        capsys, ["exercise", "check", "--help"])
    assert "mayor que 0 y como mucho 3600 (por" in help_page(
        capsys, ["exercise", "check", "--help", "--lang", "es"])


def test_a_help_text_joined_to_others_is_said_part_by_part():
    joined = "> " + help_text("--lang") + "\n" + help_text("exit_codes")
    assert isinstance(joined, HelpText)
    assert joined == ("> language (default en)\nexit codes: 0 ok; 1 what was checked failed (not "
                      "passed, not fixed, problems found); 2 usage or user error; 130 interrupted")
    assert joined.in_lang("es").startswith("> idioma (por defecto: en)\ncódigos de salida: 0 bien;")


def test_the_top_level_help_stays_english_with_the_pointer(capsys):
    page = help_page(capsys, ["--help", "--lang", "es"])
    assert page.startswith("Documentación en español: docs/index.es.md")
    assert "take and review the bilingual quizzes" in page   # not half Spanish, half English


def test_a_usage_error_keeps_its_usage_block_in_english_as_its_message(capsys):
    """argparse's own errors are English: the usage above one is too, so the names agree."""
    with pytest.raises(SystemExit) as stop:
        main(["lab", "done", "--lang", "es"])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err.startswith("usage: minimodel lab done [-h] [--json] [--lang {en,es}]")
    assert err.endswith("error: the following arguments are required: LESSON\n")
