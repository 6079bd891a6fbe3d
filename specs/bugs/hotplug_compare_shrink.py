# SPDX-License-Identifier: GPL-2.0-only
"""compare's margin after the batch shrinks on cpu_down, even with the DYING fold (H3) [a finding].

compute_batch_value makes the batch max(32, 2 * num_online_cpus()): above 16
CPUs it shrinks when one goes down. Locals filled under the old batch keep up
to old_batch - 1 until they fold, so the read error can reach
(n - 1) * (2n - 1) while compare's margin is 2 * (n - 1) * (n - 1): with all
the remaining locals near the old batch, compare answers from the rough count
and is wrong. Reference section 1.4 notes that the read bound must use the
largest batch since the last fold; compare's margin does not. Not reported
on the list as far as we know; latent (it needs >16 CPUs, a cpu_down, and
locals near the old batch).
"""
from checker import Param, invariant
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug, compare_margin_covers


class HotplugCompareShrink(PercpuHotplug, expect_violated=("compare_margin_sound",)):
    """H3 with a batch that shrinks on cpu_down (the kernel above 16 CPUs, scaled down)."""

    kernel = "lib/percpu_counter.c, the 2024 DYING-fold rework (H3): compute_batch_value, __percpu_counter_compare"
    explore_sweeps = ({"ncpus": 2},)
    design = Param(DESIGN.H3, domain=DESIGN, doc="H3")
    batch_floor = Param(1, domain=range(1, 1 << 16), doc="1: the batch is 2 * online (it shrinks on cpu_down)")
    ops = Param(3, domain=range(0, 17), doc="adds per task: enough to fill a local under the old batch")
    summers = Param(0, domain=(0, 1), doc="no sum needed")

    @invariant
    def compare_margin_sound(s):
        """compare's rough answer is exact for every rhs: |count - E| <= batch * num_online_cpus()."""
        return compare_margin_covers(s)
