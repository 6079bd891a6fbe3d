# SPDX-License-Identifier: GPL-2.0-only
"""--prover infer's candidates relating two CPUs (forall c != d): stated for every CPU count as one invariant
quantified over two CPUs of the role, kept by Houdini only when inductive there."""
from __future__ import annotations

import z3

from checker.prove import _axes, _bind
from checker.prove.encoding import AnyN
from checker.prove.generalise import Candidate
from checker.prove.infer import _property, houdini_any
from test_infer import HELD, Handoff


def _enc():
    choice = {n: v[0] for n, v in _axes(Handoff, {})}
    values, shown, constraints, _ = _bind(Handoff, choice)
    return AnyN(Handoff, values, shown, "cpus", values["ncpus"].z, constraints)


def test_a_true_pairwise_candidate_is_kept_and_a_false_one_dropped():
    enc = _enc()
    pc_c, pc_d, lock, c = z3.Int("s.pc[c]"), z3.Int("s.pc[d]"), z3.Int("s.lock"), z3.Int("c")
    holder = Candidate(z3.Or(pc_c != int(HELD.held), lock == c), 1, "held => holds the lock")
    one = Candidate(z3.Not(z3.And(pc_c == int(HELD.held), pc_d == int(HELD.held))), 2, "not both held")
    same = Candidate(z3.Int("s.mine[c]") == z3.Int("s.mine[d]"), 2, "false: both hold as much")
    props = [_property(enc, x, k, x.source) for k, x in enumerate((holder, one, same))]
    kept = {p.doc for p in houdini_any(enc, props, 10)}
    assert kept == {holder.source, "AllOf(not both held for c in s.cpus for d in s.cpus if c != d)"}
