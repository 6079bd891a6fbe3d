# SPDX-License-Identifier: GPL-2.0-only
"""Specs held to the kernel code and to what its callers rely on: the 2019 stack release paths, limited_add's unknown
at entry, percpu_counter_set's promise, RFC v2's plain publish, SC-only claims and their weak-memory counterparts,
the counter tree and rss_split under weak memory; each verdict pinned with its trace's shape.

The check_mm / exit_mm barrier items are pinned in tests/test_weak_seeds.py beside the other ordering seeds.
"""
from checker.explore import explore
from checker.language.compile import Model
from checker.specs.stack_cache_2019 import StackCache2019


# -- item 7: stack_cache_2019 releases as the 2019 kernel/fork.c did ----------------------------------------------

def test_2019_stack_release_paths_are_finish_task_switch_holders_and_hardirq_not_softirq():
    """No delayed_put_task_struct() release (free_task() only warns with THREAD_INFO_IN_TASK); a preemptible
    try_get_task_stack() holder and a hard-irq sched_show_task() release instead; no irqs-off get_wchan()."""
    m = Model(StackCache2019)
    names = {a.info.name for a in m.actions}
    assert "free_thread_stack_softirq" not in names and "put_task_stack_hardirq" in names
    # the holder is task_stack's choice at its last put; the release is its this_cpu_cmpxchg loop
    assert any(n.startswith("task_stack_") and "this_cpu_cmpxchg" in n for n in names)


def test_2019_preemptible_holder_release_migrates_between_its_cmpxchgs():
    e = explore(StackCache2019(ncpus=2, ntasks=1, nr_cached=2, migrations=1, failures=0))
    assert e.complete and e.states == 25
    o = e.outcomes["a_preemptible_release_migrates"]
    assert o.verdict == "holds"
    holder, last = o.trace[-2:]
    assert last.action == "migrate" and holder.action.startswith("task_stack_")
    assert any(k.startswith("rel[") and v == 1 for k, v in holder.changes.items())  # a holder's release
    for prop in ("memory_safe", "stack_in_one_place", "memcg_charge_balanced", "freed_never_handed_out"):
        assert e.verdicts[prop] == "holds", prop


# -- item 8: limited_add's unknown is computed at entry -------------------------------------------------------------

def test_limited_add_unknown_at_entry_misses_a_cpu_onlined_during_the_add():
    """unknown = batch * num_online_cpus() at entry, as the kernel: a CPU onlined before the lock fills its local
    and the add accepts without a sum past the limit (H3 too). With unknown at the lock (before issue 29) this
    point held (1323 states)."""
    from checker.specs.bugs.hotplug_limited_online_during_add import HotplugLimitedOnlineDuringAdd

    r = explore(HotplugLimitedOnlineDuringAdd(ncpus=2))
    assert r.complete and r.states == 1439
    out = r.outcomes["limited_add_keeps_the_limit"]
    assert out.verdict == "violated"
    acts = [s.action for s in out.trace]
    assert acts == ["limited_fast"] * 4 + ["take_cpu_down", "limited_slow", "cpu_up_start", "cpu_online"] + \
        ["limited_fast"] * 4 + ["limited_lock"]
    assert out.trace[5].changes["unknown[0]"] == 4  # batch * one online CPU, at entry
    assert out.trace[-1].changes["lim_over"] == 1


# -- item 9: properties state the callers' promise ----------------------------------------------------------------

def test_set_promise_catches_a_set_that_leaves_a_local_behind():
    """After a set no add raced, the counter reads the value set: a walk that misses a CPU's local is caught (E
    was the value set plus the model's leftover locals before issue 29, which a skipped local satisfied)."""
    from checker.specs.bugs.eager_set_skips_a_cpu import EagerSetSkipsACpu
    from checker.specs.percpu_eager_calls import PercpuEagerCalls

    ok = explore(PercpuEagerCalls(setters=1, ncpus=2))
    assert ok.verdicts["set_then_sum_reads_the_value_set"] == "holds" and ok.verdicts["conservation"] == "holds"
    r = explore(EagerSetSkipsACpu(ncpus=2))
    assert r.complete and r.states == 1630
    for prop in ("set_then_sum_reads_the_value_set", "conservation"):
        t = r.outcomes[prop].trace
        assert [s.action for s in t] == ["add_fast", "set_lock", "set_zero", "set_store"]
        assert t[2].choices["other"] != t[0].cpu  # the walk zeroed the other CPU's local, not the one added to


# -- item 2: RFC v2's plain publish of fbc->counters after pcpu_alloc's memset -----------------------------------

def test_rfc_v2_plain_publish_loses_an_add_to_the_memset_under_lkmm_only():
    """The posted v2 stores fbc->counters plain after pcpu_alloc's memset: under lkmm a reader that sees the
    pointer adds to the slot's old contents (local_age=1) and the memset wipes it: 3 steps. One adder, one add.
    Release/acquire publishing holds."""
    from checker.ordering.declare import MEMORY
    from checker.specs.percpu_atomic_mode_rfc import FOLD, PUBLISH, PercpuAtomicModeRfc

    point = dict(ncpus=1, ops=1, fold=FOLD.atomic, garbage=1)
    sc = explore(PercpuAtomicModeRfc(**point))
    assert sc.states == 32 and set(sc.verdicts.values()) == {"holds"}
    fixed = explore(PercpuAtomicModeRfc(**point, publish=PUBLISH.release, memory=MEMORY.lkmm))
    assert fixed.complete and set(fixed.verdicts.values()) == {"holds"}
    r = explore(PercpuAtomicModeRfc(**point, memory=MEMORY.lkmm))
    assert r.states == 40
    out = r.outcomes["posted_publish_unordered_after_zeroing"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == ["switch_to_pcpu", "add_mm_counter", "add_batch_fast"]
    assert out.trace[-1].choices["local_age"] == 1  # the slot's store before the memset
    assert {k for k, v in r.verdicts.items() if v != "holds"} == {"posted_publish_unordered_after_zeroing"}


# -- SC-only properties: declared, not checked under tso/lkmm, reported not_applicable (not a pass, no failure) ------

def test_sc_only_property_is_not_applicable_under_lkmm_with_its_weak_counterpart_named():
    from checker.engines.explore import not_applicable_checks
    from checker.ordering.declare import MEMORY
    from checker.result import NOT_APPLICABLE
    from checker.specs.percpu_lazy import PercpuLazy
    from checker.verify import Report

    sc = Model(PercpuLazy(ncpus=2, readers=1))
    assert sc.not_applicable == () and "read_exact_at_quiescence" in {p.name for p in sc.properties}
    m = Model(PercpuLazy(ncpus=2, readers=1, memory=MEMORY.lkmm))
    assert [p.name for p in m.not_applicable] == ["read_exact_at_quiescence"]
    assert "read_exact_at_quiescence" not in {p.name for p in m.properties}
    assert "read_within_adds" in {p.name for p in m.properties}  # the weak-memory claim, checked there
    (c,) = not_applicable_checks(PercpuLazy, m, 0, "explore")
    assert c.verdict == NOT_APPLICABLE and c.verdict != "holds" and c.status == "ok"
    assert "lkmm" in c.reason and "read_within_adds" in c.reason
    report = Report(checks=[c])
    assert report.exit_code == 0 and report.counts()["not_applicable"] == 1 and report.counts()["holds"] == 0


def test_a_bug_that_is_sc_only_at_a_weak_point_is_not_a_pass():
    """A bug spec whose expected violation is not checked at a tso/lkmm point did not find its bug: that point
    fails ("not looked for"), it does not count as expected."""
    import dataclasses

    from checker.engines.explore import not_applicable_checks
    from checker.ordering.declare import MEMORY
    from checker.report.text import not_as_expected
    from checker.specs.percpu_lazy import PercpuLazy
    from checker.verify import Report

    (c,) = not_applicable_checks(PercpuLazy, Model(PercpuLazy(ncpus=2, readers=1, memory=MEMORY.lkmm)), 0, "explore")
    bug = dataclasses.replace(c, expected="violated", bug=True)
    report = Report(checks=[bug])
    assert bug.status == "failed" and report.exit_code == 1
    assert "expected bug not looked for" in not_as_expected(report)[0]


def test_sc_only_declarations_of_the_eager_counter_name_their_counterparts():
    from checker.language.model import info
    from checker.specs.percpu_eager import PercpuEager

    props = info(PercpuEager).properties
    assert {n: props[n].weak_counterpart for n in ("sum_exact_without_overlap", "read_within_bound",
                                                  "read_positive_within_bound")} == {
        "sum_exact_without_overlap": "sum_within_bound", "read_within_bound": "read_bound",
        "read_positive_within_bound": "read_bound"}
    assert all(props[n].sc_only for n in ("sum_exact_without_overlap", "read_within_bound"))
    assert not props["sum_within_bound"].sc_only


# -- item 3: weak memory where specs were not annotated -----------------------------------------------------------

def test_counter_tree_relaxed_carries_keep_every_property_under_tso_and_lkmm():
    """this_cpu_add_return on level 0, atomic_long_add_return_relaxed on the items, atomic_long_add on the
    approximate sum: all atomic read-modify-writes, so relaxed ordering changes no verdict (states pinned)."""
    from checker.ordering.declare import MEMORY
    from checker.specs.percpu_counter_tree import PercpuCounterTree

    # sc: 81 under the tree's structural symmetry (151 unreduced); tso and lkmm use no symmetry
    for memory, states in ((MEMORY.sc, 81), (MEMORY.tso, 279), (MEMORY.lkmm, 289)):
        r = explore(PercpuCounterTree(ncpus=2, ops=1, memory=memory))
        assert r.complete and r.states == states and set(r.verdicts.values()) == {"holds"}, memory


def test_rss_split_under_weak_memory_read_bound_holds_and_the_read_at_a_moment_is_sc_only():
    from checker.ordering.declare import MEMORY
    from checker.specs.rss_split import RssSplit

    point = dict(threads=2, T=0, U=1, faults=2, readers=1, cow=0)
    assert explore(RssSplit(**point)).verdicts["read_within_bound"] == "holds"
    for memory, states in ((MEMORY.tso, 973), (MEMORY.lkmm, 4196)):
        r = explore(RssSplit(**point, memory=memory))
        assert r.complete and r.states == states and set(r.verdicts.values()) == {"holds"}, memory
        assert "read_within_bound" not in r.verdicts and r.verdicts["read_bound"] == "holds"
        assert "store_buffer_fills" not in r.verdicts  # nothing rss_split does is buffered on x86
