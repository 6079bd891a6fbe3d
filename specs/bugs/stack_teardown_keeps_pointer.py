# SPDX-License-Identifier: GPL-2.0-only
"""free_vm_stack_cache() that frees a dead CPU's cached stacks but leaves the pointers in the slots.

A realistic slip in the teardown: ``vfree(vm_stack->addr);`` without
``cached_vm_stacks[i] = NULL;``. Nothing looks at a dead CPU's slots, until
the CPU comes back online: the first fork there ``this_cpu_xchg``es the
freed stack out of the slot and zeroes it (a use after free), and it is
handed to the new task. Found with one CPU going down and up (ST-NOUAF).
"""
from checker import Param
from checker.language.process import process
from checker.specs.stack_cache import StackCache, _vfree_cached


class StackTeardownKeepsPointer(StackCache, expect_violated=(
        "freed_never_handed_out", "dead_cpu_cache_empty", "stack_in_one_place", "memory_safe")):
    """free_vm_stack_cache() without cached_vm_stacks[i] = NULL."""

    kernel = StackCache.kernel + "; free_vm_stack_cache() without cached_vm_stacks[i] = NULL"
    hotplug = Param(1, domain=(1,), doc="one CPU goes down and comes back up")
    nr_cached = Param(1, domain=(1, 2), explore=(1,), doc="NR_CACHED_STACKS")
    failures = Param(0, domain=(0, 1), doc="1: vmalloc and the memcg charge may fail (not needed here)")

    @process(role="cpus", calls=True, args={"cpu": lambda p: p.cpus})
    def free_vm_stack_cache(k, s, ctl, cpu):
        """(the bug) for (i = 0; i < NR_CACHED_STACKS; i++) { vm_stack = cached_vm_stacks[i];
        if (!vm_stack) continue; vfree(vm_stack->addr); }  -- the slot keeps the pointer."""
        with k.atomic():
            k.assume(s.online[cpu] == 0 and s.torn[cpu] == 0 and s.online[ctl] == 1)
            k.smp_mb()
            vm = k.per_cpu(s.slot0, cpu)
            freed = _vfree_cached(s, vm, {})
            if s.nr_cached == 2:
                vm = k.per_cpu(s.slot1, cpu)
                freed = _vfree_cached(s, vm, freed)
            k.update(freed)
            s.torn[cpu] = 1
            k.smp_mb()
