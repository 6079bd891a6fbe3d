# SPDX-License-Identifier: GPL-2.0-only
"""Symbolic states for the Z3 backend, built from the same spec declarations.

Two shapes:
- *per-N*: the CPU count is a number; every slot of every per-CPU variable
  is its own Z3 integer (the state class of the concrete model holds them).
- *any-N*: the CPU count is a Z3 integer. A per-CPU variable is a Z3 array
  indexed by CPU id (``SymArray``), carrying a ghost for its sum, so that
  ``Sum(s.local)`` is a term; the CPUs of the role are a ``SymRole``.
  Spec code that iterates over all CPUs cannot be encoded this way and
  raises ``NotParametric``; the backend then falls back to per-N proofs.
"""
from __future__ import annotations

from typing import Any

import z3

from checker.symbolic.term import Sym, to_z3_num
from checker.types import IntType


class NotParametric(Exception):
    """Spec code that needs a concrete CPU count (it iterates over CPUs)."""


class SymArray:
    """A per-CPU variable for any number of CPUs: a Z3 array plus its sum."""

    __slots__ = ("arr", "sum", "type", "name")

    def __init__(self, arr: z3.ArrayRef, total: z3.ArithRef, type: IntType, name: str):
        self.arr = arr
        self.sum = total
        self.type = type
        self.name = name

    def __getitem__(self, i: Any) -> Sym:
        return Sym(z3.Select(self.arr, to_z3_num(i)), self.type)

    def select(self, i: Any) -> Sym:
        return self[i]

    def total(self) -> Sym:
        return Sym(self.sum, self.type)

    def __iter__(self):
        raise NotParametric(f"iterates over every CPU's {self.name}")

    def __len__(self) -> int:
        raise NotParametric(f"takes the length of {self.name}")


class SymRole:
    """The CPU ids of a role whose size is symbolic: ``range(base, base + size)``."""

    __slots__ = ("name", "size")

    def __init__(self, name: str, size: z3.ArithRef):
        self.name = name
        self.size = size

    def __iter__(self):
        raise NotParametric(f"iterates over the CPUs of role {self.name!r}")

    def __len__(self) -> int:
        raise NotParametric(f"takes the number of CPUs of role {self.name!r}")

    def __getitem__(self, k: int) -> Any:
        raise NotParametric(f"picks CPU {k} of role {self.name!r}")

    def contains(self, c: Any) -> z3.BoolRef:
        c = to_z3_num(c)
        return z3.And(c >= 0, c < self.size)


class SymParams:
    """Parameter values some of which are Z3 terms; attribute access like Params."""

    def __init__(self, values: dict[str, Any], roles: dict[str, Any], shown: dict[str, Any]):
        self._values = values
        self._roles = roles
        self.shown = shown  # what the report prints for each parameter

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._values:
            return self._values[name]
        if name in self._roles:
            return self._roles[name]
        raise AttributeError(f"no parameter or role {name!r}")

    def as_dict(self) -> dict[str, Any]:
        return dict(self.shown)

    def roles(self) -> dict[str, Any]:
        return dict(self._roles)

    def __repr__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.shown.items())
