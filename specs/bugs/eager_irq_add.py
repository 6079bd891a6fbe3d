# SPDX-License-Identifier: GPL-2.0-only
"""K-IRQ-ADD: percpu_counter_add_batch() deciding with interrupts on (variant A).

Until Manfred Spraul's 805afd830099 ("lib/percpu_counter:
percpu_counter_add_batch() overflow/underflow"), the add ran under
``preempt_disable()`` only: it read the local, decided fast path or fold,
and then did ``this_cpu_add``. An interrupt that adds on the same CPU
between the read and the ``this_cpu_add`` makes the decision stale: the
local ends at up to ``2 * (batch - 1)``, past the bound every reader relies
on (and, with large batches, past the s32). The fix turned the whole add
into a ``local_irq_save()`` section (variant B): ``percpu_eager`` with
``variant=B irq=1`` holds.

Shortest counterexample (3 steps, batch 2): the task reads 0 and decides the
fast path for -1, the interrupt adds -1, the task's ``this_cpu_add`` makes
the local -2: past the local bound, and the read is off by 2 on one CPU.
"""
from checker import Param
from checker.specs.percpu_eager import VARIANT, PercpuEager


class EagerIrqAdd(PercpuEager, expect_violated=("local_bound", "read_bound")):
    """Variant A (preemption off, interrupts on) with an interrupt handler adding on each CPU."""

    kernel = "lib/percpu_counter.c percpu_counter_add_batch before 805afd830099 (variant A)"
    explore_sweeps = ({},)
    variant = Param(VARIANT.A, domain=VARIANT, doc="the add_batch variant: A, before 805afd830099")
    irq = Param(1, domain=range(1, 9), doc="adds made by each CPU's interrupt handler")
    ncpus = Param(1, domain=range(1, 8193), explore=(1, 2), doc="CPUs, each with its own local and a task")
    readers = Param(0, domain=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(0, domain=(0, 1), doc="CPUs doing one __percpu_counter_sum")
