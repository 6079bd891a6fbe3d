# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counters_lock taken with spin_lock while an interrupt handler also takes it (a combination of versions).

v3.14-v3.17's __percpu_counter_init and percpu_counter_destroy take
``spin_lock(&percpu_counters_lock)`` with interrupts on. That was safe then:
``percpu_counter_init()`` had no ``gfp`` argument and its ``alloc_percpu()``
may sleep, so no interrupt handler could initialise a counter. v3.18's
series by Tejun Heo (2014) gave it ``@gfp`` ("percpu_counter: add @gfp to
percpu_counter_init()") so counters can be initialised from atomic context,
and made the lock irq-safe in the same merge window ("percpu_counter: make
percpu_counters_lock irq-safe"). The combination that deadlocks is the
v3.14-v3.17 locking with a v3.18+ caller in hard-irq context (for instance
such a caller backported to a 3.17 tree): no released kernel has it. An
interrupt handler on the CPU whose task holds the lock then spins on it for
ever: the task it interrupted is the only one that can release it. Lockdep
reports this as an inconsistent lock state; the checker's lock rules would
reject the spec for it, so percpu_counters_list writes the lock out and
states the deadlock as a property.

Shortest counterexample: a task takes the lock with spin_lock, an interrupt
on its CPU tries to take it.
"""
from checker import Param
from checker.specs.percpu_counters_list import PercpuCountersList


class CountersLockIrqUnsafe(PercpuCountersList, expect_violated=("no_self_deadlock",)):
    """v3.14-v3.17's spin_lock(&percpu_counters_lock) with a v3.18+ hard-irq percpu_counter_init/destroy."""

    kernel = ("lib/percpu_counter.c v3.14-v3.17: __percpu_counter_init, percpu_counter_destroy with spin_lock, "
              "combined with a v3.18+ (@gfp) caller initialising a counter from an interrupt handler")
    irqsafe = Param(0, domain=(0,), doc="spin_lock, interrupts left on")
