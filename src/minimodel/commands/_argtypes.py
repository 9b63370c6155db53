"""argparse ``type=`` functions shared by the commands and the benchmark scripts.

Each turns the typed text into a value or raises ``argparse.ArgumentTypeError`` with the
value and what is allowed, which a plain argparse parser prints as ``error: argument --x: ...``
(exit 2). Each also carries ``expects``, what it accepts as a Phrase: the parser of the
``minimodel`` commands (:mod:`minimodel.commands._parser`) says a refused value with it in one
line of the reader's language.
"""

from __future__ import annotations

import argparse

from minimodel.messages import phrase

SEED_LIMIT = 2**31  # NumPy's generators take seeds below it


def seed(text: str) -> int:
    """A random seed: a whole number 0 <= N < 2**31 (what NumPy's generators accept)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be a whole number, got {text!r}") from None
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"--seed must be between 0 and {SEED_LIMIT - 1}, "
                                         f"got {value}")
    return value


seed.expects = phrase("cli.expects.seed", maximum=SEED_LIMIT - 1)


def at_least(minimum: int):
    """An argparse ``type``: an integer >= ``minimum``, refused with the value otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is too small: the least is {minimum}")
        return value
    parse.expects = phrase("cli.expects.at_least", minimum=minimum)
    return parse


def comma_choices(choices: tuple[str, ...], what: str):
    """An argparse ``type``: a comma list drawn from ``choices`` (or "all"), in their order."""
    def parse(text: str) -> tuple[str, ...]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        if items == ["all"]:
            return tuple(choices)
        bad = [s for s in items if s not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad) or '(none)'}; "
                                              f"choose from {', '.join(choices)} or all")
        return tuple(c for c in choices if c in items)
    parse.expects = phrase("cli.expects.list", choices=", ".join(choices))
    return parse
