# SPDX-License-Identifier: GPL-2.0-only
"""``lost_update.py`` fixed: the load and the store under a spinlock.

The C it models, called on every CPU::

    void counter_inc(void)
    {
            spin_lock(&counter_lock);
            counter = counter + 1;         /* step 1: lock, load; step 2: store, unlock */
            spin_unlock(&counter_lock);
    }

The spec subclasses the broken one and replaces its two steps, so the two
files differ only in the fix: the load waits for the lock and takes it, the
store releases it. Nothing is expected violated any more, and ``verify``
exits 0 only if ``nothing_lost`` holds at 1, 2 and 3 CPUs:

    python -m checker verify examples/lost_update_fixed.py
"""
from checker import NOBODY, And, Lock, Param, action, when

from lost_update import LostUpdate


class LostUpdateFixed(LostUpdate, expect_violated=()):
    """counter_inc() with the read-modify-write under counter_lock."""

    kernel = "an example: counter_inc() as counter++ under spin_lock(&counter_lock)"
    ncpus = Param(2, domain=range(1, 9), explore=(1, 2, 3), doc="CPUs")
    lock = Lock()                         # counter_lock: the holder's CPU id, or NOBODY

    @action(role="cpus")
    def load(s, cpu):
        """spin_lock(&counter_lock); v = counter."""
        return when(And(s.busy[cpu] == 0, s.left[cpu] > 0, s.lock == NOBODY),
                    lock=cpu, loaded={cpu: s.counter}, busy={cpu: 1})

    @action(role="cpus")
    def store(s, cpu):
        """counter = v + 1; spin_unlock(&counter_lock)."""
        return when(s.busy[cpu] == 1, counter=s.loaded[cpu] + 1, busy={cpu: 0}, left={cpu: s.left[cpu] - 1},
                    lock=NOBODY)
