# SPDX-License-Identifier: GPL-2.0-only
"""The slow path's cmpxchg loop retrying with a stale ``old``.

The kernel's loop feeds what ``atomic64_cmpxchg`` returns back into the
next attempt, and looks at it for the per-CPU mode::

    v = atomic64_read(&c->v);
    do {
            if (is_pcpu(v)) { this_cpu_add(*is_pcpu(v), i); return; }
            old = v;
    } while ((v = atomic64_cmpxchg(&c->v, old, old + atomic_i)) != old);

Written as the loop people write when they ignore that return value (the
mistake ``atomic64_try_cmpxchg`` was added to prevent)::

    old = atomic64_read(&c->v);
    while (atomic64_cmpxchg(&c->v, old, old + atomic_i) != old)
            ;

once any other add lands between the read and the cmpxchg, ``old`` never
matches again: the CPU spins forever (it never sees the switch to per-CPU
mode either), and a schedule that runs only it completes nothing, ever. No
safety property notices (no wrong value is ever written); the lock-freedom
property does, with a lasso whose loop is the failing cmpxchg. Checked at
the liveness abstraction's point only (the default run of the correct spec
covers the rest).

On ``percpu_lazy`` the mutation is its ``slowpath_retry`` hook: the
loop goes round with ``old`` instead of the value the cmpxchg returned.
Shortest lasso (1,731 states): both tasks read the word, task 2's cmpxchg
succeeds (6 steps), and task 3's cmpxchg then fails forever, changing
nothing and going back to the slow path's loop head.
"""
from checker.specs.percpu_lazy import PercpuLazy


class LazyCmpxchgStaleOld(PercpuLazy, expect_violated=("cmpxchg_loops_are_lock_free",)):
    """L-K with the slow path retrying its cmpxchg with the value it read first."""

    kernel = PercpuLazy.kernel + "; the slow path's loop mutated to retry with a stale old"
    explore_sweeps = ({"forever": 1, "mod_bits": 0, "ncpus": 2, "readers": 0},)
    lemmas = None  # the word arithmetic is the correct spec's (proved there); the bug is in the loop

    @staticmethod
    def slowpath_retry(v, old):
        """while (atomic64_cmpxchg(&c->v, old, old + atomic_i) != old); the value the failed cmpxchg returned is
        dropped: the loop goes round with ``old``, the value it read first."""
        return old
