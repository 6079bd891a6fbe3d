# SPDX-License-Identifier: GPL-2.0-only
"""K-UP-READ-TORN: percpu_counter_read() on a 32-bit uniprocessor kernel, with an interrupt handler adding.

On ``!CONFIG_SMP`` ``percpu_counter_read()`` (and ``percpu_counter_sum()``,
``percpu_counter_read_positive()``, which call it) is ``return fbc->count;``:
a plain load of an ``s64``, with interrupts on. A 32-bit kernel
(``CONFIG_64BIT=n``, most UP configurations) loads it as two 32-bit halves.
The add is exact (its load and store are inside ``local_irq_save()``), but
an interrupt handler's ``percpu_counter_add()`` between the read's two loads
makes it return a value ``count`` never held whenever the add carries or
borrows across bit 32.

Shortest counterexample (4 steps, the task's read of 0 and the handler's
-1): the read loads the low half (0), the handler stores -1
(0xffffffff_ffffffff, its two halves), the read loads the high half
(0xffffffff): it returns -2^32, 2^32 - 1 away from E. ``percpu_up`` with ``reads=1`` holds
at 64 bits. This is the kernel code as it is (include/linux/percpu_counter.h,
the !CONFIG_SMP ``percpu_counter_read``), not a mutation: a finding about
32-bit UP kernels for a counter updated from interrupt context.
"""
from checker import Param
from checker.kernel.config import Bits
from checker.specs.percpu_up import PercpuUp


class UpReadTorn32bit(PercpuUp, name="up_read_torn_32bit", expect_violated=("read_within_interrupt_adds",)):
    """The UP counter read by its task while an interrupt handler adds, on a 32-bit kernel."""

    kernel = ("include/linux/percpu_counter.h, the !CONFIG_SMP percpu_counter_read (return fbc->count) on a "
              "32-bit kernel, with percpu_counter_add (local_irq_save) from task and interrupt context")
    explore_sweeps = ({"ops": (0, 1), "irq": 1},)
    bits = Bits(32, explore=(32,), doc="CONFIG_64BIT=n")
    reads = Param(1, domain=range(1, 3), doc="percpu_counter_read() calls by the task")
