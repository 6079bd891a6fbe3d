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
from checker import And, If, Load, Param, Select, Store, action, when
from checker.specs.stack_cache import TASK, StackCache, _busy, _in, _task_ok


class StackReleaseReadWrite(StackCache, expect_violated=("stack_in_one_place", "failed_charge_frees_its_stack")):
    """free_thread_stack() in task context: this_cpu_read of the slot, then this_cpu_write of vm."""

    kernel = StackCache.kernel + "; try_release_thread_stack_to_cache() as this_cpu_read + this_cpu_write"
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (and come back up)")

    @action(role="tasks", access=(Load("slot0", "once"), Load("slot1", "once")))
    def this_cpu_cmpxchg(s, t):
        """(the bug) finish_task_switch() -> ... free_thread_stack(): if (this_cpu_read(cached_stacks[i]))
        continue;  -- one slot read (preempt off); an empty one is written next."""
        c = s.on[t]
        start = s.pc[t] == TASK.dead
        i = If(start, 0, s.ti[t])
        cur = Select([Select(getattr(s, f"slot{j}"), c) for j in range(s.nr_cached)], i)
        empty = cur == 0
        last = i + 1 >= s.nr_cached
        return when(And(_in(s.pc[t], (TASK.dead, TASK.free)), _task_ok(s, t)),
                    busy=_busy(s, t, c), ti={t: If(empty, i, i + 1)},
                    pc={t: If(empty, TASK.write, If(last, TASK.delayed, TASK.free))})

    @action(role="tasks", access=(Store("slot0", "once"), Store("slot1", "once")))
    def this_cpu_write_slot(s, t):
        """(the bug) this_cpu_write(cached_stacks[i], vm); return true;"""
        c = s.on[t]
        i = s.ti[t]
        upd = {f"slot{j}": {x: If(And(i == j, c == x), s.tvm[t], getattr(s, f"slot{j}")[x]) for x in s.cpus}
               for j in range(s.nr_cached)}
        return when(s.pc[t] == TASK.write, pc={t: TASK.clear}, **upd)
