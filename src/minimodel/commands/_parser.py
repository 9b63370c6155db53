"""The argument parser of every ``minimodel`` command: argparse, with a bad value said in one
line of the reader's language, and ``--help`` in the reader's language.

argparse answers ``minimodel train --steps abc`` with the whole usage block of the command
(a dozen lines) and then ``error: argument --steps: invalid int value: 'abc'``. Here it is::

    minimodel train: --steps expects a whole number ≥ 1, got 'abc'
    see minimodel train --help

in English or Spanish (exit 2, no traceback). What a value must be is said by its type: a
``type=`` function carries ``expects`` (a :class:`~minimodel.messages.Phrase`, see
:mod:`minimodel.commands._argtypes`), ``int`` and ``float`` are known here, and a value
outside ``choices`` lists them. Other usage errors (an unknown flag, a missing argument) keep
argparse's usage block: there the list of what the command takes is the help.

Why one subclass: ``add_subparsers`` builds every subcommand's parser of the same class as its
parent, so each command of :func:`minimodel.cli.build_parser` gets this without a line of its
own. The language is read from the words typed (``--lang es`` / ``--lang=es``), since the
error or the help comes before the parsed namespace exists.

``--help``: a command whose help texts are in the message catalogue (:mod:`._help`) shows it
all in the reader's language; the others show their English help, in Spanish after two lines
that say where the Spanish documentation is.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from minimodel.commands._exit import USAGE
from minimodel.commands._help import catalogued, said_in_lang
from minimodel.messages import DEFAULT_LANG, LANGS, Phrase, phrase, say

# What a plain int or float option expects; a type function says it with an ``expects``.
EXPECTS = {int: phrase("cli.expects.whole"), float: phrase("cli.expects.number")}


def lang_in(words: Sequence[str]) -> str:
    """The language the words ask for with ``--lang X`` or ``--lang=X`` (the last one wins),
    else English: ``lang_in(["quiz", "take", "--lang", "es"])`` -> ``"es"``."""
    lang = DEFAULT_LANG
    for i, word in enumerate(words):
        value = (words[i + 1] if word == "--lang" and i + 1 < len(words)
                 else word.partition("=")[2] if word.startswith("--lang=") else None)
        if value in LANGS:
            lang = value
    return lang


def option_name(action: argparse.Action) -> str:
    """``--steps`` for an option (its longest spelling), the metavar for a positional."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return str(action.metavar or action.dest)


def expected(action: argparse.Action, lang: str) -> str | None:
    """What ``action`` accepts, in words of ``lang`` (None when its type does not say)."""
    if action.choices is not None:
        return say("cli.expects.choice", lang, choices=", ".join(map(str, action.choices)))
    said = getattr(action.type, "expects", None) or EXPECTS.get(action.type)
    return said.in_lang(lang) if isinstance(said, Phrase) else None


class BadValue(argparse.ArgumentError):
    """A typed value its option refuses; says itself in one line (:meth:`lines`)."""

    def __init__(self, action: argparse.Action, typed: str, reason: str) -> None:
        super().__init__(action, reason)
        self.action, self.typed, self.reason = action, typed, reason

    def lines(self, prog: str, lang: str) -> str:
        """``prog: --steps expects a whole number ≥ 1, got 'abc'`` and where the help is."""
        expects = expected(self.action, lang)
        name = option_name(self.action)
        first = (say("cli.bad_value", lang, prog=prog, option=name, expected=expects,
                     value=repr(self.typed)) if expects is not None
                 else f"{prog}: {name}: {self.reason}")   # a type that does not say: its words
        return f"{first}\n{say('cli.see_help', lang, prog=prog)}\n"


class Parser(argparse.ArgumentParser):
    """argparse's parser with the one-line bad value and ``--help`` in the reader's language."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Errors reach parse_known_args below as exceptions, where a BadValue is told apart
        kwargs.setdefault("exit_on_error", False)
        self.lang = DEFAULT_LANG   # the reader's, once the words are parsed
        self.help_lang = DEFAULT_LANG   # the help page's, while format_help writes it
        super().__init__(*args, **kwargs)   # (argparse's __init__ already formats: -h)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None):
        words = list(sys.argv[1:] if args is None else args)
        self.lang = lang_in(words)
        try:
            return super().parse_known_args(words, namespace)
        except BadValue as bad:
            # the innermost parser catches it first: the command the option belongs to
            self.exit(USAGE, bad.lines(self.prog, self.lang))
        except argparse.ArgumentError as err:
            self.error(str(err))   # argparse's own: the usage, then the error (exit 2)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        try:
            return super()._get_value(action, arg_string)
        except BadValue:
            raise
        except argparse.ArgumentError as err:
            if isinstance(action, argparse._SubParsersAction):
                raise
            raise BadValue(action, arg_string, err.message) from None

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # the command name of a subparsers action keeps argparse's "invalid choice" + usage
        if (action.choices is not None and value not in action.choices
                and not isinstance(action, argparse._SubParsersAction)):
            raise BadValue(action, str(value), f"invalid choice: {value!r}")
        super()._check_value(action, value)

    def _get_formatter(self) -> argparse.HelpFormatter:
        """argparse's formatter, saying a catalogued help in ``help_lang`` (_help.py)."""
        formatter = said_in_lang(self.formatter_class)(prog=self.prog)
        formatter.lang = self.help_lang
        return formatter

    def format_help(self) -> str:
        """argparse's help in the reader's language when it is catalogued; in Spanish
        (``--lang es``) a help not catalogued yet starts with the lines that say where the
        Spanish documentation is: its options are described in English.

        Only the help page: the usage block above a usage error stays English, as the error
        under it is argparse's English ("the following arguments are required: ...")."""
        self.help_lang = self.lang if catalogued(self) else DEFAULT_LANG
        try:
            text = super().format_help()
        finally:
            self.help_lang = DEFAULT_LANG
        if self.lang == "es" and not catalogued(self):
            return say("cli.help_in_spanish", "es") + "\n\n" + text
        return text
