# SPDX-License-Identifier: GPL-2.0-only
"""Symbolic values: Z3 terms behind Python's operators, refusing to branch.

A spec's guards and effects are written once with ``+ - < == abs()`` and the
helpers of ``checker.expr``. The explorer runs them on ints; here they run on
``Sym``, a thin wrapper over a Z3 term. ``Sym.__bool__`` raises: a Python
``if``/``and``/``or``/``not`` on a state value cannot be decided
symbolically, and z3's own ``bool(x == 0)`` would quietly return False.
Signedness comes from the variable's type, so ``<`` on an unsigned word is
``ULT`` without the spec saying so.
"""
from __future__ import annotations

from typing import Any

import z3

import checker.cint as cint
from checker.types import IntType


class SymbolicBranch(Exception):
    """Raised when spec code asks Python for the truth of a symbolic value."""


class SymbolicIndex(Exception):
    """Raised when spec code indexes a tuple with a symbolic value."""


class Sym:
    """A Z3 term with the operators spec code uses. Immutable."""

    __slots__ = ("z", "type")

    def __init__(self, z: z3.ExprRef, type: IntType | None = None):
        self.z = z
        self.type = type

    # -- helpers -----------------------------------------------------------
    @property
    def is_bv(self) -> bool:
        return z3.is_bv(self.z)

    @property
    def unsigned(self) -> bool:
        return self.type is not None and self.type.bits is not None and not self.type.signed

    def _coerce(self, other: Any) -> z3.ExprRef:
        if isinstance(other, Sym):
            return other.z
        if isinstance(other, bool):
            return z3.BoolVal(other) if z3.is_bool(self.z) else z3.IntVal(int(other)) if not self.is_bv else z3.BitVecVal(int(other), self.z.size())
        if isinstance(other, int):
            if self.is_bv:
                return z3.BitVecVal(other, self.z.size())
            if z3.is_bool(self.z):
                return z3.BoolVal(bool(other))
            return z3.IntVal(other)
        if isinstance(other, z3.ExprRef):
            return other
        return NotImplemented  # type: ignore[return-value]

    def _num(self) -> z3.ExprRef:
        # A Boolean used as a number (a flag added to a count) is 0 or 1.
        return z3.If(self.z, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(self.z) else self.z

    def _bin(self, other: Any, op) -> "Sym":
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        a = self._num()
        b = z3.If(o, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(o) else o
        return Sym(op(a, b), self._arith_type(other))

    def _rbin(self, other: Any, op) -> "Sym":
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        b = z3.If(o, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(o) else o
        return Sym(op(b, self._num()), self._arith_type(other))

    def _arith_type(self, other: Any) -> IntType | None:
        """The result type of arithmetic: this one's, or C's conversion of two words (as checker.cint.Word)."""
        ot = getattr(other, "type", None) if isinstance(other, Sym) else getattr(other, "ctype", None)
        if ot is None or not cint.fixed(self.type) or not cint.fixed(ot):
            return self.type
        return cint.common(cint.promote(self.type), cint.promote(ot))

    # -- C's bit operators on words (checker.cint has the rules) ---------------------------------------------
    def _word(self) -> tuple[z3.ExprRef, IntType | None]:
        if z3.is_bool(self.z):
            return self._num(), cint.S32
        return self.z, self.type

    @staticmethod
    def _operand(x: Any) -> tuple[z3.ExprRef | int, IntType | None] | None:
        """(term or plain number, its C type or None for a plain number)."""
        if isinstance(x, Sym):
            return x._word()
        if x.__class__ is bool:
            return int(x), cint.S32
        if isinstance(x, int):
            t = getattr(x, "ctype", None)
            return (z3.IntVal(int(x)) if t is not None else int(x)), t
        return None

    @staticmethod
    def _bv(x: z3.ExprRef | int, t: IntType, op: str, typed: bool) -> z3.BitVecRef:
        if isinstance(x, int):
            return z3.BitVecVal(cint.constant(x, t, op) if not typed else t.wrap(x), t.bits)
        if z3.is_bv(x):
            return x
        return z3.Int2BV(x, t.bits)

    @staticmethod
    def _from_bv(r: z3.BitVecRef, t: IntType) -> "Sym":
        return Sym(z3.BV2Int(r, is_signed=t.signed), t)

    def _bit(self, other: Any, op: str, swap: bool = False) -> "Sym":
        got = self._operand(other)
        if got is None:
            return NotImplemented
        mine = self._word()
        (a, ta), (b, tb) = (got, mine) if swap else (mine, got)
        t = cint.binary_type(ta, tb, op)
        x, y = self._bv(a, t, op, ta is not None), self._bv(b, t, op, tb is not None)
        r = x & y if op == "&" else x | y if op == "|" else x ^ y
        return self._from_bv(r, t)

    def __and__(self, o): return self._bit(o, "&")
    def __rand__(self, o): return self._bit(o, "&", True)
    def __or__(self, o): return self._bit(o, "|")
    def __ror__(self, o): return self._bit(o, "|", True)
    def __xor__(self, o): return self._bit(o, "^")
    def __rxor__(self, o): return self._bit(o, "^", True)

    def __invert__(self):
        a, ta = self._word()
        t = cint.promote(ta, "the operand of `~`")
        return self._from_bv(~self._bv(a, t, "~", True), t)

    @staticmethod
    def _shift(a: Any, ta: IntType | None, k: Any, op: str) -> "Sym":
        t = cint.shift_type(ta, op)
        line = cint.caller_line(3)
        if isinstance(k, Sym):
            kz = k._word()[0]
            cint.UB_LOG.append((z3.Or(kz < 0, kz >= t.bits), line))
            n = z3.Int2BV(kz, t.bits)
        else:
            kv = int(k)
            if not 0 <= kv < t.bits:
                cint.UB_LOG.append((z3.BoolVal(True), line))
                kv = 0
            n = z3.BitVecVal(kv, t.bits)
        x = Sym._bv(a, t, op, True)
        if op == "<<":
            r = x << n
        else:
            r = x >> n if t.signed else z3.LShR(x, n)
        return Sym._from_bv(r, t)

    def __lshift__(self, k):
        if Sym._operand(k) is None:
            return NotImplemented
        return Sym._shift(*self._word(), k, "<<")

    def __rshift__(self, k):
        if Sym._operand(k) is None:
            return NotImplemented
        return Sym._shift(*self._word(), k, ">>")

    def __rlshift__(self, o):
        got = Sym._operand(o)
        if got is None:
            return NotImplemented
        return Sym._shift(got[0], got[1], self, "<<")

    def __rrshift__(self, o):
        got = Sym._operand(o)
        if got is None:
            return NotImplemented
        return Sym._shift(got[0], got[1], self, ">>")

    def cast(self, t: IntType) -> "Sym":
        """``(t)x``: the value modulo 2^width, read with t's signedness."""
        a, _ = self._word()
        return self._from_bv(self._bv(a, t, "cast", True), t)

    def __truediv__(self, o): raise cint.WordRuleError(cint.TRUEDIV)
    def __rtruediv__(self, o): raise cint.WordRuleError(cint.TRUEDIV)

    # -- arithmetic ----------------------------------------------------------
    def __add__(self, o): return self._bin(o, lambda a, b: a + b)
    def __radd__(self, o): return self._rbin(o, lambda a, b: a + b)
    def __sub__(self, o): return self._bin(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._rbin(o, lambda a, b: a - b)
    def __mul__(self, o): return self._bin(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._rbin(o, lambda a, b: a * b)
    def __neg__(self): return Sym(-self._num(), self.type)
    def __pos__(self): return self

    def __floordiv__(self, o):
        if self.is_bv:
            return self._bin(o, (lambda a, b: z3.UDiv(a, b)) if self.unsigned else (lambda a, b: a / b))
        # SMT-LIB integer div is Euclidean: Python's // for a positive divisor.
        return self._bin(o, lambda a, b: a / b)

    def __rfloordiv__(self, o):
        if self.is_bv:
            return self._rbin(o, (lambda a, b: z3.UDiv(a, b)) if self.unsigned else (lambda a, b: a / b))
        return self._rbin(o, lambda a, b: a / b)

    def __rmod__(self, o):
        if self.is_bv:
            return self._rbin(o, (lambda a, b: z3.URem(a, b)) if self.unsigned else (lambda a, b: z3.SRem(a, b)))
        return self._rbin(o, lambda a, b: a % b)

    def __mod__(self, o):
        if self.is_bv:
            return self._bin(o, (lambda a, b: z3.URem(a, b)) if self.unsigned else (lambda a, b: z3.SRem(a, b)))
        return self._bin(o, lambda a, b: a % b)

    def __abs__(self):
        a = self._num()
        zero = z3.BitVecVal(0, a.size()) if self.is_bv else z3.IntVal(0)
        return Sym(z3.If(a >= zero, a, -a), self.type)

    # -- comparisons (signedness from the type) ---------------------------------
    def _cmp(self, o, signed_op, unsigned_op):
        if self.is_bv and self.unsigned:
            return self._bin(o, unsigned_op)._as_bool()
        return self._bin(o, signed_op)._as_bool()

    def _as_bool(self) -> "Sym":
        return Sym(self.z, None)

    def __lt__(self, o): return self._cmp(o, lambda a, b: a < b, z3.ULT)
    def __le__(self, o): return self._cmp(o, lambda a, b: a <= b, z3.ULE)
    def __gt__(self, o): return self._cmp(o, lambda a, b: a > b, z3.UGT)
    def __ge__(self, o): return self._cmp(o, lambda a, b: a >= b, z3.UGE)

    def __eq__(self, o):  # type: ignore[override]
        oz = self._coerce(o)
        if oz is NotImplemented:
            return NotImplemented
        if z3.is_bool(self.z) != z3.is_bool(oz):
            a, b = self._num(), (z3.If(oz, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(oz) else oz)
            return Sym(a == b)
        return Sym(self.z == oz)

    def __ne__(self, o):  # type: ignore[override]
        r = self.__eq__(o)
        return r if r is NotImplemented else Sym(z3.Not(r.z))

    def __hash__(self) -> int:
        # Identity: a term may key a per-CPU update ({cpu: value}); == builds a term.
        return id(self)

    # -- what cannot be decided -------------------------------------------------
    def __bool__(self):
        raise SymbolicBranch()

    def __index__(self):
        raise SymbolicIndex()

    def __int__(self):
        raise SymbolicBranch()

    def __repr__(self) -> str:
        return f"Sym({self.z})"


def to_z3(v: Any) -> z3.ExprRef:
    """A spec value (int, bool or Sym) as a Z3 term."""
    if isinstance(v, Sym):
        return v.z
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if isinstance(v, int):
        return z3.IntVal(v)
    if isinstance(v, z3.ExprRef):
        return v
    raise TypeError(f"not a spec value: {v!r}")


def to_z3_bool(v: Any) -> z3.BoolRef:
    """A value as a Z3 boolean (a number is true when not 0, as in C)."""
    z = to_z3(v)
    return z if z3.is_bool(z) else z != 0


def to_z3_num(v: Any) -> z3.ExprRef:
    """A value as a Z3 integer (a boolean is 1 or 0, as in C)."""
    z = to_z3(v)
    return z3.If(z, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(z) else z
