# SPDX-License-Identifier: GPL-2.0-only
"""The counter tree's accuracy range claimed for a read at any moment.

``noskip`` (compudj/linux-dev 42bfc99db86c) states in its header, with no
condition, "The tree approximate sum is guaranteed to be within this accuracy
range: (precise_sum - approx_accuracy_range.under) <= approx_sum <=
(precise_sum + approx_accuracy_range.over)"; RFC v6 says "approximation
imprecise within +/- inaccuracy". Neither holds for a read that runs while
an add is between its ``this_cpu_add_return`` (which the precise sum already
sees) and its last carry (which the approximate sum does not yet): the
carry in flight is outside the range. The mm tree's header (``latest``)
restricts the claim to a settled counter in so many words, and that claim
holds (``percpu_counter_tree.settled_claim``); this spec checks the
unrestricted one against every design.

Shortest counterexample (2 CPUs, batch 2, over = (2 - 1) * 2 = 2): one
``this_cpu_add_return`` of -4 pages (a 4-page folio unmapped): the level-0
counter reads -4 and a carry of -4 is in flight; the approximate sum still
reads 0 > -4 + 2. With single pages only (``--set large=0``) two CPUs need
their other tasks: each slow path preempted with a carry of -2 in flight.
"""
from checker import And, invariant
from checker.specs.percpu_counter_tree import DESIGN, PercpuCounterTree, claimed_range


class CounterTreeReadInFlight(PercpuCounterTree, expect_violated=("accuracy_at_any_moment",)):
    """percpu_counter_tree_approximate_sum() read between an add's level-0 step and its last carry."""

    kernel = PercpuCounterTree.kernel + "; the accuracy range claimed for a read at any moment"
    explore_sweeps = (
        {"design": (DESIGN.latest, DESIGN.noskip), "ncpus": (2, 3), "tasks": 1, "ops": 1},
        # v6's range is symmetric (over = under): at 3 CPUs one carry in flight stays inside it.
        {"design": DESIGN.v6, "ncpus": 2, "tasks": 1, "ops": 1},
        {"design": (DESIGN.latest, DESIGN.v6), "ncpus": 2, "tasks": 2, "ops": 2, "large": 0, "migrations": 0},
    )

    @invariant
    def accuracy_at_any_moment(s):
        """precise - under <= approx <= precise + over in every state, settled or not
        (noskip's and v6's headers claim it unconditionally)."""
        under, over = claimed_range(s)
        a, p = s.spec.approximate_sum(s), s.spec.precise_sum(s)
        return And(p - under <= a, a <= p + over)
