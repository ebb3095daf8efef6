"""Grid Engine's request expressions and boolean values, as a job's `-l NAME=VALUE` asks a
string or boolean complex. Pure code.

An expression (sge_types(1), complex(5)) is wildcard patterns (`*`, `?`, `[...]`) joined by
`!` (not), `&` (and) and `|` (or), binding in that order, grouped by parentheses:
`lx-amd64&!lx-arm64`, `(lx-*|sol-*)&!*-sparc`. A BOOL is TRUE or FALSE, written in any
case, or 1 or 0.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

OPERATORS = "!&|()"
BOOL_WORDS = {"true": True, "1": True, "false": False, "0": False}


class ExpressionError(ValueError):
    """A request expression Grid Engine would not read, with where and what it takes."""


def ge_bool(text: str) -> bool | None:
    """A BOOL value as Grid Engine reads it (TRUE, FALSE in any case; 1, 0; `1.000000` as
    qhost prints TRUE); None: not a BOOL value."""
    word = text.strip().lower()
    if word in BOOL_WORDS:
        return BOOL_WORDS[word]
    try:
        number = float(word)
    except ValueError:
        return None
    return {1.0: True, 0.0: False}.get(number)


@dataclass(frozen=True)
class _Pattern:
    glob: str


@dataclass(frozen=True)
class _Not:
    operand: Expression


@dataclass(frozen=True)
class _All:
    operands: tuple[Expression, ...]


@dataclass(frozen=True)
class _Any:
    operands: tuple[Expression, ...]


Expression = _Pattern | _Not | _All | _Any


def _tokens(text: str) -> list[tuple[int, str]]:
    """(position, token): each operator alone, each pattern whole (a `[...]` set in it kept,
    `!` in it being the set's negation)."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        if text[i] in OPERATORS:
            out.append((i, text[i]))
            i += 1
            continue
        start = i
        while i < len(text) and text[i] not in OPERATORS:
            if text[i] == "[" and (end := text.find("]", i + 2)) != -1:
                i = end
            i += 1
        out.append((start, text[start:i]))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def fail(self, what: str) -> ExpressionError:
        pos = self.tokens[self.at][0] if self.at < len(self.tokens) else len(self.text)
        return ExpressionError(
            f"request expression {self.text!r}: {what} at character {pos + 1}; Grid Engine "
            "takes patterns joined by ! (not), & (and), | (or) and grouped by parentheses, "
            "e.g. (lx-*|sol-*)&!*-sparc")

    def peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def either(self) -> Expression:
        operands = [self.both()]
        while self.peek() == "|":
            self.at += 1
            operands.append(self.both())
        return operands[0] if len(operands) == 1 else _Any(tuple(operands))

    def both(self) -> Expression:
        operands = [self.unary()]
        while self.peek() == "&":
            self.at += 1
            operands.append(self.unary())
        return operands[0] if len(operands) == 1 else _All(tuple(operands))

    def unary(self) -> Expression:
        token = self.peek()
        if token == "!":
            self.at += 1
            return _Not(self.unary())
        if token == "(":
            self.at += 1
            inner = self.either()
            if self.peek() != ")":
                raise self.fail("a parenthesis not closed")
            self.at += 1
            return inner
        if token is None or token in OPERATORS:
            raise self.fail("a pattern missing" if token is None else
                            f"a pattern expected, {token!r} found")
        self.at += 1
        return _Pattern(token)


def parse_expression(text: str) -> Expression:
    """`text` read as a request expression; ExpressionError where it is not one."""
    parser = _Parser(text)
    tree = parser.either()
    if parser.peek() is not None:
        raise parser.fail(f"{parser.peek()!r} not expected")
    return tree


def _holds(tree: Expression, value: str) -> bool:
    if isinstance(tree, _Pattern):
        return fnmatch.fnmatchcase(value, tree.glob)
    if isinstance(tree, _Not):
        return not _holds(tree.operand, value)
    if isinstance(tree, _All):
        return all(_holds(t, value) for t in tree.operands)
    return any(_holds(t, value) for t in tree.operands)


def expression_matches(expression: str, value: str, caseless: bool = False) -> bool:
    """Whether a request expression admits `value` (`caseless`: a CSTRING or HOST complex,
    compared in any case); ExpressionError where `expression` is not one."""
    if caseless:
        expression, value = expression.lower(), value.lower()
    return _holds(parse_expression(expression), value)
