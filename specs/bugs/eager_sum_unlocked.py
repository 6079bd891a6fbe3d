# SPDX-License-Identifier: GPL-2.0-only
"""__percpu_counter_sum() scanning the locals without fbc->lock.

A tempting "optimisation" of lib/percpu_counter.c: drop
``raw_spin_lock_irqsave(&fbc->lock)`` from ``__percpu_counter_sum`` since
every load in it is a single word. It is wrong: a slow-path add on another
CPU can fold its local into ``fbc->count`` after the summer read the count
and before it reads that CPU's local (now zero), so the fold is missed; or
the other way round, counted twice. No lockless add need overlap the scan,
so even a sum over a quiet counter is not exact. Under tso and lkmm
``sum_exact_without_overlap`` is SC-only (not_applicable there); under lkmm
the bug shows as what it is in LKMM's terms, a data race: the summer's plain
load of ``fbc->count`` without the lock against a fold's plain store
(``no_data_race``, expected violated; it applies at lkmm points only).

With more adds than the sum's margin, the missed folds add up: a sum that
read ``fbc->count`` before a run of folds, and each local after its fold,
is off by more than ``2 * ncpus * (batch - 1)``, so ``sum_within_bound``,
the claim that holds under every memory model, fails too (the points below
have ``ops`` past that margin: 3 adds at one CPU with batch 2).
"""
from checker import Fill, Or, Param, Sum, invariant
from checker.language.process import process
from checker.specs.percpu_eager import PercpuEager, _judge_sum


class EagerSumUnlocked(PercpuEager, expect_violated=("sum_exact_without_overlap", "sum_within_bound", "no_data_race")):
    """__percpu_counter_sum() without raw_spin_lock_irqsave(&fbc->lock)."""

    kernel = PercpuEager.kernel + "; __percpu_counter_sum mutated to scan without fbc->lock"
    # found at one CPU; a reader adds nothing; ops past 2 * ncpus * (batch - 1), the sum's margin
    explore_sweeps = ({"readers": 0, "ncpus": 1, "batch": 2, "ops": 3}, {"readers": 0, "ncpus": 1, "batch": 3, "ops": 5},
                      {"readers": 0, "ncpus": 2, "batch": 2, "ops": 4})
    readers = Param(0, domain=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(1, domain=(1,), doc="CPUs doing one __percpu_counter_sum (the bug needs one)")

    @process(role="summer", returns=_judge_sum, fair="weak")
    def percpu_counter_sum(k, s, cpu):
        """__percpu_counter_sum() without raw_spin_lock_irqsave(&fbc->lock) / raw_spin_unlock_irqrestore()."""
        with k.atomic():                                    # ret = fbc->count;  (no lock taken)
            ret = s.count
        while Sum(s.summed) < s.ncpus:                      # for_each_cpu_or(cpu, online, dying)
            other = k.any_cpu(s.summed)
            ret += k.data_race(k.per_cpu(s.local, other))   #         ret += *per_cpu_ptr(fbc->counters, cpu);
        s.summed = Fill(0)
        return ret                                          # return ret;  (no unlock)

    # Checked under every model (percpu_eager declares it SC-only): the bug's trace is an SC run, which tso and
    # lkmm contain as well, so the bug is looked for there too, not passed as not_applicable.
    @invariant
    def sum_exact_without_overlap(s):
        """A sum that no lockless add overlapped returns E exactly."""
        c = s.summer[0]
        return Or(s.summer_pc[c] != 1, s.sum_exact_ok[c] == 1)
