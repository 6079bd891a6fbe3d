# SPDX-License-Identifier: GPL-2.0-only
"""The batched-unlink and stack-cache fast-path models refine their specs (DESIGN principle 7).

As in tests/test_models.py: a model operation is one whole call by one CPU;
the spec runs the same call as an uninterrupted sequence of that CPU's
actions (the successor whose label names that CPU, nothing interleaved) from
a matching state, both end in matching states, and the model's lock and
per-CPU-op counts equal the corresponding steps of that sequence.

vma_unlink_batch: every layout family, arrays of 2 and 8, batched and not;
the spec's one unlinking task runs free_pgtables to the end. stack_cache and
stack_cache_2019: Hypothesis picks forks and releases of up to 3 tasks over
up to 3 CPUs (the specs' widest: ncpus and ntasks have domain 1..3).
"""
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.kernel.memory import MEM
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.specs.stack_cache import StackCache as StackSpec
from checker.specs.stack_cache_2019 import StackCache2019
from checker.specs.vma_unlink_batch import BATCHED, LAYOUTS, UNBATCHED, VmaUnlinkBatch, _at, _freed_pgtables
from checker.models.costs import I_MMAP_RWSEM, VMAP_AREA_LOCK
from checker.models.stack_cache import StackCache
from checker.models.vma_unlink import histogram, unlink_batched, unlink_unbatched


def step(model, s, actor, names=None, **want):
    """The one successor of ``s`` by ``actor`` (a CPU or task id) (of the actions in ``names``, if given) whose choices agree
    with ``want``: (action name, its choices, next state)."""
    out = []
    for (a, c, ci), nxt in model.successors(s):
        act = model.actions[a]
        if c != actor or (names is not None and act.info.name not in names):
            continue
        kw = dict(zip(act.arg_names, act.choices[ci]))
        if all(kw.get(k, v) == v for k, v in want.items()):
            out.append((act.info.name, kw, nxt))
    assert len(out) == 1, (actor, names, want, [(n, k) for n, k, _ in out])
    return out[0]


# -- vma_unlink_batch ------------------------------------------------------------------------------
def model_input(layout):
    """The layout as the model takes it: file names, the vmas past a PMD_SIZE gap, the hugetlb vmas."""
    files = [f"file{v.file}" if v.file else None for v in layout.vmas]
    return files, {k for k, v in enumerate(layout.vmas) if v.far}, {k for k, v in enumerate(layout.vmas) if v.huge}


def run_free_pgtables(layout, size, batched):
    """free_pgtables() of the spec's task, uninterrupted (a walker CPU exists but never steps).
    Returns the batch sizes in order, i_mmap_lock_write per file, the vmas removed per file, the
    final state."""
    m = Model(VmaUnlinkBatch, resolve_params(VmaUnlinkBatch, {"layout": layout, "size": size, "batched": batched,
                                                              "walkers": 1}))
    task = m.roles["task"][0]
    s = m.initial_states()[0]
    lay = LAYOUTS[layout]
    sizes, locks = [], Counter()
    while not _freed_pgtables(s):
        _, _, nxt = step(m, s, task)
        if nxt.write_locks != s.write_locks:
            batch = batched and (_at(s, BATCHED, "flush_lock") or _at(s, BATCHED, "final_lock"))
            assert batch or _at(s, BATCHED, "huge_lock") if batched else _at(s, UNBATCHED, "lock")
            v = s.vb_vmas[0] if batch else s.task_vma[task]
            locks[f"file{lay.vmas[v].file}"] += 1
            if batch:
                sizes.append(s.vb_count)
        s = nxt
    removed = Counter()
    for v, x in enumerate(lay.vmas):
        if x.file:
            removed[f"file{x.file}"] += s.removed[v]
    return sizes, locks, removed, s


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize("size", (2, 8))
def test_batched_unlink_matches_the_spec(layout, size):
    sizes, locks, removed, s = run_free_pgtables(layout, size, 1)
    files, starts, huge = model_input(LAYOUTS[layout])
    msizes, costs = unlink_batched(files, size, starts, huge)
    assert msizes == sizes  # the same flushes, in order, of the same sizes
    assert {f: c.locks[I_MMAP_RWSEM] for f, c in costs.items()} == locks
    assert sum(locks.values()) == s.write_locks
    # every file vma unlinked exactly once: the model's work under the lock is the spec's removals
    assert {f: c.held[I_MMAP_RWSEM] for f, c in costs.items()} == removed
    assert all(n == files.count(f) for f, n in removed.items())
    assert not any(s.linked) and s.vb_count == 0 and not any(s.wlocked)


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_unbatched_unlink_matches_the_spec(layout):
    sizes, locks, removed, s = run_free_pgtables(layout, 8, 0)
    files, _, _ = model_input(LAYOUTS[layout])
    costs = unlink_unbatched(files)
    assert sizes == []
    assert {f: c.locks[I_MMAP_RWSEM] for f, c in costs.items()} == locks == removed
    assert sum(locks.values()) == s.write_locks


@pytest.mark.parametrize("size", (2, 8))
def test_batch_size_histogram_matches_the_specs_batches(size):
    spec = Counter()
    for layout in range(len(LAYOUTS)):
        spec.update(run_free_pgtables(layout, size, 1)[0])
    assert histogram([model_input(x) for x in LAYOUTS], size) == spec
    if size == 8:  # a full batch of 8 and its overflow (pieces), file changes, lone vmas
        assert spec[8] == 1 and spec[1] > 0


# -- stack_cache -----------------------------------------------------------------------------------
def _tries(s, cpu, nr):
    """this_cpu_cmpxchg(cached_stacks[i], NULL, vm) calls of a one-step loop over ``cpu``'s slots."""
    for i in range(nr):
        if getattr(s, f"slot{i}")[cpu] == 0:
            return i + 1
    return nr


def _vfrees(before, after, nstacks):
    return sum(getattr(before, f"heap_stack{k}") == MEM.live and getattr(after, f"heap_stack{k}") == MEM.freed
               for k in range(1, nstacks + 1))


def _steps(m, prefix):
    """The names of the generated steps of the process function ``prefix`` in model ``m``."""
    return {a.info.name for a in m.actions if a.info.name.startswith(prefix + "_L")}


def _point(cls, name):
    """The pc value of task_stack's control point labelled ``name``."""
    reg = cls.__countercheck_processes__["task_stack"]
    return next(getattr(reg["enum"], p.label) for p in reg["points"].values() if p.prim == name)


def spec_alloc(m, s, t, cpu):
    """The task's fork on ``cpu``: a migration there first (not a model operation), then
    alloc_thread_stack_node with every allocation and charge succeeding. Returns (xchgs, vmallocs, state)."""
    if s.on[t] != cpu:
        _, _, s = step(m, s, t, ("migrate",), dest=cpu)
    xchg = vmalloc = 0
    steps, live = _steps(m, "task_stack"), _point(m.cls, "live")
    while s.tasks_pc[t] != live:
        before = s.next_vm
        name, _, s = step(m, s, t, steps, __choice_ok=True, __choice_fails=0)
        xchg += "this_cpu_xchg" in name
        vmalloc += s.next_vm != before
    _, _, s = step(m, s, t, steps, __choice_fails=0)  # the child runs and exits: no cost modelled
    return xchg, vmalloc, s


def spec_free(m, s, t, cpu, nr, nstacks):
    """The release of the task's stack on ``cpu``: finish_task_switch's free_thread_stack if the task died
    there, else a one-step put on ``cpu`` (a hard-irq sched_show_task); then, if it queued thread_stack_free_rcu,
    that callback on the same CPU. Returns (cmpxchgs, vfrees, state)."""
    start, cmpxchg = s, 0
    if s.on[t] == cpu:
        steps = _steps(m, "task_stack")
        while s.tasks_pc[t] != 1:  # (done)
            name, _, s = step(m, s, t, steps, __choice_holder=False)
            cmpxchg += "this_cpu_cmpxchg" in name
    else:
        cmpxchg += _tries(s, cpu, nr)
        _, _, s = step(m, s, cpu, ("put_task_stack_hardirq",), t=t)
    for k in range(1, nstacks + 1):
        if s.pending[k - 1]:
            cmpxchg += _tries(s, cpu, nr)
            _, _, s = step(m, s, cpu, _steps(m, "thread_stack_free_rcu"), __choice_vm=k)
    return cmpxchg, _vfrees(start, s, nstacks), s


@st.composite
def _stack_runs(draw):
    ncpus = draw(st.integers(1, 3))
    ntasks = draw(st.integers(1, 3))
    # each task id twice: its first occurrence forks it, its second releases its stack
    order = draw(st.permutations([t for t in range(ntasks) for _ in (0, 1)]))
    cpus = draw(st.lists(st.tuples(st.integers(0, ncpus - 1), st.integers(0, ncpus - 1)),
                         min_size=ntasks, max_size=ntasks))
    return ncpus, ntasks, order, cpus


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.sampled_from((StackSpec, StackCache2019)), st.sampled_from((1, 2)), st.booleans(), _stack_runs())
def test_stack_cache_matches_the_spec(spec_cls, nr, find_vm_area, run):
    """Forks and releases in any order on any CPUs: the model's slots, the stacks it hands out and its
    xchg / cmpxchg / vmalloc / vfree counts are the spec's (stack_cache: 5.18 on, a missed free retries
    in thread_stack_free_rcu; stack_cache_2019: vfree_atomic at once)."""
    ncpus, ntasks, order, cpus = run
    m = Model(spec_cls, resolve_params(spec_cls, {"ncpus": ncpus, "ntasks": ntasks, "nr_cached": nr, "failures": 0,
                                                  "migrations": 3, "hotplug": 0}))
    s = m.initial_states()[0]
    tasks, cpu_ids = list(s.tasks), list(s.cpus)
    cache = StackCache(ncpus, find_vm_area=find_vm_area, rcu_retry=spec_cls is StackSpec, nr=nr)
    stack = {}
    for t in order:
        tid = tasks[t]
        if t not in stack:
            c = cpus[t][0]
            stack[t], cost = cache.alloc(c)
            xchg, vmalloc, s = spec_alloc(m, s, tid, cpu_ids[c])
            assert s.tvm[tid] == stack[t]
            assert cost.local_ops == xchg
            assert cost.locks[VMAP_AREA_LOCK] == vmalloc * (2 if find_vm_area else 1)
        else:
            c = cpus[t][1]
            cost = cache.free(c, stack[t])
            cmpxchg, vfree, s = spec_free(m, s, tid, cpu_ids[c], nr, ntasks)
            assert cost.local_ops == cmpxchg
            assert cost.locks[VMAP_AREA_LOCK] == vfree
        assert cache.slots == [[getattr(s, f"slot{i}")[c] for i in range(nr)] for c in cpu_ids]
        assert cache._next == s.next_vm
    assert m.is_terminal(s)


def test_stack_cache_miss_and_hit_costs():
    """The cases Hypothesis may draw rarely, pinned: with both slots of CPU 0 full a free misses (the
    retry in thread_stack_free_rcu doubles its cmpxchgs), and a fork takes slot 0 before slot 1."""
    for retry, tries in ((False, 2), (True, 4)):
        cache = StackCache(2, rcu_retry=retry)
        stacks = [cache.alloc(0)[0] for _ in range(3)]
        assert [cache.free(0, k).local_ops for k in stacks] == [1, 2, tries]
        assert cache.slots == [[1, 2], [0, 0]]
        assert [cache.alloc(0)[1].local_ops for _ in range(3)] == [1, 2, 2]
        assert cache.slots == [[0, 0], [0, 0]]  # the hit at slot 1 emptied slot 1


# -- issue 19: the eager add's three forms priced by what each does -------------------------------
from hypothesis import HealthCheck  # noqa: E402

from checker.language.declare import DISABLED  # noqa: E402
# the pc machine, whose steps have names this test follows (the built-in port equals it: tests/test_process_port.py)
from pc_machines.percpu_eager import ADD as EADD, VARIANT, PercpuEager  # noqa: E402
from checker.specs.percpu_grouped import STEP, PercpuGrouped  # noqa: E402
from checker.specs.percpu_lazy_rfc import ADD as ZADD, DESIGN, PercpuLazyRfc  # noqa: E402
from checker.models.costs import (FBC_LOCK, PCPU_ALLOC_MUTEX, PCPU_LOCK, PERCPU_COUNTERS_LOCK,  # noqa: E402
                                  LRUVEC_LOCK, Costs)
from checker.models.eager import EagerCounter  # noqa: E402
from checker.models.grouped import MmInit  # noqa: E402
from checker.models.lazy_rfc import LazyRfcCounter  # noqa: E402
from checker.models.percpu_alloc import PercpuAllocator  # noqa: E402


def cpu_steps(model, s, cpu, only=None, irq=False, **want):
    """Every enabled step of ``cpu`` from ``s`` (irq: only its interrupt handler's; else its task's)."""
    out = []
    for act in model.actions:
        if cpu not in act.cpus or (only is not None and act.info.name not in only):
            continue
        if bool(getattr(act.info, "irq", False)) != irq:
            continue
        for args in act.choices:
            kw = dict(zip(act.arg_names, args))
            if any(k in kw and kw[k] != v for k, v in want.items()):
                continue
            r = act.info.fn(s, cpu, *args)
            if r is DISABLED or not r.guard:
                continue
            out.append((act.info.name, model.apply(s, r.updates, act)))
    return out


def one_step(model, s, cpu, **kw):
    steps = cpu_steps(model, s, cpu, **kw)
    assert len({n for n, _ in steps}) == 1, [n for n, _ in steps]
    return steps[0]


def eager_call(model, s, t, amount):
    """One whole add by task ``t``: its steps until it is idle. Returns (names, irq-offs, states)."""
    names, offs = [], 0
    while True:
        name, nxt = one_step(model, s, t, amount=amount)
        # a step that turns interrupts off, or B's fast path, one step between local_irq_save and restore
        offs += int(s.irqs[t] == 0 and nxt.irqs[t] == 1) + int(name == "add_fast")
        names.append(name)
        s = nxt
        if s.pc[t] == EADD.idle and name not in ("add_slow",):
            return names, offs, s


@pytest.mark.parametrize("variant", ("A", "B", "C"))
@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.integers(0, 2), st.sampled_from((-1, 1, 5))), min_size=5, max_size=20))
def test_eager_variants_count_what_their_steps_do(variant, ops):
    """A: preempt_disable around a plain read and this_cpu_add; B: local_irq_save around everything;
    C: this_cpu_read and a this_cpu_try_cmpxchg. The model's interrupt-disabling sections and cmpxchg
    attempts are the spec's, call by call (3 CPUs, batch 4, the amounts the spec allows)."""
    spec = Model(PercpuEager, PercpuEager(variant=getattr(VARIANT, variant), ncpus=3, batch=4, large=5,
                                          ops=20, summers=0).params)
    s = spec.initial_states()[0]
    ctr = EagerCounter(3, 4, variant)
    for cpu, amount in ops:
        cost = ctr.add(cpu, amount)
        names, offs, s = eager_call(spec, s, cpu, amount)
        assert (s.count, list(s.local)) == (ctr.count, ctr.local)
        assert cost.irq_saves == offs
        assert cost.local_cmpxchg == names.count("try_cmpxchg") + names.count("try_cmpxchg_fails")
        assert cost.locks[FBC_LOCK] == sum(n in ("acquire", "lock_irqsave") for n in names)


def test_variant_c_retries_its_cmpxchg_when_an_interrupt_adds_in_between():
    """this_cpu_read, then the interrupt's add on the same CPU, then a failed cmpxchg and a good one: the
    model's add with retries=1, after the interrupt's own add, counts both attempts and ends the same."""
    spec = Model(PercpuEager, PercpuEager(variant=VARIANT.C, ncpus=1, batch=4, ops=1, irq=1, summers=0).params)
    s = spec.initial_states()[0]
    name, s = one_step(spec, s, 0, only=("this_cpu_read",), amount=1)
    name, s = one_step(spec, s, 0, irq=True, only=("irq_add_fast",), amount=1)
    attempts = []
    while s.pc[0] != EADD.idle:
        name, s = one_step(spec, s, 0, only=("try_cmpxchg", "try_cmpxchg_fails"))
        attempts.append(name)
    assert attempts == ["try_cmpxchg_fails", "try_cmpxchg"]
    ctr = EagerCounter(1, 4, "C")
    irq = ctr.add(0, 1)
    cost = ctr.add(0, 1, retries=1)
    assert ctr.local == list(s.local) == [2]
    assert (irq.local_cmpxchg, cost.local_cmpxchg) == (1, len(attempts))
    with pytest.raises(ValueError, match="only C's cmpxchg loop retries"):
        EagerCounter(1, 4, "B").add(0, 1, retries=1)


def test_eager_variants_are_priced_apart():
    a, b, c = (EagerCounter(4, 32, v).add(0, 1) for v in "ABC")
    assert (a.irq_saves, b.irq_saves, c.irq_saves) == (0, 1, 0)
    assert (a.local_cmpxchg, b.local_cmpxchg, c.local_cmpxchg) == (0, 0, 1)
    assert (a.local_ops, b.local_ops, c.local_ops) == (4, 2, 1)


# -- L-Z ------------------------------------------------------------------------------------------
def lz_call(model, s, cpu, i, recent, ok):
    names = []
    while True:
        steps = cpu_steps(model, s, cpu, i=i, recent=recent, ok=ok)
        steps = [x for x in steps if x[0] not in ("destroy",)]
        assert len({n for n, _ in steps}) == 1, (names, [n for n, _ in steps])
        name, s = steps[0]
        names.append(name)
        if s.pc[cpu] == ZADD.idle:
            return names, s


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.sampled_from((0, 1)), st.lists(st.tuples(st.integers(0, 1), st.sampled_from((1, -1)),
                                                   st.sampled_from((0, 1, 2000)), st.booleans()),
                                         min_size=4, max_size=12))
def test_lazy_rfc_model_matches_its_spec(mod_bits, adds):
    """L-Z (specs/percpu_lazy_rfc.py) at 2 CPUs, batch 2: each model add is an uninterrupted run of that
    CPU's actions; word, publication, count and locals agree, and the model's per-cpu allocations (GFP_ATOMIC:
    pcpu_lock only), percpu_counters_lock and fbc->lock sections and cmpxchgs are the spec's steps."""
    # the model is L-Z with the claim fix (its switch_claim step); the posted RFC's double init is a bug spec
    spec = Model(PercpuLazyRfc, PercpuLazyRfc(ncpus=2, mod_bits=mod_bits, batch=2, ops=12, neg=1, readers=0,
                                              design=DESIGN.claim_fix).params)
    s = spec.initial_states()[0]
    alloc = PercpuAllocator(2)
    ctr = LazyRfcCounter(alloc, 2, mod_bits=mod_bits)
    now = 1
    for cpu, i, gap, ok in adds:
        now += gap
        recent = int(ctr.recent_wrap(now))
        cost = ctr.add(cpu, i, now, alloc_ok=ok)
        names, s = lz_call(spec, s, cpu, i, recent, int(ok))
        assert ctr.published == bool(s.published)
        if ctr.published:
            assert (ctr.fbc.count, ctr.fbc.local) == (s.count, list(s.local))
        else:
            assert ctr.v == s.word
        assert cost.pcpu_allocs == cost.locks[PCPU_LOCK] == names.count("percpu_counter_init")
        assert cost.locks[PCPU_ALLOC_MUTEX] == 0
        assert cost.locks[PERCPU_COUNTERS_LOCK] == names.count("register_lock")
        assert cost.locks[FBC_LOCK] == names.count("set_lock") + names.count("percpu_counter_fold")
        cmpxchgs = sum(n in ("slowpath_cmpxchg", "switch_cmpxchg", "switch_claim") for n in names)
        assert cost.shared_rmw - sum(cost.locks.values()) == cmpxchgs
    assert ctr.sum()[0] == s.exact
    drop = ctr.destroy()
    assert drop.pcpu_frees == int(bool(s.published)) and not alloc.areas


# -- the mm_init ladders: per-counter with and without mm_cid ------------------------------------
_LIST_LOCK = ("register", "fail_pcpu_unlist", "destroy_unlist")
_ALLOC = ("mm_alloc_cid", "percpu_counter_init_many", "percpu_counter_init")


def grouped_run(grouped, fail_at):
    """mm_init (and, if it succeeded, __mmdrop) of the grouped spec: list-lock steps and allocations."""
    spec = Model(PercpuGrouped, PercpuGrouped(grouped=grouped, folds=0, fail_at=fail_at).params)
    s = spec.initial_states()[0]
    names = []
    while s.step not in (STEP.done,):
        steps = cpu_steps(spec, s, 0)
        assert len({n for n, _ in steps}) == 1
        name, s = steps[0]
        names.append(name)
    return {"list": sum(n in _LIST_LOCK for n in names), "allocs": sum(n in _ALLOC for n in names),
            "ok": int(s.returned != 1)}


@pytest.mark.parametrize("fail_at", range(0, 9))
def test_per_counter_with_cid_is_the_6_2_ladder_with_6_6s_cid_step(fail_at):
    """f1a7941243c1's ladder (grouped=0, no mm_cid) and 6.6's cid step (grouped=1) compose into 6.5's
    per-counter + cid ladder: attempts 1-3 are the same; attempt 4 is the cid (6.6's fail_at 4); each later
    attempt is 6.2's attempt one earlier, plus the cid's allocation and free."""
    model = MmInit(PercpuAllocator(8), grouped=False, with_cid=True)
    mm, cost = model.mm_init(fail_at)
    drop = model.mmdrop(mm) if mm is not None else Costs()
    got = {"list": (cost + drop).locks[PERCPU_COUNTERS_LOCK], "allocs": cost.pcpu_allocs, "ok": int(mm is not None)}
    if fail_at and fail_at <= 3:
        want = grouped_run(0, fail_at)
    elif fail_at == 4:
        want = grouped_run(1, 4)
    else:
        want = grouped_run(0, fail_at - 1 if fail_at else 0)
        want["allocs"] += 1
    assert got == want
    assert not model.alloc.areas


def test_per_counter_without_cid_is_f1a7941243c1():
    per = MmInit(PercpuAllocator(8), grouped=False, with_cid=False)
    mm, cost = per.mm_init()
    assert cost.pcpu_allocs == grouped_run(0, 0)["allocs"] == 4
    assert (cost + per.mmdrop(mm)).locks[PERCPU_COUNTERS_LOCK] == grouped_run(0, 0)["list"] == 8


# -- which lock each allocation takes (mm/percpu.c: the mutex only for GFP_KERNEL) ------------------
def _gfp(spec_cls, action):
    doc = next(a.info.fn.__doc__ for a in Model(spec_cls, spec_cls().params).actions if a.info.name == action)
    return "GFP_ATOMIC" if "GFP_ATOMIC" in doc else "GFP_KERNEL" if "GFP_KERNEL" in doc else None


def test_each_allocation_takes_the_locks_its_gfp_implies():
    """pcpu_alloc(): is_atomic = (gfp & GFP_KERNEL) != GFP_KERNEL; pcpu_alloc_mutex only if !is_atomic,
    then pcpu_lock nested in it. The gfp each spec's allocation names decides what the model takes."""
    from checker.models.lazy import LazyCounter
    from checker.specs.percpu_lazy import PercpuLazy
    grouped = MmInit(PercpuAllocator(4), with_cid=False).mm_init()[1]
    assert _gfp(PercpuGrouped, "percpu_counter_init_many") == "GFP_KERNEL"
    assert (grouped.locks[PCPU_ALLOC_MUTEX], grouped.nested[(PCPU_ALLOC_MUTEX, PCPU_LOCK)]) == (1, 1)
    assert _gfp(PercpuLazyRfc, "percpu_counter_init") == "GFP_ATOMIC"
    lz = LazyRfcCounter(PercpuAllocator(4), 32, mod_bits=0)
    lz.add(0, 1, now=1)
    sw = lz.add(0, 1, now=2)
    assert lz.published and (sw.locks[PCPU_ALLOC_MUTEX], sw.locks[PCPU_LOCK], sw.nested.total()) == (0, 1, 0)
    # (percpu_lazy's switch is part of its add, a process function: the C it quotes names the gfp)
    assert "alloc_percpu_gfp(u64, GFP_ATOMIC|__GFP_NOWARN)" in sys.modules[PercpuLazy.__module__].__doc__
    lk = LazyCounter(PercpuAllocator(4), mod_bits=1)
    costs = [lk.add(0, 1, now=1) for _ in range(4)]
    assert lk.is_pcpu and sum(c.locks[PCPU_ALLOC_MUTEX] for c in costs) == 0
    free = PercpuAllocator(4)
    h, _ = free.alloc(1)
    f = free.free(h)
    assert (f.locks[PCPU_LOCK], f.locks[PCPU_ALLOC_MUTEX], f.nested.total()) == (1, 0, 0)


# -- composition: mm_lifecycle and iteration are sums of the checked calls --------------------------
@pytest.mark.parametrize("rss", ("per-counter", "per-counter-nocid", "grouped", "lazy", "lazy-z", "split", "atomic"))
def test_mm_lifecycle_is_init_faults_teardown_and_matches_the_ladders(rss):
    from checker.models.workloads import MmRss, _link_file_vmas, _release_pages, _unlink_file_vmas, mm_lifecycle
    life = mm_lifecycle(rss, 8, 10, 60)
    alloc = PercpuAllocator(8)
    eager = rss in ("per-counter", "per-counter-nocid", "grouped")
    mi = MmInit(alloc, grouped=rss != "per-counter" and rss != "per-counter-nocid",
                with_cid=rss != "per-counter-nocid", counters=4 if eager else 0)
    mm, cost = mi.mm_init()
    r = MmRss(rss, mm, alloc)
    cost += _link_file_vmas((), 5)  # the static binary's own 4 vmas
    for k in range(10):
        cost += r.add(k % 2, 1)
    cost += r.add(0, -5) + r.add(1, -5) + _release_pages(60) + _unlink_file_vmas((), 5, True)
    cost += r.teardown() + mi.mmdrop(mm)
    assert life == cost
    assert life.pcpu_allocs == life.pcpu_frees and not alloc.areas
    if rss in ("per-counter-nocid", "grouped"):  # the spec ladders of f1a7941243c1 and 6.6, run whole
        assert life.locks[PERCPU_COUNTERS_LOCK] == grouped_run(int(rss == "grouped"), 0)["list"]
        assert life.pcpu_allocs == grouped_run(int(rss == "grouped"), 0)["allocs"]
    assert life.locks[LRUVEC_LOCK] == 2  # 60 pages, 31 per release_pages batch


def test_an_lmbench_exec_iteration_is_a_fork_lifecycle_and_an_exec_lifecycle():
    from checker.models.throughput import load
    from checker.models.workloads import iteration, mm_lifecycle
    pri = load()["priors"]
    it = iteration("lmbench-exec", "grouped", 16, pri)
    half = pri["pages_freed"]["lmbench-exec"] // 2
    # lmbench's binaries are not doexec's batched build: unlink_file_vma one vma at a time
    fork = mm_lifecycle("grouped", 16, pri["faults"]["lmbench-fork"], half, batched=False)
    exe = mm_lifecycle("grouped", 16, pri["faults"]["lmbench-exec"], half, batched=False)
    assert it == fork + exe


def test_the_slab_constructor_variant_allocates_once_per_slab_and_never_on_reuse():
    """Harry Yoo's RFC (no spec in specs/): the constructor runs 6.6's cid and counter steps for each object
    of a new slab; a reused mm_struct takes no allocator or list lock, keeps mm_init_cid's walk and
    check_mm's sums."""
    alloc = PercpuAllocator(8)
    mi = MmInit(alloc, ctor=True, slab_objects=4)
    first, cost = mi.mm_init()
    assert cost.pcpu_allocs == 4 * grouped_run(1, 0)["allocs"]
    assert cost.locks[PERCPU_COUNTERS_LOCK] == 4  # each object's init_many registers its group
    mi.mmdrop(first)
    again, cost = mi.mm_init()
    drop = mi.mmdrop(again)
    assert (cost + drop).pcpu_allocs == (cost + drop).pcpu_frees == 0
    assert not (cost + drop).locks[PCPU_LOCK] and not (cost + drop).locks[PERCPU_COUNTERS_LOCK]
    assert cost.cpu_work == 8 and drop.cpu_work == 4 * 8
    assert len(alloc.areas) == 8  # 4 objects' cid and counter areas stay with the slab
