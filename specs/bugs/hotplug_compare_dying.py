"""K-COMPARE-HOTPLUG: __percpu_counter_compare's margin misses a dying CPU's local.

compare answers from the rough count when |count - rhs| > batch *
num_online_cpus(). Between a CPU leaving the online mask and
percpu_counter_cpu_dead folding it (H1, and H2, which fixed only the sum),
that CPU's local is in neither count nor the margin, so compare can answer
from the rough count and be wrong (Ye Bin, "lib/percpu_counter: fix dying
cpu compare race", 20230404014206.3752945-3-yebin@huaweicloud.com; the
dying-mask fix was rejected). With the fold at DYING (H3) the state does
not exist and ``percpu_hotplug`` holds.
"""
from checker import Param
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug


class HotplugCompareDying(PercpuHotplug, expect_violated=("compare_margin_sound",)):
    """H2 (8b57b11cca88): compare's batch * num_online_cpus() margin during the offline window."""

    kernel = "lib/percpu_counter.c as of 8b57b11cca88 (v6.6): __percpu_counter_compare, fold at DEAD"
    explore_sweeps = ({"ncpus": 2},)
    design = Param(DESIGN.H2, domain=DESIGN, doc="H2")
    ops = Param(3, domain=range(0, 17), doc="adds per task: enough for two locals to pass the margin")
    summers = Param(0, domain=(0, 1), doc="no sum needed")
