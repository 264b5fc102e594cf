"""A tiny, safe arithmetic evaluator for ``computed`` values.

Grammar: numbers, names from ``vars``, ``+ - * / // %``, unary minus and parentheses.
Nothing is ever passed to ``eval``; anything else is an ``ExpressionError``, and so is a
result that is not a finite number (``inf``/``nan`` would render as vLLM arguments).
"""

from __future__ import annotations

import math
import re
from typing import Mapping

from manifesto.errors import ExpressionError, Origin, did_you_mean, show_value

__all__ = ["evaluate", "is_expression"]

_TOKEN = re.compile(r"[ \t\r\n]*(?:([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|(//|[-+*/%()]))")

Number = int | float

#: Whole numbers in and out of an expression fit an int64, as every flag they feed does.
_MAX = 2**63 - 1


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected character {text[pos:].strip()[0]!r} at position {pos + 1}")
        num, name, op = m.groups()
        out.append(("num", num) if num else ("name", name) if name else ("op", op))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str, names: Mapping[str, Number]) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.names = names

    def parse(self) -> Number:
        if not self.toks:
            raise ValueError("empty expression")
        value = self.sum()
        if self.i != len(self.toks):
            raise ValueError(f"unexpected {self.toks[self.i][1]!r}")
        return value

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def sum(self) -> Number:
        value = self.product()
        while self.peek() in ("+", "-"):
            op = self.toks[self.i][1]
            self.i += 1
            rhs = self.product()
            value = value + rhs if op == "+" else value - rhs
        return value

    def product(self) -> Number:
        value = self.unary()
        while self.peek() in ("*", "/", "//", "%"):
            op = self.toks[self.i][1]
            self.i += 1
            rhs = self.unary()
            if op != "*" and rhs == 0:
                raise ValueError("division by zero")
            value = value * rhs if op == "*" else value / rhs if op == "/" else value // rhs if op == "//" else value % rhs
        return value

    def unary(self) -> Number:
        if self.peek() == "-":
            self.i += 1
            return -self.unary()
        if self.peek() == "+":
            self.i += 1
            return self.unary()
        return self.atom()

    def atom(self) -> Number:
        if self.i >= len(self.toks):
            raise ValueError("expression ends too early")
        kind, text = self.toks[self.i]
        self.i += 1
        if kind == "num":
            value = float(text) if "." in text else int(text)
            if isinstance(value, float) and not math.isfinite(value) or isinstance(value, int) and value > _MAX:
                raise ValueError(f"the number {text[:20]}... is too large")
            return value
        if kind == "name":
            if text not in self.names:
                known = sorted(self.names)
                raise ValueError(
                    f"unknown name '{text}'{did_you_mean(text, known)}; vars: {', '.join(known) or '(none)'}"
                )
            return self.names[text]
        if text == "(":
            value = self.sum()
            if self.peek() != ")":
                raise ValueError("missing ')'")
            self.i += 1
            return value
        raise ValueError(f"unexpected {text!r}")


def evaluate(expr: str | int | float, names: Mapping[str, Number], origin: Origin | None = None,
             path: str = "") -> Number:
    """Evaluate ``expr`` over ``names``; whole results come back as ``int``."""
    if isinstance(expr, bool):
        raise ExpressionError("expected an expression or a number, got a boolean", origin, path)
    if isinstance(expr, (int, float)):
        if isinstance(expr, float) and not math.isfinite(expr):
            raise ExpressionError(f"expected a finite number, got {show_value(expr)}", origin, path)
        if isinstance(expr, int) and abs(expr) > _MAX:
            raise ExpressionError(f"{len(str(abs(expr)))}-digit number is too large (at most {_MAX})", origin, path)
        return expr
    if not isinstance(expr, str):
        raise ExpressionError("expected an expression or a number", origin, path)
    shown = show_value(expr)
    try:
        value = _Parser(expr, names).parse()
    except ValueError as exc:
        raise ExpressionError(f"in expression {shown}: {exc}", origin, path) from None
    except OverflowError:
        raise ExpressionError(f"in expression {shown}: the result is too large", origin, path) from None
    except RecursionError:
        raise ExpressionError("expression nests too deeply", origin, path) from None
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExpressionError(f"in expression {shown}: the result is not a finite number "
                                  f"({show_value(value)})", origin, path)
        if value.is_integer() and abs(value) <= _MAX:
            return int(value)
    elif abs(value) > _MAX:
        raise ExpressionError(f"in expression {shown}: the result is too large (at most {_MAX})", origin, path)
    return value


def is_expression(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())
