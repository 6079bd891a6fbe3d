# SPDX-License-Identifier: GPL-2.0-only
"""How close a state is to violating each invariant, as C: the swarm's directed runs follow it.

``dv(t)`` is a distance to ``t`` being false, ``ds(t)`` to it being true,
both non-negative doubles and 0 exactly when reached: ``a <= b`` is
``max(0, b - a + 1)`` from false; ``And`` the least of its parts' (one false
part is enough), ``Or`` their sum (every part must be false), ``Not``
swaps the two. A term with no such reading (a flag, a bit-vector test) is 0
or 1. It is only a heuristic: it orders the steps a directed run tries
first and decides nothing (a violation is still a state where the generated
property is false, replayed on the interpreter).
"""
from __future__ import annotations

import z3

from checker.compiled.cterms import CPrinter, Untranslatable, is_wide
from checker.export.terms import Kids

#: A distance expression longer than this is replaced by the plain 0/1 test (a term whose parts are
#: shared many times would print exponentially long).
MAX_CHARS = 20_000

_LE = {z3.Z3_OP_LE: (0, 1, 1), z3.Z3_OP_LT: (0, 1, 0), z3.Z3_OP_GE: (1, 0, 1), z3.Z3_OP_GT: (1, 0, 0)}


class _Distance:
    def __init__(self, p: CPrinter, kids: Kids):
        self.p = p
        self.kids = kids

    def num(self, t: z3.ExprRef) -> str:
        return f"((double){self.p(t)})"

    def atom(self, t: z3.ExprRef, want: bool) -> str:
        return f"({self.p(t)} ? {'0.0' if want else '1.0'} : {'1.0' if want else '0.0'})"

    def d(self, t: z3.ExprRef, want: bool) -> str:
        """Distance to ``t`` having the value ``want``."""
        if z3.is_true(t) or z3.is_false(t):
            return "0.0" if z3.is_true(t) == want else "1e18"
        k = t.decl().kind()
        kids = self.kids(t)
        if k in _LE and z3.is_int(kids[0]):
            lo, hi, eq = _LE[k]  # true when kids[lo] (<= if eq else <) kids[hi]
            a, b = self.num(kids[lo]), self.num(kids[hi])
            if want:  # make a <= b (a < b): how far a is above
                return f"sw_pos({a} - {b}{' + 1.0' if not eq else ''})"
            return f"sw_pos({b} - {a}{' + 1.0' if eq else ''})"
        if k == z3.Z3_OP_EQ and z3.is_int(kids[0]):
            a, b = self.num(kids[0]), self.num(kids[1])
            return f"__builtin_fabs({a} - {b})" if want else f"({a} == {b} ? 1.0 : 0.0)"
        if k == z3.Z3_OP_DISTINCT and len(kids) == 2 and z3.is_int(kids[0]):
            a, b = self.num(kids[0]), self.num(kids[1])
            return f"({a} == {b} ? 1.0 : 0.0)" if want else f"__builtin_fabs({a} - {b})"
        if k == z3.Z3_OP_NOT:
            return self.d(kids[0], not want)
        if k in (z3.Z3_OP_AND, z3.Z3_OP_OR) and kids:
            parts = [self.d(c, want) for c in kids]
            every = (k == z3.Z3_OP_AND) == want  # every part must change: the sum, else the nearest one
            out = parts[0]
            for q in parts[1:]:
                out = f"({out} + {q})" if every else f"sw_min({out}, {q})"
            return out
        if k == z3.Z3_OP_IMPLIES:
            a, b = kids
            return f"sw_min({self.d(a, False)}, {self.d(b, True)})" if want else \
                f"({self.d(a, True)} + {self.d(b, False)})"
        if k == z3.Z3_OP_ITE and z3.is_bool(t):
            return f"({self.p(kids[0])} ? {self.d(kids[1], want)} : {self.d(kids[2], want)})"
        return self.atom(t, want)


def distance_source(props: list[tuple[str, str, z3.BoolRef]], narrow: dict, wide: dict, kids: Kids) -> str:
    """``cc_distance(s, pending)``: the least distance to a violation over the pending invariants."""
    out = ["static inline double sw_pos(double x) { return x > 0 ? x : 0; }",
           "static inline double sw_min(double a, double b) { return a < b ? a : b; }"]
    names = []
    for k, (_name, kind, term) in enumerate(props):
        if kind != "invariant":
            continue
        try:
            w = is_wide([term], kids)
            p = CPrinter(wide if w else narrow, kids, w)
            hoisted = p.hoist([term], "d")
            body = _Distance(p, kids).d(term, False)
            if len(body) > MAX_CHARS:
                raise Untranslatable("too long")
        except (Untranslatable, z3.Z3Exception, RecursionError):
            continue  # no distance: this invariant does not steer
        out.append(f"static double cc_dist_{k}(const int64_t *restrict s) {{")
        out += ["    " + h for h in hoisted]
        out.append(f"    (void)s; return {body};")
        out.append("}")
        names.append(k)
    out.append("static double cc_distance(const int64_t *restrict s, const int *pending) {")
    out.append("    double best = 1e18;")
    for k in names:
        out.append(f"    if (pending[{k}]) {{ double x = cc_dist_{k}(s); if (x < best) best = x; }}")
    out.append("    (void)s; (void)pending; cc_ovf = 0; return best;")
    out.append("}")
    return "\n".join(out) + "\n"
