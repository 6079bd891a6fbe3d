# SPDX-License-Identifier: GPL-2.0-only
"""The counter tree written as its kernel function (specs/percpu_counter_tree_process.py) against the hand-written
pc-machine (specs/percpu_counter_tree.py).

The claim: at the same point, the same distinct states, transitions, depth, verdicts and shortest trace lengths,
on both explorers, under sc, tso and lkmm (the port's memory-ordering annotations come from the primitive table,
the hand-written spec's are written beside its actions), and the same Z3 proofs and witness replays.
Also: the unconditional accuracy claim (specs/bugs/counter_tree_read_in_flight.py) is a variant of the port
too, with the same counterexample.
"""
from __future__ import annotations

import pytest

from checker import And, invariant
from checker.explore import explore
from checker.language.compile import Model
from checker.ordering.declare import MEMORY
from checker.specs.bugs.counter_tree_read_in_flight import CounterTreeReadInFlight
from checker.prove import prove_checks
from checker.specs.percpu_counter_tree import DESIGN, PercpuCounterTree, PercpuCounterTreeDeep, claimed_range
from specs.percpu_counter_tree_process import PercpuCounterTreeProcess


def compare(params: dict, memory: str = "sc", engine: str = "interpreted", hand: type = PercpuCounterTree,
            port: type = PercpuCounterTreeProcess):
    mem = getattr(MEMORY, memory)
    h = explore(Model(hand, hand(memory=mem, **params).params), engine=engine)
    p = explore(Model(port, port(memory=mem, **params).params), engine=engine)
    assert h.complete and p.complete and p.engine == h.engine == engine
    assert {n: (o.verdict, len(o.trace or ())) for n, o in h.outcomes.items()} == \
        {n: (o.verdict, len(o.trace or ())) for n, o in p.outcomes.items()}
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)
    return h, p


def _ids(p: dict) -> str:
    return ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in p.items())


#: every point of percpu_counter_tree's explore sweeps
EVERY = [dict(design=d, ncpus=n, tasks=1, ops=2) for d in (DESIGN.latest, DESIGN.noskip, DESIGN.v6) for n in (1, 2)] \
    + [dict(design=d, ncpus=3, tasks=1, ops=1) for d in (DESIGN.latest, DESIGN.noskip, DESIGN.v6)] \
    + [dict(design=d, ncpus=2, tasks=2, ops=1) for d in (DESIGN.latest, DESIGN.v6)]


def test_port_equals_the_pc_machine_at_the_first_points():
    """The sweep's first point (one CPU: no slow path) and the first with a slow path and a migration."""
    compare(EVERY[0])
    h, p = compare(EVERY[1])
    assert p.outcomes["a_slow_path_starts_elsewhere"].verdict == "holds"
    assert p.outcomes["settled_claim"].verdict == "holds"


@pytest.mark.differential
@pytest.mark.parametrize("params", EVERY, ids=_ids)
@pytest.mark.parametrize("memory", ["sc", "tso", "lkmm"])
def test_port_equals_the_pc_machine_at_every_point(params, memory):
    if memory != "sc" and params["tasks"] == 2:
        pytest.skip("two tasks per CPU under a weak model: minutes on the interpreter, as for the hand-written spec")
    compare(params, memory)


@pytest.mark.differential
@pytest.mark.parametrize("params", [EVERY[1], EVERY[8], EVERY[9]], ids=_ids)
def test_port_equals_the_pc_machine_on_the_compiled_explorer(params):
    compare(params, engine="compiled")


class CounterTreeReadInFlightProcess(PercpuCounterTreeProcess, expect_violated=("accuracy_at_any_moment",)):
    """counter_tree_read_in_flight written on the port: the same invariant, on the port's states."""

    explore_sweeps = CounterTreeReadInFlight.explore_sweeps

    @invariant
    def accuracy_at_any_moment(s):
        """precise - under <= approx <= precise + over in every state, settled or not."""
        under, over = claimed_range(s)
        a, p = s.spec.approximate_sum(s), s.spec.precise_sum(s)
        return And(p - under <= a, a <= p + over)


@pytest.mark.differential
@pytest.mark.parametrize("params", [dict(design=DESIGN.latest, ncpus=2, tasks=1, ops=1),
                                    dict(design=DESIGN.v6, ncpus=2, tasks=2, ops=2, large=0, migrations=0)],
                         ids=_ids)
def test_the_bug_spec_is_a_variant_of_the_port(params):
    h, p = compare(params, hand=CounterTreeReadInFlight, port=CounterTreeReadInFlightProcess)
    assert p.outcomes["accuracy_at_any_moment"].verdict == "violated"


def _proofs(cls: type, sets: dict | None = None) -> dict:
    return {(c.kind, c.property, tuple(sorted((k, getattr(v, "name", v)) for k, v in c.params.items()))): c.verdict
            for c in prove_checks(cls, **({"sets": sets} if sets else {}))}


@pytest.mark.differential
def test_port_has_the_same_proofs_and_witness_replays():
    """The prove sweep (every design, 1 and 2 CPUs, batch 32, two tasks per CPU) and fill_every_counter
    replayed at 4 to 256 CPUs on the port's own steps."""
    h, p = _proofs(PercpuCounterTree), _proofs(PercpuCounterTreeProcess)
    assert h == p and set(p.values()) == {"holds", "violated"}


class PercpuCounterTreeProcessDeep(PercpuCounterTreeProcess, on_demand=True):
    """percpu_counter_tree_deep's proof points on the port: 3 and 4 CPUs (a level of items, the slow path's
    loop taken with a symbolic level and cpu), batch 2."""

    ncpus = PercpuCounterTreeDeep.ncpus
    batch = PercpuCounterTreeDeep.batch


@pytest.mark.differential
def test_port_has_the_same_proofs_with_a_level_of_items():
    h, p = _proofs(PercpuCounterTreeDeep), _proofs(PercpuCounterTreeProcessDeep)
    assert {k: v for k, v in h.items() if k[0] == "proof"} == {k: v for k, v in p.items() if k[0] == "proof"}
    assert all(v == "holds" for k, v in p.items() if k[0] == "proof")
