# SPDX-License-Identifier: GPL-2.0-only
"""Value types of spec variables.

Integers carry their width and signedness, so the explorer can report or
wrap an overflow and the Z3 backend can choose integers or bit-vectors
(and the signed or unsigned comparison) from the declaration alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _no_cast(t: Any, v: Any) -> Any:
    raise TypeError(f"{t!r}(...) casts with checker.cint, which is not imported")


#: C's cast: ``checker.cint.cast``, put here when checker.cint is imported (the package checker imports it).
#: The words' arithmetic sits above the types it is typed by, so this module does not import it.
_cast = _no_cast


@dataclass(frozen=True)
class IntType:
    """An integer type: unbounded (``bits is None``) or a fixed-width word."""

    name: str
    bits: int | None = None
    signed: bool = True

    @property
    def lo(self) -> int | None:
        if self.bits is None:
            return None
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int | None:
        if self.bits is None:
            return None
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def contains(self, v: int) -> bool:
        return self.bits is None or self.lo <= v <= self.hi

    def wrap(self, v: int) -> int:
        """Two's-complement wrap-around, as the hardware does it."""
        if self.bits is None:
            return v
        v &= (1 << self.bits) - 1
        if self.signed and v > self.hi:
            v -= 1 << self.bits
        return v

    def show(self, v: int) -> str:
        return str(v)

    def __call__(self, v: Any) -> Any:
        """``U64(x)``: C's cast ``(u64)x``, a word of this type (see checker.cint) on every backend."""
        return _cast(self, v)

    def __repr__(self) -> str:
        return self.name


Int = IntType("int")
S32 = IntType("s32", 32, True)
S64 = IntType("s64", 64, True)
U32 = IntType("u32", 32, False)
U64 = IntType("u64", 64, False)
#: C's ``long`` and ``unsigned long`` (and a pointer's width): 64 bits, or 32 in a spec's
#: ``Bits`` parameter's 32-bit points (checker.kernel.tearing).
LONG = IntType("long", 64, True)
ULONG = IntType("unsigned long", 64, False)


@dataclass(frozen=True)
class BoolType(IntType):
    """0 or 1; comparisons in effects may store Python bools, kept as ints."""

    def show(self, v: int) -> str:
        return "true" if v else "false"


Bool = BoolType("bool", None, False)

#: The value of a CpuId variable that holds no CPU (a free lock's owner).
NOBODY = -1


@dataclass(frozen=True)
class CpuIdType(IntType):
    """A CPU id (global numbering) or NOBODY; permuted by symmetry reduction."""

    def show(self, v: int) -> str:
        return "-" if v == NOBODY else f"cpu{v}"


CpuId = CpuIdType("cpu_id", None, True)


class Enum(IntType):
    """Named program-counter values, stored as small ints.

    ``PC = Enum("idle", "acquire")`` gives ``PC.idle == 0``; traces show names.
    """

    def __init__(self, *names: str, name: str = "enum"):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "bits", None)
        object.__setattr__(self, "signed", False)
        object.__setattr__(self, "names", tuple(names))
        for i, n in enumerate(names):
            if not n.isidentifier():
                raise ValueError(f"Enum value {n!r} is not an identifier")
            object.__setattr__(self, n, i)

    def contains(self, v: int) -> bool:
        return 0 <= v < len(self.names)

    def show(self, v: int) -> str:
        return self.names[v] if 0 <= v < len(self.names) else f"?{v}"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"Enum{self.names}"
