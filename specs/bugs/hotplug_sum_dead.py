# SPDX-License-Identifier: GPL-2.0-only
"""K-SUM-HOTPLUG: __percpu_counter_sum over online CPUs with the fold at CPUHP_PERCPU_CNT_DEAD (H1).

The outgoing CPU leaves cpu_online_mask inside stop_machine, but its local is
folded into fbc->count only later, by percpu_counter_cpu_dead on a control
CPU. A sum in between walks the online CPUs and misses that local: with no
add in flight it returns a value other than E. check_mm printed "BUG: Bad
rss-counter state" during CPU hotplug this way (Marek Szyprowski's report
against f1a7941243c1). Dave Chinner's 8b57b11cca88 sums online | dying (H2);
the 2024 rework folds at DYING under stop_machine (H3).

Shortest counterexample (6 steps): an add leaves 1 in CPU 1's local, CPU 1
goes down, the sum locks, reads count, reads CPU 0, passes over CPU 1.
"""
from checker import Param, invariant
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug, _sum_result


class HotplugSumDead(PercpuHotplug, expect_violated=("sum_exact_without_overlap",)):
    """H1: fold in percpu_counter_cpu_dead, sum over cpu_online_mask."""

    kernel = "lib/percpu_counter.c as of f1a7941243c1 (v6.2): fold at CPUHP_PERCPU_CNT_DEAD, online-only sum"
    explore_sweeps = ({"ncpus": 2}, {"ncpus": 3, "batch_floor": "default"})
    design = Param(DESIGN.H1, domain=DESIGN, doc="H1")
    ops = Param(2, domain=range(0, 17), doc="adds per task (one add leaves a local non-zero)")

    @invariant
    def sum_exact_without_overlap(s):
        """PC-SUM: a sum that no lockless add overlapped returns E."""
        return _sum_result(s)
