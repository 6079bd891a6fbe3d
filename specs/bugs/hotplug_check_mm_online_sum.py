# SPDX-License-Identifier: GPL-2.0-only
"""check_mm's percpu_counter_sum over online CPUs with the fold at CPUHP_PERCPU_CNT_DEAD (v6.2-rc).

f1a7941243c1 ("mm: convert mm's rss stats into percpu_counter", v6.2-rc1)
made check_mm() call percpu_counter_sum(&mm->rss_stat[i]) when the mm is
freed. That sum walks cpu_online_mask, and a CPU that has left it keeps its
local until percpu_counter_cpu_dead runs on a control CPU: a task that
mapped a page on CPU 1 and unmapped it on CPU 0 leaves +1 and -1, CPU 1 goes
down, and check_mm sums -1: "BUG: Bad rss-counter state" for an mm with no
pages (Marek Szyprowski's report). Shakeel Butt's f689054aace2
("percpu_counter: add percpu_counter_sum_all interface", v6.2) re-checks a
non-zero sum with percpu_counter_sum_all over cpu_possible_mask
(``checkmm=2``, where ``percpu_hotplug`` holds); 8b57b11cca88 and
7ba85fba47bd (v6.3-rc3) made the sum walk online | dying instead.

Shortest counterexample: +1 on one CPU, -1 on the other, that CPU goes down,
check_mm locks, reads count, reads the online CPU, passes over the other.
"""
from checker import Param, invariant
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug


class HotplugCheckMmOnlineSum(PercpuHotplug, expect_violated=("check_mm_no_false_alarm",)):
    """H1 with check_mm as f1a7941243c1 wrote it: percpu_counter_sum only."""

    kernel = ("kernel/fork.c check_mm as of f1a7941243c1 (v6.2-rc1); lib/percpu_counter.c __percpu_counter_sum "
              "over cpu_online_mask, percpu_counter_cpu_dead at CPUHP_PERCPU_CNT_DEAD")
    explore_sweeps = ({"ncpus": 2, "batch_floor": "default"},)
    design = Param(DESIGN.H1, domain=DESIGN, doc="H1")
    checkmm = Param(1, domain=(1,), doc="check_mm with percpu_counter_sum only")
    ops = Param(1, domain=range(0, 17), doc="adds per task: +1 on one CPU and -1 on the other")

    @invariant
    def check_mm_no_false_alarm(s):
        """check_mm prints 'BUG: Bad rss-counter state' only for a real leak (here E = 0: never)."""
        return s.cm_alarm[s.summer[0]] == 0
