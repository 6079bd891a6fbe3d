# SPDX-License-Identifier: GPL-2.0-only
"""Houdini (checker.prove.houdini): the largest inductive subset of the candidates, the same as the
textbook one-candidate-at-a-time algorithm finds, and true in every state the explorer reaches."""
from __future__ import annotations

import itertools

import z3
from hypothesis import HealthCheck, assume, given, settings

from checker.explore.search import search
from checker.prove.encoding import PerN
from checker.prove.horn import flat, slot_names
from checker.prove.houdini import houdini
from checker.prove.solver import seeded
from random_specs import random_models


def _textbook(enc: PerN, cands: list[z3.ExprRef]) -> list[z3.ExprRef]:
    """One query per candidate and step, with everything still alive assumed, until nothing drops."""
    s = enc.fresh("")
    slots, init = flat(enc, s), flat(enc, enc.initial())

    def can_fail(*facts: z3.ExprRef) -> bool:
        q = seeded(30)
        q.add(*facts)
        r = q.check()
        assert r != z3.unknown
        return r == z3.sat

    alive = [c for c in cands if not can_fail(*enc.constraints(), z3.Not(z3.substitute_vars(c, *init)))]
    steps = [enc.fire(tr, s) for tr in enc.transitions()]
    changed = True
    while changed:
        changed = False
        for c in list(alive):
            pre = [z3.substitute_vars(d, *slots) for d in alive]
            if any(can_fail(enc.types(s), guard, *pre, z3.Not(z3.substitute_vars(c, *flat(enc, t))))
                   for guard, t in steps):
                alive.remove(c)
                changed = True
    return alive


def _atoms(enc: PerN) -> list[z3.ExprRef]:
    """Bounds and equalities over the point's slots: some inductive, most not."""
    n = len(slot_names(enc))
    v = [z3.Var(i, z3.IntSort()) for i in range(n)]
    out = [c for i in range(n) for c in (v[i] >= 0, v[i] <= 1, v[i] <= 3, v[i] != 2)]
    out += [v[i] <= v[j] for i, j in itertools.permutations(range(n), 2)][:16]
    return out


@settings(deadline=None, derandomize=True, database=None, max_examples=4,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(model=random_models())
def test_houdini_keeps_what_the_textbook_algorithm_keeps_and_every_kept_one_holds(model):
    enc = PerN(model)
    cands = _atoms(enc)
    kept = houdini(enc, cands, 30)
    assert [c.sexpr() for c in kept] == [c.sexpr() for c in _textbook(enc, cands)], model.source
    full = search(model, symmetry=False, max_states=3000)
    assume(full.stopped is None)
    for state in full.parents:
        vals = flat(enc, state)
        for c in kept:
            assert z3.is_true(z3.simplify(z3.substitute_vars(c, *vals))), (c, state, model.source)
