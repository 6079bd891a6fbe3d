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
"""
from checker import NOBODY, And, If, action, when
from checker.specs.percpu_lazy import ADD, PercpuLazy, encode_add, mod_field, word_modulus


class LazyCmpxchgStaleOld(PercpuLazy, expect_violated=("cmpxchg_loops_are_lock_free",)):
    """L-K with the slow path retrying its cmpxchg with the value it read first."""

    kernel = PercpuLazy.kernel + "; the slow path's loop mutated to retry with a stale old"
    explore_sweeps = ({"forever": 1, "mod_bits": 0, "ncpus": 2, "readers": 0},)
    lemmas = None  # the word arithmetic is the correct spec's (proved there); the bug is in the loop

    @action(role="adders")
    def slowpath_cmpxchg(s, cpu):
        """while (atomic64_cmpxchg(&c->v, old, old + atomic_i) != old); with old never refreshed: on
        failure nothing changes and the loop tries again."""
        ok = And(s.published == NOBODY, s.word == s.v[cpu])
        new = (s.v[cpu] + encode_add(s.amount[cpu])) % word_modulus(s.mod_bits)
        wrapped = mod_field(s.v[cpu]) == 0
        return when(s.pc[cpu] == ADD.cmpxchg,
                    word=If(ok, new, s.word), exact=If(ok, s.exact + s.amount[cpu], s.exact),
                    v={cpu: If(ok, 0, s.v[cpu])}, amount={cpu: If(ok, 0, s.amount[cpu])},
                    pc={cpu: If(ok, If(wrapped, ADD.wrap_check, ADD.idle), ADD.cmpxchg)})
