# SPDX-License-Identifier: GPL-2.0-only
"""An equivalent mutant of alloc_thread_stack_node(): charge the reused stack, then zero it.

The 2025-era kernel/fork.c charges a reused stack to the memcg before
clearing it (and a failed charge frees it uncleared). The code changes, and
the interleavings change (the stack is charged for a step before it is
zeroed), but what anyone can observe does not: the stack is zeroed before
the task gets it, a failed charge frees it, the charge is balanced at every
operation boundary. Every property holds: this spec must NOT be reported.
"""
from checker import And, If, Not, Param, action, when
from checker.specs.stack_cache import HEAP, TASK, StackCache, _free_if, _set_k, _stack_ptr, _task_ok


class StackChargeBeforeZeroing(StackCache):
    """alloc_thread_stack_node(): memcg_charge_kernel_stack(s) before memset(stack, 0, THREAD_SIZE)."""

    kernel = StackCache.kernel + "; equivalent mutant: a reused stack is charged before it is zeroed (2025 order)"
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (the reordering is in the fork path; the tests "
                                          "also check it with hotplug)")

    @action(role="tasks", choose={"ok": (True, False)}, sleeps=True)
    def clear_reused_stack(s, t, ok):
        """(reordered) if (memcg_charge_kernel_stack(s)) { vfree(s->addr); return -ENOMEM; }  (first)"""
        k = s.held[t]
        return when(And(s.pc[t] == TASK.reuse, _task_ok(s, t), If(ok, True, s.failures == 1)),
                    pc={t: If(ok, TASK.zero, TASK.failed)}, held={t: If(ok, k, 0)},
                    charged=_set_k(s, "charged", k, If(ok, 1, 0)), **_free_if(s, Not(ok), k))

    @action(role="tasks")
    def zero_after_charge(s, t):
        """(reordered) memset(stack, 0, THREAD_SIZE); tsk->stack_vm_area = s; tsk->stack = stack; return 0;"""
        k = s.held[t]
        return when(And(s.pc[t] == TASK.zero, _task_ok(s, t)), pc={t: TASK.live}, held={t: 0},
                    tvm={t: k}, taddr={t: k}, dirty=_set_k(s, "dirty", k, 0), **HEAP.access(s, _stack_ptr(k)))
