# SPDX-License-Identifier: GPL-2.0-only
"""Issue 29: percpu_hotplug, percpu_eager_calls and percpu_lazy_rfc under tso and lkmm (their annotations).

Each test pins a verdict at a small point with its state count and, for a violation, the shortest trace's
shape; the sc state counts are those before the annotations (they change nothing under sc).
"""
from __future__ import annotations

import pytest

from checker.explore import explore
from checker.ordering.declare import MEMORY
from checker.specs.percpu_eager_calls import ADDS, PercpuEagerCalls
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug
from checker.specs.percpu_lazy_rfc import DESIGN as RFC, PercpuLazyRfc
from tests.test_weak_seeds import _checked_everywhere, _failing

SC, TSO, LKMM = MEMORY.sc, MEMORY.tso, MEMORY.lkmm

H2 = dict(design=DESIGN.H2, ncpus=2, ops=1)


def test_hotplug_annotations_keep_the_sc_states():
    """Under sc the annotations (and the control CPU's role) change nothing."""
    r = explore(PercpuHotplug(**H2))
    assert r.complete and _failing(r) == []
    assert r.states == explore(PercpuHotplug(**H2, memory=SC)).states


@pytest.mark.differential
def test_hotplug_under_tso_take_cpu_down_is_stop_machines_barrier():
    """Mainline (H2, C adds) under tso: every claim holds; the SC-only sum is not_applicable and
    sum_within_bound holds. (Before the dying mask was weak, take_cpu_down touched no weak variable and was no
    barrier: local_bound, read_bound and conservation failed in 4 steps, the dead CPU's last this_cpu_add still
    in its store buffer when the control CPU folded its local.)"""
    r = explore(PercpuHotplug(**H2, memory=TSO), engine="compiled")
    assert r.complete and _failing(r) == []
    # (an SC-only property is left out at a weak point: the report says not_applicable)
    assert "sum_exact_without_overlap" not in r.verdicts and r.verdicts["sum_within_bound"] == "holds"
    assert r.states == 5963


@pytest.mark.differential
def test_hotplug_sum_exact_is_an_sc_notion_under_tso():
    """Checked anyway: an add SC placed before the sum waits in its CPU's store buffer while the summer reads
    memory under fbc->lock."""
    r = explore(_checked_everywhere(PercpuHotplug, "sum_exact_without_overlap")(**H2, memory=TSO),
                engine="compiled")
    trace = r.outcomes["sum_exact_without_overlap"].trace
    assert r.verdicts["sum_exact_without_overlap"] == "violated" and trace[-1].action == "sum_unlock"
    add = [st for st in trace if st.action == "try_cmpxchg"]
    assert add and not any(st.action == "flush" for st in trace[trace.index(add[-1]):])


@pytest.mark.differential
def test_hotplug_under_lkmm_at_mainlines_point():
    r = explore(PercpuHotplug(**H2, memory=LKMM), engine="compiled")
    assert r.complete and _failing(r) == []
    assert r.verdicts["sum_within_bound"] == "holds"


EC_SET = dict(bits=64, ncpus=1, batch=2, ops=2, adds=ADDS.batch, amount=1, readers=0, summers=0, cmp=0, setters=1,
              set_to=0, retune=0)


def test_eager_calls_racing_set_breaks_conservation_under_tso():
    """A set racing a lockless add (its callers' mistake) under tso: the setter's zero waits in its buffer, the
    add lands, the set's E is computed from the locals the setter sees (5 steps)."""
    r = explore(PercpuEagerCalls(**EC_SET, memory=TSO))
    assert r.verdicts["racing_set_breaks_conservation_under_weak_memory"] == "violated"
    assert "set_then_sum_reads_the_value_set" not in r.verdicts  # (sc_only: not_applicable in the report)
    assert "conservation" not in r.verdicts  # (at this point it is the named violation above)
    trace = r.outcomes["racing_set_breaks_conservation_under_weak_memory"].trace
    assert [st.action for st in trace] == ["set_lock", "set_zero", "add_fast", "flush", "set_store"]
    assert r.states == 411
    sc = explore(PercpuEagerCalls(**EC_SET))
    assert sc.verdicts["conservation"] == "holds" and "racing_set_breaks_conservation_under_weak_memory" not in \
        sc.verdicts


@pytest.mark.differential
def test_eager_calls_limited_overshoot_bound_fails_under_tso():
    """The finding: the slow path's walk misses a completed fast add still in its CPU's store buffer, so E
    passes limit + (ncpus - 1) * F (25 steps, the last a fast add whose check passed long before)."""
    point = dict(bits=64, ncpus=2, batch=2, ops=3, adds=ADDS.limited, amount=2, limit=4, readers=0, summers=0,
                 cmp=0, setters=0, retune=0, memory=TSO)
    r = explore(_checked_everywhere(PercpuEagerCalls, "limit_overshoot_bounded")(**point), engine="compiled")
    trace = r.outcomes["limit_overshoot_bounded"].trace
    assert r.verdicts["limit_overshoot_bounded"] == "violated" and len(trace) == 25
    assert trace[-1].action == "limited_fast_add" and r.states == 28710
    assert explore(PercpuEagerCalls(**{**point, "memory": SC})).verdicts["limit_overshoot_bounded"] == "holds"


LIMITED = dict(bits=64, ncpus=2, batch=2, ops=3, adds=ADDS.limited, amount=2, limit=4, readers=0, summers=0, cmp=0,
               setters=0, retune=0)


@pytest.mark.differential
@pytest.mark.parametrize("memory, states, steps", [(TSO, 28710, 25), (LKMM, 37229, 21)])
def test_eager_calls_limited_overshoot_under_weak_memory_is_2_batch_minus_1_per_other_cpu(memory, states, steps):
    """The weak-memory counterpart of limit_overshoot_bounded: E <= limit + (ncpus - 1) * (2 * batch - 1) holds
    under tso and lkmm, and is reached (E = 7 at limit 4) where the SC bound, with F = amount = 2, says 6."""
    r = explore(PercpuEagerCalls(**LIMITED, memory=memory), engine="compiled")
    assert r.complete and r.states == states and _failing(r) == []
    assert r.verdicts["limit_overshoot_bounded_under_weak_memory"] == "holds"
    assert "limit_overshoot_bounded" not in r.verdicts  # sc_only: not_applicable here
    tight = r.outcomes["limit_overshoot_under_weak_memory_is_tight"]
    # (the last step is a limited add's: its fast path, or under lkmm equally short, its fold)
    assert tight.verdict == "holds" and len(tight.trace) == steps
    assert tight.trace[-1].action in ("limited_fast_add", "limited_fold")
    sc = explore(PercpuEagerCalls(**LIMITED))
    assert sc.verdicts["limit_overshoot_bounded_under_weak_memory"] == "holds"
    assert "limit_overshoot_under_weak_memory_is_tight" not in sc.verdicts  # (under sc the overshoot stops at 6)


@pytest.mark.parametrize("memory, states", [(SC, 280), pytest.param(TSO, 895, marks=pytest.mark.differential),
                                             pytest.param(LKMM, 1117, marks=pytest.mark.differential)])
def test_hotplug_limited_overshoot_bound_holds_under_every_model(memory, states):
    """percpu_hotplug's limited_add (H3): limited_add_keeps_the_limit is SC-only (the lkmm finding);
    limit_overshoot_bounded, E <= limit + (ncpus - 1) * (2 * batch - 1), holds under sc, tso and lkmm, and the
    limit is passed (the_limit_is_passed), so the bound is not met by never passing it."""
    r = explore(PercpuHotplug(design=DESIGN.H3, limited=1, ncpus=2, summers=0, memory=memory))
    assert r.complete and r.states == states and _failing(r) == []
    assert r.verdicts["limit_overshoot_bounded"] == "holds" and r.verdicts["the_limit_is_passed"] == "holds"
    assert ("limited_add_keeps_the_limit" in r.verdicts) == (memory == SC)


@pytest.mark.differential
@pytest.mark.parametrize("memory", [TSO, LKMM])
def test_lazy_rfc_one_cpu_keeps_every_property(memory):
    """RFC 2/3 as posted at one CPU (a negative amount, a reader): every claim holds under tso and lkmm too."""
    r = explore(PercpuLazyRfc(design=RFC.posted, ncpus=1, mod_bits=0, neg=1, readers=1, memory=memory),
                engine="compiled")
    assert r.complete
    assert _failing(r) == ["posted_read_positive_goes_negative"]  # (expected: the posted read_positive's bug)


@pytest.mark.differential
@pytest.mark.parametrize("module, cls, prop, point", [
    ("hotplug_notifier_dead_only", "HotplugNotifierDeadOnly", "sum_exact_once_folded", {"ncpus": 2}),
    ("hotplug_dying_partial", "HotplugDyingPartial", "sum_exact_without_overlap", {"ncpus": 2}),
    ("eager_set_skips_a_cpu", "EagerSetSkipsACpu", "set_then_sum_reads_the_value_set", {"setters": 1, "ncpus": 2}),
    ("hotplug_limited_online_during_add", "HotplugLimitedOnlineDuringAdd", "limited_add_keeps_the_limit",
     {"ncpus": 2})])
@pytest.mark.parametrize("memory", [TSO, LKMM])
def test_bug_specs_find_their_sc_bug_under_weak_memory(module, cls, prop, point, memory):
    """Their expected property is SC-only in the base spec; they check it under every model, and the bug (an SC
    trace) is found under tso and lkmm too, not passed as not_applicable."""
    import importlib

    spec = getattr(importlib.import_module(f"checker.specs.bugs.{module}"), cls)
    r = explore(spec(**point, memory=memory), engine="compiled")
    assert r.verdicts[prop] == "violated"
