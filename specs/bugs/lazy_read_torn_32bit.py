# SPDX-License-Identifier: GPL-2.0-only
"""lazy_percpu_counter_read() on a 32-bit SMP kernel: a slot read in halves while its CPU adds.

In per-CPU mode the counter is a ``u64`` per CPU. ``this_cpu_add(*pcpu_v, i)``
on a 32-bit kernel is irq-safe and whole to its own CPU (x86-32 and the
generic code do it with interrupts off), but it is two 32-bit stores, and
``lazy_percpu_counter_read()`` sums the slots with plain loads
(``v += *per_cpu_ptr(pcpu_v, cpu)``). A slot that crosses a multiple of
2^32, as any slot does the first time its CPU's adds go below 0 (0 - 1 =
0xffffffff_ffffffff), is seen with one half old and one half new: the read
is off by about 2^32. The ``atomic64_t`` word stays whole (``atomic64_*`` are
atomic on every architecture), so atomic mode is not affected; the eager
``percpu_counter`` is not either (its per-CPU counters are ``s32``).

Shortest counterexample (ncpus=2, mod_bits=0, amounts +-1, a reader; 19
steps): a task switches the counter to per-CPU mode, the reader loads one
half of a slot, that slot's task adds -1 across 0 (0 -> 0xffffffff_ffffffff),
the reader loads the other half and returns a sum about 2^32 away from E.
(The task's ``this_cpu_add`` is one step, whole to its own CPU; the read's
load is in halves, both orders, so it sees every torn value the add's two
stores could show.) (That the
32-bit ``this_cpu_add`` of a u64 is two stores is the generic
``this_cpu_generic_to_op``, ``*ptr += val`` with interrupts off, which
32-bit architectures use for 8-byte operands: inference from the generic
percpu code, not a read of each architecture's.) This
is the kernel code as it is: a finding about 32-bit kernels, not a mutation;
``percpu_lazy`` at 64 bits holds, and the named sweep ``percpu_lazy_32bit``
holds where no slot crosses 2^32.
"""
from checker import Param
from checker.kernel.config import Bits
from checker.specs.percpu_lazy import PercpuLazy


class LazyReadTorn32bit(PercpuLazy, name="lazy_read_torn_32bit", expect_violated=("read_within_adds",)):
    """The lazy counter read on a 32-bit kernel while CPUs add +-1 in per-CPU mode."""

    kernel = ("koverstreet/bcachefs lib/lazy-percpu-counter.c (79ded5acf1ac) = ZhangPeng RFC 1/3 on a 32-bit "
              "kernel: lazy_percpu_counter_read's plain u64 loads against this_cpu_add's two stores")
    lemmas = None  # (the word lemmas are percpu_lazy's; this bug is not in the word)
    explore_sweeps = ({},)
    bits = Bits(32, explore=(32,), doc="CONFIG_64BIT=n")
    ncpus = Param(2, domain=range(2, 4), doc="adder CPUs")
    mod_bits = Param(0, domain=range(0, 9), doc="COUNTER_MOD_BITS (8 in the kernel)")
    neg = Param(1, domain=(1,), doc="amounts +1 and -1: a slot crosses 2^32 when it goes below 0")
    readers = Param(1, domain=(1,), doc="a CPU doing one lazy_percpu_counter_read")
