# SPDX-License-Identifier: GPL-2.0-only
"""Partial-order reduction on the compiled engine (checker/compiled/ample.py): a reduced search gives the
verdicts of the unreduced one, on fixtures, built-in specs and Hypothesis-generated specs."""
from __future__ import annotations

from pathlib import Path

import pytest

from checker.explore import explore
from checker.language.compile import Model
from checker.loader import builtin_specs, resolve
from checker.result import HOLDS, VIOLATED
from checker.verify import param_points

FIXTURES = Path(__file__).parent / "fixtures" / "por.py"
SPECS = builtin_specs()


def fixture(name: str) -> type:
    return resolve([f"{FIXTURES}:{name}"])[0]


def both(model_of, **kw):
    """(unreduced, reduced) compiled explorations of a fresh model each."""
    full = explore(model_of(), engine="compiled", **kw)
    if full.engine != "compiled":  # (a point the compiled engine hands to the interpreter: nothing to reduce)
        pytest.skip(f"interpreted: {full.engine_note}")
    red = explore(model_of(), engine="compiled", por=True, **kw)
    assert red.engine == "compiled", red.engine_note
    return full, red


def test_independent_counts_are_explored_in_one_order_and_the_interesting_steps_come_first():
    cls = fixture("Independent")
    full, red = both(cls)
    assert full.verdicts == red.verdicts == {"first_bounded": HOLDS, "last_done": HOLDS, "no_deadlock": HOLDS}
    # first_bounded cannot be falsified by any step (Z3), so only last_done's step (CPU 2's inc) is
    # interesting: it is taken alone until last_done is found, then one CPU's steps at a time
    assert (full.states, red.states) == (64, 10)
    assert red.engine_note.startswith("partial-order reduction: 6 of 6 states")
    assert "not necessarily the shortest" in red.engine_note
    assert [(s.action, s.cpu) for s in full.outcomes["last_done"].trace] == [("inc", 2)] * 3
    assert [(s.action, s.cpu) for s in red.outcomes["last_done"].trace] == [("inc", 2)] * 3


def test_an_interesting_step_is_not_postponed_round_a_loop():
    full, red = both(fixture("LoopAndExpectedBug"))
    assert full.verdicts["never_bad"] == red.verdicts["never_bad"] == VIOLATED
    assert red.engine_note.startswith("partial-order reduction:")
    assert [(s.action, s.cpu) for s in red.outcomes["never_bad"].trace] == [("break_it", 1)]


def test_additions_to_one_total_commute_so_the_cpus_are_explored_one_at_a_time():
    from checker.compiled.ample import Sets
    from checker.compiled.lower import lower
    from checker.export.terms import Kids

    from checker.language.model import resolve_params

    cls = fixture("SharedTotal")
    sets = Sets(lower(Model(cls, resolve_params(cls, {}))), Kids(), {}, [])
    assert all(sets._syntactic(0, u) for u in (1, 2))  # each writes the total
    assert sets.dep == [{0}, {1}, {2}]  # and yet they commute
    full, red = both(cls)
    assert full.verdicts == red.verdicts
    # at the start every step can decide something_counted (all three are taken); after it, one at a time
    assert (full.states, red.states) == (64, 19)


def test_an_assumed_invariant_violated_explores_the_point_again_unreduced():
    full, red = both(fixture("LoopAndBug"))
    assert full.verdicts == red.verdicts and red.verdicts["never_bad"] == VIOLATED
    assert red.states == full.states
    assert "explored again without it" in red.engine_note


def _first_point(name: str):
    cls = SPECS[name]
    points = [p for p in param_points(cls, {}, "explore") if Model(cls, p).abstraction is None]
    if not points:
        pytest.skip(f"{name} has only liveness points")
    return lambda: Model(cls, points[0])


#: Built-in specs compared in the default tier (small first points); every other one in the differential tier.
QUICK = ("check_mm_refcount", "percpu_counter_tree")


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.differential)
                                  for n in sorted(SPECS)])
def test_por_keeps_every_verdict_at_the_first_point(name):
    full, red = both(_first_point(name), max_states=300_000)
    assert {n: o.verdict for n, o in full.outcomes.items()} == {n: o.verdict for n, o in red.outcomes.items()}
    assert red.states <= full.states


def _random_por(model) -> None:
    from random_specs import load

    full, red = both(lambda: load(model.source), max_states=5000)
    assert full.complete == red.complete, model.source
    if full.complete:
        assert full.verdicts == red.verdicts, model.source
        assert red.states <= full.states, model.source


def test_por_keeps_verdicts_on_random_specs():
    """Hypothesis-generated small specs (tests/random_specs.py), symmetry on as by default."""
    from hypothesis import HealthCheck, given, settings

    from random_specs import random_models

    @settings(max_examples=3, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(model=random_models())
    def check(model):
        _random_por(model)

    check()


@pytest.mark.differential
def test_por_keeps_verdicts_on_many_random_specs():
    from random_specs import sample_models

    for model in sample_models(60, seed=26):
        _random_por(model)


def test_por_on_the_interpreter_says_it_did_not_reduce():
    r = explore(fixture("Independent")(), engine="interpreted", por=True)
    assert r.states == 64
    assert r.engine_note == "interpreted without partial-order reduction (compiled engine only)"
