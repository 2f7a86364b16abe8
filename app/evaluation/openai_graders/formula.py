"""``calculate_output`` of a ``multi`` grader: arithmetic over graders' scores, never ``eval``.

The formula is parsed by Python's ``ast`` (syntax only) and evaluated by walking a short
whitelist of nodes: numbers, grader names, ``+ - * / ^`` (``^`` and ``**`` are powers),
unary ``-``/``+``, and the functions ``min``, ``max``, ``abs``, ``floor``, ``ceil``, ``exp``,
``sqrt``, ``log``. Anything else (attributes, subscripts, comparisons, other calls, strings)
is refused with the construct named.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping

MAX_FORMULA_CHARS = 2000
MAX_EXPONENT = 100.0
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "exp": math.exp,
    "sqrt": math.sqrt,
    "log": math.log,
}


class FormulaError(ValueError):
    """A formula that cannot be parsed or evaluated (the message names the fault)."""


def _power(base: float, exponent: float) -> float:
    if abs(exponent) > MAX_EXPONENT:
        raise FormulaError(f"exponent {exponent:g} is larger than {MAX_EXPONENT:g}")
    return float(base**exponent)


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: _power,
}


def parse_formula(text: str) -> ast.expr:
    """The formula's expression tree, checked against the whitelist.

    Raises:
        FormulaError: Not an expression, too long, or a construct outside the whitelist.
    """
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaError(f"the formula is longer than {MAX_FORMULA_CHARS} characters")
    try:
        # ``^`` is a power in these formulas; Python reads it as xor, with lower precedence.
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(f"the formula {text!r} does not parse: {exc.msg}") from None
    for node in ast.walk(tree):
        _check(node)
    return tree


def _check(node: ast.AST) -> None:
    allowed = (ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Call, ast.Constant)
    if isinstance(node, ast.operator | ast.unaryop):
        if type(node) in _BINARY or isinstance(node, ast.USub | ast.UAdd):
            return
        raise FormulaError(f"operator {type(node).__name__} is not allowed in a formula")
    if not isinstance(node, allowed):
        raise FormulaError(f"{type(node).__name__} is not allowed in a formula")
    if isinstance(node, ast.Constant) and (
        isinstance(node.value, bool) or not isinstance(node.value, int | float)
    ):
        raise FormulaError(f"only numbers are allowed as constants, not {node.value!r}")
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCTIONS or node.keywords or not node.args:
            allowed_names = ", ".join(_FUNCTIONS)
            raise FormulaError(f"only the functions {allowed_names} may be called")


def formula_names(tree: ast.expr) -> set[str]:
    """The grader names a formula reads (function names excluded)."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}


def evaluate_formula(tree: ast.expr, scores: Mapping[str, float]) -> float:
    """The formula's value with each name bound to its grader's score.

    Raises:
        FormulaError: An unknown name, a division by zero, a domain error or an overflow.
    """
    try:
        value = _evaluate(tree, scores)
    except (ZeroDivisionError, OverflowError, ValueError) as exc:
        if isinstance(exc, FormulaError):
            raise
        raise FormulaError(f"the formula could not be computed: {exc}") from None
    if not math.isfinite(value):
        raise FormulaError("the formula's value is not a finite number")
    return value


def _evaluate(node: ast.expr, scores: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in scores:
            raise FormulaError(f"the formula names {node.id!r}, which is not one of its graders")
        return float(scores[node.id])
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, scores)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, scores), _evaluate(node.right, scores)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_evaluate(arg, scores) for arg in node.args]
        return float(_FUNCTIONS[node.func.id](*args))
    raise FormulaError(f"{type(node).__name__} is not allowed in a formula")
