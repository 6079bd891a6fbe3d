# SPDX-License-Identifier: GPL-2.0-only
"""try_release_thread_stack_to_cache() with the this_cpu_try_cmpxchg ``old`` declared outside the loop.

The 2024 conversion to this_cpu_try_cmpxchg (kernel/fork.c as read in a 2025
tree) declares the expected value inside the loop:

    for (i = 0; i < NR_CACHED_STACKS; i++) {
            struct vm_struct *tmp = NULL;

            if (this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm_area))
                    return true;
    }

try_cmpxchg writes the slot's current value into ``tmp`` when it fails. The
mutation hoists ``tmp = NULL`` above the loop (a plausible cleanup): after
slot 0 is found full, ``tmp`` holds that slot's stack and the cmpxchg on
slot 1 compares against it, so it fails on an empty slot and the stack goes
to thread_stack_delayed_free instead of the cache (a lost cache hit on
every release with slot 0 full); and were slot 1 ever to hold the very stack
read from slot 0 (after an allocation and a release in between, on a
preemptible release), the cmpxchg would succeed and overwrite it. A mutant
of the kernel code; no fix commit is cited, none was read.

Shortest counterexample: one task's stack is cached in slot 0, a second
task's release finds slot 0 full and fails on the empty slot 1.
"""
from checker import And, If, Not, PerCpu, Select, action, when
from checker.specs.stack_cache import SLOTS, TASK, StackCache, _busy, _in, _task_ok


class StackCmpxchgStaleOld(StackCache, expect_violated=("an_empty_slot_takes_the_stack",)):
    """free_thread_stack()'s cache loop with `struct vm_struct *tmp = NULL;` before the loop."""

    kernel = StackCache.kernel + "; try_release_thread_stack_to_cache() with tmp initialised once, before the loop"
    explore_sweeps = ({"nr_cached": 2, "hotplug": 0},)
    old = PerCpu(0, role="tasks", doc="the release's tmp: NULL at the start of the loop only")

    @action(role="tasks", access=SLOTS)
    def this_cpu_cmpxchg(s, t):
        """(the bug) struct vm_struct *tmp = NULL; for (i = 0; i < NR_CACHED_STACKS; i++) if
        (this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm_area)) return true;  -- one slot; on failure tmp =
        the slot's value, and it stays for the next slot."""
        c = s.on[t]
        start = s.pc[t] == TASK.dead
        i = If(start, 0, s.ti[t])
        tmp = If(start, 0, s.old[t])
        cur = Select([Select(getattr(s, f"slot{j}"), c) for j in range(s.nr_cached)], i)
        hit = cur == tmp
        last = i + 1 >= s.nr_cached
        upd = {f"slot{j}": {x: If(And(hit, i == j, c == x), s.tvm[t], getattr(s, f"slot{j}")[x]) for x in s.cpus}
               for j in range(s.nr_cached)}
        return when(And(_in(s.pc[t], (TASK.dead, TASK.free)), _task_ok(s, t)),
                    busy=_busy(s, t, c), ti={t: If(hit, i, i + 1)}, old={t: If(hit, 0, cur)},
                    skipped_empty=If(And(cur == 0, Not(hit)), 1, s.skipped_empty),
                    pc={t: If(hit, TASK.clear, If(last, TASK.delayed, TASK.free))}, **upd)
