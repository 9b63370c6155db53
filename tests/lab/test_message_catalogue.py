"""The one message catalogue (minimodel/messages.yaml): loud failures, and the source and the
catalogue agree key for key (every key the code says exists; every key in it is said)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from minimodel.messages import Prose, catalogue, check_catalogue, decimal, grouped, phrase, say

SRC = Path(__file__).resolve().parents[2] / "src" / "minimodel"
# Helpers that say a message under a fixed area prefix: (module, name) -> prefix.
PREFIXED: dict[tuple[str, str], str] = {("minimodel.commands._help", "help_text"): "help."}


def test_say_fills_fields_in_english_and_spanish():
    assert say("quiz.score", "en", score=3, total=5) == "Score: 3/5"
    assert say("quiz.score", "es", score=3, total=5) == "Puntuación: 3/5"
    assert say("lab.lesson_head", "es", number=4, title="Softmax") == "Lección 04 · Softmax"
    # extra values are allowed: one set of values serves a family of messages
    assert say("lab.step.lesson", "es", id="04", n=3) == "leer la lección"


def test_counts_are_grouped_the_way_each_language_writes_them():
    # Spanish: a no-break space between groups (a comma would read as a decimal comma), none
    # in a four-digit number; the decimal point of code-style figures is left alone
    assert grouped(1036489, ",", "es") == "1\u00a0036\u00a0489"
    assert grouped(58262.4, ",.0f", "es") == "58\u00a0262"
    assert grouped(-1234567.25, ",.2f", "es") == "-1\u00a0234\u00a0567.25"
    assert grouped(7664, ",", "es") == "7664"
    assert grouped(1036489, ",", "en") == "1,036,489"
    assert grouped(0.5, ".2f", "es") == "0.50"                       # no grouping asked
    # say() groups a template's {n:,} in the reader's language, and only there
    assert say("train.eval_line", "es", step=1, total=2, train_loss=1.0, val_loss=2.0,
               ppl="7.39", lr=1e-3, tokens_per_s=58262.4, elapsed=1.5).endswith(
        "58\u00a0262 tok/s  1.5 s transcurridos")
    assert say("train.eval_line", "en", step=1, total=2, train_loss=1.0, val_loss=2.0,
               ppl="7.39", lr=1e-3, tokens_per_s=58262.4, elapsed=1.5).endswith(
        "58,262 tok/s  1.5s elapsed")


def test_a_prose_number_takes_the_readers_decimal_mark_and_a_plain_one_does_not():
    assert decimal(5.829137, ".4f", "es") == "5,8291" and decimal(5.829137, ".4f", "en") == "5.8291"
    assert decimal(1234567.25, ",.1f", "es") == "1\u00a0234\u00a0567,2"
    erank = phrase("train.erank", erank=Prose(55.93), most=64, head="")
    assert erank.in_lang("es") == "rango efectivo de E: 55,9 de 64"
    assert erank.in_lang("en") == "effective rank of E 55.9 of 64"
    # a list of numbers: '; ' between Spanish decimals, '-' when there is none
    assert say("doctor.optimizer.twice.found", "es", entries=2, shape="64x8", matrices=1,
               repeated=0, decays=Prose((0.1, 0.0))).endswith("decaimiento de pesos 0,1; 0.")
    assert say("doctor.optimizer.twice.found", "en", entries=2, shape="64x8", matrices=1,
               repeated=0, decays=Prose(())).endswith("weight decay -.")
    # a plain float keeps Python's point: flags and tolerances are code
    assert say("config.lr_positive", "es", lr=0.5).count("0.5") == 1


def test_a_missing_key_language_or_field_fails_loudly():
    with pytest.raises(KeyError, match="no message 'quiz.nope'"):
        say("quiz.nope", "en")
    with pytest.raises(ValueError, match="unsupported language 'fr'; choose one of en, es"):
        say("quiz.score", "fr", score=1, total=2)
    with pytest.raises(ValueError, match=r"'quiz.score' needs the field\(s\) total; got score"):
        say("quiz.score", "es", score=1)


def test_the_catalogue_check_names_a_missing_language_and_a_field_mismatch():
    with pytest.raises(ValueError, match="quiz.a has no es text"):
        check_catalogue({"quiz": {"a": {"en": "x"}}})
    with pytest.raises(ValueError, match=r"quiz.b: the languages use different fields "
                                         r"en \['n', 'total'\], es \['m', 'total'\]"):
        check_catalogue({"quiz": {"b": {"en": "{n} of {total}", "es": "{m} de {total}"}}})
    assert check_catalogue({"site": {"c": {"en": "{n:02d}", "es": "{n:02d}"}}}) == {
        "site.c": {"en": "{n:02d}", "es": "{n:02d}"}}


def test_the_shipped_catalogue_is_whole():
    entries = catalogue()
    assert len(entries) > 400
    areas = {key.split(".")[0] for key in entries}
    assert {"quiz", "lab", "break", "exercise", "judge", "site", "figure", "doctor"} <= areas


def _keys_in(arg: ast.expr, prefix: str) -> tuple[set[str], set[str]]:
    """(full keys, patterns of built keys) a key argument can take: ``f"quiz.kind.{kind}"``
    is the pattern ``quiz\\.kind\\.(.+)``."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {prefix + arg.value}, set()
    if isinstance(arg, ast.IfExp):
        body, orelse = _keys_in(arg.body, prefix), _keys_in(arg.orelse, prefix)
        return body[0] | orelse[0], body[1] | orelse[1]
    if isinstance(arg, ast.JoinedStr):
        return set(), {re.escape(prefix) + _pattern(arg)}
    if isinstance(arg, ast.BinOp) and isinstance(arg.left, ast.Constant):   # "quiz.reason." + r
        return set(), {re.escape(prefix + arg.left.value) + "(.+)"}
    return set(), set()


def _pattern(fstring: ast.JoinedStr) -> str:
    return "".join(re.escape(part.value) if isinstance(part, ast.Constant) else "(.+)"
                   for part in fstring.values)


def scan_source() -> tuple[dict[str, str], dict[str, str], set[str], set[str]]:
    """The keys the source says (key -> file), the patterns of the keys it builds
    (pattern -> file), every string constant of the source, and the patterns of its f-strings
    that start with some text (``f"sizes.padding_{state}"``)."""
    keys, patterns, constants, built = {}, {}, set(), set()
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        where = path.relative_to(SRC).as_posix()
        # only modules that use the catalogue (break experiments and the profiler have a `say`
        # of their own)
        says = "content" not in path.parts and any(
            name in text for name in ("minimodel.messages import", "commands._help import"))
        # the prefixing helpers themselves build "quiz." + anything: their callers are read
        helpers = {id(node) for fn in ast.walk(tree)
                   if isinstance(fn, ast.FunctionDef) and fn.name in {n for _, n in PREFIXED}
                   for node in ast.walk(fn)}
        prefixed = {alias.asname or alias.name: PREFIXED[node.module, alias.name]
                    for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    for alias in node.names if (node.module, alias.name) in PREFIXED}
        module = "minimodel." + where.removesuffix(".py").replace("/", ".")
        prefixed |= {name: prefix for (home, name), prefix in PREFIXED.items() if home == module}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                constants.add(node.value)
            if (isinstance(node, ast.JoinedStr) and node.values
                    and isinstance(node.values[0], ast.Constant)
                    and len(node.values[0].value) > 2):
                built.add(_pattern(node))
            if not isinstance(node, ast.Call) or not node.args or id(node) in helpers:
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if not says:
                continue
            if name in ("say", "phrase"):   # phrase: said later, in the reader's language
                found = _keys_in(node.args[0], "")
            elif name in prefixed:
                found = _keys_in(node.args[0], prefixed[name])
            elif name == "_known":                  # lab.i18n: status, case_status, case_label
                found = set(), {re.escape(f"{node.args[0].value}.") + "(.+)"}
            else:
                continue
            keys.update(dict.fromkeys(found[0], where))
            patterns.update(dict.fromkeys(found[1], where))
    return keys, patterns, constants, built


def test_every_key_the_code_says_is_in_the_catalogue():
    keys, patterns, _, _ = scan_source()
    assert len(keys) > 200 and len(patterns) > 15
    assert {key: where for key, where in keys.items() if key not in catalogue()} == {}
    assert {p: where for p, where in patterns.items()
            if not any(re.fullmatch(p, key) for key in catalogue())} == {}


def test_every_key_in_the_catalogue_is_said_somewhere():
    """A key is said when the source names it, or when the source builds it from a pattern
    whose every filled-in part is a string the source holds (``f"site.{key}"`` with ``key``
    from ``("predict", "observe")``, ``f"doctor.{key}.found"`` with ``"tie.flags_disagree"``
    from a check, ``f"sizes.padding_{state}"`` from another)."""
    keys, patterns, constants, built = scan_source()

    def held(part: str) -> bool:
        return part in constants or any(re.fullmatch(p, part) for p in built)

    def said(key: str) -> bool:
        if key in keys:
            return True
        matches = (re.fullmatch(p, key) for p in patterns)
        return any(m and all(held(part) for part in m.groups()) for m in matches)

    assert [key for key in catalogue() if not said(key)] == []
