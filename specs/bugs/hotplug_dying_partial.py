# SPDX-License-Identifier: GPL-2.0-only
"""The online | dying sum (H2, 8b57b11cca88) with a partial hotplug transition.

Thomas Gleixner objected to the dying mask (877cuj1mt1.ffs@tglx): its bits
are sticky and partial transitions reopen the window. Here is the second:
a cpu_down stopped between CPUHP_TEARDOWN_CPU and CPUHP_PERCPU_CNT_DEAD (the
sysfs hotplug/target of CONFIG_CPU_HOTPLUG_STATE_CONTROL) leaves the local
unfolded; a cpu_up from there clears the dying bit at once (cpuhp_set_state)
while the CPU is not yet online, and a sum in that window misses the local.
H3 cannot stop inside its STARTING section, so it has no such state.
"""
from checker import Param, invariant
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug, _sum_result


class HotplugDyingPartial(PercpuHotplug, expect_violated=("sum_exact_without_overlap",)):
    """H2 (with its C adds) with cpu_down stopped above CPUHP_PERCPU_CNT_DEAD and cpu_up from there."""

    kernel = "lib/percpu_counter.c as of 8b57b11cca88 (v6.6): online | dying sum, fold at CPUHP_PERCPU_CNT_DEAD"
    explore_sweeps = ({"ncpus": 2, "batch_floor": "default"},)
    ops = Param(1, domain=range(0, 17), doc="adds per task: one leaves a local non-zero")
    design = Param(DESIGN.H2, domain=DESIGN, doc="H2")
    reonline = Param(1, domain=(1,), doc="the CPU comes back")
    partial = Param(1, domain=(1,), doc="the teardown stops above CPUHP_PERCPU_CNT_DEAD")

    # Checked under every model (percpu_hotplug declares it SC-only): the bug is a sum that misses an unfolded
    # local, with no add in flight, an SC trace that tso and lkmm contain as well.
    @invariant
    def sum_exact_without_overlap(s):
        """PC-SUM: a sum that no lockless add overlapped returns E."""
        return _sum_result(s)
