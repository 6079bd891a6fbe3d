# SPDX-License-Identifier: GPL-2.0-only
"""rss_split (split RSS counting before v6.2) and its bug rss_exit_without_sync.

The numbers are pinned: state counts, and the lengths of the shortest traces,
which follow from the threshold logic (each fault is two steps:
check_sync_rss_stat, then add_mm_counter_fast).
"""
import pytest

from checker import explore
from checker.specs.bugs.rss_exit_without_sync import RssExitWithoutSync
from checker.specs.rss_split import RssSplit

HOLDS, VIOLATED = "holds", "violated"

#: Every property of the base sweep (readers=0, unmaps=0, faults=2T+3): all
#: hold except the bound one smaller, which must fail.
BASE = {
    "no_lost_update": HOLDS, "exact_after_exit": HOLDS, "events_bound": HOLDS, "cache_tracks_events": HOLDS,
    "per_thread_bound": HOLDS, "per_thread_bound_is_tight": HOLDS, "per_thread_bound_minus_one": VIOLATED,
    "first_window_bound": HOLDS, "first_window_is_tight": HOLDS, "a_threshold_sync_happens": HOLDS,
    "read_bound": HOLDS, "read_bound_is_tight": HOLDS, "no_overflow": HOLDS, "no_deadlock": HOLDS,
    "exited_thread_holds_nothing": HOLDS, "events_count_started_faults": HOLDS, "per_thread_low_bound": HOLDS,
}


@pytest.mark.parametrize("params, states", [
    (dict(threads=1, T=1, U=1), 53),
    (dict(threads=2, T=1, U=1), 1421),
    (dict(threads=2, T=1, U=2), 19228),
    (dict(threads=1, T=2, U=2), 649),
    (dict(threads=1, T=0, U=3), 155),
])
def test_verdicts_and_state_counts(params, states):
    e = explore(RssSplit(cow=0, **params))
    assert e.complete
    assert e.verdicts == BASE
    assert e.states == states


@pytest.mark.parametrize("T, U", [(0, 1), (1, 1), (1, 2), (2, 1), (2, 2)])
def test_per_thread_bound_witness_is_2T_plus_3_faults(T, U):
    # T+1 faults fill the first window, fault T+2 syncs at its start and adds
    # its own delta, T+1 more faults follow: 2T+3 faults of 2 steps each.
    e = explore(RssSplit(cow=0, threads=1, T=T, U=U))
    w = e.outcomes["per_thread_bound_is_tight"].trace
    assert len(w) == 2 * (2 * T + 3)
    assert [s.action for s in w] == ["check_sync_rss_stat", "add_mm_counter_fast"] * (2 * T + 3)
    # The T+2 faults from the syncing one on are all of U pages (the first
    # window's amounts are synced away, so any amount will do there).
    adds = [s.choices["amount"] for s in w if s.action == "add_mm_counter_fast"]
    assert adds[T + 1:] == [U] * (T + 2)
    assert w[-1].changes["cache[0]"] == (T + 2) * U
    # The sync is the check of fault T+2 (step 2T+3): it zeroes the cache.
    assert w[2 * T + 2].changes["cache[0]"] == 0
    assert w[2 * T + 2].changes["count"] == sum(adds[:T + 1])
    # The bound one smaller fails at the same state.
    assert len(e.outcomes["per_thread_bound_minus_one"].trace) == len(w)


def test_first_window_and_first_sync():
    e = explore(RssSplit(cow=0, threads=1, T=2, U=1))
    # T+1 faults without a sync; the check of fault T+2 is the first sync.
    assert len(e.outcomes["first_window_is_tight"].trace) == 2 * (2 + 1)
    assert len(e.outcomes["a_threshold_sync_happens"].trace) == 2 * (2 + 1) + 1


def test_read_bound_is_reached_by_every_thread_at_once():
    e = explore(RssSplit(cow=0, threads=2, T=1, U=2))
    w = e.outcomes["read_bound_is_tight"].trace
    assert len(w) == 2 * 2 * (2 * 1 + 3)  # both threads' witnesses, interleaved
    assert {s.cpu for s in w} == {0, 1}


def test_unmap_and_reader_show_why_get_mm_counter_clamps():
    e = explore(RssSplit(cow=0, threads=2, T=1, U=1, faults=2, unmaps=1, readers=1))
    assert e.states == 2814
    assert all(o.verdict == HOLDS for n, o in e.outcomes.items())
    # Thread 0 faults a page in (cached), thread 1 unmaps it: count = -1.
    neg = e.outcomes["count_goes_negative"].trace
    assert [(s.cpu, s.action) for s in neg] == [
        (0, "check_sync_rss_stat"), (0, "add_mm_counter_fast"), (1, "zap_pte_range")]
    assert neg[-1].changes["count"] == -1
    clamped = e.outcomes["a_read_is_clamped"].trace
    assert [s.action for s in clamped][-1] == "get_mm_counter" and len(clamped) == 4


@pytest.mark.parametrize("params", [dict(threads=1, T=1, U=1), dict(threads=2, T=1, U=2)])
def test_symmetry_keeps_verdicts(params):
    full = explore(RssSplit(cow=0, **params), symmetry=False)
    reduced = explore(RssSplit(cow=0, **params), symmetry=True)
    assert full.verdicts == reduced.verdicts == BASE
    assert reduced.states <= full.states


def test_symmetry_shrinks_two_threads():
    full = explore(RssSplit(cow=0, threads=2, T=1, U=1), symmetry=False)
    reduced = explore(RssSplit(cow=0, threads=2, T=1, U=1), symmetry=True)
    assert (full.states, reduced.states) == (2784, 1421)


def test_exit_without_sync_loses_late_faults():
    e = explore(RssExitWithoutSync(cow=0, threads=1, T=1, U=1))
    assert e.verdicts == {**BASE, "no_lost_update": VIOLATED, "exact_after_exit": VIOLATED}
    # Shortest: 4 steps. do_exit's sync empties the cache, so only a fault
    # after it (the late put_user(clear_child_tid) fault, two steps) leaves
    # anything to lose, and exit_mm then frees it unsynced. With one thread,
    # that thread exiting is also the end of the mm, so check_mm's test
    # fails at the same state.
    for name in ("no_lost_update", "exact_after_exit"):
        t = e.outcomes[name].trace
        assert [s.action for s in t] == ["do_exit_sync", "check_sync_rss_stat", "add_mm_counter_fast", "exit_mm"]
        assert t[-1].changes["cache[0]"] == 0


def test_exit_without_sync_with_two_threads():
    e = explore(RssExitWithoutSync(cow=0, threads=2, T=1, U=2))
    assert e.verdicts == {**BASE, "no_lost_update": VIOLATED, "exact_after_exit": VIOLATED}
    assert len(e.outcomes["no_lost_update"].trace) == 4
    # check_mm needs the other thread gone too: its do_exit_sync and exit_mm.
    assert len(e.outcomes["exact_after_exit"].trace) == 6
    # The loss is at most one window per exiting thread, so the read bound survives.
    assert e.outcomes["read_bound"].verdict == HOLDS
    for sym in (False, True):
        assert explore(RssExitWithoutSync(cow=0, threads=2, T=1, U=1), symmetry=sym).verdicts == e.verdicts


# -- issue 18 point 5: the fault path also decrements (wp_page_copy's COW, do_swap_page's MM_SWAPENTS) --------
@pytest.mark.parametrize("params, states", [
    (dict(threads=1, T=1, U=1), 141),
    (dict(threads=1, T=2, U=2), 1743),
    (dict(threads=2, T=1, U=1), 11286),
])
def test_decrements_keep_the_bounds_and_reach_a_negative_cache(params, states):
    e = explore(RssSplit(cow=1, **params))
    assert e.complete and e.states == states
    assert e.verdicts == {**BASE, "a_cache_goes_negative": HOLDS}
    # A negative cache, shortest: with one thread, a fault of +1, do_exit's sync, and a late fault in the
    # exit path that COWs the page (5 steps); with two, thread 1 COWs the page thread 0 still caches (4).
    w = e.outcomes["a_cache_goes_negative"].trace
    assert w[-1].action == "dec_mm_counter_fast" and w[-1].changes["exact"] == 0
    assert len(w) == (5 if params["threads"] == 1 else 4)


def test_decrement_bounds_are_proved_for_any_thread_count():
    from checker.prove import prove_checks

    checks = [c for c in prove_checks(RssSplit) if c.kind == "proof" and c.params.get("cow") == 1]
    got = {c.property: c.verdict for c in checks}
    for prop in ("read_bound", "per_thread_bound", "per_thread_low_bound", "cache_tracks_events", "no_lost_update"):
        assert got[prop] == HOLDS, prop
    assert all(c.params["threads"] == "1..1048575" for c in checks)
