# SPDX-License-Identifier: GPL-2.0-only
"""check_mm() after the last mmput(): the rss counter's exact sum through the refcount drop.

kernel/fork.c and include/linux/sched/mm.h (v6.2 to today, the rss counters
as ``percpu_counter``s since f1a7941243c1)::

    void mmput(struct mm_struct *mm)
    {
            might_sleep();
            if (atomic_dec_and_test(&mm->mm_users))
                    __mmput(mm);                 /* ... exit_mmap(mm); ... mmdrop(mm); */
    }

    static inline void mmdrop(struct mm_struct *mm)
    {
            /*
             * The implicit full barrier implied by atomic_dec_and_test() is
             * required by the membarrier system call before returning to
             * user-space, after storing to rq->curr.
             */
            if (unlikely(atomic_dec_and_test(&mm->mm_count)))
                    __mmdrop(mm);                /* ... check_mm(mm); ... */
    }

    static void check_mm(struct mm_struct *mm)
    {
            for (i = 0; i < NR_MM_COUNTERS; i++) {
                    long x = percpu_counter_sum(&mm->rss_stat[i]);
                    if (unlikely(x))
                            pr_alert("BUG: Bad rss-counter state mm:%p type:%s val:%ld\n", ...);
            }
            ...
    }

Each thread of the process runs on its own CPU, accounts pages with
``add_mm_counter()`` = ``percpu_counter_add()`` (lib/percpu_counter.c
``percpu_counter_add_batch``, variant B: a ``this_cpu_add`` of its local on
the fast path, a fold into ``fbc->count`` under ``fbc->lock`` on the slow
path) and exits through ``exit_mm()`` -> ``mmput()``. The thread whose
``atomic_dec_and_test(&mm->mm_users)`` reaches 0 runs ``__mmput()`` ->
``mmdrop()``, and since ``mm_users`` holds the one ``mm_count`` reference,
``__mmdrop()`` -> ``check_mm()`` -> ``percpu_counter_sum()``: under
``fbc->lock`` it reads ``fbc->count`` and every CPU's local with plain
loads.

The fast path's ``this_cpu_add`` is no LOCKed instruction on x86 and orders
nothing for other CPUs. Two full barriers order a thread's adds before the
sum's loads. ``exit_mm()`` (kernel/exit.c, since v5.10: torvalds/linux
5bc78502322a "sched: fix exit_mm vs membarrier (v4)", posted as
20200924172508.8724-2-mathieu.desnoyers@efficios.com; unchanged to today)
runs, before ``mmput()``::

    mmap_read_lock(mm);
    ...
    /* more a memory barrier than a real lock */
    task_lock(current);
    /*
     * When a thread stops operating on an address space, the loop
     * in membarrier_private_expedited() may not observe that
     * tsk->mm, ... Membarrier requires a memory barrier after
     * accessing user-space memory, before clearing tsk->mm ...
     */
    smp_mb__after_spinlock();
    local_irq_disable();
    current->mm = NULL;
    ...
    task_unlock(current);
    mmap_read_unlock(mm);
    mm_update_next_owner(mm);
    mmput(mm);

so an exiting thread's adds are ordered before its decrement by that
``smp_mb()`` (the step ``exit_mm_barrier``) as well as by the decrement's own
full ordering. The fully ordered ``atomic_dec_and_test`` (a value-returning
atomic: ``smp_mb()`` before and after) of the last decrement reads from all
the others and orders them before the sum's loads. Under ``sc``
(``--memory sc``) that is invisible; under ``tso`` and ``lkmm`` it is what the
property ``check_mm_sum_exact`` rests on.

Not every last ``mmput()`` is an exiting thread's: a task that took a
reference with ``get_task_mm()``/``mm_access()`` (``process_madvise()``,
mm/madvise.c since v5.10, ecb8ac8b1f14: ``mm = mm_access(task, ...); ...
do_madvise(mm, ...) ...; mmput(mm);``) updates the target's rss counters
(``MADV_PAGEOUT``'s reclaim unmaps pages: ``dec_mm_counter()``) and drops
its reference with no full barrier before ``mmput()`` (``mmap_read_unlock()``
is a release, which orders nothing after it): for it the refcount drop's own
full ordering is the only order. ``specs/bugs/check_mm_mmput_relaxed.py``
makes thread 0 such a caller and the drop relaxed: a hazard only for that
caller, as ``exit_mm()``'s barrier covers the exiting threads (with
``madvisers=0`` the relaxed drop holds under every model).
The per-CPU counter's own spec (``percpu_eager``) has no refcount: its
``sum_exact_without_overlap`` says "no add overlapped the sum" by the SC
interleaving, which under a weak model no longer means the adds are visible.
"""
from checker import (NOBODY, S32, S64, And, Bool, Enum, Ghost, If, Implies, Int, Lock, Or, Load, Param, PerCpu,
                     Rmw, Role, Shared, Spec, Store, Sum, action, invariant, smp_mb__after_spinlock, sometimes,
                     terminal, when)

#: Where a thread is: adding (idle, its slow path), then exit_mm's barrier (mmput: past it), __mmdrop,
#: check_mm's sum.
PC = Enum("idle", "fold", "zero", "unlock", "mmput", "mmdrop", "sum_lock", "sum_scan", "done", "gone",
          name="mm_pc")


def _amounts(p):
    return (1, -1) if p.neg else (1,)


class CheckMmRefcount(Spec):
    """Threads add to an rss percpu_counter and mmput(); the last one's __mmdrop() runs check_mm()'s sum."""

    kernel = ("kernel/exit.c exit_mm (v5.10 to today: task_lock; smp_mb__after_spinlock; ... mmput), "
              "mm/madvise.c process_madvise (mm_access ... mmput, no full barrier), "
              "kernel/fork.c mmput, __mmput, __mmdrop, check_mm and include/linux/sched/mm.h mmdrop (v6.2 to "
              "v6.12: atomic_dec_and_test on mm_users and mm_count); lib/percpu_counter.c "
              "percpu_counter_add_batch (B, as in v6.6 c439d5e8a0de) and __percpu_counter_sum")
    assumptions = (
        "one rss counter (NR_MM_COUNTERS = 1): the counters are independent percpu_counters summed in turn",
        "each thread runs on its own CPU and does not migrate (a migration is a full barrier anyway)",
        "check_mm is judged against E, the exact sum of the adds (the kernel compares with 0, which E is once "
        "every page is unmapped; equality with E is the same claim then, and stronger otherwise)",
        "no CPU hotplug; no interrupt-context adds (the rss counters are not updated from interrupts)",
        "a slow path's local_irq_save and raw_spin_lock are one step (only this CPU writes its local)",
    )

    ncpus = Param(2, domain=range(1, 4), explore=(1, 2, 3), doc="threads of the process, one per CPU")
    batch = Param(2, domain=range(1, 64), doc="the batch (small, so that a fold happens)")
    ops = Param(3, domain=range(0, 8), doc="add_mm_counter calls per thread before it exits (3 at batch 2: a fold, and a local left at 1)")
    neg = Param(0, domain=(0, 1), doc="1: amounts +1 and -1 (a page mapped and unmapped)")

    threads = Role("ncpus", symmetric=True, doc="CPUs, each running a thread of the process")

    count = Shared(0, type=S64, doc="fbc->count, written under fbc->lock")
    lock = Lock(doc="fbc->lock")
    local = PerCpu(0, type=S32, role="threads", doc="*per_cpu_ptr(fbc->counters, cpu)")
    mm_users = Shared(lambda p: p.ncpus, doc="mm->mm_users: one reference per thread")
    mm_count = Shared(1, doc="mm->mm_count: the one reference mm_users holds together")
    pc = PerCpu(PC.idle, type=PC, role="threads")
    ops_left = PerCpu(lambda p: p.ops, role="threads", doc="add_mm_counter calls still to make")
    pending = PerCpu(0, type=Int, role="threads", doc="the slow path's amount in flight, then the local it folded")
    sum_acc = Shared(0, type=S64, doc="ret in check_mm's percpu_counter_sum")
    summed = PerCpu(0, type=Bool, role="threads", doc="check_mm's sum has read this CPU's local")
    exact = Ghost(0, doc="E: every add past its linearisation point")
    alarm = Ghost(0, type=Bool, doc="check_mm's sum was not E: 'BUG: Bad rss-counter state'")
    checked = Ghost(0, type=Bool, doc="check_mm's sum has returned")
    saw_local = Ghost(0, type=Bool, doc="check_mm's sum read a non-zero local")

    # -- percpu_counter_add_batch() (B) -----------------------------------------------------
    @action(role="threads", choose={"amount": _amounts}, access=Rmw("local", "this_cpu"))
    def add_fast(s, t, amount):
        """add_mm_counter() -> percpu_counter_add_batch(): local_irq_save(); count = __this_cpu_read(
        *fbc->counters) + amount; abs(count) < batch: this_cpu_add(*fbc->counters, amount);
        local_irq_restore()."""
        c = s.local[t] + amount
        return when(And(s.pc[t] == PC.idle, s.ops_left[t] > 0, abs(c) < s.batch),
                    local={t: c}, ops_left={t: s.ops_left[t] - 1}, exact=s.exact + amount)

    @action(role="threads", choose={"amount": _amounts}, access=Load("local", "plain"))
    def add_slow(s, t, amount):
        """percpu_counter_add_batch(): local_irq_save(); count = __this_cpu_read(*fbc->counters) + amount;
        abs(count) >= batch: raw_spin_lock(&fbc->lock)."""
        return when(And(s.pc[t] == PC.idle, s.ops_left[t] > 0, abs(s.local[t] + amount) >= s.batch,
                        s.lock == NOBODY),
                    lock=t, pc={t: PC.fold}, pending={t: amount}, ops_left={t: s.ops_left[t] - 1})

    @action(role="threads", access=(Load("local", "plain"), Load("count", "plain"), Store("count", "plain")))
    def fold(s, t):
        """fbc->count += count;  (count = the local read again + amount: the linearisation point)"""
        c = s.local[t]
        return when(s.pc[t] == PC.fold, count=s.count + c + s.pending[t], exact=s.exact + s.pending[t],
                    pending={t: c}, pc={t: PC.zero})

    @action(role="threads", access=Rmw("local", "this_cpu"))
    def zero(s, t):
        """__this_cpu_sub(*fbc->counters, count - amount): subtracts what was folded."""
        return when(s.pc[t] == PC.zero, local={t: s.local[t] - s.pending[t]}, pending={t: 0}, pc={t: PC.unlock})

    @action(role="threads")
    def unlock(s, t):
        """raw_spin_unlock(&fbc->lock); local_irq_restore(flags)."""
        return when(s.pc[t] == PC.unlock, lock=NOBODY, pc={t: PC.idle})

    # -- exit_mm() -> mmput() -> __mmput() -> mmdrop() -> __mmdrop() -----------------------------
    @action(role="threads", access=smp_mb__after_spinlock())
    def exit_mm_barrier(s, t):
        """exit_mm(): task_lock(current); smp_mb__after_spinlock();  (a full barrier; kernel/exit.c since v5.10)
        ... task_unlock(current); mmap_read_unlock(mm); mm_update_next_owner(mm);"""
        return when(And(s.pc[t] == PC.idle, s.ops_left[t] == 0), pc={t: PC.mmput})

    @action(role="threads", access=Rmw("mm_users", "mb"))
    def mmput(s, t):
        """exit_mm() -> mmput(): if (atomic_dec_and_test(&mm->mm_users)) __mmput(mm);  (fully ordered)"""
        last = s.mm_users == 1
        return when(s.pc[t] == PC.mmput, mm_users=s.mm_users - 1, pc={t: If(last, PC.mmdrop, PC.gone)})

    @action(role="threads", access=Rmw("mm_count", "mb"))
    def mmdrop(s, t):
        """__mmput() -> mmdrop(): if (unlikely(atomic_dec_and_test(&mm->mm_count))) __mmdrop(mm);"""
        last = s.mm_count == 1
        return when(s.pc[t] == PC.mmdrop, mm_count=s.mm_count - 1, pc={t: If(last, PC.sum_lock, PC.gone)})

    # -- __mmdrop() -> check_mm() -> percpu_counter_sum() ----------------------------------------
    # Taking fbc->lock and the first load under it are one step: nothing another CPU does can fall between
    # them (fbc->count is written only under the lock), and the lock is then an acquire of this access.
    @action(role="threads", access=Load("count", "plain"))
    def sum_lock(s, t):
        """check_mm(): x = percpu_counter_sum(&mm->rss_stat[i]): raw_spin_lock_irqsave(&fbc->lock);
        ret = fbc->count;"""
        return when(And(s.pc[t] == PC.sum_lock, s.lock == NOBODY), lock=t, sum_acc=s.count, pc={t: PC.sum_scan})

    @action(role="threads", choose={"other": lambda p: p.threads},
            access=Load("local", "plain", slot=lambda s, t, other: other, race_ok=True))
    def sum_local(s, t, other):
        """__percpu_counter_sum(): for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask) ret +=
        *per_cpu_ptr(fbc->counters, cpu);  (a plain load, left racy on purpose; any order)"""
        v = s.local[other]
        return when(And(s.pc[t] == PC.sum_scan, s.summed[other] == 0), sum_acc=s.sum_acc + v,
                    summed={other: 1}, saw_local=If(v != 0, 1, s.saw_local))

    @action(role="threads")
    def sum_unlock(s, t):
        """raw_spin_unlock_irqrestore(&fbc->lock); return ret;  check_mm(): if (unlikely(x))
        pr_alert("BUG: Bad rss-counter state ...")  (judged against E)."""
        return when(And(s.pc[t] == PC.sum_scan, Sum(s.summed) == len(s.threads)), lock=NOBODY,
                    pc={t: PC.done}, alarm=s.sum_acc != s.exact, checked=1)

    @terminal
    def mm_freed(s):
        return s.checked == 1

    # -- properties ------------------------------------------------------------------------------
    @invariant
    def check_mm_sum_exact(s):
        """check_mm's percpu_counter_sum returns E: every thread's adds are visible to the last mmput's
        summer (no false 'BUG: Bad rss-counter state')."""
        return s.alarm == 0

    @invariant
    def mm_freed_once(s):
        """Exactly one thread reaches __mmdrop, and only once every reference is dropped."""
        checking = (PC.sum_lock, PC.sum_scan, PC.done)
        inside = Sum(If(Or(*[s.pc[c] == x for x in checking]), 1, 0) for c in s.threads)
        return And(inside <= 1, Implies(inside == 1, And(s.mm_users == 0, s.mm_count == 0)))

    @sometimes
    def check_mm_runs(s):
        """The last mmput reaches check_mm and its sum returns."""
        return s.checked == 1

    @sometimes
    def check_mm_reads_a_local(s):
        """check_mm's sum reads a non-zero local: its exactness needs that CPU's this_cpu_add visible."""
        return And(s.checked == 1, s.saw_local == 1)

    @sometimes(applies=lambda p: p.ops >= p.batch)
    def a_fold_happens(s):
        """A slow-path add folds into fbc->count before check_mm."""
        return s.count != 0
