# SPDX-License-Identifier: GPL-2.0-only
"""State counts pinned against TLC on the issue's normative transition system."""
import pytest

from checker import explore
from checker.specs.percpu_eager import PercpuEager
from eager_table import EagerTable

# (ncpus, ops, batch): (distinct states, with CPU symmetry), as TLC reports them.
TLC = {
    (2, 2, 2): (154, 82),
    (3, 3, 3): (4202, 820),
    (4, 3, 3): (59169, 3471),
}


@pytest.mark.parametrize("point", sorted(TLC))
def test_fixture_state_counts_match_tlc(point):
    n, ops, batch = point
    full = explore(EagerTable(ncpus=n, ops=ops, batch=batch), symmetry=False)
    reduced = explore(EagerTable(ncpus=n, ops=ops, batch=batch), symmetry=True)
    assert (full.states, reduced.states) == TLC[point]
    assert full.verdicts == reduced.verdicts


def test_fixture_depth_matches_tlc():
    assert explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False).depth == 12


@pytest.mark.parametrize("point", [(2, 2, 2), (3, 3, 3)])
def test_percpu_eager_without_readers_has_the_same_counts(point):
    n, ops, batch = point
    for sym, want in ((False, TLC[point][0]), (True, TLC[point][1])):
        r = explore(PercpuEager(ncpus=n, ops=ops, batch=batch, readers=0, summers=0), symmetry=sym)
        assert r.states == want


def test_transitions_count_successors_not_initial_states():
    r = explore(EagerTable(ncpus=1, ops=1, batch=2), symmetry=False)
    # init -> add_fast(-1) | add_fast(+1): 2 transitions, 3 states, depth 1
    assert (r.states, r.transitions, r.depth) == (3, 2, 1)
