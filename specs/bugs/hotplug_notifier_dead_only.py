# SPDX-License-Identifier: GPL-2.0-only
"""A pre-4.10 hotplug notifier that folds on CPU_DEAD but not on CPU_DEAD_FROZEN.

Before the 4.10 state machine, lib/percpu_counter.c registered
percpu_counter_hotcpu_callback with hotcpu_notifier(); as read in v3.14 it
runs compute_batch_value() on every event and folds the dead CPU's local
only ``if (action == CPU_DEAD || action == CPU_DEAD_FROZEN)`` (its test is
``action != CPU_DEAD && action != CPU_DEAD_FROZEN`` -> return). The suspend
path (disable_nonboot_cpus) takes the non-boot CPUs down with the
CPU_TASKS_FROZEN bit set, so its event is CPU_DEAD_FROZEN = CPU_DEAD |
CPU_TASKS_FROZEN. A callback that compares against CPU_DEAD alone (the
mistake the FROZEN events invited; memcg's notifier had a broken form of
the same test, CVE-2012-1146) never folds a CPU suspended away: its local
stays unfolded while the CPU is dead, the online-only sum misses it with no
hotplug operation in flight, and if the CPU does not come back at resume it
is lost to every sum. No percpu_counter commit with exactly this mistake
was found; the mutation is of the v3.14 code.

Shortest counterexample: an add leaves 1 in CPU 1's local, CPU 1 goes down
the suspend path, the DEAD_FROZEN callback does nothing, a sum misses the 1.
"""
from checker import Param
from checker.specs.percpu_hotplug import DESIGN, PercpuHotplug


class HotplugNotifierDeadOnly(PercpuHotplug, expect_violated=("sum_exact_once_folded",)):
    """N with the callback testing action == CPU_DEAD only."""

    kernel = ("lib/percpu_counter.c percpu_counter_hotcpu_callback (v3.14 structure) with `if (action != CPU_DEAD) "
              "return NOTIFY_OK;`; kernel/cpu.c disable_nonboot_cpus (CPU_TASKS_FROZEN)")
    explore_sweeps = ({"ncpus": 2, "batch_floor": "default"},)
    design = Param(DESIGN.N, domain=DESIGN, doc="N")
    suspend = Param(1, domain=(1,), doc="a CPU goes down the suspend path")
    ops = Param(1, domain=range(0, 17), doc="adds per task: one leaves a local non-zero")

    @staticmethod
    def notifier_folds(s, frozen):
        """(the bug) if (action != CPU_DEAD) return NOTIFY_OK;  -- CPU_DEAD_FROZEN is not folded."""
        return frozen == 0
