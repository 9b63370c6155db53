"""The ``--help`` pages in the reader's language: texts from the message catalogue, said by the
help formatter.

A command's help texts (its summary, description, epilog, each option's help, a metavar that is
a word) are written in ``messages.yaml`` under ``help:``, in English and Spanish, and given to
argparse as :func:`help_text`::

    p = sub.add_parser("next", help=help_text("lab.next.summary"),
                       description=help_text("lab.next.description"))
    p.add_argument("--answers", metavar=help_text("metavar.FILE"),
                   help=help_text("lab.next.--answers"))

A :class:`HelpText` *is* its English text (a ``str``), so argparse builds, checks and formats
it as before and the English help does not change by a byte. It also keeps its catalogue key:
when the help is shown in Spanish, :class:`SaidHelp`, mixed into the parser's formatter, says
each text in the reader's language, and argparse's own words too ("usage:", "options:",
"show this help message and exit", ``help.argparse.*`` in the catalogue).

Why one formatter instead of building each parser per language: the language is known from
the words typed (``--lang es``, :func:`~minimodel.commands._parser.lang_in`) only when the
command line is parsed, after every command registered its parser; the formatter runs when
``-h`` is met, whatever comes before or after it on the line.

A parser is said in Spanish when its description is a HelpText (its texts are catalogued);
the others keep their English help (and the pointer to the Spanish docs).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable

from minimodel.messages import DEFAULT_LANG, say, template

AREA = "help"   # the catalogue area of the help texts: help.<key>


@dataclass(frozen=True)
class _Key:
    """One catalogue text of a help page, with the values its ``{fields}`` need (if any)."""

    name: str
    values: dict[str, Any] = field(default_factory=dict)

    def in_lang(self, lang: str) -> str:
        # A help text is raw (literal braces such as {"id", "title"} in JSON examples);
        # only a text declared with values is formatted.
        key = f"{AREA}.{self.name}"
        return say(key, lang, **self.values) if self.values else template(key, lang)


class HelpText(str):
    """A help text: the English as a ``str``, said in another language by :meth:`in_lang`.

    Joined with ``+`` to another string (``help_text("x.epilog") + "\\n" + EPILOG``) it stays a
    HelpText; each catalogued part is then said in the same language, plain strings as they
    are (a literal: a newline, a command).
    """

    parts: tuple[str | _Key, ...]

    def __new__(cls, *parts: str | _Key) -> HelpText:
        self = super().__new__(cls, "".join(_said(part, DEFAULT_LANG) for part in parts))
        self.parts = parts
        return self

    def in_lang(self, lang: str) -> str:
        return "".join(_said(part, lang) for part in self.parts)

    def __add__(self, other: str) -> HelpText:
        return HelpText(*self.parts, *_parts(other))

    def __radd__(self, other: str) -> HelpText:
        return HelpText(*_parts(other), *self.parts)


def _parts(text: str) -> tuple[str | _Key, ...]:
    return text.parts if isinstance(text, HelpText) else (text,)


def _said(part: str | _Key, lang: str) -> str:
    return part.in_lang(lang) if isinstance(part, _Key) else part


def help_text(key: str, **values: Any) -> HelpText:
    """The help text ``help.<key>`` of the catalogue (its ``{fields}`` filled from ``values``):
    ``help_text("quiz.list.summary")`` is ``"list the quizzes"``, said ``"lista los
    cuestionarios"`` in a Spanish help page."""
    return HelpText(_Key(key, values))


def add_subcommand(subparsers, command: str, name: str, *, description: str | None = None,
                   epilog: str | None = None) -> argparse.ArgumentParser:
    """``minimodel COMMAND NAME``, its texts from the catalogue: ``help.COMMAND.NAME.summary``,
    ``.description`` and ``.epilog`` (a ``description`` or ``epilog`` given replaces it)."""
    if description is None:
        description = help_text(f"{command}.{name}.description")
    if epilog is None:
        epilog = help_text(f"{command}.{name}.epilog")
    return subparsers.add_parser(name, help=help_text(f"{command}.{name}.summary"),
                                 description=description, epilog=epilog,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


# argparse's own words (it writes them with gettext's ``_``), by their English text.
ARGPARSE_WORDS = {"usage: ": help_text("argparse.usage"), "options": help_text("argparse.options"),
                  "positional arguments": help_text("argparse.positionals"),
                  "show this help message and exit": help_text("argparse.help")}


def catalogued(parser: argparse.ArgumentParser) -> bool:
    """Whether ``parser``'s help is written in the catalogue (its description is a HelpText)."""
    return isinstance(parser.description, HelpText)


class SaidHelp(argparse.HelpFormatter):
    """Mixed into a parser's formatter class: every text of the page said in ``lang``.

    It overrides argparse's formatting hooks (underscored names, the same since Python 3.2;
    tests/commands/test_help_spanish.py compares whole pages, English and Spanish)."""

    lang = DEFAULT_LANG

    def said(self, text: Any) -> Any:
        """``text`` in ``self.lang``: a HelpText, or one of argparse's own words."""
        if isinstance(text, HelpText):
            return text.in_lang(self.lang)
        if isinstance(text, str) and text in ARGPARSE_WORDS:
            return ARGPARSE_WORDS[text].in_lang(self.lang)
        return text

    def _format_text(self, text: str) -> str:              # description, epilog
        return super()._format_text(self.said(text))

    def _get_help_string(self, action: argparse.Action) -> str:   # an option's help
        return self.said(super()._get_help_string(action))

    def _metavar_formatter(self, action: argparse.Action,
                           default_metavar: str) -> Callable[[int], tuple[str, ...]]:
        shown = super()._metavar_formatter(action, default_metavar)
        return lambda size: tuple(self.said(metavar) for metavar in shown(size))

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        prefix = self.said("usage: ") if prefix is None else prefix
        super().add_usage(usage, actions, groups, prefix)

    def start_section(self, heading: str | None) -> None:   # "options", "positional arguments"
        super().start_section(self.said(heading))


@cache
def said_in_lang(formatter_class: type) -> type:
    """``formatter_class`` (argparse's HelpFormatter or RawDescriptionHelpFormatter...) with
    :class:`SaidHelp` mixed in: the same layout, the texts in the reader's language."""
    if issubclass(formatter_class, SaidHelp):
        return formatter_class
    return type(formatter_class.__name__, (SaidHelp, formatter_class), {})
