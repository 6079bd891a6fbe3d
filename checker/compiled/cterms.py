# SPDX-License-Identifier: GPL-2.0-only
"""Z3 terms as C expressions, with Python's integer semantics.

A printer, not an interpreter: each operator the spec vocabulary produces
has one C form. Python's ints do not overflow and C's do, so every
arithmetic operation goes through a checked helper of the runtime
(``cc_add`` ... on ``int64_t``; ``cw_add`` ... on ``__int128`` for a term
that holds a constant beyond 64 bits, such as a 64-bit word's wrap-around
modulus). A helper that would overflow sets the runtime's error flag and
the search stops with "out of range": the point then runs on the
interpreter, never on a wrapped value. ``//`` and ``%`` are Python's floor
division and non-negative-for-positive-divisor remainder (C truncates);
only a constant divisor other than zero is printed, since Python evaluates
both arms of ``If`` and a division by a state value could raise where C's
conditional would not evaluate it.
"""
from __future__ import annotations

import z3

from checker.export.terms import Kids, MemoPrinter, ast_id, op_kind, shared

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
INT128_MIN = -(1 << 127)
INT128_MAX = (1 << 127) - 1


class Untranslatable(Exception):
    """A term with no C form; the message names the construct."""


_CMP = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}
_ARITH = {z3.Z3_OP_ADD: "add", z3.Z3_OP_SUB: "sub", z3.Z3_OP_MUL: "mul"}
_BVBIN = {z3.Z3_OP_BAND: "&", z3.Z3_OP_BOR: "|", z3.Z3_OP_BXOR: "^"}
_BVSHIFT = {z3.Z3_OP_BSHL: "cc_shl", z3.Z3_OP_BLSHR: "cc_lshr", z3.Z3_OP_BASHR: "cc_ashr"}
_BVCMP = {z3.Z3_OP_SLT: "<", z3.Z3_OP_SLEQ: "<=", z3.Z3_OP_SGT: ">", z3.Z3_OP_SGEQ: ">="}


def is_wide(terms: list[z3.ExprRef], kids: Kids) -> bool:
    """Whether a constant in ``terms`` lies beyond int64: then they are computed in __int128. Each
    subterm's answer is kept in ``kids.wide`` (a sweep's steps share most of their subterms)."""
    memo = kids.wide
    todo = [(t, False) for t in terms]
    while todo:
        t, below_done = todo.pop()
        key = ast_id(t)
        if key in memo:
            continue
        below = kids(t)
        if not below_done:
            if op_kind(t) == z3.Z3_OP_ANUM and z3.is_int_value(t):
                v = t.as_long()
                if not INT128_MIN <= v <= INT128_MAX:
                    raise Untranslatable(f"the constant {v} (beyond 128 bits)")
                memo[key] = not INT64_MIN <= v <= INT64_MAX
                continue
            todo.append((t, True))
            todo.extend((c, False) for c in below if ast_id(c) not in memo)
        else:
            memo[key] = any(memo[ast_id(c)] for c in below)
    return any(memo[ast_id(t)] for t in terms)


class CPrinter(MemoPrinter):
    """Prints terms over a slot vector ``s`` (``slots``: symbol name -> C lvalue)."""

    def __init__(self, slots: dict[str, str], kids: Kids, wide: bool = False):
        super().__init__(kids)
        self.slots = slots
        self.wide = wide
        self.p = "cw_" if wide else "cc_"

    def hoist(self, terms: list[z3.ExprRef], prefix: str) -> list[str]:
        """Declarations of temporaries for the compound subterms used more than once (else a term
        nesting ``If(err == 0, x, err)`` k times would print 2^k long)."""
        ctype = "__int128" if self.wide else "int64_t"
        out = []
        for i, sub in enumerate(shared(terms, self.kids)):
            name = f"{prefix}{i}"
            out.append(f"const {'uint64_t' if z3.is_bv(sub) else ctype} {name} = {self(sub)};")
            self.aliases[ast_id(sub)] = name
        return out

    def _num(self, v: int) -> str:
        if self.wide:
            if INT64_MIN <= v <= INT64_MAX:
                return f"((__int128)INT64_C({v}))" if v != INT64_MIN else "((__int128)INT64_MIN)"
            hi, lo = v >> 64, v & ((1 << 64) - 1)
            return f"((((__int128)INT64_C({hi})) << 64) | (__int128)UINT64_C({lo}))"
        if not INT64_MIN <= v <= INT64_MAX:
            raise Untranslatable(f"the constant {v} (beyond 64 bits)")
        return "INT64_MIN" if v == INT64_MIN else f"INT64_C({v})"

    def _node(self, t: z3.ExprRef) -> str:
        k = op_kind(t)
        if k == z3.Z3_OP_ANUM and z3.is_int_value(t):
            return self._num(t.as_long())
        if k == z3.Z3_OP_TRUE:
            return "1"
        if k == z3.Z3_OP_FALSE:
            return "0"
        kids = self.kids(t)
        p = self
        if k == z3.Z3_OP_UNINTERPRETED and not kids:
            name = t.decl().name()
            if name not in self.slots:
                raise Untranslatable(f"the symbol {name!r}, not a state slot")
            return self.slots[name]
        if k in _CMP:
            return f"({p(kids[0])} {_CMP[k]} {p(kids[1])})"
        if k in _ARITH:
            op = self.p + _ARITH[k]
            out = p(kids[0])
            for c in kids[1:]:
                out = f"{op}({out}, {p(c)})"
            return out
        if k == z3.Z3_OP_UMINUS:
            return f"{self.p}neg({p(kids[0])})"
        if k == z3.Z3_OP_AND:
            return "(" + " && ".join(p(c) for c in kids) + ")" if kids else "1"
        if k == z3.Z3_OP_OR:
            return "(" + " || ".join(p(c) for c in kids) + ")" if kids else "0"
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_IFF):
            return f"({p(kids[0])} == {p(kids[1])})"
        if k == z3.Z3_OP_DISTINCT:
            if len(kids) != 2:
                raise Untranslatable("Distinct of more than two terms")
            return f"({p(kids[0])} != {p(kids[1])})"
        if k == z3.Z3_OP_NOT:
            return f"(!{p(kids[0])})"
        if k == z3.Z3_OP_IMPLIES:
            return f"((!{p(kids[0])}) || {p(kids[1])})"
        if k == z3.Z3_OP_XOR:
            return f"((!{p(kids[0])}) != (!{p(kids[1])}))"
        if k == z3.Z3_OP_ITE:
            return f"({p(kids[0])} ? {p(kids[1])} : {p(kids[2])})"
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
            a, b = kids
            if not z3.is_int_value(b) or b.as_long() == 0:
                what = "division" if k == z3.Z3_OP_IDIV else "remainder"
                raise Untranslatable(f"{what} by {_short(b)}, not a constant other than 0")
            # Python's // and % made these terms: print Python's floor semantics (Z3's own div and
            # mod are Euclidean, which differ from Python's for a negative divisor)
            fn = "fdiv" if k == z3.Z3_OP_IDIV else "fmod"
            return f"{self.p}{fn}({p(a)}, {self._num(b.as_long())})"
        if z3.is_bv(t) or k == z3.Z3_OP_BV2INT or k in _BVCMP:
            return self._bv(t, k, kids)
        raise Untranslatable(f"the operation {t.decl().name()!r} (in {_short(t)})")

    def _bv(self, t: z3.ExprRef, k: int, kids: list) -> str:
        """A bit-vector term (the operators checker.cint lowers C's words to): a uint64_t holding the
        value modulo 2^n; bv2int reads it unsigned, as Z3 does."""
        p = self
        if k == z3.Z3_OP_BV2INT:
            a = kids[0]
            if self.wide:
                return f"((__int128){p(a)})"
            return f"cc_u2i({p(a)})" if a.size() == 64 else f"((int64_t){p(a)})"
        if k in _BVCMP:
            n = kids[0].size()
            return f"(cc_sx({p(kids[0])}, {n}) {_BVCMP[k]} cc_sx({p(kids[1])}, {n}))"
        n = t.size()
        if n > 64:
            raise Untranslatable(f"a {n}-bit word (the compiled engine holds words of up to 64 bits)")
        if z3.is_bv_value(t):
            return f"UINT64_C({t.as_long()})"
        if k == z3.Z3_OP_INT2BV:
            return f"((uint64_t){p(kids[0])} & CC_MASK({n}))"
        if k in _BVBIN:
            return "(" + f" {_BVBIN[k]} ".join(p(c) for c in kids) + ")"
        if k == z3.Z3_OP_BNOT:
            return f"(~{p(kids[0])} & CC_MASK({n}))"
        if k in _BVSHIFT:
            return f"{_BVSHIFT[k]}({p(kids[0])}, {p(kids[1])}, {n})"
        if k == z3.Z3_OP_ITE:
            return f"({p(kids[0])} ? {p(kids[1])} : {p(kids[2])})"
        raise Untranslatable(f"the bit-vector operation {t.decl().name()!r} (in {_short(t)})")


def _short(t: z3.ExprRef) -> str:
    s = str(t).replace("\n", " ")
    return s if len(s) <= 80 else s[:77] + "..."
