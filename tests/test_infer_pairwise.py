# SPDX-License-Identifier: GPL-2.0-only
"""--prover infer's candidates relating two CPUs (forall c != d): stated for every CPU count as one invariant
quantified over two CPUs of the role, kept by Houdini only when inductive there."""
from __future__ import annotations

from typing import Any

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


def _holder() -> Candidate:
    return Candidate(z3.Or(z3.Int("s.pc[c]") != int(HELD.held), z3.Int("s.lock") == z3.Int("c")), 1,
                     "held => holds the lock")


def _not_both() -> Candidate:
    return Candidate(z3.Not(z3.And(z3.Int("s.pc[c]") == int(HELD.held), z3.Int("s.pc[d]") == int(HELD.held))), 2,
                     "not both held")


def test_a_true_pairwise_candidate_is_kept_and_a_false_one_dropped():
    enc = _enc()
    holder, one = _holder(), _not_both()
    same = Candidate(z3.Int("s.mine[c]") == z3.Int("s.mine[d]"), 2, "false: both hold as much")
    props = [_property(enc, x, k, x.source) for k, x in enumerate((holder, one, same))]
    kept = {p.doc for p in houdini_any(enc, props, 10)}
    assert kept == {holder.source, "AllOf(not both held for c in s.cpus for d in s.cpus if c != d)"}


def _order_of_pools(monkeypatch, singles_prove: bool, more: tuple = ()) -> tuple[list[tuple[int, int]], Any, list[str]]:
    """The pools ``infer_point`` hands to Houdini and the induction, as (singles, pairs), its ``Inference``, and
    the pairs of the last pool, when the candidates generalised at two CPUs are one single, one pair and
    ``more``; ``singles_prove``: whether the singles alone prove the claim."""
    import checker.prove.infer as infer
    from checker.prove.inductive import Proof
    from checker.result import HOLDS, INCONCLUSIVE

    enc = _enc()
    single, pair = _holder(), _not_both()
    pools, asked = [], []

    def strengthen(enc, claims, pool, *_):
        pools.append((sum(x.cpus <= 1 for x in pool), sum(x.cpus == 2 for x in pool)))
        asked[:] = [x.source for x in pool if x.cpus == 2]
        ok = singles_prove or any(x.cpus == 2 for x in pool)
        return {p.name: Proof(p.name, verdict=HOLDS if ok else INCONCLUSIVE) for p in claims}, [], []

    monkeypatch.setattr(infer, "solve_point", lambda *a, **k: ({}, z3.BoolVal(True)))
    monkeypatch.setattr(infer, "templates", lambda *a: [])
    monkeypatch.setattr(infer, "observed", lambda *a: [])
    monkeypatch.setattr(infer, "generalise", lambda model, inv, role: [single, pair, *more]
                        if len(model.roles[role]) > 1 else [])
    monkeypatch.setattr(infer, "_strengthen", strengthen)
    choice = {n: v[0] for n, v in _axes(Handoff, {})}
    return pools, infer.infer_point(Handoff, enc, choice, 10, "handoff"), asked


def test_pairs_are_asked_only_when_the_candidates_about_one_cpu_leave_a_claim_open(monkeypatch):
    # two CPUs' invariant generalises to many more pairs than singles (percpu_eager: 12,731 against 1,625):
    # Houdini over all of them did not finish where the singles alone prove every claim
    assert _order_of_pools(monkeypatch, singles_prove=True)[0] == [(1, 0)]
    assert _order_of_pools(monkeypatch, singles_prove=False)[0] == [(1, 0), (1, 1)]


def test_the_shortest_pairs_are_asked_up_to_the_limit_and_the_rest_are_counted(monkeypatch):
    import checker.prove.infer as infer

    longer = Candidate(z3.Or(z3.Int("s.pc[c]") != int(HELD.held), z3.Int("s.pc[d]") != int(HELD.held),
                             z3.Int("s.lock") == z3.Int("c")), 2, "a longer pair")
    monkeypatch.setattr(infer, "MAX_PAIRS", 1)
    pools, got, asked = _order_of_pools(monkeypatch, singles_prove=False, more=(longer,))
    assert pools == [(1, 0), (1, 1)] and asked == ["not both held"]
    assert "1 of 2 candidates about two CPUs not asked (the 1 shortest were)" in got.sizes


def test_a_pair_is_assumed_at_every_two_cpus_a_step_can_mention_without_a_quantifier():
    from checker.prove.inductive import _inv

    enc = _enc()
    pair = _property(enc, _not_both(), 0, "x")
    s = enc.fresh("")
    hyps = _inv(enc, [pair], s)
    cpus = enc.cpu_terms(s)  # the actor, the goal's two arbitrary CPUs, the lock's holder
    assert len(cpus) == 4 and len(hyps) == 4 * 3
    assert not any(z3.is_quantifier(h) for h in hyps)
    assert z3.is_quantifier(enc.holds(pair, s))  # what the instances follow from


def test_a_pair_that_the_facts_about_one_cpu_imply_is_not_printed():
    from checker.prove.infer import minimal

    enc = _enc()
    holder = _holder()
    props = [_property(enc, x, k, x.source) for k, x in enumerate((holder, _not_both()))]
    # two CPUs that both hold it would both be the lock's holder
    assert [p.doc for p in minimal(enc, props, 10)] == [holder.source]
