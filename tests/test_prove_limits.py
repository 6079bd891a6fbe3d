# SPDX-License-Identifier: GPL-2.0-only
"""Z3's limits in the prover are its resource count, not wall time (same input, same verdict), and every
solver the prover makes comes from checker/prove/solver.py with the fixed seed."""
from __future__ import annotations

import time

import z3

from checker.prove.solver import RLIMIT_PER_SECOND, WALL_GUARD, Solver, rlimit, seeded, seeded_optimize, \
    unknown_reason, wall_guard


def _pigeons(s: z3.Solver, n: int = 9) -> z3.Solver:
    xs = [z3.Int(f"x{i}") for i in range(n)]
    s.add(*[z3.And(x >= 0, x < n - 1) for x in xs], z3.Distinct(xs))
    return s


def test_a_query_over_its_budget_is_unknown_for_its_resource_limit_every_time():
    reasons = set()
    for _ in range(2):
        s = _pigeons(seeded(0.002))
        t0 = time.perf_counter()
        assert s.check() == z3.unknown
        reasons.add(unknown_reason(s.reason_unknown(), time.perf_counter() - t0, 0.002))
    assert reasons == {"resource limit (rlimit)"}


def test_the_obligation_reports_which_limit_ended_it():
    x = z3.Int("x")
    hard = _pigeons(z3.Solver()).assertions()
    ans = Solver(0.002).obligation("pigeons", list(hard), x == x + 1)
    assert ans.result == "unknown" and ans.reason == "resource limit (rlimit)"


def test_the_budget_is_seconds_worth_and_the_wall_clock_only_a_guard():
    assert rlimit(2.5) == int(2.5 * RLIMIT_PER_SECOND) and rlimit(None) == 0
    assert WALL_GUARD >= 5
    assert unknown_reason("canceled", wall_guard(2.0), 2.0).startswith("wall-clock guard")
    assert unknown_reason("canceled", 0.5, 2.0) == "resource limit (rlimit)"
    assert unknown_reason(b"max. resource limit exceeded") == "resource limit (rlimit)"
    o = seeded_optimize(1)
    x = z3.Int("x")
    o.add(x > 3)
    o.minimize(x)
    assert o.check() == z3.sat and o.model()[x].as_long() == 4


def test_spacer_stops_at_its_resource_limit():
    from checker.prove.horn import HornSystem
    from checker.prove.encoding import PerN
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from tests.test_infer_laws import Carry

    model = Model(Carry, resolve_params(Carry, {"ncpus": 2}))
    enc = PerN(model)
    horn = HornSystem(enc)
    claim = next(p for p in model.properties if p.name == "settled_gap")
    ans = horn.solve(z3.Not(enc.holds(claim, horn.state)), 0.0001)
    assert ans.result == "unknown" and ans.reason == "resource limit (rlimit)", ans.reason
