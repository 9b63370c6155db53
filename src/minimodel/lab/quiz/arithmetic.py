"""Small arithmetic a learner may type as a numeric answer: ``8192 * 256``, ``2^21``, ``ln 512``.

A right answer is never marked wrong because it was written as the calculation rather than its
result. Only numbers, ``+ - * / ^`` (or ``**``, ``×``, ``·``), parentheses and the functions
``ln``/``log`` (natural), ``exp`` and ``sqrt`` are understood; anything else is not a number.
The expression is parsed with :mod:`ast` and walked by hand, never executed.

A calculation of numbers with ``+ - * /`` and whole powers has an exact value, a fraction
(:func:`evaluate_exact`): ``2^21 + 1/1000`` is 2097152.001 exactly, not the count 2097152 that
its nearest float is within a hair of. ``sqrt`` of a perfect square is exact too; ``ln``,
``exp``, any other root and fractional powers give a float only.

Every number in it is read from the text typed, never from the float Python parses it to:
``3.9999999999999999`` is the float 4.0, but typed it is not the count 4
(:func:`exact_literal`).
"""

from __future__ import annotations

import ast
import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from minimodel.lab.pyparse import parse_python

FUNCTIONS = {"ln": math.log, "log": math.log, "exp": math.exp, "sqrt": math.sqrt}
_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
              ast.Pow: lambda a, b: a ** b}
MAX_MAGNITUDE = 1e15  # no quiz answer is larger; keeps 9^9^9 from eating the machine
MAX_LENGTH = 80
# A literal's exponent beyond any float's (1e-999999999) would build a huge power of ten
MAX_EXPONENT = 400


def _rewrite(text: str) -> str:
    """People's notation -> Python's: ``×``/``·`` -> ``*``, ``^`` -> ``**``, ``ln 512`` ->
    ``ln(512)``, the minus sign U+2212 -> ``-``."""
    text = text.replace("×", "*").replace("·", "*").replace("−", "-").replace("^", "**")
    return re.sub(r"\b(ln|log|exp|sqrt)\s+([\d.]+)", r"\1(\2)", text)


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) * math.log10(max(abs(left), 2.0)) > 15:
            raise ValueError("too large")
        return _OPERATORS[type(node.op)](left, right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS and len(node.args) == 1 and not node.keywords):
        return FUNCTIONS[node.func.id](_value(node.args[0]))
    raise ValueError("not arithmetic")


def exact_literal(text: str) -> Fraction:
    """A decimal number exactly as written (``"3.9999999999999999"``, ``"1e3"``, ``"2."``):
    ``Decimal`` reads the digits, not their nearest float. ValueError when it is no decimal
    number, or its exponent is beyond any float's (``1e-999999999``)."""
    try:
        value = Decimal(text.replace("_", ""))
    except InvalidOperation:
        raise ValueError(text) from None
    if not value.is_finite() or abs(value.as_tuple().exponent) > MAX_EXPONENT:
        raise ValueError(text)
    return Fraction(value)


def _fraction(node: ast.AST, source: str) -> Fraction:
    """The exact value of a calculation with ``+ - * /``, whole powers and square roots of
    perfect squares; ValueError for anything else (ln, exp, another root, a fractional power).
    ``source`` is the text parsed: a float literal is read from its own digits there."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Fraction(node.value)  # a Python int is exact
    if isinstance(node, ast.Constant) and type(node.value) is float:
        return exact_literal(ast.get_source_segment(source, node) or "")  # 0.1 is one tenth
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _fraction(node.operand, source)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _fraction(node.left, source), _fraction(node.right, source)
        if isinstance(node.op, ast.Pow) and right.denominator != 1:
            raise ValueError("not rational")
        return _OPERATORS[type(node.op)](left, right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt"
            and len(node.args) == 1 and not node.keywords):
        # sqrt(16) is 4; sqrt(2^42 + 1) is not
        return _exact_root(_fraction(node.args[0], source))
    raise ValueError("not rational")


def _exact_root(value: Fraction) -> Fraction:
    """The square root of ``value`` when it is a fraction (both parts perfect squares)."""
    if value < 0:
        raise ValueError("not rational")
    top, bottom = math.isqrt(value.numerator), math.isqrt(value.denominator)
    if top * top != value.numerator or bottom * bottom != value.denominator:
        raise ValueError("not rational")
    return Fraction(top, bottom)


def evaluate_exact(text: str) -> Fraction | None:
    """The exact value of a calculation :func:`evaluate` reads, when it is a fraction (numbers,
    ``+ - * /``, whole powers); None when it needs a function or a fractional power."""
    value = evaluate(text)  # refuses anything that is no calculation, or too large
    source = _rewrite(text.strip())
    try:
        exact = _fraction(parse_python(source, mode="eval").body, source)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return exact if math.isclose(float(exact), value, rel_tol=1e-9, abs_tol=1e-12) else None


def evaluate(text: str) -> float:
    """The value of a small arithmetic expression; ValueError when ``text`` is not one (or its
    value is not a finite number of sensible size)."""
    text = _rewrite(text.strip())
    if not text or len(text) > MAX_LENGTH or not re.search(r"[-+*/()a-z]", text):
        raise ValueError(text)
    try:
        tree = parse_python(text, mode="eval")
        value = _value(tree.body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError):
        raise ValueError(text) from None
    if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise ValueError(text)
    return value
