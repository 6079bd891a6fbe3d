# SPDX-License-Identifier: GPL-2.0-only
"""The mm's rss counters allocated as one group (seeds 000/002).

kernel/fork.c ``mm_init()`` and ``__mmdrop()`` with lib/percpu_counter.c
``__percpu_counter_init_many()`` / ``percpu_counter_destroy_many()`` (6.6,
c439d5e8a0de + 14ef95be6f55), and the per-counter form they replaced
(f1a7941243c1's ``mm_init`` ladder with its ``while (i > 0)
percpu_counter_destroy(&mm->rss_stat[--i])`` unwind). Every allocation may
fail; every failure point's unwind is explored. A second CPU may run the
CPU-hotplug fold ``percpu_counter_cpu_dead()``, which walks the
``percpu_counters`` list and touches each listed counter's memory.
"""
from checker import (NOBODY, And, Array, Bool, Enum, Ghost, If, Implies, Lock, Not, Or, Param, PerCpu, Role, Select,
                     Shared, Spec, action, invariant, sometimes, terminal, when)
from checker.kernel.config import CONFIG, SMP_HOTPLUG, UP, Api
from checker.kernel.memory import MEM, NULL, Heap, ptr

#: Where the task is: mm_init's ladder, its unwind labels, then __mmdrop.
STEP = Enum(
    "start",
    # mm_init()
    "pgd", "context", "cid", "counters", "register",
    # the unwind labels, in the order they run
    "fail_pcpu_unlist", "fail_pcpu_free", "fail_pcpu", "fail_cid", "fail_nocontext", "fail_nopgd",
    # mm_init returned the mm; __mmdrop()
    "in_use", "drop_context", "check_mm", "drop_cid", "destroy_check", "destroy_unlist", "destroy_free",
    "free_mm",
    "done",
    name="step")
#: The hotplug CPU's percpu_counter_cpu_dead().
FOLD = Enum("idle", "walking", "done", name="fold")

#: Allocation sites: the mm itself, its pgd, the arch context id, the mm_cid
#: per-cpu area, and the rss counters' per-cpu storage (one site per counter
#: in the per-counter form; rss0 holds the whole group in the grouped form).
SITES = ("mm", "pgd", "context", "cid", "rss0", "rss1", "rss2", "rss3")
RSS = SITES.index("rss0")
PARENT = 99  # dup_mm() memcpy'd the parent's rss_stat: its count ...
PARENT_CTR = ptr(len(SITES))  # ... and its counters pointer, the parent's per-cpu storage (not this heap's)
HEAP = Heap(*SITES)


def _may(s, ok):
    """This allocation attempt may end as ``ok``: anything goes unless fail_at pins the failure."""
    return Or(s.fail_at == 0, ok == (s.attempts + 1 != s.fail_at))


def _smp(s):
    return s.config != UP


def _hotplug(s):
    return s.config == SMP_HOTPLUG


class PercpuGrouped(Spec):
    """mm_init() / __mmdrop() with NR_MM_COUNTERS rss counters, grouped or one by one."""

    kernel = ("v6.6 kernel/fork.c mm_init/__mmdrop (14ef95be6f55: percpu_counter_init_many / destroy_many, "
              "ladder pgd, context, cid, counters) and lib/percpu_counter.c __percpu_counter_init_many, "
              "percpu_counter_destroy_many, percpu_counter_cpu_dead (c439d5e8a0de); with grouped=0, "
              "f1a7941243c1's per-counter ladder (pgd, context, counters) with destroy_context in its unwind")
    assumptions = (
        "NR_MM_COUNTERS is a parameter, explored at 2 and at the kernel's 4",
        "the arch context (init_new_context) is modelled as an allocation that must be released, as on "
        "powerpc where it is an ida id",
        "mm_alloc_cid allocates only with CONFIG_SMP (SCHED_MM_CID depends on SMP); in UP it is a stub",
        "the hotplug fold walks the listed counters in any order (the list order does not matter to the "
        "properties) and touches the mm holding each node and each counter's per-cpu memory",
        "mm_init's other steps (mm_init_owner, the maple tree, uprobes, user_ns) neither allocate nor fail "
        "and are left out",
    )

    config = Param(SMP_HOTPLUG, domain=CONFIG, explore=range(len(CONFIG.names)),
                   doc="kernel configuration (derived from the Kconfig dependencies)")
    grouped = Param(1, domain=(0, 1), explore=(0, 1),
                    doc="1: init_many/destroy_many in 6.6's ladder; 0: f1a7941243c1's per-counter loop")
    counters = Param(4, domain=range(1, 5), explore=(2, 4), doc="NR_MM_COUNTERS (4 in the kernel)")
    fail_at = Param(0, domain=range(0, 9),
                    doc="0: every allocation may fail; k: exactly the k-th allocation attempt fails")
    folds = Param(1, domain=(0, 1), doc="a CPU running percpu_counter_cpu_dead (with CONFIG_HOTPLUG_CPU)")

    task = Role(1, doc="the CPU running mm_init, then __mmdrop")
    hotplug = Role("folds", doc="a CPU going down: percpu_counter_cpu_dead")

    api = Api("config", {
        "percpu_counter_init": tuple(range(len(CONFIG.names))),
        "percpu_counter_destroy": tuple(range(len(CONFIG.names))),
        "percpu_counter_init_many": tuple(range(len(CONFIG.names))),
        "percpu_counter_destroy_many": tuple(range(len(CONFIG.names))),
    })
    heap = HEAP

    step = Shared(STEP.start, type=STEP, doc="the task's position in mm_init / __mmdrop")
    i = Shared(0, doc="mm_init's int i (the per-counter loop)")
    whole = Shared(0, type=Bool, doc="the destroy in progress is destroy_many of the whole group (1) "
                                     "or percpu_counter_destroy of counter i (0)")
    returned = Shared(0, type=Bool, doc="mm_init returned NULL (1) rather than the mm")
    attempts = Ghost(0, doc="allocations attempted so far (for fail_at)")
    # One consistent start: the new mm as dup_mm()'s memcpy(mm, oldmm, sizeof(*mm)) leaves it, the parent's
    # rss_stat in both fields; allocate_mm's success step then does mm_init()'s memset of rss_stat.
    ctr = Array("counters", PARENT_CTR, doc="mm->rss_stat[i].counters (the parent's until mm_init's memset)")
    count = Array("counters", PARENT, doc="mm->rss_stat[i].count (the parent's until mm_init's memset)")
    listed = Array("counters", 0, type=Bool, doc="mm->rss_stat[i] is on percpu_counters")
    list_lock = Lock(doc="percpu_counters_lock")
    fold = PerCpu(FOLD.idle, type=FOLD, role="hotplug")
    walked = Array("counters", 0, type=Bool, doc="the fold has visited this counter")

    # -- the caller, and mm_init() ----------------------------------------------------------
    @action(role="task", choose={"ok": (True, False)})
    def allocate_mm(s, cpu, ok):
        """dup_mm(): mm = allocate_mm() (kmem_cache_alloc(mm_cachep)); NULL: mm_init is not called.
        Else memcpy(mm, oldmm, sizeof(*mm)) (the initial rss_stat: the parent's count and counters),
        then mm_init(): memset(&mm->rss_stat, 0, sizeof(mm->rss_stat)) before mm_alloc_pgd. One step:
        the new mm is private until mm_init returns it, so no other CPU can see in between."""
        mem, _ = HEAP.alloc(s, "mm", ok)
        n = len(s.ctr)
        return when(And(s.step == STEP.start, _may(s, ok)), attempts=s.attempts + 1,
                    step=If(ok, STEP.pgd, STEP.done), returned=If(ok, 0, 1),
                    ctr={k: If(ok, NULL, s.ctr[k]) for k in range(n)},
                    count={k: If(ok, 0, s.count[k]) for k in range(n)}, **mem)

    @action(role="task", choose={"ok": (True, False)})
    def mm_alloc_pgd(s, cpu, ok):
        """mm_init(): if (mm_alloc_pgd(mm)) goto fail_nopgd;"""
        mem, _ = HEAP.alloc(s, "pgd", ok)
        return when(And(s.step == STEP.pgd, _may(s, ok)), attempts=s.attempts + 1,
                    step=If(ok, STEP.context, STEP.fail_nopgd), **mem)

    @action(role="task", choose={"ok": (True, False)})
    def init_new_context(s, cpu, ok):
        """mm_init(): if (init_new_context(p, mm)) goto fail_nocontext;"""
        mem, _ = HEAP.alloc(s, "context", ok)
        nxt = STEP.cid if s.grouped else STEP.counters  # f1a7941243c1's ladder has no cid step
        return when(And(s.step == STEP.context, _may(s, ok)), attempts=s.attempts + 1,
                    step=If(ok, nxt, STEP.fail_nocontext), **mem)

    @action(role="task", choose={"ok": (True, False)})
    def mm_alloc_cid(s, cpu, ok):
        """mm_init(): if (mm_alloc_cid(mm)) goto fail_cid; (a per-cpu allocation with CONFIG_SMP)."""
        if not _smp(s):  # the UP stub returns 0 and allocates nothing
            return when(And(s.step == STEP.cid, ok), step=STEP.counters)
        mem, _ = HEAP.alloc(s, "cid", ok)
        return when(And(s.step == STEP.cid, _may(s, ok)), attempts=s.attempts + 1,
                    step=If(ok, STEP.counters, STEP.fail_cid), **mem)

    @action(role="task", choose={"ok": (True, False)},
            uses={"percpu_counter_init_many": "kernel/fork.c:1299 mm_init"})
    def percpu_counter_init_many(s, cpu, ok):
        """mm_init(): percpu_counter_init_many(mm->rss_stat, 0, GFP_KERNEL_ACCOUNT, NR_MM_COUNTERS).

        SMP: one __alloc_percpu_gfp of n * 4 bytes; on failure fbc[0].counters = NULL and
        -ENOMEM (nothing else written); on success every fbc[i] gets count = 0 and counters =
        base + i (the object is not yet published). UP: every fbc[i].count = amount; return 0."""
        if not s.grouped:
            return when(False)
        n = len(s.ctr)
        if not _smp(s):
            return when(And(s.step == STEP.counters, ok), count={k: 0 for k in range(n)}, step=STEP.in_use)
        mem, base = HEAP.alloc(s, "rss0", ok)
        return when(And(s.step == STEP.counters, _may(s, ok)), attempts=s.attempts + 1,
                    ctr={k: If(ok, base + k, s.ctr[k] if k else NULL) for k in range(n)},
                    count={k: If(ok, 0, s.count[k]) for k in range(n)},
                    step=If(ok, If(_hotplug(s), STEP.register, STEP.in_use), STEP.fail_pcpu), **mem)

    @action(role="task", choose={"ok": (True, False)},
            uses={"percpu_counter_init": "kernel/fork.c mm_init (before 14ef95be6f55)"})
    def percpu_counter_init(s, cpu, ok):
        """mm_init(): for (i = 0; i < NR_MM_COUNTERS; i++) if (percpu_counter_init(&mm->rss_stat[i], 0,
        GFP_KERNEL_ACCOUNT)) goto fail_pcpu;  -- the allocation of counter i."""
        if s.grouped:
            return when(False)
        n = len(s.ctr)
        at = {k: s.i == k for k in range(n)}
        if not _smp(s):
            return when(And(s.step == STEP.counters, s.i < n, ok), count={k: If(at[k], 0, s.count[k]) for k in range(n)},
                        i=s.i + 1, step=If(s.i + 1 < n, STEP.counters, STEP.in_use))
        updates: dict = {}
        for k in range(n):  # counter k is allocated at its own site
            mem, p = HEAP.alloc(s, SITES[RSS + k], And(ok, at[k]))
            updates.update(mem)
            updates.setdefault("ctr", {})[k] = If(And(ok, at[k]), p, s.ctr[k])
            updates.setdefault("count", {})[k] = If(And(ok, at[k]), 0, s.count[k])
        nxt = If(_hotplug(s), STEP.register, If(s.i + 1 < n, STEP.counters, STEP.in_use))
        return when(And(s.step == STEP.counters, s.i < n, _may(s, ok)), attempts=s.attempts + 1,
                    i=If(ok, s.i + If(_hotplug(s), 0, 1), s.i), step=If(ok, nxt, STEP.fail_pcpu), **updates)

    @action(role="task")
    def register(s, cpu):
        """__percpu_counter_init_many(): spin_lock_irqsave(&percpu_counters_lock); list_add(&fbc[i].list,
        &percpu_counters) for every counter initialised (one; or all n of a group); unlock."""
        n = len(s.ctr)
        mine = {k: If(s.grouped, True, s.i == k) for k in range(n)}
        nxt = If(s.grouped, STEP.in_use, If(s.i + 1 < n, STEP.counters, STEP.in_use))
        return when(And(s.step == STEP.register, s.list_lock == NOBODY),
                    listed={k: If(mine[k], 1, s.listed[k]) for k in range(n)},
                    i=If(s.grouped, s.i, s.i + 1), step=nxt)

    # -- mm_init()'s unwind -----------------------------------------------------------------
    @action(role="task")
    def fail_pcpu_destroy(s, cpu):
        """fail_pcpu: while (i > 0) percpu_counter_destroy(&mm->rss_stat[--i]);  (per-counter form;
        the grouped init fails all-or-nothing and has nothing to destroy)."""
        return when(And(s.step == STEP.fail_pcpu, s.grouped == 0, s.i > 0), i=s.i - 1,
                    step=If(_hotplug(s), STEP.fail_pcpu_unlist, STEP.fail_pcpu_free))

    @action(role="task")
    def fail_pcpu_unlist(s, cpu):
        """percpu_counter_destroy(&mm->rss_stat[i]): list_del(&fbc->list) under percpu_counters_lock."""
        n = len(s.ctr)
        return when(And(s.step == STEP.fail_pcpu_unlist, s.list_lock == NOBODY),
                    listed={k: If(s.i == k, 0, s.listed[k]) for k in range(n)}, step=STEP.fail_pcpu_free)

    @action(role="task")
    def fail_pcpu_free(s, cpu):
        """percpu_counter_destroy(&mm->rss_stat[i]): free_percpu(fbc->counters); fbc->counters = NULL."""
        n = len(s.ctr)
        p = Select(s.ctr, s.i)
        return when(s.step == STEP.fail_pcpu_free, ctr={k: If(s.i == k, NULL, s.ctr[k]) for k in range(n)},
                    step=STEP.fail_pcpu, **HEAP.free(s, p))

    @action(role="task")
    def mm_destroy_cid_unwind(s, cpu):
        """fail_pcpu: mm_destroy_cid(mm); (6.6's ladder) or, per-counter form, on to destroy_context."""
        done_destroying = Or(s.grouped == 1, s.i == 0)
        if s.grouped and _smp(s):
            return when(s.step == STEP.fail_pcpu, step=STEP.fail_cid, **HEAP.free(s, ptr(SITES.index("cid"))))
        return when(And(s.step == STEP.fail_pcpu, done_destroying), step=STEP.fail_cid)

    @action(role="task")
    def destroy_context_unwind(s, cpu):
        """fail_cid: destroy_context(mm);  (absent from f1a7941243c1: K-MMINIT-LEAK)"""
        return when(s.step == STEP.fail_cid, step=STEP.fail_nocontext,
                    **HEAP.free(s, ptr(SITES.index("context"))))

    @action(role="task")
    def mm_free_pgd_unwind(s, cpu):
        """fail_nocontext: mm_free_pgd(mm);"""
        return when(s.step == STEP.fail_nocontext, step=STEP.fail_nopgd, **HEAP.free(s, ptr(SITES.index("pgd"))))

    @action(role="task")
    def free_mm_unwind(s, cpu):
        """fail_nopgd: free_mm(mm); return NULL;"""
        return when(s.step == STEP.fail_nopgd, step=STEP.done, returned=1, **HEAP.free(s, ptr(SITES.index("mm"))))

    # -- __mmdrop() -------------------------------------------------------------------------------
    @action(role="task")
    def mmdrop_free_pgd(s, cpu):
        """__mmdrop(): cleanup_lazy_tlbs(mm); mm_free_pgd(mm);"""
        return when(s.step == STEP.in_use, step=STEP.drop_context, **HEAP.free(s, ptr(SITES.index("pgd"))))

    @action(role="task")
    def mmdrop_destroy_context(s, cpu):
        """__mmdrop(): destroy_context(mm);"""
        return when(s.step == STEP.drop_context, step=STEP.check_mm,
                    **HEAP.free(s, ptr(SITES.index("context"))))

    @action(role="task")
    def check_mm(s, cpu):
        """__mmdrop(): check_mm(mm): percpu_counter_sum(&mm->rss_stat[i]) for every counter (SMP: reads
        each counter's per-cpu memory; "BUG: Bad rss-counter state" if non-zero)."""
        mem = HEAP.accesses(s, *s.ctr) if _smp(s) else {}
        return when(s.step == STEP.check_mm, step=STEP.drop_cid, **mem)

    @action(role="task")
    def mmdrop_destroy_cid(s, cpu):
        """__mmdrop(): mm_destroy_cid(mm);  (6.6; with CONFIG_SMP it frees the per-cpu mm_cid)"""
        if s.grouped and _smp(s):
            return when(s.step == STEP.drop_cid, step=STEP.destroy_check, i=0,
                        **HEAP.free(s, ptr(SITES.index("cid"))))
        return when(s.step == STEP.drop_cid, step=STEP.destroy_check, i=0)

    @action(role="task", uses={"percpu_counter_destroy_many": "kernel/fork.c:926 __mmdrop"})
    def percpu_counter_destroy_many(s, cpu):
        """__mmdrop(): percpu_counter_destroy_many(mm->rss_stat, NR_MM_COUNTERS):
        if (!fbc[0].counters) return;  (UP: an empty stub)"""
        if not s.grouped:
            return when(False)
        if not _smp(s):
            return when(s.step == STEP.destroy_check, step=STEP.free_mm)
        return when(s.step == STEP.destroy_check, whole=1,
                    step=If(s.ctr[0] == NULL, STEP.free_mm, If(_hotplug(s), STEP.destroy_unlist, STEP.destroy_free)))

    @action(role="task", uses={"percpu_counter_destroy": "kernel/fork.c __mmdrop (before 14ef95be6f55)"})
    def percpu_counter_destroy(s, cpu):
        """__mmdrop(): for (i = 0; i < NR_MM_COUNTERS; i++) percpu_counter_destroy(&mm->rss_stat[i]);
        -- if (!fbc->counters) return;  (UP: an empty stub)"""
        if s.grouped:
            return when(False)
        n = len(s.ctr)
        if not _smp(s):
            return when(s.step == STEP.destroy_check, step=STEP.free_mm)
        return when(And(s.step == STEP.destroy_check, s.i < n), whole=0,
                    step=If(Select(s.ctr, s.i) == NULL, If(s.i + 1 < n, STEP.destroy_check, STEP.free_mm),
                            If(_hotplug(s), STEP.destroy_unlist, STEP.destroy_free)),
                    i=If(Select(s.ctr, s.i) == NULL, s.i + 1, s.i))

    @action(role="task")
    def destroy_unlist(s, cpu):
        """destroy: spin_lock_irqsave(&percpu_counters_lock); list_del(&fbc[j].list) for the counters
        destroyed (all n of a group, or counter i); unlock."""
        n = len(s.ctr)
        return when(And(s.step == STEP.destroy_unlist, s.list_lock == NOBODY),
                    listed={k: If(Or(s.whole == 1, s.i == k), 0, s.listed[k]) for k in range(n)},
                    step=STEP.destroy_free)

    @action(role="task")
    def destroy_free(s, cpu):
        """destroy: free_percpu(fbc[0].counters); fbc[j].counters = NULL for the counters destroyed."""
        n = len(s.ctr)
        mine = {k: Or(s.whole == 1, s.i == k) for k in range(n)}
        last = Or(s.whole == 1, s.i + 1 >= n)
        return when(s.step == STEP.destroy_free, ctr={k: If(mine[k], NULL, s.ctr[k]) for k in range(n)},
                    i=If(last, s.i, s.i + 1), step=If(last, STEP.free_mm, STEP.destroy_check),
                    **HEAP.free(s, Select(s.ctr, If(s.whole == 1, 0, s.i))))

    @action(role="task")
    def free_mm(s, cpu):
        """__mmdrop(): free_mm(mm);"""
        return when(s.step == STEP.free_mm, step=STEP.done, **HEAP.free(s, ptr(SITES.index("mm"))))

    # -- percpu_counter_cpu_dead() on a CPU going down --------------------------------------------
    @action(role="hotplug")
    def cpu_dead_lock(s, cpu):
        """percpu_counter_cpu_dead(): spin_lock_irq(&percpu_counters_lock);  (CONFIG_HOTPLUG_CPU)"""
        return when(And(_hotplug(s), s.fold[cpu] == FOLD.idle, s.list_lock == NOBODY),
                    list_lock=cpu, fold={cpu: FOLD.walking})

    @action(role="hotplug", choose={"k": lambda p: range(p.counters)})
    def cpu_dead_fold(s, cpu, k):
        """list_for_each_entry(fbc, &percpu_counters, list): raw_spin_lock(&fbc->lock);
        fbc->count += *per_cpu_ptr(fbc->counters, cpu); ... -- touches the node (in the mm) and the
        counter's per-cpu memory."""
        return when(And(s.fold[cpu] == FOLD.walking, s.listed[k] == 1, s.walked[k] == 0),
                    walked={k: 1}, **HEAP.accesses(s, ptr(SITES.index("mm")), s.ctr[k]))

    @action(role="hotplug")
    def cpu_dead_unlock(s, cpu):
        """percpu_counter_cpu_dead(): spin_unlock_irq(&percpu_counters_lock);"""
        return when(And(s.fold[cpu] == FOLD.walking,
                        And(*[Or(s.listed[k] == 0, s.walked[k] == 1) for k in range(len(s.ctr))])),
                    list_lock=NOBODY, fold={cpu: FOLD.done})

    @terminal
    def finished(s):
        return And(s.step == STEP.done, *[Or(s.fold[c] == FOLD.done, not _hotplug(s)) for c in s.hotplug])

    # -- properties -----------------------------------------------------------------------------------
    @invariant
    def init_all_or_nothing(s):
        """GR-ALLORNOTHING: when mm_init returns the mm, every counter is initialised (UP: its count set;
        SMP: its per-cpu storage live; HOTPLUG: on the list); when it returns NULL, no counter storage is
        allocated and none is listed."""
        n = len(s.ctr)
        live_rss = [HEAP.is_live(s, SITES[RSS + k]) for k in range(n)]
        ready = [And(s.count[k] == 0, Or(not _smp(s), s.ctr[k] != NULL), Or(not _hotplug(s), s.listed[k] == 1))
                 for k in range(n)]
        failed = And(s.step == STEP.done, s.returned == 1)
        return And(Implies(s.step == STEP.in_use, And(*ready)),
                   Implies(failed, And(*[Not(x) for x in live_rss], *[s.listed[k] == 0 for k in range(n)])))

    @invariant
    def listed_only_while_alive(s):
        """PC-REG: a counter on percpu_counters is initialised and its memory (the mm holding the node,
        the per-cpu storage) is live, in every state."""
        return And(*[Implies(s.listed[k] == 1,
                             And(s.ctr[k] != NULL, HEAP.is_live(s, "mm"),
                                 HEAP.state(s, s.ctr[k]) == MEM.live)) for k in range(len(s.ctr))])

    @invariant
    def listed_iff_initialised(s):
        """PC-REG at operation boundaries (after mm_init returns, after __mmdrop): with
        CONFIG_HOTPLUG_CPU a counter is on the list if and only if it is initialised. Before mm_init's
        memset (and when allocate_mm failed, so there is no mm) the fields are the parent's copy."""
        no_mm = And(s.step == STEP.done, s.returned == 1, s.attempts == 1)
        boundary = Or(s.step == STEP.in_use, And(s.step == STEP.done, Not(no_mm)))
        return Implies(And(boundary, _hotplug(s)),
                       And(*[(s.listed[k] == 1) == (s.ctr[k] != NULL) for k in range(len(s.ctr))]))

    @invariant
    def up_allocates_nothing(s):
        """UP semantics: no per-cpu storage exists, so destroy_many has nothing to free."""
        return Implies(s.config == UP, And(*[Not(HEAP.is_live(s, x)) for x in SITES[RSS:] + ("cid",)]))

    @sometimes
    def mm_init_fails_after_allocating(s):
        """Some failure point past the first allocation unwinds to NULL."""
        return And(s.step == STEP.done, s.returned == 1, s.attempts > 1)

    @sometimes
    def mm_lives_and_is_dropped(s):
        """mm_init succeeds and __mmdrop frees the mm."""
        return And(s.step == STEP.done, s.returned == 0)

    @sometimes(applies=lambda p: p.config == SMP_HOTPLUG and p.folds > 0)
    def the_fold_visits_a_counter(s):
        """The hotplug fold walks a registered counter."""
        return Or(*[s.walked[k] == 1 for k in range(len(s.ctr))])
