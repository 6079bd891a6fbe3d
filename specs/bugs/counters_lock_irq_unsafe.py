# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counters_lock taken with spin_lock while an interrupt handler also takes it (before v3.18).

v3.14's __percpu_counter_init and percpu_counter_destroy take
``spin_lock(&percpu_counters_lock)`` with interrupts on. Once counters can be
initialised from atomic context (the v3.18 ``@gfp`` series: Tejun Heo's
"percpu_counter: make percpu_counters_lock irq-safe", 2014), an interrupt
handler on the CPU whose task holds the lock spins on it for ever: the task
it interrupted is the only one that can release it. Lockdep reports this as
an inconsistent lock state; the checker's lock rules would reject the spec
for it, so percpu_counters_list writes the lock out and states the deadlock
as a property.

Shortest counterexample: a task takes the lock with spin_lock, an interrupt
on its CPU tries to take it.
"""
from checker import Param
from checker.specs.percpu_counters_list import PercpuCountersList


class CountersLockIrqUnsafe(PercpuCountersList, expect_violated=("no_self_deadlock",)):
    """v3.14's spin_lock(&percpu_counters_lock) with a hard-irq percpu_counter_init/destroy."""

    kernel = "lib/percpu_counter.c v3.14: __percpu_counter_init, percpu_counter_destroy with spin_lock"
    irqsafe = Param(0, domain=(0,), doc="spin_lock, interrupts left on")
