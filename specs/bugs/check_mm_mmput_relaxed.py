# SPDX-License-Identifier: GPL-2.0-only
"""mmput() dropping ``mm_users`` with a relaxed decrement, from a caller with no full barrier before it.

kernel/fork.c::

    void mmput(struct mm_struct *mm)
    {
            might_sleep();
            if (atomic_dec_and_test(&mm->mm_users))
                    __mmput(mm);
    }

``atomic_dec_and_test()`` is value-returning and fully ordered. Made
``atomic_dec_return_relaxed(&mm->mm_users) == 0`` (the same test, "we only
need the count"), what orders a caller's last ``this_cpu_add`` to an rss
counter's local before its decrement is whatever the caller did before
``mmput()``. For an exiting thread that is ``exit_mm()``'s
``task_lock(current); smp_mb__after_spinlock();`` (kernel/exit.c, v5.10 to
today, torvalds/linux 5bc78502322a): a full barrier, so the relaxed drop is
harmless there (``madvisers=0``: holds under every model). It is not
harmless for a ``get_task_mm()``/``mm_access()`` user such as
``process_madvise()`` (mm/madvise.c, ecb8ac8b1f14, v5.10)::

    mm = mm_access(task, PTRACE_MODE_READ_FSCREDS);
    ...
    while (iov_iter_count(&iter)) {
            ret = do_madvise(mm, ...);   /* MADV_PAGEOUT: reclaim -> dec_mm_counter(mm, ...) */
            ...
    }
    ...
    mmput(mm);

whose rss updates are followed only by ``mmap_read_unlock()`` (a release,
which orders nothing after it) before ``mmput()``. Thread 0 here is such a
caller, thread 1 an exiting thread of the target: thread 0's
``this_cpu_add`` is not ordered before its relaxed decrement; thread 1's
decrement reads from it, runs ``__mmput()`` -> ``mmdrop()`` ->
``__mmdrop()`` -> ``check_mm()``, and ``percpu_counter_sum()`` reads CPU 0's
local before the store reaches it: "BUG: Bad rss-counter state" for an mm
that accounted every page. ``mmdrop()``'s fully ordered
``atomic_dec_and_test(&mm->mm_count)`` on the summing CPU does not help: the
missing order is on the madviser's side. Not under ``sc``; not under ``tso``
(x86's ``LOCK DEC`` drains the store buffer, relaxed or not); found under
``lkmm``. So the expected violation is named for lkmm,
``relaxed_drop_misses_an_add``, and ``check_mm_sum_exact`` is claimed (and
holds) under sc and tso: ``verify check_mm_mmput_relaxed --memory tso`` exits 0
saying x86 cannot show it.
"""
from checker import And, If, Or, Param, Rmw, Role, action, invariant, smp_mb__after_spinlock, when
from checker.ordering.declare import MEMORY
from checker.specs.check_mm_refcount import PC, CheckMmRefcount


class CheckMmMmputRelaxed(CheckMmRefcount, expect_violated=("relaxed_drop_misses_an_add",)):
    """mmput() with atomic_dec_return_relaxed(&mm->mm_users) == 0, one caller a process_madvise()."""

    kernel = CheckMmRefcount.kernel + "; mmput's atomic_dec_and_test made atomic_dec_return_relaxed() == 0"
    # Thread 0 (a process_madvise() caller) differs from the exiting threads: the CPUs are not interchangeable.
    threads = Role("ncpus", symmetric=False, doc="CPU 0: a process_madvise() caller; the others: exiting threads")
    madvisers = Param(1, domain=(0, 1), doc="1: thread 0 is a get_task_mm() user, no full barrier before mmput")
    explore_sweeps = ({"ncpus": 2, "ops": 1, "memory": MEMORY.lkmm},)  # one add each: the shortest trace

    @invariant(applies=lambda p: p.memory != MEMORY.lkmm)
    def check_mm_sum_exact(s):
        """check_mm's percpu_counter_sum returns E (sc, tso: the relaxed drop is no bug there)."""
        return s.alarm == 0

    @invariant(applies=lambda p: p.memory == MEMORY.lkmm)
    def relaxed_drop_misses_an_add(s):
        """check_mm_sum_exact under lkmm, false on purpose: the summer misses the madviser's last add."""
        return s.alarm == 0

    @action(role="threads", access=smp_mb__after_spinlock())
    def exit_mm_barrier(s, t):
        """exit_mm(): task_lock(current); smp_mb__after_spinlock();  (the exiting threads only)"""
        return when(And(s.pc[t] == PC.idle, s.ops_left[t] == 0, t >= s.madvisers), pc={t: PC.mmput})

    @action(role="threads", access=Rmw("mm_users", "relaxed"))
    def mmput(s, t):
        """(the bug) exit_mm() or process_madvise() (no barrier before it) -> mmput():
        if (atomic_dec_return_relaxed(&mm->mm_users) == 0) __mmput(mm);"""
        return mmput_after(s, t)


def mmput_after(s, t):
    """mmput()'s decrement, after exit_mm()'s barrier or, for a process_madvise() caller, after its last add."""
    last = s.mm_users == 1
    ready = Or(s.pc[t] == PC.mmput, And(t < s.madvisers, s.pc[t] == PC.idle, s.ops_left[t] == 0))
    return when(ready, mm_users=s.mm_users - 1, pc={t: If(last, PC.mmdrop, PC.gone)})
