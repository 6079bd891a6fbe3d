# SPDX-License-Identifier: GPL-2.0-only
"""Z3 terms as Promela expressions.

The terms come from running a spec's own actions and properties on
symbols (``checker.prove.encoding.PerN``), so this is a printer, not a
second interpreter: each Z3 operator the spec vocabulary produces has one
Promela form. Promela's ``int`` is 32 bits and its ``/`` and ``%`` are C's
(truncating), so integer division and remainder by a positive constant are
printed as floor division and a non-negative remainder, as Python and Z3
compute them; division by a state value is refused.
"""
from __future__ import annotations

from typing import Callable

import z3

INT_MIN = -(1 << 31)
INT_MAX = (1 << 31) - 1


class Untranslatable(Exception):
    """A term with no Promela form; the message names the construct."""


_INFIX = {
    z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">",
    z3.Z3_OP_ADD: "+", z3.Z3_OP_SUB: "-", z3.Z3_OP_MUL: "*",
    z3.Z3_OP_AND: "&&", z3.Z3_OP_OR: "||",
}
#: Comparisons, with the Python test that decides one whose constant side lies beyond int.
_COMPARE = {
    z3.Z3_OP_LE: lambda a, b: a <= b, z3.Z3_OP_LT: lambda a, b: a < b,
    z3.Z3_OP_GE: lambda a, b: a >= b, z3.Z3_OP_GT: lambda a, b: a > b,
}


def ast_id(t: z3.ExprRef) -> int:
    """``t.get_id()``, kept on the Python object: each is a ctypes call, and the printers ask the same
    objects (those ``Kids`` hands out) millions of times over a sweep."""
    try:
        return t._cc_id
    except AttributeError:
        t._cc_id = i = t.get_id()
        return i


def op_kind(t: z3.ExprRef) -> int:
    """``t.decl().kind()``, kept on the Python object as ``ast_id`` is: ``Z3_OP_ANUM`` for a number,
    ``Z3_OP_TRUE`` and ``Z3_OP_FALSE`` for the constants, the operator otherwise."""
    try:
        return t._cc_kind
    except AttributeError:
        t._cc_kind = k = t.decl().kind()
        return k


class Kids:
    """Each term's children, computed once: z3's ``children()`` is slow, and the exporter walks the
    same shared subterms for every step (the term is kept with them, so its id stays its own)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[z3.ExprRef, list[z3.ExprRef]]] = {}
        #: Per AST id, whether a constant below it lies beyond int64 (``checker.compiled.cterms.is_wide``).
        self.wide: dict[int, bool] = {}

    def __call__(self, t: z3.ExprRef) -> list[z3.ExprRef]:
        key = ast_id(t)
        hit = self._known.get(key)
        if hit is None:
            hit = self._known[key] = (t, t.children())
        return hit[1]


class MemoPrinter:
    """What every term printer shares (this one and the compiled engine's C printer): each subterm
    printed once, keyed by AST id with the term kept beside its text (so that its id cannot be reused),
    and a subterm already held in a temporary (``aliases``: AST id -> name) printed as that name."""

    def __init__(self, kids: Kids | None = None, aliases: dict[int, str] | None = None):
        self.kids = kids or Kids()
        self.aliases = aliases if aliases is not None else {}
        self._memo: dict[int, tuple[z3.ExprRef, str]] = {}

    def __call__(self, t: z3.ExprRef) -> str:
        key = ast_id(t)
        alias = self.aliases.get(key)
        if alias is not None:
            return alias
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = (t, self._node(t))
        return hit[1]

    def _node(self, t: z3.ExprRef) -> str:
        raise NotImplementedError


class Printer(MemoPrinter):
    """Prints terms over the symbols of one symbolic state.

    ``names`` maps a symbol's Z3 name (``local[1]``) to the Promela
    variable that holds it (``local_[1]``: ``local`` is a Promela keyword).
    """

    def __init__(self, names: dict[str, str], aliases: dict[int, str] | None = None, kids: Kids | None = None):
        super().__init__(kids, aliases)
        self.names = names

    def _node(self, t: z3.ExprRef) -> str:
        if z3.is_int_value(t):
            return _number(t.as_long())
        if z3.is_true(t):
            return "true"
        if z3.is_false(t):
            return "false"
        k = op_kind(t)
        kids = self.kids(t)
        p: Callable[[z3.ExprRef], str] = self
        if k == z3.Z3_OP_UNINTERPRETED and not kids:
            name = t.decl().name()
            if name not in self.names:
                raise Untranslatable(f"the symbol {name!r} is not a state variable")
            return self.names[name]
        if k in _COMPARE:
            beyond = self._beyond_int(k, kids)
            if beyond is not None:
                return beyond
        if k in _INFIX:
            return "(" + f" {_INFIX[k]} ".join(p(c) for c in kids) + ")"
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_IFF):
            return f"({p(kids[0])} == {p(kids[1])})"
        if k == z3.Z3_OP_DISTINCT and len(kids) == 2:
            return f"({p(kids[0])} != {p(kids[1])})"
        if k == z3.Z3_OP_NOT:
            return f"(!{p(kids[0])})"
        if k == z3.Z3_OP_IMPLIES:
            return f"((!{p(kids[0])}) || {p(kids[1])})"
        if k == z3.Z3_OP_UMINUS:
            return f"(-{p(kids[0])})"
        if k == z3.Z3_OP_ITE:
            signed = _signed_bv2int(kids)
            if signed is not None:
                return self._signed(signed)
            return f"({p(kids[0])} -> {p(kids[1])} : {p(kids[2])})"
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
            return self._division(k, kids)
        if k in _BV_OPS or z3.is_bv(t):
            return self._bitvector(t, k, kids)
        raise Untranslatable(f"the operation {t.decl().name()!r} (in {_short(t)})")

    # -- C's bit operators (checker.cint's lowering) ------------------------------------------------------
    # A bit-vector of width n <= 32 is printed as a Promela int: all 32 bits for n = 32 (int is
    # 32-bit two's complement, and SPIN compiles & | ^ ~ << >> to C's on int, >> arithmetic),
    # zero-extended for n < 32 (the mask after ~ and << keeps the bits above n clear). Wider words,
    # and an unsigned 32-bit reading, hold values beyond int: refused.
    def _bitvector(self, t: z3.ExprRef, k: int, kids: list) -> str:
        p = self
        if k == z3.Z3_OP_BV2INT:
            n = kids[0].size()
            if n >= 32:
                raise Untranslatable(f"an unsigned {n}-bit word (its values reach beyond Promela's 32-bit int)")
            return p(kids[0])
        n = t.size()
        if n > 32:
            raise Untranslatable(f"a {n}-bit word (beyond Promela's 32-bit int)")
        mask = _number((1 << n) - 1) if n < 32 else None

        def masked(x: str) -> str:
            return f"({x} & {mask})" if mask else x

        if z3.is_bv_value(t):
            return _number(t.as_signed_long() if n == 32 else t.as_long())
        if k == z3.Z3_OP_INT2BV:
            return masked(p(kids[0]))
        if k in (z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
            return "(" + f" {_BV_OPS[k]} ".join(p(c) for c in kids) + ")"
        if k == z3.Z3_OP_BNOT:
            return masked(f"(~{p(kids[0])})")
        if k == z3.Z3_OP_BSHL:
            return masked(f"({p(kids[0])} << {p(kids[1])})")
        if k == z3.Z3_OP_BLSHR:
            if n == 32:
                raise Untranslatable("a logical right shift of a 32-bit word (an unsigned 32-bit value is "
                                     "beyond Promela's int)")
            return f"({p(kids[0])} >> {p(kids[1])})"
        if k == z3.Z3_OP_BASHR:
            x = p(kids[0]) if n == 32 else self._sign_extend(p(kids[0]), n)
            return masked(f"({x} >> {p(kids[1])})")
        raise Untranslatable(f"the bit-vector operation {t.decl().name()!r} (in {_short(t)})")

    @staticmethod
    def _sign_extend(x: str, n: int) -> str:
        sign = _number(1 << (n - 1))
        return f"(({x} ^ {sign}) - {sign})"

    def _signed(self, v: z3.ExprRef) -> str:
        """BV2Int(v, is_signed=True), which z3 builds as If(v < 0, bv2int(v) - 2^n, bv2int(v))."""
        n = v.size()
        if n > 32:
            raise Untranslatable(f"a {n}-bit word (beyond Promela's 32-bit int)")
        x = self(v)
        return x if n == 32 else self._sign_extend(x, n)

    def _beyond_int(self, k: int, kids: list) -> str | None:
        """A comparison with a constant beyond Promela's int (an s64's range in ``no_overflow``) has
        the same answer for every int value: print that answer."""
        a, b = kids
        for const, other, flip in ((a, b, False), (b, a, True)):
            if z3.is_int_value(const) and not z3.is_int_value(other):
                v = const.as_long()
                if INT_MIN <= v <= INT_MAX:
                    return None
                probe = INT_MAX if v > INT_MAX else INT_MIN  # every int lies on this side of v
                ok = _COMPARE[k](probe, v) if flip else _COMPARE[k](v, probe)
                return "true" if ok else "false"
        return None

    def _division(self, k: int, kids: list) -> str:
        a, b = kids
        if not z3.is_int_value(b) or b.as_long() <= 0:
            what = "division" if k == z3.Z3_OP_IDIV else "remainder"
            raise Untranslatable(f"{what} by {_short(b)}, not a positive constant (Promela's / and % "
                                 f"truncate; only a positive constant divisor is printed exactly)")
        x, d = self(a), _number(b.as_long())
        if k == z3.Z3_OP_IDIV:  # floor division: C truncates towards zero
            return f"({x} >= 0 -> {x} / {d} : ({x} - {d} + 1) / {d})"
        return f"((({x} % {d}) + {d}) % {d})"


_BV_OPS = {z3.Z3_OP_BAND: "&", z3.Z3_OP_BOR: "|", z3.Z3_OP_BXOR: "^", z3.Z3_OP_BNOT: "~", z3.Z3_OP_BSHL: "<<",
           z3.Z3_OP_BLSHR: ">>", z3.Z3_OP_BASHR: ">>", z3.Z3_OP_INT2BV: "int2bv", z3.Z3_OP_BV2INT: "bv2int"}


def _signed_bv2int(kids: list) -> z3.ExprRef | None:
    """``v`` if an If's children are z3's expansion of a signed BV2Int(v): (v <s 0, bv2int(v) - 2^n, bv2int(v))."""
    c, a, b = kids
    if c.decl().kind() != z3.Z3_OP_SLT or b.decl().kind() != z3.Z3_OP_BV2INT:
        return None
    v = b.children()[0]
    zero = c.children()[1]
    if not (c.children()[0].eq(v) and z3.is_bv_value(zero) and zero.as_long() == 0):
        return None
    if a.decl().kind() != z3.Z3_OP_SUB or not a.children()[0].eq(b):
        return None
    m = a.children()[1]
    if not (z3.is_int_value(m) and m.as_long() == 1 << v.size()):
        return None
    return v


def _number(v: int) -> str:
    if not INT_MIN <= v <= INT_MAX:
        raise Untranslatable(f"the value {v} (beyond Promela's 32-bit int)")
    if v == INT_MIN:  # the literal 2147483648 itself is beyond int
        return f"({INT_MIN + 1} - 1)"
    return str(v) if v >= 0 else f"({v})"


def _short(t: z3.ExprRef) -> str:
    s = str(t).replace("\n", " ")
    return s if len(s) <= 80 else s[:77] + "..."


def symbols(term: z3.ExprRef, kids: Kids) -> set[str]:
    """The names of the state symbols a term reads."""
    out: set[str] = set()
    seen: set[int] = set()
    todo = [term]
    while todo:
        t = todo.pop()
        key = ast_id(t)
        if key in seen:
            continue
        seen.add(key)
        below = kids(t)
        if not below and op_kind(t) == z3.Z3_OP_UNINTERPRETED:
            out.add(t.decl().name())
        todo.extend(below)
    return out


def shared(terms: list[z3.ExprRef], kids: Kids) -> list[z3.ExprRef]:
    """Compound subterms used more than once across ``terms``, children before parents: printed
    as a tree, a term that nests ``If(err == 0, x, err)`` k times would otherwise be 2^k long."""
    uses: dict[int, int] = {}
    nodes: dict[int, z3.ExprRef] = {}
    order: list[z3.ExprRef] = []

    def visit(t: z3.ExprRef) -> None:
        stack = [(t, False)]
        while stack:
            node, done = stack.pop()
            key = ast_id(node)
            if done:
                order.append(node)
                continue
            uses[key] = uses.get(key, 0) + 1
            if key in nodes:
                continue
            nodes[key] = node
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(kids(node)))

    for t in terms:
        visit(t)
    # bv2int stays inside its term: z3 writes a signed one as If(v < 0, bv2int(v) - 2^n, bv2int(v)),
    # which the printer recognises whole (a hoisted 32-bit bv2int alone would be an unsigned reading).
    return [n for n in order if uses[ast_id(n)] > 1 and kids(n) and op_kind(n) != z3.Z3_OP_BV2INT]
