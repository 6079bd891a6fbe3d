# SPDX-License-Identifier: GPL-2.0-only
"""K-CMPXCHG-PAREN: the misplaced parenthesis of the cmpxchg add_batch.

v2/v3 of "percpu_counter: add a cmpxchg-based _add_batch variant" tested
``if (unlikely(abs(count + amount)) >= batch)``: ``unlikely()`` is
``__builtin_expect(!!(x), 0)``, 0 or 1, so with any batch above 1 the slow
path is never taken. Locals grow without bound and ``fbc->count`` keeps its
initial value: the kernel test robot saw it as LTP getrusage03 reading the
children's maxrss as 0 on 05dbad003f2b (percpu for-6.11; report
202405281421.127ddddf-oliver.sang@intel.com). v4 (20240528204257.434817-1-
mjguzik@gmail.com) put the parenthesis back; ``percpu_eager`` with
``variant=C`` holds.

The misplaced test is modelled in the v6.11 loop (the structure v4 merged),
in the task's and the interrupt handler's add alike. Shortest
counterexample: ``batch`` unit adds on one CPU; no fold is ever reached.
"""
from checker import If, Param
from checker.specs.percpu_eager import VARIANT, PercpuEager


class EagerCmpxchgParen(PercpuEager, expect_violated=("local_bound", "read_bound", "a_fold_happens")):
    """Variant C with `unlikely(abs(count + amount)) >= batch` as the slow-path test."""

    kernel = "v3 of 'percpu_counter: add a cmpxchg-based _add_batch variant' (05dbad003f2b in percpu for-6.11)"
    explore_sweeps = ({},)
    variant = Param(VARIANT.C, domain=VARIANT, doc="the add_batch variant: C, this_cpu_try_cmpxchg")
    readers = Param(0, domain=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(0, domain=(0, 1), doc="CPUs doing one __percpu_counter_sum")

    @staticmethod
    def folds(s, count):
        """The bug: unlikely(abs(count)) >= batch, i.e. (count != 0) >= batch."""
        return If(abs(count) != 0, 1, 0) >= s.batch
