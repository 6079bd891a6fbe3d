# SPDX-License-Identifier: GPL-2.0-only
"""Equalities observed in a small point's reachable states (checker.prove.observed): what a CPU's registers hold
at each place in its code, as candidates for --prover infer."""
from __future__ import annotations

from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.loader import resolve
from checker.prove.generalise import CandidateText
from checker.prove.observed import observed, reachable, small_equalities


def test_a_register_holding_a_sum_of_two_numbers_is_found():
    points = [(x, a, x + a) for x in range(4) for a in (1, 2)]  # (local, amount, count = local + amount)
    assert small_equalities(points) == [((1, 1, -1), 0)]


def test_a_number_fixed_at_a_place_is_asked_alone_and_left_out_of_the_sums():
    points = [(x, 5, 0) for x in range(3)]
    assert small_equalities(points) == [((0, 1, 0), 5), ((0, 0, 1), 0)]


def test_points_that_span_the_space_satisfy_no_equality():
    assert small_equalities([(0, 0), (1, 0), (0, 1)]) == []
    assert small_equalities([]) == []


def test_one_point_gives_the_simple_equalities_not_a_basis():
    # One state at a place (percpu_eager B at one CPU folds only at local == 31, amount == 1): every number is
    # fixed, each asked alone; no sum with coefficients read off the values (32 * local == 31 * count).
    eqs = small_equalities([(31, 1, 32)])
    assert eqs == [((1, 0, 0), 31), ((0, 1, 0), 1), ((0, 0, 1), 32)]


def test_a_sum_whose_value_is_not_zero_is_not_asked():
    # x - y is 1 at every point: a constant read off one point's values, not a shape the code keeps
    assert small_equalities([(1, 0, 0), (2, 1, 5), (3, 2, 9)], max_terms=2) == []


def test_the_first_states_are_visited_in_breadth_first_order_and_capped():
    cls = resolve(["percpu_eager"])[0]
    model = Model(cls, resolve_params(cls, {"ncpus": 1, "batch": 4, "ops": 4}))
    states = reachable(model)
    assert states[0] == model.initial_states()[0]
    assert reachable(model, 10) == states[:10]


def test_percpu_eager_b_holds_what_it_read_until_its_sub():
    """B's registers between local_irq_save's read and the sub: ``count == local + amount``, the lemma
    ``b_count_is_what_it_read``, observed at one CPU and stated for any CPU ``c``."""
    cls = resolve(["percpu_eager"])[0]
    model = Model(cls, resolve_params(cls, {"ncpus": 1, "irq": 1}))
    text = CandidateText(model)
    found = {text.text(c) for c in observed(model, "adders")}
    for place in ("L25", "L26", "L29"):
        assert (f"Or(s.adders_pc[c] != 'percpu_counter_add_batch_b_{place}', "
                "s.local[c] + s.adders_amount[c] - s.adders_count[c] == 0)") in found
    # and nothing about another CPU, nor a shared variable: the candidates are about CPU c's numbers
    assert all("[d]" not in t and "s.count " not in t for t in found)


def test_the_greatest_value_seen_is_a_bound_read_as_a_parameter():
    """rss_split's events_bound (check_sync_rss_stat raises events only while events <= T): at one thread
    with T=2 events reaches 3, which reads as ``T + 1``."""
    cls = resolve(["rss_split"])[0]
    model = Model(cls, resolve_params(cls, {"threads": 1, "T": 2, "U": 2, "cow": 0}))
    cands = observed(model, "thread")
    text = CandidateText(model)
    found = [text.text(c) for c in cands]
    assert "s.events[c] <= s.T + 1" in found and "s.events[c] >= 0" in found
