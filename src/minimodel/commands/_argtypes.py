"""argparse ``type=`` functions shared by the commands and the benchmark scripts.

Each turns the typed text into a value or raises ``argparse.ArgumentTypeError`` with the
value and what is allowed, which argparse prints as ``error: argument --x: ...`` (exit 2).
"""

from __future__ import annotations

import argparse


def seed(text: str) -> int:
    """A random seed: a whole number 0 <= N < 2**31 (what NumPy's generators accept)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be a whole number, got {text!r}") from None
    if not 0 <= value < 2**31:
        raise argparse.ArgumentTypeError(f"--seed must be between 0 and {2**31 - 1}, got {value}")
    return value


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
    return parse
