"""Small arithmetic a learner may type as a numeric answer: ``8192 * 256``, ``2^21``, ``ln 512``.

A right answer is never marked wrong because it was written as the calculation rather than its
result. Only numbers, ``+ - * / ^`` (or ``**``, ``×``, ``·``), parentheses and the functions
``ln``/``log`` (natural), ``exp`` and ``sqrt`` are understood; anything else is not a number.
The expression is parsed with :mod:`ast` and walked by hand, never executed.

A calculation of numbers with ``+ - * /`` and whole powers has an exact value, a fraction
(:func:`evaluate_exact`): ``2^21 + 1/1000`` is 2097152.001 exactly, not the count 2097152 that
its nearest float is within a hair of. ``sqrt`` of a perfect square is exact too; ``ln``,
``exp``, any other root and fractional powers give a float only.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction

from minimodel.lab.pyparse import parse_python

FUNCTIONS = {"ln": math.log, "log": math.log, "exp": math.exp, "sqrt": math.sqrt}
_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
              ast.Pow: lambda a, b: a ** b}
MAX_MAGNITUDE = 1e15  # no quiz answer is larger; keeps 9^9^9 from eating the machine
MAX_LENGTH = 80


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


def _fraction(node: ast.AST) -> Fraction:
    """The exact value of a calculation with ``+ - * /``, whole powers and square roots of
    perfect squares; ValueError for anything else (ln, exp, another root, a fractional power)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Fraction(repr(node.value))  # 0.1 is one tenth, as typed
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _fraction(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _fraction(node.left), _fraction(node.right)
        if isinstance(node.op, ast.Pow) and right.denominator != 1:
            raise ValueError("not rational")
        return _OPERATORS[type(node.op)](left, right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt"
            and len(node.args) == 1 and not node.keywords):
        return _exact_root(_fraction(node.args[0]))  # sqrt(16) is 4; sqrt(2^42 + 1) is not
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
    try:
        exact = _fraction(parse_python(_rewrite(text.strip()), mode="eval").body)
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
