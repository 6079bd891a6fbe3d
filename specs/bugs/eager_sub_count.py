# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counter_add_batch() zeroing the local with the wrong amount.

The slow path of lib/percpu_counter.c ends with
``__this_cpu_sub(*fbc->counters, count - amount)``: ``count`` is
``local + amount`` and only ``local`` was ever in the per-CPU slot, so the
local becomes 0. Dropping the ``- amount`` (subtracting what was folded,
which looks natural) leaves ``-amount`` behind: the amount is counted twice,
once in ``fbc->count`` and once, negated, in the local. Every fold then
loses an update: conservation fails after the first slow-path add.
"""
from checker import Or, Param, invariant
from checker.specs.percpu_eager import PercpuEager


class EagerSubCount(PercpuEager, expect_violated=("conservation", "conservation_through_fold",
                                                  "sum_exact_without_overlap")):
    """__this_cpu_sub(*fbc->counters, count) instead of (count - amount)."""

    kernel = PercpuEager.kernel + "; the slow path's __this_cpu_sub mutated from count - amount to count"
    explore_sweeps = ({"readers": 0},)  # a reader adds nothing to this bug
    readers = Param(0, domain=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(1, domain=(0, 1), doc="CPUs doing one __percpu_counter_sum (the sum sees the loss too)")

    @staticmethod
    def subtracted(s, folded, amount):
        """(the bug) __this_cpu_sub(*fbc->counters, count) in A and B, where count = local + amount (C: count +
        amount, its count being the local): what was folded and the amount."""
        return folded + amount

    # Checked under every model (percpu_eager declares it SC-only): the bug's trace is an SC run, which tso and
    # lkmm contain as well, so the bug is looked for there too, not passed as not_applicable.
    @invariant
    def sum_exact_without_overlap(s):
        """A sum that no lockless add overlapped returns E exactly."""
        c = s.summer[0]
        return Or(s.summer_pc[c] != 1, s.sum_exact_ok[c] == 1)
