# SPDX-License-Identifier: GPL-2.0-only
"""Grouped init, per-counter destroy: free_percpu() of an interior pointer.

A half-converted patch: mm_init switched to percpu_counter_init_many(), but
__mmdrop kept the loop ``percpu_counter_destroy(&mm->rss_stat[i])``. Counter
0's destroy frees the whole group through its base; counter 1's still has a
non-NULL ``counters`` pointing 4 bytes into that group, so its destroy calls
free_percpu() on a pointer the allocator never returned (and the group is
already gone). The reference's K-DEBUGOBJ-GROUP is the same mistake reached
through the debug-objects fixup.
"""
from checker import Param
from checker.kernel.config import CONFIG, SMP, SMP_HOTPLUG
from checker.specs.percpu_grouped import STEP, PercpuGrouped
from checker import And, If, Select, action, when
from checker.kernel.memory import NULL


class GroupedDestroyInterior(PercpuGrouped, expect_violated=("memory_safe", "listed_only_while_alive")):
    """percpu_counter_init_many() in mm_init, percpu_counter_destroy(&rss_stat[i]) in __mmdrop."""

    kernel = PercpuGrouped.kernel + "; __mmdrop left with the per-counter destroy loop"
    config = Param(SMP_HOTPLUG, domain=(SMP, SMP_HOTPLUG), names=CONFIG, explore=(SMP_HOTPLUG,),
                   doc="UP's destroy is empty: the bug needs CONFIG_SMP; with CONFIG_HOTPLUG_CPU the "
                       "second counter is also left on the list in freed memory")
    grouped = Param(1, domain=(1,), doc="grouped init")

    @action(role="task", uses={"percpu_counter_destroy_many": "kernel/fork.c:926 __mmdrop"})
    def percpu_counter_destroy_many(s, cpu):
        """(the bug) not called: __mmdrop still has the per-counter loop."""
        return when(False)

    @action(role="task", uses={"percpu_counter_destroy": "kernel/fork.c __mmdrop"})
    def percpu_counter_destroy(s, cpu):
        """__mmdrop(): for (i = 0; i < NR_MM_COUNTERS; i++) percpu_counter_destroy(&mm->rss_stat[i]);
        -- if (!fbc->counters) return;"""
        n = len(s.ctr)
        hot = s.config == SMP_HOTPLUG
        return when(And(s.step == STEP.destroy_check, s.i < n), whole=0,
                    step=If(Select(s.ctr, s.i) == NULL, If(s.i + 1 < n, STEP.destroy_check, STEP.free_mm),
                            STEP.destroy_unlist if hot else STEP.destroy_free),
                    i=If(Select(s.ctr, s.i) == NULL, s.i + 1, s.i))
