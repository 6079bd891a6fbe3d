# SPDX-License-Identifier: GPL-2.0-only
"""K-COMPARE-HOTPLUG: __percpu_counter_compare's margin misses a dying CPU's local.

compare answers from the rough count when |count - rhs| > batch *
num_online_cpus(). Between a CPU leaving the online mask and
percpu_counter_cpu_dead folding it (H1, and H2, which fixed only the sum),
that CPU's local is in neither count nor the margin, so compare can answer
from the rough count and be wrong (Ye Bin, "lib/percpu_counter: fix dying
cpu compare race", 20230404014206.3752945-3-yebin@huaweicloud.com; the
dying-mask fix was rejected). Mainline's H2 with its 6.11+ add (variant C)
is the subject; the same with variant B (6.3 to 6.10) is the second sweep.
With the fold at DYING (H3) the state does not exist and ``percpu_hotplug``
holds.

Shortest counterexample at 2 CPUs, batch 4: the two locals reach 5 in all
(C: 10 steps, a this_cpu_read and a cmpxchg each; B: 5), a CPU goes down:
|count - E| = 5 > batch * num_online_cpus() = 4. With a batch that shrinks
(batch_floor=1) C needs 8 steps.
"""
from checker import Param, invariant
from checker.specs.percpu_hotplug import ADDV, DESIGN, PercpuHotplug, compare_margin_covers


class HotplugCompareDying(PercpuHotplug, expect_violated=("compare_margin_sound",)):
    """H2 (8b57b11cca88, mainline): compare's batch * num_online_cpus() margin during the offline window."""

    kernel = ("lib/percpu_counter.c as of 8b57b11cca88 (v6.3-rc3) to today: __percpu_counter_compare, fold at "
              "CPUHP_PERCPU_CNT_DEAD; percpu_counter_add_batch C (6.11+) and B (6.3 to 6.10)")
    explore_sweeps = ({"ncpus": 2, "batch_floor": "default"}, {"ncpus": 2, "add": ADDV.B})
    design = Param(DESIGN.H2, domain=DESIGN, doc="H2")
    ops = Param(3, domain=range(0, 17), doc="adds per task: enough for two locals to pass the margin")
    summers = Param(0, domain=(0, 1), doc="no sum needed")

    @invariant
    def compare_margin_sound(s):
        """compare's rough answer is exact for every rhs: |count - E| <= batch * num_online_cpus()."""
        return compare_margin_covers(s)
