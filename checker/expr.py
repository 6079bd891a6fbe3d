# SPDX-License-Identifier: GPL-2.0-only
"""Helpers for what Python has no operator hook for.

Each works on plain ints and bools (returning plain values, fast, for the
explorer) and on symbolic values (returning a symbolic term, for Z3). Write
``If(c, a, b)`` where Python would say ``a if c else b``, ``And(x, y)`` for
``x and y``, and so on: Python's own forms ask for ``bool()`` of the
condition, which a symbolic value cannot answer.
"""
from __future__ import annotations

from typing import Any, Iterable

_PLAIN = (int, bool)


def _sym():
    from checker.symbolic import term  # z3 is imported only when symbols appear

    return term


def _is_plain(*xs: Any) -> bool:
    return all(isinstance(x, _PLAIN) for x in xs)


def If(cond: Any, then: Any, other: Any) -> Any:
    """``then`` if ``cond`` else ``other``, on values or terms."""
    if isinstance(cond, _PLAIN):
        return then if cond else other
    t = _sym()
    import z3

    return t.Sym(z3.If(t.to_z3_bool(cond), t.to_z3_num(then), t.to_z3_num(other)),
                 getattr(then, "type", None) or getattr(other, "type", None))


def And(*xs: Any) -> Any:
    """Logical and of values that may be Z3 terms; plain values give a plain bool (use it, not Python's ``and``)."""
    # A plain False decides the conjunction on every backend: answer at once.
    symbolic = False
    for x in xs:
        c = x.__class__
        if c is bool or c is int:
            if not x:
                return False
        else:
            symbolic = True
    if not symbolic:
        return True
    t = _sym()
    import z3

    return t.Sym(z3.And(*[t.to_z3_bool(x) for x in xs]))


def Or(*xs: Any) -> Any:
    """Logical or of values that may be Z3 terms; plain values give a plain bool (use it, not Python's ``or``)."""
    symbolic = False
    for x in xs:
        c = x.__class__
        if c is bool or c is int:
            if x:
                return True
        else:
            symbolic = True
    if not symbolic:
        return False
    t = _sym()
    import z3

    return t.Sym(z3.Or(*[t.to_z3_bool(x) for x in xs]))


def Not(x: Any) -> Any:
    """Logical not of a value that may be a Z3 term (use it, not Python's ``not``)."""
    if isinstance(x, _PLAIN):
        return not x
    t = _sym()
    import z3

    return t.Sym(z3.Not(t.to_z3_bool(x)))


def Implies(a: Any, b: Any) -> Any:
    """``a`` implies ``b``, for values that may be Z3 terms."""
    if _is_plain(a, b):
        return (not a) or bool(b)
    t = _sym()
    import z3

    return t.Sym(z3.Implies(t.to_z3_bool(a), t.to_z3_bool(b)))


def Max(*xs: Any) -> Any:
    """The largest of the arguments (``max`` asks ``bool()`` of comparisons)."""
    if len(xs) == 1 and not isinstance(xs[0], _PLAIN):
        xs = tuple(xs[0])
    if _is_plain(*xs):
        return max(xs)
    best = xs[0]
    for x in xs[1:]:
        best = If(x > best, x, best)
    return best


def Min(*xs: Any) -> Any:
    """The least of the values (or of one iterable), for values that may be Z3 terms."""
    if len(xs) == 1 and not isinstance(xs[0], _PLAIN):
        xs = tuple(xs[0])
    if _is_plain(*xs):
        return min(xs)
    best = xs[0]
    for x in xs[1:]:
        best = If(x < best, x, best)
    return best


def Sum(xs: Iterable[Any]) -> Any:
    """Sum of values or terms. On a per-CPU variable under the Z3 backend's
    any-CPU-count encoding it is that variable's sum (see checker.prove)."""
    if hasattr(xs, "total"):
        return xs.total()
    return sum(xs, 0)


def Count(xs: Iterable[Any]) -> Any:
    """How many of the conditions hold."""
    return sum((If(x, 1, 0) for x in xs), 0)


def AllOf(xs: Iterable[Any]) -> Any:
    """``all()`` for values or terms."""
    return And(*list(xs))


def AnyOf(xs: Iterable[Any]) -> Any:
    """``any()`` for values or terms."""
    return Or(*list(xs))


def Select(seq: Any, i: Any) -> Any:
    """``seq[i]`` where ``i`` may be a state value (a CPU id held in a variable).

    An index outside the sequence (a lock owner that is NOBODY) gives 0 on
    every backend, so ``If(owned, Select(s.local, s.lock), 0)`` is safe to
    write although Python evaluates both branches.
    """
    if hasattr(seq, "select"):  # a symbolic per-CPU array (Z3 backend, any CPU count)
        return seq.select(i)
    if isinstance(i, _PLAIN):
        return seq[i] if 0 <= i < len(seq) else 0
    out: Any = 0
    for k in range(len(seq)):
        out = If(i == k, seq[k], out)
    return out
