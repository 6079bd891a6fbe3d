# SPDX-License-Identifier: GPL-2.0-only
"""Which slots (``Var(i)``) a term reads, each shared subterm walked once.

Candidate invariants number in the tens of thousands and share most of their subterms; walking each with
the Python API's ``children()`` (a wrapper object per child) took a fifth of a ladder's time. This walks
Z3's terms through its C API and remembers each subterm's answer for as long as the reader lives.
"""
from __future__ import annotations

import z3

_EMPTY: frozenset[int] = frozenset()


class SlotReader:
    """``reader(e)``: the indices of the ``Var``s in ``e``. Terms given to it are kept alive with it, so an
    id it remembers is never another term's."""

    def __init__(self) -> None:
        self._memo: dict[int, frozenset[int]] = {}
        self._held: list[z3.ExprRef] = []

    def __call__(self, e: z3.ExprRef) -> frozenset[int]:
        self._held.append(e)
        return self._walk(e.ctx.ref(), e.as_ast())

    def _walk(self, ctx: z3.ContextObj, a: z3.Ast) -> frozenset[int]:
        key = z3.Z3_get_ast_id(ctx, a)
        got = self._memo.get(key)
        if got is not None:
            return got
        kind = z3.Z3_get_ast_kind(ctx, a)
        if kind == z3.Z3_VAR_AST:
            out = frozenset((z3.Z3_get_index_value(ctx, a),))
        elif kind == z3.Z3_APP_AST:
            n = z3.Z3_get_app_num_args(ctx, a)
            out = _EMPTY
            for i in range(n):
                sub = self._walk(ctx, z3.Z3_get_app_arg(ctx, a, i))
                if sub:
                    out = out | sub if out else sub
        else:
            out = _EMPTY
        self._memo[key] = out
        return out
