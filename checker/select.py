# SPDX-License-Identifier: GPL-2.0-only
"""``-k EXPR``: pytest's keyword expressions over check ids (``spec.property``).

A word matches a check when it is a case-insensitive substring of the check's id; words combine
with ``and``, ``or``, ``not`` and parentheses, as in ``pytest -k``:
``-k "eager and not fold"``, ``-k read_bound``, ``-k "percpu_lazy or stack_cache"``.
"""
from __future__ import annotations

import re
from typing import Callable

from checker.errors import UsageError

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")

Matcher = Callable[[str], bool]


def compile_keywords(expr: str) -> Matcher:
    """A test of a check id against ``expr``; a malformed expression is a usage error."""
    tokens = [m[1] for m in _TOKEN.finditer(expr)]
    if not tokens:
        raise UsageError("-k needs an expression, e.g. -k read_bound or -k \"eager and not fold\"")
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def bad(why: str) -> UsageError:
        return UsageError(f"-k {expr!r}: {why}; write words joined by and, or, not and parentheses, "
                          f"e.g. -k \"eager and not fold\"")

    def either() -> Matcher:
        parts = [both()]
        while peek() == "or":
            take()
            parts.append(both())
        return parts[0] if len(parts) == 1 else (lambda s: any(p(s) for p in parts))

    def both() -> Matcher:
        parts = [negated()]
        while peek() == "and":
            take()
            parts.append(negated())
        return parts[0] if len(parts) == 1 else (lambda s: all(p(s) for p in parts))

    def negated() -> Matcher:
        tok = peek()
        if tok is None:
            raise bad("it ends where a word was expected")
        if tok == "not":
            take()
            inner = negated()
            return lambda s: not inner(s)
        if tok == "(":
            take()
            inner = either()
            if peek() != ")":
                raise bad("a '(' is not closed")
            take()
            return inner
        if tok in (")", "and", "or"):
            raise bad(f"{tok!r} where a word was expected")
        word = take().lower()
        return lambda s: word in s.lower()

    match = either()
    if pos != len(tokens):
        raise bad(f"{tokens[pos]!r} after a complete expression")
    return match
