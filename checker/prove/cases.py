# SPDX-License-Identifier: GPL-2.0-only
"""A step's question split by the values its ``If``s test slots against.

A step that branches on a slot (the counter tree's walk on a task's level: ``If(level == 1, ..., If(level ==
2, ...))``) asks Z3 about every branch at once, and Z3 may not decide it in its whole budget (the tree's carry
at 5 CPUs: undecided after 25 minutes of one core); asked once per value of the slot, with a last case for
none of them, each question is the branch alone (unsat in 29 s together). The law search, Houdini and the
induction at a fixed CPU count ask such a step in its cases.
"""
from __future__ import annotations

import itertools
import math

import z3

#: At most this many cases a step's question is split into; a step with more is asked whole.
MAX_SPLIT = 64


def walk(e: z3.ExprRef, seen: set[int]) -> list[z3.ExprRef]:
    """The subterms of ``e`` not in ``seen`` (ids, updated), each once."""
    out, todo = [], [e]
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        out.append(x)
        if z3.is_app(x):
            todo.extend(x.children())
    return out


def fixes(index: dict[int, int], c: z3.ExprRef) -> tuple[int, int] | None:
    """``(i, k)`` when ``c`` tests ``slot i == k`` (``index``: slot term ids to their positions), else None."""
    if z3.is_eq(c):
        for u, v in (c.children(), c.children()[::-1]):
            if u.get_id() in index and z3.is_int_value(v):
                return index[u.get_id()], v.as_long()
    return None


def split(slots: list[z3.ExprRef], roots: list[z3.ExprRef]) -> list[z3.BoolRef]:
    """The cases of a step whose guard and effects are ``roots``, over the state's ``slots``: each slot an
    ``If`` of the step tests against numbers is one of them, or none; one case, ``True``, when there is
    nothing to split on or the cases would be more than ``MAX_SPLIT``."""
    index = {x.get_id(): i for i, x in enumerate(slots)}
    tested: dict[int, set[int]] = {}
    seen: set[int] = set()
    for x in (y for root in roots for y in walk(root, seen)):
        if z3.is_app_of(x, z3.Z3_OP_ITE) and (test := fixes(index, x.arg(0))) is not None:
            tested.setdefault(test[0], set()).add(test[1])
    options = [[slots[i] == v for v in sorted(vals)] + [z3.And([slots[i] != v for v in sorted(vals)])]
               for i, vals in sorted(tested.items())]
    if not options or math.prod(len(o) for o in options) > MAX_SPLIT:
        return [z3.BoolVal(True)]
    return [z3.And(list(c)) for c in itertools.product(*options)]
