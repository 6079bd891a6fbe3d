# SPDX-License-Identifier: GPL-2.0-only
"""The mm's lazy rss counters at ``__mmdrop`` (seed 001, ZhangPeng RFC 3/3 on RFC 2/3).

RFC 3/3 makes ``mm->rss_stat`` an array of ``NR_MM_COUNTERS`` lazy counters
(RFC 2/3's, each embedding a ``struct percpu_counter``) and frees them in
``__mmdrop`` with ``lazy_percpu_counter_destroy_many()``. For each counter,
destroy_many reads the word and, if the counter went per-CPU, calls
``percpu_counter_destroy(&c[i].fbc)``: ``list_del`` from the CPU-hotplug list
``percpu_counters`` under ``percpu_counters_lock``, and ``free_percpu`` of its
per-CPU storage. Then ``free_mm(mm)`` frees the memory that holds the
counters, and the list nodes inside them. A CPU going down runs
``percpu_counter_cpu_dead()``, which walks the list and touches each listed
counter (the node in the mm, and the counter's per-CPU storage).

This spec has the intended call, ``lazy_percpu_counter_destroy_many(
mm->rss_stat, NR_MM_COUNTERS)``; ``specs/bugs/lazy_mmdrop_uninit_index.py``
has the posted one, ``&mm->rss_stat[i]`` with ``int i;`` never assigned.
"""
from checker import (NOBODY, And, Array, Bool, Enum, If, Implies, Lock, Or, Param, PerCpu, Role, Select, Shared,
                     Spec, action, invariant, sometimes, terminal, when)
from checker.kernel.memory import NULL, Heap, ptr

#: The task: the mm in use (counters may switch), then __mmdrop.
STEP = Enum("start", "in_use", "destroy_read", "destroy", "free_mm", "done", name="step")
#: The hotplug CPU's percpu_counter_cpu_dead().
FOLD = Enum("idle", "walking", "done", name="fold")

SITES = ("mm", "rss0", "rss1", "rss2", "rss3")
MM = SITES.index("mm")
RSS = SITES.index("rss0")
HEAP = Heap(*SITES)


def _site(k):
    """The per-CPU storage of rss counter k (a pointer; NULL for an index outside the array)."""
    out = NULL
    for x in range(len(SITES) - RSS):
        out = If(k == x, ptr(RSS + x), out)
    return out


def destroy_read(s, base):
    """lazy_percpu_counter_destroy_many(c = &mm->rss_stat[base], n), iteration j:
    pcpu_v = lazy_percpu_counter_is_pcpu(atomic64_read(&c[j].v)) -- reads element base + j of the array."""
    n = len(s.pcpu)
    k = base + s.j
    inside = And(k >= 0, k < n)
    return when(And(s.step == STEP.destroy_read, s.j < n), at=If(inside, k, -1),
                step=If(And(inside, Select(s.pcpu, k) == 1), STEP.destroy, STEP.destroy_read), j=s.j + 1,
                **HEAP.access(s, ptr(MM), k, n))


class LazyMmdrop(Spec):
    """__mmdrop() with lazy rss counters: destroy_many over the mm's counters, free_mm, and a hotplug fold."""

    kernel = ("ZhangPeng RFC 3/3 (seed 001) kernel/fork.c __mmdrop with RFC 2/3 "
              "lib/lazy-percpu-counter.c lazy_percpu_counter_destroy_many and v6.6 lib/percpu_counter.c "
              "percpu_counter_destroy / percpu_counter_cpu_dead; the call as intended: "
              "lazy_percpu_counter_destroy_many(mm->rss_stat, NR_MM_COUNTERS)")
    assumptions = (
        "NR_MM_COUNTERS is the parameter counters (4 in the kernel)",
        "while the mm is in use any subset of its counters may have switched to per-CPU mode (the switch "
        "itself is percpu_lazy_rfc's subject): percpu_counter_init of the embedded fbc, allocating its "
        "per-CPU storage and adding it to percpu_counters",
        "percpu_counter_destroy's list_del (under percpu_counters_lock) and free_percpu are one step: once "
        "unlisted the fold cannot reach the counter",
        "an element read outside the array is reported as an out-of-bounds access; what its garbage would "
        "do next (bit 0 set: percpu_counter_destroy of a wild pointer) is not modelled further",
        "CONFIG_HOTPLUG_CPU=y, so counters are listed; the fold walks the list in any order",
    )

    counters = Param(4, domain=range(1, 5), explore=(2, 4), doc="NR_MM_COUNTERS (4 in the kernel)")
    folds = Param(1, domain=(0, 1), doc="a CPU going down: percpu_counter_cpu_dead")

    task = Role(1, doc="the CPU dropping the mm")
    hotplug = Role("folds", doc="a CPU going down")

    heap = HEAP
    step = Shared(STEP.start, type=STEP)
    j = Shared(0, doc="destroy_many's loop index")
    at = Shared(-1, doc="the counter destroy_many is destroying (-1: none)")
    pcpu = Array("counters", 0, type=Bool, doc="rss_stat[k] is in per-CPU mode (its word is &fbc | 1)")
    listed = Array("counters", 0, type=Bool, doc="rss_stat[k].fbc is on percpu_counters")
    list_lock = Lock(doc="percpu_counters_lock")
    fold = PerCpu(FOLD.idle, type=FOLD, role="hotplug")
    walked = Array("counters", 0, type=Bool, doc="the fold has visited this counter")
    fold_in_freed = Shared(0, type=Bool, doc="ghost: the fold walked a list node inside a freed mm")

    # Z3 as well: every run of the 2-counter mm is at most 13 steps long (9 of the task, 4 of the
    # fold), so BMC to 13 covers all runs and its verdicts are final.
    bmc = (13, {"counters": (2,)})

    # -- the mm's life ------------------------------------------------------------------------------
    @action(role="task")
    def mm_alloc(s, cpu):
        """dup_mm(): allocate_mm(); mm_init() memsets rss_stat: every counter atomic, value 0."""
        return when(s.step == STEP.start, step=STEP.in_use, **HEAP.alloc(s, "mm", True)[0])

    @action(role="task", choose={"k": lambda p: range(p.counters)})
    def counter_switches(s, cpu, k):
        """rss_stat[k] goes per-CPU (RFC 2/3 switch_to_pcpu): percpu_counter_init(&c->fbc, 0, GFP_ATOMIC)
        allocates its storage and list_adds it under percpu_counters_lock; the word becomes &c->fbc | 1."""
        mem, _ = HEAP.alloc(s, SITES[RSS + k], True)
        return when(And(s.step == STEP.in_use, s.pcpu[k] == 0, s.list_lock == NOBODY),
                    pcpu={k: 1}, listed={k: 1}, **mem)

    @action(role="task")
    def mmdrop(s, cpu):
        """__mmdrop(): ... mm_destroy_cid(mm); lazy_percpu_counter_destroy_many(...) begins."""
        return when(s.step == STEP.in_use, step=STEP.destroy_read, j=0)

    @action(role="task")
    def lazy_percpu_counter_destroy_many(s, cpu):
        """lazy_percpu_counter_destroy_many(mm->rss_stat, NR_MM_COUNTERS): reads rss_stat[j].v."""
        return destroy_read(s, 0)

    @action(role="task")
    def percpu_counter_destroy(s, cpu):
        """percpu_counter_destroy(&c[j].fbc): list_del(&fbc->list) under percpu_counters_lock;
        free_percpu(fbc->counters)."""
        k = s.at
        return when(And(s.step == STEP.destroy, s.list_lock == NOBODY),
                    pcpu={x: If(k == x, 0, s.pcpu[x]) for x in range(len(s.pcpu))},
                    listed={x: If(k == x, 0, s.listed[x]) for x in range(len(s.pcpu))},
                    at=-1, step=STEP.destroy_read, **HEAP.free(s, _site(k)))

    @action(role="task")
    def free_mm(s, cpu):
        """__mmdrop(): free_mm(mm) once destroy_many has walked its n counters."""
        return when(And(s.step == STEP.destroy_read, s.j == len(s.pcpu)), step=STEP.done,
                    **HEAP.free(s, ptr(MM)))

    # -- percpu_counter_cpu_dead() ---------------------------------------------------------------------
    @action(role="hotplug")
    def cpu_dead_lock(s, cpu):
        """percpu_counter_cpu_dead(): spin_lock_irq(&percpu_counters_lock);"""
        return when(And(s.fold[cpu] == FOLD.idle, s.list_lock == NOBODY), list_lock=cpu, fold={cpu: FOLD.walking})

    @action(role="hotplug", choose={"k": lambda p: range(p.counters)})
    def cpu_dead_fold(s, cpu, k):
        """list_for_each_entry(fbc, &percpu_counters, list): fbc->count += *per_cpu_ptr(fbc->counters, cpu);
        -- touches the node (inside the mm) and the counter's per-CPU storage."""
        return when(And(s.fold[cpu] == FOLD.walking, s.listed[k] == 1, s.walked[k] == 0),
                    walked={k: 1}, fold_in_freed=If(HEAP.is_live(s, "mm"), s.fold_in_freed, 1),
                    **HEAP.accesses(s, ptr(MM), ptr(RSS + k)))

    @action(role="hotplug")
    def cpu_dead_unlock(s, cpu):
        """spin_unlock_irq(&percpu_counters_lock);"""
        return when(And(s.fold[cpu] == FOLD.walking,
                        *[Or(s.listed[k] == 0, s.walked[k] == 1) for k in range(len(s.pcpu))]),
                    list_lock=NOBODY, fold={cpu: FOLD.done})

    @terminal
    def finished(s):
        return And(s.step == STEP.done, *[s.fold[c] == FOLD.done for c in s.hotplug])

    # -- properties ---------------------------------------------------------------------------------------
    @invariant
    def listed_only_while_alive(s):
        """LZ-REG: a counter on percpu_counters lives in a live mm and has live per-CPU storage."""
        return And(*[Implies(s.listed[k] == 1, And(HEAP.is_live(s, "mm"), HEAP.is_live(s, SITES[RSS + k])))
                     for k in range(len(s.pcpu))])

    @invariant
    def fold_never_walks_freed_memory(s):
        """percpu_counter_cpu_dead never follows a list node into a freed mm (KASAN: use after free)."""
        return s.fold_in_freed == 0

    @sometimes
    def a_switched_counter_is_destroyed(s):
        """destroy_many destroys a counter that went per-CPU."""
        return s.step == STEP.destroy

    @sometimes(applies=lambda p: p.folds > 0)
    def the_fold_visits_a_counter(s):
        """The hotplug fold walks a listed counter."""
        return Or(*[s.walked[k] == 1 for k in range(len(s.pcpu))])
