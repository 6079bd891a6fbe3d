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
        return Sym(op(a, b), self.type)

    def _rbin(self, other: Any, op) -> "Sym":
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        b = z3.If(o, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(o) else o
        return Sym(op(b, self._num()), self.type)

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
    z = to_z3(v)
    return z if z3.is_bool(z) else z != 0


def to_z3_num(v: Any) -> z3.ExprRef:
    z = to_z3(v)
    return z3.If(z, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(z) else z
