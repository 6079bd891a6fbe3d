# SPDX-License-Identifier: GPL-2.0-only
"""C's integer rules for ``& | ^ ~ << >>`` on typed words, one definition for every backend.

A variable declared with a width (``U32``, ``S64``, ``IntType("u56", 56, False)``)
is a C word: its bit operators follow C as the kernel's compilers (gcc,
clang with ``-fno-strict-overflow``) implement it:

- *integer promotions*: a word narrower than ``int`` (32 bits), and a
  ``Bool``, is an ``int`` (``S32``) before any operator;
- *usual arithmetic conversions* for ``& | ^``: same signedness, the wider
  type; otherwise the unsigned type if it is at least as wide, else the
  signed one (which then holds every value of the other);
- a shift's type is its promoted left operand's; its count may be of any
  type but must lie in ``0 .. width-1``: anything else is undefined
  behaviour (C11 6.5.7), reported as the built-in property
  ``no_undefined_behaviour`` with the trace to the step that shifts;
- ``>>`` is arithmetic on a signed type and logical on an unsigned one; a
  signed ``<<`` wraps (gcc documents signed ``<<`` as two's complement);
- a plain number (a literal, a parameter) next to a word takes the word's
  type, as a C constant of no greater rank does; one that fits neither the
  signed nor the unsigned reading of that width is refused (name its type:
  ``U64(1) << 40``); the left operand of a shift must be a word;
- an unbounded ``Int`` has no bits to operate on: refused, naming the
  declaration to write instead.

``+ - * // %`` and comparisons stay on mathematical values, as elsewhere in
the spec language (the overflow is reported where the value is stored), but
their result keeps the converted type so that a later bit operator sees it.

This module is pure Python: the explorer's ``Word`` (an ``int`` carrying its
type) uses it directly, ``checker.symbolic.term.Sym`` asks it for the result
type and then builds Z3 terms.
"""
from __future__ import annotations

import sys
from typing import Any

import checker.types as _types
from checker.types import S32, BoolType, IntType

INT_BITS = 32  # C's int on every Linux ABI

#: ``/`` on a state value: one message for every backend (Word, Sym, the lint).
TRUEDIV = ("`/` is true division (a float) in Python; spec values are integers. Write `//` for C's "
           "division of non-negative values (Python's `//` floors: for a negative dividend write "
           "If(a < 0, -(-a // b), a // b), which truncates as C does)")


class WordRuleError(Exception):
    """A bit operator C would not accept as written here; the message names the rule and the fix."""


#: Where a shift with an out-of-range count happened, for the engine that fired the step: each entry is
#: ``(condition, line)`` with condition True (explorer) or a Z3 term (symbolic). Cleared per step.
UB_LOG: list[tuple[Any, int]] = []

_BITOPS = {"&": "and", "|": "or", "^": "xor"}


def fixed(t: Any) -> bool:
    """Whether ``t`` is a C word type (a fixed bit width), on which C's bit operators are defined."""
    return isinstance(t, IntType) and t.bits is not None


def promote(t: IntType | None, what: str = "the operand") -> IntType:
    """C's integer promotion, or the refusal for a type with no width."""
    if isinstance(t, BoolType):
        return S32
    if not fixed(t):
        raise WordRuleError(unbounded_message(t, what))
    assert t is not None
    if t.bits < INT_BITS:
        return S32
    return t


def unbounded_message(t: Any, what: str) -> str:
    """The error for a bit operator on ``what`` of a type with no fixed width, saying what to declare."""
    name = getattr(t, "name", None) or "untyped"
    return (f"{what} is {'an unbounded ' + name if name == 'int' else 'of type ' + name}, which has no fixed "
            f"width, so C's bit operators are not defined on it. Declare the variable as a word, e.g. "
            f"Shared(0, type=U64) (or S64, U32, S32, IntType('u56', 56, False)), or make a value a word "
            f"with U64(x)")


def common(a: IntType, b: IntType) -> IntType:
    """The usual arithmetic conversions of two promoted types (width standing for rank)."""
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    u, s = (a, b) if not a.signed else (b, a)
    if u.bits >= s.bits:
        return u
    return s  # wider and signed: it represents every value of u


def constant(c: int, t: IntType, op: str) -> int:
    """A plain number next to a word of type ``t``: converted to ``t`` if it fits either reading."""
    if -(1 << (t.bits - 1)) <= c < (1 << t.bits):
        return t.wrap(c)
    raise WordRuleError(f"the constant {c:#x} in `{op}` does not fit a {t.bits}-bit word ({t.name}), so C "
                        f"would give it a wider type; give it one explicitly, e.g. U64({c:#x}) {op} ...")


def binary_type(ta: IntType | None, tb: IntType | None, op: str) -> IntType:
    """The type of ``a op b`` for ``& | ^``; None stands for a plain number (takes the other's type)."""
    if ta is None and tb is None:
        raise WordRuleError(f"`{op}` needs a word on one side")
    if ta is None:
        return promote(tb, f"the right operand of `{op}`")
    if tb is None:
        return promote(ta, f"the left operand of `{op}`")
    return common(promote(ta, f"the left operand of `{op}`"), promote(tb, f"the right operand of `{op}`"))


def shift_type(ta: IntType | None, op: str) -> IntType:
    """The C type of a shift's result: its promoted left operand (a plain number is refused: its C type is unsaid)."""
    if ta is None:
        raise WordRuleError(f"the left operand of `{op}` is a plain number, whose C type (int? long?) the spec "
                            f"does not say; write the type, e.g. U64(1) {op} n, or S32(1) {op} n for C's `1 {op} n`")
    return promote(ta, f"the left operand of `{op}`")


def caller_line(depth: int = 2) -> int:
    """The line of spec code that applied an operator (``depth`` frames up)."""
    f = sys._getframe(depth)
    return f.f_lineno


# -- on ints: the explorer's words ---------------------------------------------------------------------------
_WORDS: dict[IntType, type] = {}


def word_class(t: IntType) -> type:
    """The ``int`` subclass whose values carry type ``t`` (one class per type: ints have no slots)."""
    cls = _WORDS.get(t)
    if cls is None:
        cls = _WORDS[t] = type(f"Word_{t.name}", (Word,), {"__slots__": (), "ctype": t})
    return cls


def word(v: int, t: IntType) -> "Word":
    """``v`` as a word of type ``t`` (wrapped to its width, with its signedness)."""
    return word_class(t)(v)


def type_of(x: Any) -> IntType | None:
    """A value's C type: a word's own, a Bool's, or None for a plain number."""
    if x.__class__ is bool:
        return S32
    return getattr(x, "ctype", None)


class Word(int):
    """An int with a C word type: the explorer's reading of a typed variable in a spec that uses
    bit operators. Its value is the mathematical one (stored as is); bit operators see it as a word."""

    __slots__ = ()
    ctype: IntType = S32

    def _other(self, o: Any) -> tuple[int, IntType | None] | None:
        if o.__class__ is bool or isinstance(o, int):
            return int(o), type_of(o)
        return None  # a Sym: its reflected operator builds the term

    def _bit(self, o: Any, op: str, fn: Any, swap: bool = False) -> Any:
        got = self._other(o)
        if got is None:
            return NotImplemented
        ov, ot = got
        ta, tb = (ot, self.ctype) if swap else (self.ctype, ot)
        t = binary_type(ta, tb, op)
        a = t.wrap(int(self))
        b = t.wrap(ov) if ot is not None else constant(ov, t, op)
        if swap:
            a, b = b, a
        return word(t.wrap(fn(a, b)), t)

    def __and__(self, o): return self._bit(o, "&", int.__and__)
    def __rand__(self, o): return self._bit(o, "&", int.__and__, True)
    def __or__(self, o): return self._bit(o, "|", int.__or__)
    def __ror__(self, o): return self._bit(o, "|", int.__or__, True)
    def __xor__(self, o): return self._bit(o, "^", int.__xor__)
    def __rxor__(self, o): return self._bit(o, "^", int.__xor__, True)

    def __invert__(self):
        t = promote(self.ctype, "the operand of `~`")
        return word(t.wrap(~int(self)), t)

    def _shift(self, k: Any, op: str) -> Any:
        got = self._other(k)
        if got is None:
            return NotImplemented
        t = shift_type(self.ctype, op)
        n = got[0]
        if not 0 <= n < t.bits:
            UB_LOG.append((True, caller_line(3)))
            return word(0, t)  # undefined: the engine reports the step, the value is never stored
        a = t.wrap(int(self))
        return word(t.wrap(a << n) if op == "<<" else a >> n, t)

    def __lshift__(self, k): return self._shift(k, "<<")
    def __rshift__(self, k): return self._shift(k, ">>")

    def __rlshift__(self, o):
        got = self._other(o)
        if got is None:
            return NotImplemented
        if got[1] is None:
            shift_type(None, "<<")
        return word(got[0], got[1])._shift(self, "<<")

    def __rrshift__(self, o):
        got = self._other(o)
        if got is None:
            return NotImplemented
        if got[1] is None:
            shift_type(None, ">>")
        return word(got[0], got[1])._shift(self, ">>")

    # -- arithmetic: mathematical values, the converted type kept for later bit operators ----------------
    def _arith(self, o: Any, fn: Any, swap: bool = False) -> Any:
        got = self._other(o)
        if got is None:
            return NotImplemented
        ov, ot = got
        r = fn(ov, int(self)) if swap else fn(int(self), ov)
        if ot is None or not fixed(self.ctype) or not fixed(ot):
            return word(r, self.ctype)
        return word(r, common(promote(self.ctype), promote(ot)))

    def __add__(self, o): return self._arith(o, int.__add__)
    def __radd__(self, o): return self._arith(o, int.__add__, True)
    def __sub__(self, o): return self._arith(o, int.__sub__)
    def __rsub__(self, o): return self._arith(o, int.__sub__, True)
    def __mul__(self, o): return self._arith(o, int.__mul__)
    def __rmul__(self, o): return self._arith(o, int.__mul__, True)
    def __floordiv__(self, o): return self._arith(o, int.__floordiv__)
    def __rfloordiv__(self, o): return self._arith(o, int.__floordiv__, True)
    def __mod__(self, o): return self._arith(o, int.__mod__)
    def __rmod__(self, o): return self._arith(o, int.__mod__, True)
    def __neg__(self): return word(-int(self), self.ctype)
    def __pos__(self): return self
    def __abs__(self): return word(abs(int(self)), self.ctype)

    def __truediv__(self, o): raise WordRuleError(TRUEDIV)
    def __rtruediv__(self, o): raise WordRuleError(TRUEDIV)

    def __repr__(self) -> str:
        return int.__repr__(self)

    __str__ = __repr__


def cast(t: IntType, v: Any) -> Any:
    """``(t)v`` as C converts: the value modulo 2^width, read with t's signedness."""
    if not fixed(t):
        raise WordRuleError(f"{t!r}(...) is not a cast: only a type with a width converts a value")
    if v.__class__ is bool or isinstance(v, int):
        return word(t.wrap(int(v)), t)
    if hasattr(v, "cast"):  # a symbolic value (checker.symbolic.term.Sym): the cast as a term
        return v.cast(t)
    raise WordRuleError(f"{t.name}({v!r}): not an integer")


_types._cast = cast  # IntType(...) casts through here (checker.types does not import this module)
