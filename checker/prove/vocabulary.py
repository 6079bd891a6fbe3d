# SPDX-License-Identifier: GPL-2.0-only
"""Z3 formulas over a state's slots, written in the spec's own words.

An invariant Spacer found is a formula over ``Var(i)``, slot i of the state.
Printed here as an ``@invariant`` body: ``s.local[1]``, ``ADD.fold`` for an
enum value, ``NOBODY`` for no CPU, ``And``/``Or``/``Implies``/``If`` as the
spec language writes them, one top-level conjunct per line.
"""
from __future__ import annotations

import sys
from typing import Any

import z3

from checker.types import CpuIdType, Enum, NOBODY


class Vocabulary:
    """How to print slot ``i`` and a number compared with it."""

    def __init__(self, names: list[str], types: list[Any], module: str | type | None):
        self.names = names
        self.types = types
        # The name the spec's module gives each enum (``ADD``), so a printed line can be pasted back; for a
        # spec class, its own module's name first, then those of the modules of the classes it extends.
        modules = ([c.__module__ for c in module.__mro__] if isinstance(module, type) else [module or ""])
        self.enums: dict[int, str] = {}
        for m in reversed(modules):
            mod = sys.modules.get(m)
            self.enums.update({id(v): k for k, v in (vars(mod).items() if mod else ()) if isinstance(v, Enum)})

    def slot(self, i: int) -> str:
        return f"s.{self.names[i]}"

    def value(self, i: int, v: int) -> str:
        """Number ``v`` as a value of slot ``i``'s type."""
        t = self.types[i]
        if isinstance(t, Enum) and 0 <= v < len(t.names):
            owner = self.enums.get(id(t))
            return f"{owner}.{t.names[v]}" if owner else repr(t.names[v])
        if isinstance(t, CpuIdType) and v == NOBODY:
            return "NOBODY"
        return str(v)

    def conjuncts(self, f: z3.ExprRef) -> list[str]:
        """The top-level conjuncts of ``f``, each as one line of Python."""
        parts = f.children() if z3.is_and(f) else [f]
        printer = _Printer(self)  # one for all: thousands of conjuncts share their comparisons
        return [printer.expr(p, 0) for p in parts]

    def text(self, e: z3.ExprRef) -> str:
        return _Printer(self).expr(e, 0)


#: Binding strength, loosest first, so that parentheses appear only where needed.
_CMP, _ADD, _MUL, _UNARY, _ATOM = 1, 2, 3, 4, 5
_OPS = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">", z3.Z3_OP_EQ: "==",
        z3.Z3_OP_DISTINCT: "!="}
_NEGATED = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}


class _Printer:
    def __init__(self, vocab: Vocabulary):
        self.v = vocab
        # A term's text and binding strength, by its AST id; the term is kept too, so that its id is not
        # given to another while the printer lives.
        self.done: dict[int, tuple[str, int, z3.ExprRef]] = {}

    def expr(self, e: z3.ExprRef, outer: int) -> str:
        key = e.get_id()
        got = self.done.get(key)
        if got is None:
            got = self.done[key] = (*self._expr(e), e)
        text, prec, _ = got
        return f"({text})" if prec < outer else text

    def _slot_of(self, e: z3.ExprRef) -> int | None:
        return z3.get_var_index(e) if z3.is_var(e) else None

    def _cmp(self, op: str, a: z3.ExprRef, b: z3.ExprRef) -> tuple[str, int]:
        # A slot compared with a number: the number in the slot's type (enum name, NOBODY).
        ia = self._slot_of(a)
        if ia is not None and z3.is_int_value(b) and not _plain(self.v.types[ia]):
            return f"{self.v.slot(ia)} {op} {self.v.value(ia, b.as_long())}", _CMP
        if z3.is_int_value(a) and not z3.is_int_value(b):
            return self._cmp(_MIRROR[op], b, a)
        if z3.is_int_value(b) and op in ("<", ">"):  # integers: x <= 1 reads better than x < 2
            k = b.as_long()
            return f"{self.expr(a, _ADD)} {op}= {k - 1 if op == '<' else k + 1}", _CMP
        return f"{self.expr(a, _ADD)} {op} {self.expr(b, _ADD)}", _CMP

    def _expr(self, e: z3.ExprRef) -> tuple[str, int]:
        if z3.is_var(e):
            return self.v.slot(z3.get_var_index(e)), _ATOM
        if z3.is_int_value(e):
            n = e.as_long()
            return str(n), (_ATOM if n >= 0 else _UNARY)
        if z3.is_true(e) or z3.is_false(e):
            return ("True" if z3.is_true(e) else "False"), _ATOM
        k = e.decl().kind() if z3.is_app(e) else None
        ch = e.children() if z3.is_app(e) else []
        if k == z3.Z3_OP_AND:
            return "And(" + ", ".join(self.expr(c, 0) for c in ch) + ")", _ATOM
        if k == z3.Z3_OP_OR:
            return "Or(" + ", ".join(self.expr(c, 0) for c in ch) + ")", _ATOM
        if k == z3.Z3_OP_IMPLIES:
            return f"Implies({self.expr(ch[0], 0)}, {self.expr(ch[1], 0)})", _ATOM
        if k == z3.Z3_OP_NOT:
            inner = ch[0]
            ik = inner.decl().kind() if z3.is_app(inner) else None
            if ik in _OPS and len(inner.children()) == 2:
                return self._cmp(_NEGATED[_OPS[ik]], *inner.children())
            return f"Not({self.expr(inner, 0)})", _ATOM
        if k in _OPS and len(ch) == 2:
            if k == z3.Z3_OP_EQ and z3.is_bool(ch[0]):
                return f"{self.expr(ch[0], _ADD)} == {self.expr(ch[1], _ADD)}", _CMP
            return self._cmp(_OPS[k], ch[0], ch[1])
        if k == z3.Z3_OP_ITE:
            return f"If({', '.join(self.expr(c, 0) for c in ch)})", _ATOM
        if k == z3.Z3_OP_ADD:
            out = self.expr(ch[0], _ADD)
            for c in ch[1:]:
                neg = _negated(c)
                out += f" - {self.expr(neg, _MUL)}" if neg is not None else f" + {self.expr(c, _MUL)}"
            return out, _ADD
        if k == z3.Z3_OP_SUB:
            return " - ".join([self.expr(ch[0], _ADD)] + [self.expr(c, _MUL) for c in ch[1:]]), _ADD
        if k == z3.Z3_OP_UMINUS:
            return f"-{self.expr(ch[0], _UNARY)}", _UNARY
        if k == z3.Z3_OP_MUL:
            if len(ch) == 2 and z3.is_int_value(ch[0]) and ch[0].as_long() == -1:
                return f"-{self.expr(ch[1], _UNARY)}", _UNARY
            return " * ".join(self.expr(c, _UNARY) for c in ch), _MUL
        if k in (z3.Z3_OP_MOD, z3.Z3_OP_IDIV):
            op = "%" if k == z3.Z3_OP_MOD else "//"
            return f"{self.expr(ch[0], _UNARY)} {op} {self.expr(ch[1], _UNARY)}", _MUL
        return str(e), _ATOM


_MIRROR = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "==", "!=": "!="}


def _plain(t: Any) -> bool:
    """A type whose values print as numbers (not an enum, not a CPU id)."""
    return not isinstance(t, (Enum, CpuIdType))


def _negated(e: z3.ExprRef) -> z3.ExprRef | None:
    """``x`` when ``e`` is ``-1 * x`` or ``-x``, a positive number when ``e`` is a negative one."""
    if z3.is_int_value(e) and e.as_long() < 0:
        return z3.IntVal(-e.as_long())
    if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_MUL and len(e.children()) == 2:
        a, b = e.children()
        if z3.is_int_value(a) and a.as_long() < 0:
            return b if a.as_long() == -1 else z3.IntVal(-a.as_long()) * b
    if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_UMINUS:
        return e.children()[0]
    return None

