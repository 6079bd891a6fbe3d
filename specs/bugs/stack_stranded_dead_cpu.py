# SPDX-License-Identifier: GPL-2.0-only
"""Cached stacks stranded in a dead CPU's slots: no hotplug teardown for the cache (2017).

When the per-CPU cache of vmapped stacks arrived (Andy Lutomirski's
ac496bf48d97, "fork: Optimize task creation by caching two thread stacks
per CPU if CONFIG_VMAP_STACK=y", v4.9), nothing emptied a CPU's
cached_stacks[] when it went offline: the stacks in its slots stayed
allocated, reachable by nobody until that CPU came back (and forever if it
did not). Hoeun Ryu's "fork: free vmapped stacks in cache when cpus are
offline" (2017; its commit id was not found in the index) added
free_vm_stack_cache() as a CPUHP_BP_PREPARE_DYN teardown
(cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "fork:vm_stack_cache", NULL,
free_vm_stack_cache) in fork_init), the code stack_cache models. Here the
teardown does nothing: the CPU is dead, its slots keep their stacks.

Caught by the promise, ``dead_cpus_cached_stacks_are_freed`` (a dead CPU's
cached stacks are freed), and by ``dead_cpu_cache_empty``, which states how
the fix keeps it (the slots are NULL).

Shortest counterexample: a task's stack is released into a CPU's slot, that
CPU goes down, and it is dead with a live stack in its cache.
"""
from checker import Param, sometimes
from checker.language.process import process
from checker.specs.stack_cache import StackCache


class StackStrandedDeadCpu(StackCache, expect_violated=("dead_cpus_cached_stacks_are_freed", "dead_cpu_cache_empty")):
    """The stack cache before free_vm_stack_cache: a dead CPU's slots are never emptied."""

    kernel = StackCache.kernel + "; without the CPUHP_BP_PREPARE_DYN teardown free_vm_stack_cache (before 2017)"
    explore_sweeps = ({"nr_cached": 1},)
    hotplug = Param(1, domain=(1,), doc="one CPU goes down (and may come back up)")

    @process(role="cpus", calls=True, args={"cpu": lambda p: p.cpus})
    def free_vm_stack_cache(k, s, ctl, cpu):
        """(the bug) no teardown callback for the cache: cpu_down() passes CPUHP_BP_PREPARE_DYN with nothing to
        do, the CPU is dead and its cached_stacks[] are left as they are (no vfree, no NULL store)."""
        with k.atomic():
            k.assume(s.online[cpu] == 0 and s.torn[cpu] == 0 and s.online[ctl] == 1)
            s.torn[cpu] = 1

    @sometimes(applies=lambda p: False)
    def a_dead_cpus_cache_is_freed(s):
        """(nothing frees a dead CPU's cache before the fix)"""
        return s.torn_freed == 1
