# SPDX-License-Identifier: GPL-2.0-only
"""mmput() dropping ``mm_users`` with a relaxed decrement: check_mm() sums stale locals.

kernel/fork.c::

    void mmput(struct mm_struct *mm)
    {
            might_sleep();
            if (atomic_dec_and_test(&mm->mm_users))
                    __mmput(mm);
    }

``atomic_dec_and_test()`` is value-returning and fully ordered. Made
``atomic_dec_return_relaxed(&mm->mm_users) == 0`` (the same test, "we only
need the count"), an exiting thread's last ``this_cpu_add`` to its rss
counter's local (no LOCKed instruction, no ordering of its own) is no longer
ordered before its decrement. The last thread's decrement reads from it,
runs ``__mmput()`` -> ``mmdrop()`` -> ``__mmdrop()`` -> ``check_mm()``, and
``percpu_counter_sum()`` reads that CPU's local before the store reaches
it: "BUG: Bad rss-counter state" for an mm that accounted every page.
``mmdrop()``'s own fully ordered ``atomic_dec_and_test(&mm->mm_count)`` on
the summing CPU does not help: the missing order is on the adder's side.
Not under ``sc``; not under ``tso`` (x86's ``LOCK DEC`` drains the store
buffer, relaxed or not); found under ``lkmm``.
"""
from checker import Rmw, action
from checker.ordering.declare import MEMORY
from checker.specs.check_mm_refcount import CheckMmRefcount


class CheckMmMmputRelaxed(CheckMmRefcount, expect_violated=("check_mm_sum_exact",)):
    """mmput() with atomic_dec_return_relaxed(&mm->mm_users) == 0."""

    kernel = CheckMmRefcount.kernel + "; mmput's atomic_dec_and_test made atomic_dec_return_relaxed() == 0"
    explore_sweeps = ({"ncpus": 2, "ops": 1, "memory": MEMORY.lkmm},)  # one add each: the shortest trace

    @action(role="threads", access=Rmw("mm_users", "relaxed"))
    def mmput(s, t):
        """(the bug) exit_mm() -> mmput(): if (atomic_dec_return_relaxed(&mm->mm_users) == 0) __mmput(mm);"""
        return CheckMmRefcount.mmput(s, t)
