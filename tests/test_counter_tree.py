# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counter_tree (lib/percpu_counter_tree.c) and its bug spec counter_tree_read_in_flight.

Pinned: the carry rewrite against the C expression on every small word, the
tree shape and accuracy multiplier the code derives from the CPU count, the
verdicts and state counts of the explored points, the shortest
counterexamples, the per-N proofs and the witness of the exact settled bound.
"""
import pytest
import z3

from checker import explore
from checker.prove import _witness_checks, prove_checks
from checker.language.model import info, resolve_params
from checker.specs.bugs.counter_tree_read_in_flight import CounterTreeReadInFlight
from checker.specs.percpu_counter_tree import (CONFIG, DESIGN, FAST_ON, FAST_RET, PercpuCounterTree, Shape, c_tree_carry,
                                               carry_terms, claimed_range, get_count_order, tree_carry)
from checker.symbolic.term import Sym

HOLDS, VIOLATED = "holds", "violated"


def _c_carry(orig: int, res: int, inc: int, bit_mask: int, w: int) -> int:
    """percpu_counter_tree_carry() in w-bit two's complement, every operation wrapped as C wraps it."""
    mod, top = 1 << w, 1 << (w - 1)

    def s(x):  # the w-bit word as a signed long
        x &= mod - 1
        return x - mod if x & top else x

    if s(inc) < 0:
        inc = s(-(s(-inc) & ~(bit_mask - 1)))
        if (inc ^ orig ^ res) & bit_mask:
            inc = s(inc - bit_mask)
    else:
        inc = s(inc & ~(bit_mask - 1))
        if (inc ^ orig ^ res) & bit_mask:
            inc = s(inc + bit_mask)
    return inc


@pytest.mark.parametrize("w", [6, 8])
def test_carry_rewrite_matches_the_c_expression_on_every_word(w):
    # Every orig and inc of a w-bit long (but LONG_MIN as inc, whose negation C leaves undefined), every
    # carry bit: the //-and-% rewrite the Z3 backend runs, and the C text on Python ints the explorer
    # runs, both give the wrapped C result; and the carry is m * (res // m - orig // m).
    mod, top = 1 << w, 1 << (w - 1)
    for k in range(w - 1):
        m = 1 << k
        for orig in range(-top, top):
            for inc in range(-top + 1, top):
                res_c = ((orig + inc + top) % mod) - top  # this_cpu_add_return wraps
                want = _c_carry(orig, res_c, inc, m, w)
                got = carry_terms(orig, res_c, inc, m)
                assert (got - want) % mod == 0, (w, m, orig, inc)
                assert (c_tree_carry(orig, orig + inc, inc, m) - want) % mod == 0
                assert c_tree_carry(orig, orig + inc, inc, m) == m * ((orig + inc) // m - orig // m)


def test_carry_terms_on_z3_are_the_floor_difference():
    # The same rewrite on symbols: for every orig and inc, it is m * (res // m - orig // m).
    for m in (1, 2, 32):
        o, i = z3.Int("o"), z3.Int("i")
        got = carry_terms(Sym(o), Sym(o + i), Sym(i), m)
        want = m * ((o + i) / m - o / m)
        s = z3.Solver()
        s.add(got.z != want)
        assert s.check() == z3.unsat
    assert tree_carry(5, 7, 2, 0) == 0  # one CPU: bit_mask 0, never a carry


@pytest.mark.parametrize("n, order, levels, mult, under, over, settled", [
    (1, 0, 0, 0, 0, 0, 0),
    (2, 1, 1, 2, 64, 62, 62),
    (3, 2, 2, 8, 256, 248, 3 * 31 + 2 * 32),
    (4, 2, 2, 8, 256, 248, 4 * 31 + 2 * 32),
    (8, 3, 3, 24, 768, 744, 8 * 31 + 4 * 32 + 2 * 64),  # the header's own example: +/-768 for 8 CPUs, batch 32
    (26, 5, 3, 96, 3072, 2976, 26 * 31 + 8 * 96 + 2 * 384),
    (256, 8, 3, 768, 24576, 23808, 22272),
    (1 << 20, 20, 5, 5 << 20, 32 * (5 << 20), 31 * (5 << 20), None),
])
def test_shape_and_accuracy_as_the_code_derives_them(n, order, levels, mult, under, over, settled):
    sh = Shape(n, 32)
    assert (get_count_order(n), sh.nr_levels, sh.multiplier) == (order, levels, mult)
    if n <= 256:
        p = resolve_params(PercpuCounterTree, {"ncpus": n, "batch": 32})
        assert claimed_range(p) == (under, over)
        assert sh.settled_max(n) == settled
    # The items of every level, the root last: nr_items of the table.
    assert sum(sh.items.values()) + (1 if order else 0) == CONFIG[order][0]


def test_item_index_is_cpu_and_level_items_minus_one():
    sh = Shape(8, 2)
    assert [sh.item(1, c) for c in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [sh.item(2, c) for c in range(8)] == [4, 5, 4, 5, 4, 5, 4, 5]
    assert (sh.mask[1], sh.mask[2]) == (4, 8)


EVERY = ("precise_sum_is_exact", "carries_conserved", "carry_in_flight_is_whole", "settled_claim",
         "settled_gap_bound", "no_deadlock")


#: States under the spec's structural symmetry (by_item); before it (unreduced) 14, 2488, 2488, 841, 3301, 7223,
#: 1320, 13655, 3844: tests/test_structural_symmetry.py compares reduced and unreduced searches.
@pytest.mark.parametrize("params, states", [
    (dict(design=DESIGN.latest, ncpus=1, tasks=1, ops=2), 14),
    (dict(design=DESIGN.latest, ncpus=2, tasks=1, ops=2), 1269),
    (dict(design=DESIGN.noskip, ncpus=2, tasks=1, ops=2), 1269),
    (dict(design=DESIGN.v6, ncpus=2, tasks=1, ops=2), 435),
    (dict(design=DESIGN.latest, ncpus=3, tasks=1, ops=1), 1714),
    (dict(design=DESIGN.noskip, ncpus=3, tasks=1, ops=1), 3714),
    (dict(design=DESIGN.v6, ncpus=3, tasks=1, ops=1), 715),
    (dict(design=DESIGN.latest, ncpus=2, tasks=2, ops=1), 6876),
    (dict(design=DESIGN.v6, ncpus=2, tasks=2, ops=1), 1953),
])
def test_every_claim_holds_with_its_witnesses(params, states):
    e = explore(PercpuCounterTree(**params))
    assert e.complete
    assert e.states == states
    assert all(v == HOLDS for v in e.verdicts.values()), e.verdicts
    assert set(EVERY) <= set(e.verdicts)
    if params["ncpus"] > 1:
        assert e.verdicts["a_carry_is_in_flight"] == HOLDS and e.verdicts["a_settled_read_is_inexact"] == HOLDS
    # items_hold_whole_carries speaks of intermediate items: only a tree of two levels or more has them
    assert ("items_hold_whole_carries" in e.verdicts) == (params["ncpus"] == 3)
    if params["ncpus"] == 3:
        assert e.verdicts["a_carry_stops_midway"] == HOLDS
        assert ("a_level_is_skipped" in e.verdicts) == (params["design"] == DESIGN.latest)
        assert ("a_slow_path_starts_elsewhere" in e.verdicts) == (params["design"] != DESIGN.v6)
    if params["tasks"] == 2:
        assert e.verdicts["two_carries_in_flight_on_one_cpu"] == HOLDS


def test_read_at_any_moment_fails_in_one_step_with_a_folio():
    # One this_cpu_add_return of -4 pages: level 0 reads -4, a carry of -4 is in flight, the approximate
    # sum still reads 0 > -4 + over (2).
    e = explore(CounterTreeReadInFlight(design=DESIGN.latest, ncpus=2, tasks=1, ops=1))
    assert e.verdicts["accuracy_at_any_moment"] == VIOLATED
    assert e.verdicts["settled_claim"] == HOLDS
    (step,) = e.outcomes["accuracy_at_any_moment"].trace
    assert (step.action, step.choices) == (FAST_ON, {"inc": -4})  # on into the slow path
    assert step.changes["level0[0]"] == -4 and step.changes["adders_inc[2]"] == -4


@pytest.mark.parametrize("design", [DESIGN.latest, DESIGN.v6])
def test_single_pages_need_a_preempted_slow_path(design):
    # With single pages only, a carry in flight is -2 (batch 2); over is 2 (latest) or 4 (v6), so the
    # read fails only once several slow paths are preempted at once: the second task of each CPU.
    e = explore(CounterTreeReadInFlight(design=design, ncpus=2, tasks=2, ops=2, large=0, migrations=0))
    assert e.verdicts["accuracy_at_any_moment"] == VIOLATED
    trace = e.outcomes["accuracy_at_any_moment"].trace
    # Only fast-path steps of single pages: the slow paths they start are all still in flight (latest:
    # three removals, over = 2; v6: five additions, under = 4).
    assert all(s.action in (FAST_ON, FAST_RET) and abs(s.choices["inc"]) == 1 for s in trace)
    assert len(trace) == {DESIGN.latest: 3, DESIGN.v6: 5}[design]
    e1 = explore(CounterTreeReadInFlight(design=design, ncpus=2, tasks=1, ops=2, large=0, migrations=0))
    # One task per CPU: its slow path ends before its next add, and two carries of -2 stay inside.
    assert e1.verdicts["accuracy_at_any_moment"] == HOLDS


def test_v6_symmetric_range_survives_one_carry_at_three_cpus():
    e = explore(CounterTreeReadInFlight(design=DESIGN.v6, ncpus=3, tasks=1, ops=1))
    assert e.verdicts["accuracy_at_any_moment"] == HOLDS


def test_settled_claims_are_proved_per_n():
    checks = [c for c in prove_checks(PercpuCounterTree) if c.kind == "proof"]
    assert checks and all(c.verdict == HOLDS for c in checks)
    proved = {(c.property, c.params["ncpus"]) for c in checks}
    for n in (1, 2):
        assert ("settled_claim", n) in proved and ("settled_gap_bound", n) in proved
        assert ("carries_conserved", n) in proved


@pytest.mark.parametrize("n, steps, gap", [(4, 128, 188), (26, 866, 2342), (64, 2104, 5056),
                                           (256, 8440, 22272)])
def test_fill_witness_reaches_the_exact_settled_bound(n, steps, gap):
    cs = _witness_checks(PercpuCounterTree, "fill_every_counter",
                         info(PercpuCounterTree).witnesses["fill_every_counter"], {"ncpus": (n,)}, 0)
    v = {c.property: c.verdict for c in cs}
    assert v == {"settled_gap_is_max": HOLDS, "settled_gap_minus_one": VIOLATED}
    assert all(c.extra["steps"] == steps for c in cs)
    assert cs[0].extra["final"]["exact"] == gap == Shape(n, 32).settled_max(n)
    assert gap < claimed_range(resolve_params(PercpuCounterTree, {"ncpus": n, "batch": 32}))[0]


def test_every_table_row_builds_and_its_settled_bound_is_inside_the_header_range():
    # For every nr_cpus_order the kernel accepts (nr_cpu_ids 1 .. 2^20), at the smallest and largest CPU
    # count of that order: the loop's items add up to nr_items - 1, the multiplier is nr_levels * 2^order,
    # and what a settled tree can hold back is below the header's under (and 0 above, below its over).
    for order in range(21):
        for n in sorted({(1 << order) // 2 + 1, 1 << order}):
            for batch in (2, 32):
                sh = Shape(n, batch)
                assert sh.order == order
                assert sh.multiplier == sh.nr_levels * (1 << order)
                assert 0 <= sh.settled_max(n) < max(1, batch * sh.multiplier)
