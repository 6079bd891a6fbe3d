# SPDX-License-Identifier: GPL-2.0-only
"""ZhangPeng's RFC v2: a percpu_counter with an atomic mode (``counters == NULL`` means atomic).

The design the lazy-counter thread moved to (Jan Kara's suggestion in the
review of RFC v1): "[RFC PATCH v2 1/2] percpu_counter: introduce atomic mode
for percpu_counter" (Message-ID 20240418142008.2775308-2-zhangpeng362@huawei.com)
and "[RFC PATCH v2 2/2] mm: convert mm's rss stats to use atomic mode"
(20240418142008.2775308-3), read in the list archive:

- ``struct percpu_counter`` puts ``s64 count`` and ``atomic64_t
  count_atomic`` in a union: one word, two ways to write it;
- ``add_mm_counter(mm, member, value)``: ``if
  (percpu_counter_initialized(fbc)) percpu_counter_add(fbc, value); else
  percpu_counter_atomic_add(fbc, value);`` (``atomic64_add``);
- ``percpu_counter_switch_to_pcpu_many(fbc, n)``, called by copy_process
  when the mm's second thread is created: ``if
  (percpu_counter_initialized(fbc)) return 0; preempt_disable();
  local_irq_save(flags); if (likely(!percpu_counter_initialized(fbc))) ret =
  __percpu_counter_init_many(fbc, 0, GFP_ATOMIC|__GFP_NOWARN|__GFP_ZERO, n,
  &__key, true);`` where ``switch_mode`` keeps ``count`` (the atomic value
  becomes the percpu count as it is) and the zeroed per-CPU storage is
  published by the store to ``fbc->counters``, then ``list_add`` under
  ``percpu_counters_lock``.

Other CPUs update the mm's rss while its thread forks (a remote rmap walk,
reclaim unmapping one of its pages, get_user_pages on it). One that tested
``counters`` before the switch published it does its ``atomic64_add`` after,
and percpu_counter_add_batch's slow path does ``fbc->count += count`` as a
plain load and store under ``fbc->lock``, which the lockless atomic add does
not take: an ``atomic64_add`` between that load and store is lost
(``posted_fold_loses_an_atomic_add``, an expected violation: the v2 code as
posted loses an rss update). ``fold=atomic`` is ours, not posted: the slow
path adds with ``atomic64_add(count + amount, &fbc->count_atomic)``, and every
property holds under ``sc`` and ``tso``.

The publication, read in the posted v2 (the ``lib/percpu_counter.c`` hunk of
20240418142008.2775308-2, quoted in Andrew Morton's review of it): in
``__percpu_counter_init_many(..., switch_mode)`` the per-CPU storage comes
from ``__alloc_percpu_gfp(..., GFP_ATOMIC|__GFP_NOWARN|__GFP_ZERO)``, whose
``pcpu_alloc()`` (mm/percpu.c) zeroes it with ``memset()`` for each possible
CPU after dropping its locks, and is published by the plain store
``fbc[i].counters = (void *)counters + (i * counter_size);``: no
``smp_store_release()``, no ``smp_wmb()``. The readers' test
``percpu_counter_initialized(fbc)`` is the plain load ``fbc->counters !=
NULL``, and ``this_cpu_add(*fbc->counters, ...)`` goes through the pointer it
loaded (an address dependency, which LKMM honours on the reader's side). On
x86 (TSO) stores are seen in order, so the reader finds the zeroed slot. Under
LKMM (arm64, powerpc) the writer's memset stores and the pointer store are
unordered: a reader that sees the pointer may add to the slot's older
contents (percpu memory freed by a previous user: ``garbage=1``), and the
memset's store, later in coherence order, then wipes the add
(``posted_publish_unordered_after_zeroing``, an expected violation under
``--memory lkmm`` at ``publish=plain garbage=1``). ``publish=release`` (ours)
publishes with ``smp_store_release()`` and reads with ``smp_load_acquire()``
(stronger than the address dependency the kernel could rely on, which the
model cannot attach to a ``this_cpu`` read-modify-write): every property
holds. The readers' plain load against the plain store is also a data race
(KCSAN would report it); it is marked ``race_ok`` here so that the ordering is
judged on its own, and said here instead.
"""
from checker import (NOBODY, S64, And, AnyOf, Bool, Enum, Ghost, If, Load, Lock, Or, Param, PerCpu, Rmw, Role, Shared,
                     Spec, Store, Sum, action, invariant, sometimes, terminal, when)
from checker.ordering.declare import MEMORY

#: The slow path's fold: as posted (a plain += under the lock), or an atomic64_add (ours).
FOLD = Enum("plain", "atomic", name="fold")
#: How the switch publishes fbc->counters: as posted (plain store, plain load), or ours (release/acquire).
PUBLISH = Enum("plain", "release", name="publish")
#: Where an adder is in add_mm_counter().
ADD = Enum("idle", "atomic", "pcpu", "store", name="add_pc")
#: Where the forker is in percpu_counter_switch_to_pcpu_many().
SW = Enum("idle", "init", "register", "done", name="switch_pc")


def _conserved(s):
    """fbc->count plus the locals is E, except while a slow path holds its loaded count (between the load
    and the store of its plain +=, the new value is not yet written)."""
    loading = AnyOf([s.pc[c] == ADD.store for c in s.adders])
    # the locals count only once published: before, the storage is not the counter's (garbage=1: old contents)
    return Or(loading, s.count + If(s.counters == 1, Sum(s.local), 0) == s.exact)


def _publish_hazard(p):
    """Where the posted plain publish can lose an add: under lkmm, with old contents in the storage."""
    return p.memory == MEMORY.lkmm and p.publish == PUBLISH.plain and p.garbage == 1


class PercpuAtomicModeRfc(Spec):
    """RFC v2's atomic-mode percpu_counter: add_mm_counter on several CPUs while copy_process switches the
    counter to per-CPU mode."""

    kernel = ("ZhangPeng RFC v2 (20240418142008.2775308-2 and -3-zhangpeng362@huawei.com, as posted): "
              "include/linux/percpu_counter.h percpu_counter_atomic_add, percpu_counter_initialized; "
              "lib/percpu_counter.c percpu_counter_switch_to_pcpu_many, __percpu_counter_init_many(switch_mode); "
              "include/linux/mm.h add_mm_counter; with v6.9 lib/percpu_counter.c percpu_counter_add_batch "
              "(irqs off)")
    assumptions = (
        "one counter (one rss_stat member); one forker: the switch runs in copy_process of the mm's second "
        "thread, and the mm's only thread is the one forking",
        "the adders are any contexts updating the mm's rss, on their own CPUs, at any time (remote unmaps "
        "and gets included); amounts +1 and -1",
        "percpu_counter_add_batch in its irqs-off form (v2 was posted before the 6.11 cmpxchg variant): the "
        "fast path is one step; the slow path is the lock with the load of fbc->count, then the store of the "
        "sum with __this_cpu_sub and the unlock (nothing else runs on that CPU, and lock takers wait)",
        "the switch's two initialised checks and the allocation with the field stores are one step ending in "
        "the store of fbc->counters (one forker: nothing else writes counters); in access= program order: "
        "pcpu_alloc's memset of every CPU's slot, then the store of fbc->counters (under --memory lkmm they may "
        "be seen out of order, as on arm64)",
        "percpu_counters_lock is uncontended: the list_add is one step",
    )

    fold = Param(FOLD.plain, domain=FOLD, doc="plain: fbc->count += count as posted; atomic: atomic64_add (ours)")
    publish = Param(PUBLISH.plain, domain=PUBLISH, doc="plain: fbc->counters stored and loaded plain, as posted; "
                    "release: smp_store_release / smp_load_acquire (ours)")
    garbage = Param(0, domain=(0, 1), doc="1: the per-CPU storage pcpu_alloc returns held 1 before its memset "
                    "(percpu memory a previous user freed)")
    explore_sweeps = ({"fold": FOLD.plain}, {"fold": FOLD.atomic},
                      {"fold": FOLD.atomic, "garbage": 1, "publish": (PUBLISH.plain, PUBLISH.release), "ncpus": 2})
    ncpus = Param(2, domain=range(1, 4), explore=(2, 3), doc="CPUs updating the mm's rss")
    batch = Param(2, domain=range(1, 64), doc="percpu_counter_batch (32 in the kernel; small to reach the slow path)")
    ops = Param(2, domain=range(0, 8), doc="add_mm_counter calls per CPU")
    failures = Param(1, domain=(0, 1), doc="1: the GFP_ATOMIC allocation may fail (the counter stays atomic)")

    adders = Role("ncpus", symmetric=True, doc="CPUs calling add_mm_counter")
    forker = Role(1, doc="the CPU running copy_process for the second thread")

    count = Shared(0, type=S64, doc="the union of fbc->count and fbc->count_atomic")
    counters = Shared(0, type=Bool, doc="fbc->counters != NULL (per-CPU mode)")
    lock = Lock(doc="fbc->lock (raw_spinlock_t)")
    listed = Shared(0, type=Bool, doc="fbc->list is on percpu_counters")
    local = PerCpu(lambda p: p.garbage, type=S64, role="adders",
                   doc="*per_cpu_ptr(fbc->counters, cpu) (zeroed by __GFP_ZERO; before that, old contents)")
    pc = PerCpu(ADD.idle, role="adders", type=ADD)
    amount = PerCpu(0, role="adders", doc="value of the add in flight")
    loaded = PerCpu(0, role="adders", doc="the slow path's load of fbc->count")
    ops_left = PerCpu(lambda p: p.ops, role="adders")
    sw = PerCpu(SW.idle, role="forker", type=SW)
    exact = Ghost(0, doc="E")
    late_atomic = Ghost(0, type=Bool, doc="an atomic64_add landed after counters was published")
    folded = Ghost(0, type=Bool, doc="a per-CPU-mode add took the slow path")

    # -- add_mm_counter() ----------------------------------------------------------------------------------
    @action(role="adders", choose={"value": (1, -1)}, applies=lambda p: p.publish == PUBLISH.plain,
            access=Load("counters", "plain", race_ok=True))
    def add_mm_counter(s, cpu, value):
        """add_mm_counter(mm, member, value): if (percpu_counter_initialized(fbc)) (fbc->counters != NULL, a plain
        load) percpu_counter_add(fbc, value); else percpu_counter_atomic_add(fbc, value);"""
        return _add_mm_counter(s, cpu, value)

    @action(role="adders", choose={"value": (1, -1)}, applies=lambda p: p.publish == PUBLISH.release,
            access=Load("counters", "acquire"))
    def add_mm_counter_acquire(s, cpu, value):
        """(ours) add_mm_counter(): if (smp_load_acquire(&fbc->counters)) percpu_counter_add(fbc, value); else
        percpu_counter_atomic_add(fbc, value);"""
        return _add_mm_counter(s, cpu, value)

    @action(role="adders", access=Rmw("count", "unordered"))
    def atomic64_add(s, cpu):
        """percpu_counter_atomic_add(): atomic64_add(amount, &fbc->count_atomic) (no lock)."""
        return when(s.pc[cpu] == ADD.atomic, count=s.count + s.amount[cpu], exact=s.exact + s.amount[cpu],
                    late_atomic=If(s.counters == 1, 1, s.late_atomic), amount={cpu: 0}, pc={cpu: ADD.idle})

    @action(role="adders", access=Rmw("local", "this_cpu"))
    def add_batch_fast(s, cpu):
        """percpu_counter_add_batch(): local_irq_save(); count = __this_cpu_read(*fbc->counters) + amount;
        abs(count) < batch: this_cpu_add(*fbc->counters, amount); local_irq_restore();"""
        c = s.local[cpu] + s.amount[cpu]
        return when(And(s.pc[cpu] == ADD.pcpu, abs(c) < s.batch), local={cpu: c},
                    exact=s.exact + s.amount[cpu], amount={cpu: 0}, pc={cpu: ADD.idle})

    # The slow path's plain load and store of fbc->count race the lockless atomic64_add: that race is the posted
    # fold's bug, reported as posted_fold_loses_an_atomic_add (race_ok keeps it from being reported twice).
    @action(role="adders", access=(Load("local", "plain"), Load("count", "plain", race_ok=True)))
    def add_batch_lock(s, cpu):
        """abs(count) >= batch: raw_spin_lock(&fbc->lock); fbc->count += count -- its load of fbc->count
        (fold=atomic: nothing loaded, the add is one atomic step next)."""
        c = s.local[cpu] + s.amount[cpu]
        return when(And(s.pc[cpu] == ADD.pcpu, abs(c) >= s.batch, s.lock == NOBODY), lock=cpu,
                    loaded={cpu: s.count if s.fold == FOLD.plain else 0}, pc={cpu: ADD.store})

    @action(role="adders", applies=lambda p: p.fold == FOLD.plain,
            access=(Load("local", "plain"), Store("count", "plain", race_ok=True), Rmw("local", "this_cpu")))
    def add_batch_store(s, cpu):
        """... its store; __this_cpu_sub(*fbc->counters, count - amount); raw_spin_unlock(&fbc->lock);
        local_irq_restore();"""
        return _add_batch_store(s, cpu)

    @action(role="adders", applies=lambda p: p.fold == FOLD.atomic,
            access=(Load("local", "plain"), Rmw("count", "unordered"), Rmw("local", "this_cpu")))
    def add_batch_store_atomic(s, cpu):
        """(ours) atomic64_add(count, &fbc->count_atomic); __this_cpu_sub(*fbc->counters, count - amount);
        raw_spin_unlock(&fbc->lock); local_irq_restore();"""
        return _add_batch_store(s, cpu)

    # -- percpu_counter_switch_to_pcpu_many() from copy_process ------------------------------------------
    @action(role="forker", choose={"ok": lambda p: (1, 0) if p.failures else (1,)},
            applies=lambda p: p.publish == PUBLISH.plain,
            # the memset's plain store races a reader's this_cpu_add exactly when the publish is unordered: that
            # race is the ordering bug, reported as posted_publish_unordered_after_zeroing
            access=(Load("counters", "plain"), Store("local", "plain", slot="all", race_ok=True),
                    Store("counters", "plain")))
    def switch_to_pcpu(s, f, ok):
        """if (percpu_counter_initialized(fbc)) return 0; preempt_disable(); local_irq_save(flags); if
        (likely(!percpu_counter_initialized(fbc))) __percpu_counter_init_many(fbc, 0,
        GFP_ATOMIC|__GFP_NOWARN|__GFP_ZERO, nr, &__key, true): __alloc_percpu_gfp (NULL: -ENOMEM, the counter
        stays atomic; else pcpu_alloc's memset() of each possible CPU's slot); raw_spin_lock_init;
        INIT_LIST_HEAD; count kept (switch_mode); fbc->counters = counters (a plain store, as posted)."""
        return _switch(s, f, ok)

    @action(role="forker", choose={"ok": lambda p: (1, 0) if p.failures else (1,)},
            applies=lambda p: p.publish == PUBLISH.release,
            access=(Load("counters", "plain"), Store("local", "plain", slot="all"), Store("counters", "release")))
    def switch_to_pcpu_release(s, f, ok):
        """(ours) the same, publishing with smp_store_release(&fbc->counters, counters)."""
        return _switch(s, f, ok)

    @action(role="forker")
    def list_add(s, f):
        """__percpu_counter_init_many(): spin_lock_irqsave(&percpu_counters_lock); list_add(&fbc->list,
        &percpu_counters); spin_unlock_irqrestore(); then local_irq_restore(); preempt_enable(); return 0."""
        return when(s.sw[f] == SW.register, listed=1, sw={f: SW.done})

    @terminal
    def all_done(s):
        return And(*[And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.adders],
                   *[Or(s.sw[f] == SW.done, s.sw[f] == SW.idle) for f in s.forker])

    # -- properties -----------------------------------------------------------------------------------------
    @invariant(applies=lambda p: (p.fold == FOLD.atomic or p.ncpus == 1) and not _publish_hazard(p))
    def no_update_lost(s):
        """PC-CONS across the switch: fbc->count plus the locals is E (outside a slow path's load-store)."""
        return _conserved(s)

    @invariant(expect="violated", applies=lambda p: p.fold == FOLD.atomic and p.ops > 0 and _publish_hazard(p))
    def posted_publish_unordered_after_zeroing(s):
        """False on purpose under lkmm for v2's plain publish: a reader sees fbc->counters, adds to its slot's
        old contents, and pcpu_alloc's memset, not ordered before the pointer's store, wipes the add."""
        return _conserved(s)

    @invariant(expect="violated", applies=lambda p: p.fold == FOLD.plain and p.ncpus >= 2 and p.ops >= 2)
    def posted_fold_loses_an_atomic_add(s):
        """False on purpose for v2 as posted: an atomic64_add by a CPU that tested counters before the switch
        lands between the slow path's load and store of fbc->count and is overwritten."""
        return _conserved(s)

    @invariant
    def registered_when_per_cpu(s):
        """PC-REG: at rest, a counter in per-CPU mode is on percpu_counters (the hotplug fold can find it)."""
        f = s.forker[0]
        return Or(s.sw[f] == SW.register, s.counters == 0, s.listed == 1)

    @sometimes
    def a_switch_happens(s):
        """The counter goes per-CPU."""
        return s.counters == 1

    @sometimes(applies=lambda p: p.ops > 0)
    def an_atomic_add_lands_after_the_switch(s):
        """An add that tested counters == NULL does its atomic64_add after the switch published counters."""
        return s.late_atomic == 1

    @sometimes(applies=lambda p: p.ops * 1 >= p.batch)
    def a_per_cpu_add_folds(s):
        """A per-CPU-mode add takes the slow path."""
        return s.folded == 1


def _add_mm_counter(s, cpu, value):
    return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0), ops_left={cpu: s.ops_left[cpu] - 1},
                amount={cpu: value}, pc={cpu: If(s.counters == 1, ADD.pcpu, ADD.atomic)})


def _add_batch_store(s, cpu):
    c = s.local[cpu] + s.amount[cpu]
    base = s.loaded[cpu] if s.fold == FOLD.plain else s.count
    return when(s.pc[cpu] == ADD.store, count=base + c, local={cpu: 0}, exact=s.exact + s.amount[cpu],
                loaded={cpu: 0}, amount={cpu: 0}, lock=NOBODY, folded=1, pc={cpu: ADD.idle})


def _switch(s, f, ok):
    return when(And(s.sw[f] == SW.idle, s.counters == 0), counters=ok,
                local={c: If(ok == 1, 0, s.local[c]) for c in s.adders},
                sw={f: If(ok == 1, SW.register, SW.done)})
