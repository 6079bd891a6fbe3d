# SPDX-License-Identifier: GPL-2.0-only
"""The fast-path models refine the specs (DESIGN principle 7), checked by Hypothesis at 64 CPUs.

Each model operation is one whole call by one CPU. From a spec state that
matches the model's, the same call is run in the spec as an uninterrupted
sequence of that CPU's actions until the CPU is back where it started a
call; both must end in matching states, and the model's lock counts must
equal the lock actions of that sequence.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.language.compile import Model
from checker.language.declare import DISABLED
# the pc machine, whose steps have names this conformance test follows (the built-in port equals it state for
# state: tests/test_process_port.py)
from pc_machines.percpu_eager import ADD, SUM, VARIANT, PercpuEager
from pc_machines.percpu_lazy import ADD as LADD
from pc_machines.percpu_lazy import PercpuLazy
from checker.specs.percpu_grouped import HEAP, STEP, PercpuGrouped
from checker.specs.rss_split import THREAD, RssSplit
from checker.types import NOBODY
from checker.models.costs import FBC_LOCK, PCPU_ALLOC_MUTEX, PCPU_LOCK, PERCPU_COUNTERS_LOCK
from checker.models.eager import EagerCounter
from checker.models.grouped import MmInit
from checker.models.lazy import LazyCounter, decode, encode_add
from checker.models.percpu_alloc import PercpuAllocator
from checker.models.rss_split import SplitRss

NCPUS = 64
FAST = settings(max_examples=25, deadline=None, derandomize=True, database=None)


def cpu_steps(model, s, cpu, only=None, **want):
    """Every enabled step of ``cpu`` from ``s`` (of the actions named in ``only``, if given) whose
    choices agree with ``want``: (name, next state)."""
    out = []
    for act in model.actions:
        if cpu not in act.cpus or (only is not None and act.info.name not in only):
            continue
        for args in act.choices:
            kw = dict(zip(act.arg_names, args))
            if any(k in kw and kw[k] != v for k, v in want.items()):
                continue
            r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
            if r is DISABLED or not r.guard:
                continue
            out.append((act.info.name, model.apply(s, r.updates, act)))
    return out


def run_call(model, s, cpu, at_rest, only=None, **want):
    """One whole call by ``cpu``: its enabled steps (of the actions in ``only``, if given) whose
    choices agree with ``want``, until ``at_rest``. For one CPU with its choices fixed the spec is
    deterministic: exactly one step is enabled each time (a scan may visit CPUs in any order; it
    takes them in ascending order). Returns the action names and the states after each step."""
    names, states = [], []
    while True:
        steps = cpu_steps(model, s, cpu, only, **want)
        assert steps, (cpu, want, names, s)
        assert len({n for n, _ in steps}) == 1, (names, steps)
        name, s = steps[0]
        names.append(name)
        states.append(s)
        if at_rest(s):
            return names, states


# -- eager percpu_counter ----------------------------------------------------------------
_eager_ops = st.lists(st.tuples(st.one_of(st.integers(0, 2), st.integers(0, NCPUS - 1)),
                                st.sampled_from((-1, 1, 5))), min_size=20, max_size=40)


@FAST
@given(st.sampled_from(("A", "B", "C")), _eager_ops)
def test_eager_add_and_sum_match_the_spec_at_64_cpus(variant, ops):
    spec = Model(PercpuEager, PercpuEager(variant=getattr(VARIANT, variant), ncpus=NCPUS, batch=4, large=5,
                                          ops=40, summers=1).params)
    s = spec.initial_states()[0]
    ctr = EagerCounter(NCPUS, 4, variant)
    for cpu, amount in ops:
        cost = ctr.add(cpu, amount)
        names, states = run_call(spec, s, cpu, lambda x, cpu=cpu: x.pc[cpu] == ADD.idle, amount=amount)
        s = states[-1]
        assert (s.count, list(s.local[:NCPUS])) == (ctr.count, ctr.local)
        assert s.exact == ctr.exact()
        assert cost.locks[FBC_LOCK] == sum(n in ("acquire", "lock_irqsave") for n in names)
    summer = spec.roles["summer"][0]
    value, cost = ctr.sum()
    names, states = run_call(spec, s, summer, lambda x: x.sum_pc[summer] == SUM.done)
    assert states[-2].sum_acc[summer] == value == ctr.exact()  # what sum_unlock returns
    assert cost.locks[FBC_LOCK] == names.count("sum_lock") == 1
    assert cost.cpu_work == names.count("sum_local") == NCPUS


def test_eager_fast_path_takes_no_lock_and_a_fold_takes_one():
    ctr = EagerCounter(NCPUS, 4)
    costs = [ctr.add(7, 1) for _ in range(4)]
    assert [c.locks[FBC_LOCK] for c in costs] == [0, 0, 0, 1]
    assert (ctr.count, ctr.local[7]) == (4, 0)


# -- grouped allocation in mm_init / __mmdrop -------------------------------------------------
_PCPU_SITES = ("cid", "rss0", "rss1", "rss2", "rss3")
_LIST_LOCK_ACTIONS = ("register", "fail_pcpu_unlist", "destroy_unlist")
_ALLOC_ACTIONS = ("mm_alloc_cid", "percpu_counter_init_many", "percpu_counter_init")


def _live_pcpu(s):
    return sum(bool(HEAP.is_live(s, site)) for site in _PCPU_SITES)


def _frees(states, before):
    live = [_live_pcpu(before)] + [_live_pcpu(x) for x in states]
    return sum(a - b for a, b in zip(live, live[1:]) if b < a)


# Every failure point of both ladders (fail_at 0: none fails), so a plain parametrisation covers them all.
@pytest.mark.parametrize("grouped", (False, True))
@pytest.mark.parametrize("fail_at", range(0, 9))
def test_mm_init_and_mmdrop_match_the_spec(grouped, fail_at):
    """The grouped spec has one task CPU and no per-CPU memory contents; the model's 64 possible
    CPUs only size its memset and check_mm work."""
    spec = Model(PercpuGrouped, PercpuGrouped(grouped=int(grouped), folds=0, fail_at=fail_at).params)
    s0 = spec.initial_states()[0]
    alloc = PercpuAllocator(NCPUS)
    mi = MmInit(alloc, grouped=grouped, with_cid=grouped)
    mm, cost = mi.mm_init(fail_at)
    names, states = run_call(spec, s0, 0, lambda x: x.step in (STEP.in_use, STEP.done))
    s = states[-1]
    assert (mm is None) == (s.step == STEP.done and s.returned == 1)
    assert cost.locks[PERCPU_COUNTERS_LOCK] == sum(n in _LIST_LOCK_ACTIONS for n in names)
    assert cost.pcpu_allocs == cost.locks[PCPU_ALLOC_MUTEX] == sum(n in _ALLOC_ACTIONS for n in names)
    assert cost.pcpu_frees == _frees(states, s0)
    assert cost.locks[PCPU_LOCK] == cost.pcpu_allocs + cost.pcpu_frees
    assert len(alloc.areas) == _live_pcpu(s)  # no leak on any unwind, nothing extra on success
    if mm is None:
        assert not alloc.areas
        return
    assert len(mm.rss) == sum(c != 0 for c in s.ctr) == 4
    drop = mi.mmdrop(mm)
    names, states = run_call(spec, s, 0, lambda x: x.step == STEP.done)
    assert drop.locks[PERCPU_COUNTERS_LOCK] == sum(n in _LIST_LOCK_ACTIONS for n in names)
    assert drop.pcpu_frees == _frees(states, s) == (2 if grouped else 4)
    assert not alloc.areas and _live_pcpu(states[-1]) == 0
    assert drop.cpu_work == 4 * NCPUS  # check_mm sums every counter over every possible CPU


def test_grouping_cuts_mm_init_locks_from_four_to_one():
    per = MmInit(PercpuAllocator(NCPUS), grouped=False, with_cid=True)
    grp = MmInit(PercpuAllocator(NCPUS), grouped=True, with_cid=True)
    (m1, c1), (m2, c2) = per.mm_init(), grp.mm_init()
    assert (c1.locks[PERCPU_COUNTERS_LOCK], c2.locks[PERCPU_COUNTERS_LOCK]) == (4, 1)
    assert (c1.pcpu_allocs, c2.pcpu_allocs) == (5, 2)
    assert (per.mmdrop(m1).pcpu_frees, grp.mmdrop(m2).pcpu_frees) == (5, 2)


# -- split rss ---------------------------------------------------------------------------------
# Most operations land on a few threads, so that some thread passes the threshold and syncs.
_thread = st.one_of(st.integers(0, 2), st.integers(0, NCPUS - 1))
_rss_ops = st.lists(st.tuples(st.sampled_from(("fault", "fault", "fault", "fault", "zap", "exit")),
                              _thread, st.integers(1, 4)), min_size=30, max_size=80)


def _rss_atomics(name, before, after, t):
    """atomic_long_adds a step makes on mm->rss_stat: a sync adds only a non-zero cached delta."""
    synced = before.cache[t] != 0 and after.cache[t] == 0 and name != "add_mm_counter_fast"
    return int(synced) + (name == "zap_pte_range")


@FAST
@given(_rss_ops)
def test_split_rss_matches_the_spec_with_64_threads(ops):
    spec = Model(RssSplit, RssSplit(threads=NCPUS, T=3, U=4, faults=200, unmaps=200).params)
    s = spec.initial_states()[0]
    rss = SplitRss(NCPUS, T=3)
    exited: set[int] = set()
    for op, t, amount in ops:
        if t in exited or (op == "zap" and s.exact < amount):
            continue
        if op == "fault":
            cost = rss.fault(t, amount)
            names, states = run_call(spec, s, t, lambda x, t=t: x.pc[t] == THREAD.idle,
                                     only=("check_sync_rss_stat", "add_mm_counter_fast"), amount=amount)
        elif op == "zap":
            cost = rss.zap(t, amount)
            names, states = run_call(spec, s, t, lambda x: True, only=("zap_pte_range",), amount=amount)
            assert names == ["zap_pte_range"]
        else:
            cost = rss.exit(t)
            exited.add(t)
            names, states = run_call(spec, s, t, lambda x, t=t: x.pc[t] == THREAD.exited,
                                     only=("do_exit_sync", "exit_mm"))
        assert cost.shared_rmw == sum(_rss_atomics(n, a, b, t) for n, a, b in zip(names, [s] + states, states))
        s = states[-1]
        assert (s.count, list(s.cache), list(s.events)) == (rss.count, rss.cache, rss.events)


# -- lazy counter --------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(0, NCPUS - 1), st.integers(-(1 << 20), 1 << 20)), max_size=700))
def test_lazy_counter_loses_no_update_across_the_switch(adds):
    alloc = PercpuAllocator(NCPUS)
    ctr = LazyCounter(alloc)
    for k, (cpu, i) in enumerate(adds):
        ctr.add(cpu, i, now=1 + k)  # 1 jiffy per add: far above 256 adds/s, so the second wrap switches
    assert ctr.read()[0] == sum(i for _, i in adds)
    assert ctr.is_pcpu == (len(adds) > 256) and len(alloc.areas) == int(ctr.is_pcpu)
    ctr.exit()
    assert not alloc.areas


def test_lazy_word_encoding_examples_from_the_reference():
    assert decode(0x00FFFFFFFFFFFFFE) == -1
    assert encode_add(-1) == 0x01FFFFFFFFFFFFFE
    assert decode((0xA + encode_add(-1)) % (1 << 64)) == 4


def _signed(u):
    return u - (1 << 64) if u >> 63 else u


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.sampled_from((1, 2)),
       st.lists(st.tuples(st.integers(0, 2), st.sampled_from((1, -1)), st.sampled_from((0, 1, 2000)),
                          st.sampled_from((True, True, True, False))), min_size=10, max_size=60))
def test_lazy_add_matches_the_spec_across_the_switch(mod_bits, adds):
    """L-K at the spec's widest point (3 CPUs; mod_bits 1 and 2 make wraps come every 2 and 4 adds).
    ``gap`` is the jiffies since the previous add: 2000 (> HZ) makes a wrap not recent. Driven through the pc
    machine percpu_lazy replaced (tests/pc_machines/percpu_lazy.py: its steps are named by what they do, and the
    port has its states, state for state, tests/test_process_lazy.py)."""
    spec = Model(PercpuLazy, PercpuLazy(ncpus=3, mod_bits=mod_bits, ops=60, neg=1, readers=0).params)
    s = spec.initial_states()[0]
    alloc = PercpuAllocator(3)
    ctr = LazyCounter(alloc, mod_bits=mod_bits)
    now = 1
    for cpu, i, gap, ok in adds:
        now += gap
        recent = int(ctr.recent_wrap(now))
        cost = ctr.add(cpu, i, now, alloc_ok=ok)
        names, states = run_call(spec, s, cpu, lambda x, cpu=cpu: x.pc[cpu] == LADD.idle, i=i, recent=recent,
                                 ok=int(ok))
        s = states[-1]
        assert ctr.is_pcpu == (s.published != NOBODY)
        if ctr.is_pcpu:
            assert [_signed(x) for x in ctr.slots] == list(s.slot)
        else:
            assert ctr.v == s.word
        # every RMW on the shared word is a cmpxchg; the rest are the allocator's lock acquisitions
        lock_rmws = sum(cost.locks.values())
        assert cost.shared_rmw - lock_rmws == sum(n in ("slowpath_cmpxchg", "switch_cmpxchg") for n in names)
        assert cost.pcpu_allocs == cost.locks[PCPU_LOCK] == names.count("switch_alloc")
        assert cost.locks[PCPU_ALLOC_MUTEX] == 0  # GFP_ATOMIC: no pcpu_alloc_mutex
    assert ctr.read()[0] == s.exact
    # The spec's exit needs every CPU's adds used up; the model's frees exactly the published storage.
    assert ctr.exit().pcpu_frees == int(s.published != NOBODY) and not alloc.areas


def test_lazy_wrap_is_recent_strictly_within_hz():
    """time_after(last_wrap + HZ, now): the spec abstracts jiffies as a choice, so the edge is pinned here."""
    from checker.models.lazy import HZ
    ctr = LazyCounter(PercpuAllocator(4))
    ctr.add(0, 1, now=100)
    assert ctr.last_wrap == 100
    assert ctr.recent_wrap(100 + HZ - 1) and not ctr.recent_wrap(100 + HZ)
