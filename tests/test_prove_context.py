# SPDX-License-Identifier: GPL-2.0-only
"""A prove point's verdict and what it prints depend on the point alone, not on what the process asked Z3 before:
each point builds its terms in a Z3 context of its own (``checker.prove.solver.own_context``)."""
from __future__ import annotations

import gc

import pytest
import z3

from checker.prove import prove_checks
from checker.prove.solver import in_own_context, own_context
from tests.test_infer import Folder, Handoff


def _first_id() -> int:
    with own_context():
        return (z3.Int("x") + 1).get_id()


def test_terms_built_in_a_point_get_the_same_ids_whatever_was_built_before():
    before = _first_id()
    junk = [z3.Int(f"junk{i}") * i + z3.Int("y") for i in range(300)]  # the shared context's ids move on
    assert junk and _first_id() == before
    with own_context() as ctx:
        assert z3.main_ctx() is ctx
    assert z3.main_ctx() is not ctx and gc.isenabled()


def _id_after_a_cycle(pressure: int) -> int:
    with own_context():
        held = [z3.Int(f"t{i}") * 3 + i for i in range(200)]
        cycle: list = [held]
        cycle.append(cycle)  # the terms are freed only by the cyclic collector
        del held, cycle
        _ = [[] for _ in range(pressure)]  # allocations: enough to run the collector, were it on
        return (z3.Int("x") * 7).get_id()


def test_when_the_garbage_collector_would_run_does_not_move_a_points_ids():
    """Z3 gives a freed term's id to the next one: were the collector on, a point's ids (and so the order of
    its sums, and so its verdicts under a limit) would depend on how much the process allocated before."""
    assert _id_after_a_cycle(0) == _id_after_a_cycle(20_000)


def test_a_term_from_outside_the_point_cannot_be_mixed_in():
    outside = z3.Int("outside")

    @in_own_context
    def mix() -> z3.ArithRef:
        return outside + z3.Int("inside")

    with pytest.raises(z3.Z3Exception):
        mix()
    assert z3.is_arith(outside + 1)  # the shared context is back after the point


def _printed(checks: list) -> list:
    return [(c.property, c.verdict, c.reason, tuple(c.extra.get("inferred") or ()), tuple(c.trace_text or ()))
            for c in checks if c.kind == "proof"]


def test_an_inferred_proof_is_the_same_after_other_work_in_the_process():
    """--prover infer asks Houdini's models and limited queries in the point's context: the same candidates kept,
    the same lines printed, whether the process first proved another spec and built other terms or not."""
    first = _printed(prove_checks(Folder, smt_timeout=20, infer=True))
    prove_checks(Handoff, smt_timeout=20, infer=True)
    _ = [z3.Int(f"other{i}") + z3.Int(f"more{i}") * 3 for i in range(2000)]
    assert _printed(prove_checks(Folder, smt_timeout=20, infer=True)) == first
    assert any(v == "holds" for _, v, *_ in first)


def test_each_prove_point_runs_in_a_context_of_its_own(monkeypatch):
    import checker.prove as prove

    seen = []
    real = prove.prove_invariants

    def spy(enc, *args, **kwargs):
        seen.append(z3.main_ctx())
        return real(enc, *args, **kwargs)

    monkeypatch.setattr(prove, "prove_invariants", spy)
    assert any(c.verdict == "holds" for c in prove_checks(Handoff, smt_timeout=20) if c.kind == "proof")
    assert seen and all(ctx is not z3.main_ctx() for ctx in seen)
