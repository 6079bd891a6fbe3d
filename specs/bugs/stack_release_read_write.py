# SPDX-License-Identifier: GPL-2.0-only
"""try_release_thread_stack_to_cache() with a read and a write instead of this_cpu_cmpxchg.

A plausible "simplification" of the release loop:

    for (i = 0; i < NR_CACHED_STACKS; i++) {
            if (this_cpu_read(cached_stacks[i]))
                    continue;
            this_cpu_write(cached_stacks[i], vm);
            return true;
    }

Each access is CPU-local, and finish_task_switch even runs it with
preemption off, but an interrupt on the same CPU can release another stack
between the read and the write (a hard-irq sched_show_task dropping the
last reference of another dead task, or the softirq thread_stack_free_rcu);
the write then overwrites that stack's pointer and the stack is in no
place at all: leaked (ST-CTX). The shortest trace: a fork fails after its
stack (bad_fork_free:), its parent's preemptible release reads slot 0 empty,
get_wchan's irqs-off put of another dead task caches that task's stack in
slot 0, the parent writes its own stack over it (and since the overwritten
stack may be the failed fork's own, failed_charge_frees_its_stack fails too). The cmpxchg of the real
code makes the test and the store one step.
"""
from checker import Param
from checker.specs.stack_cache import StackCache


class StackReleaseReadWrite(StackCache, expect_violated=("stack_in_one_place", "failed_charge_frees_its_stack")):
    """free_thread_stack() in task context: this_cpu_read of the slot, then this_cpu_write of vm."""

    kernel = StackCache.kernel + "; try_release_thread_stack_to_cache() as this_cpu_read + this_cpu_write"
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (and come back up)")
    FREEING = ("free", "write", "delayed", "clear")
    RELEASING = ("free", "write", "delayed")

    @staticmethod
    def try_release_thread_stack_to_cache(k, s, vm):
        """(the bug) for (i...) { if (this_cpu_read(cached_stacks[i])) continue;
        this_cpu_write(cached_stacks[i], vm); return true; } return false;"""
        old = k.this_cpu_read(s.slot0)
        if old == 0:
            k.label("write")
            k.this_cpu_write(s.slot0, vm)
        elif s.nr_cached == 2:
            k.label("free")
            old = k.this_cpu_read(s.slot1)
            if old == 0:
                k.label("write")
                k.this_cpu_write(s.slot1, vm)
        return old == 0
