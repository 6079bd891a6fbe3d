# SPDX-License-Identifier: GPL-2.0-only
"""An equivalent mutant of alloc_thread_stack_node(): charge the reused stack, then zero it.

The 2025-era kernel/fork.c charges a reused stack to the memcg before
clearing it (and a failed charge frees it uncleared). The code changes, and
the interleavings change (the stack is charged for a step before it is
zeroed), but what anyone can observe does not: the stack is zeroed before
the task gets it, a failed charge frees it, the charge is balanced at every
operation boundary. Every property holds: this spec must NOT be reported.
"""
from checker import Param
from checker.language.process import process
from checker.specs.stack_cache import StackCache, _free_if, _runs, _task_ok, _vmalloc, _written


class StackChargeBeforeZeroing(StackCache):
    """alloc_thread_stack_node(): memcg_charge_kernel_stack(s) before memset(stack, 0, THREAD_SIZE)."""

    kernel = StackCache.kernel + "; equivalent mutant: a reused stack is charged before it is zeroed (2025 order)"
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (the reordering is in the fork path; the tests "
                                          "also check it with hotplug)")
    HOLDING = ("reuse", "zero", "charge")

    @process(role="tasks", runs=_runs)
    def task_stack(k, s, t):
        """stack_cache's task_stack with a reused stack charged (and a failed charge freed) before it is zeroed."""
        vm = k.this_cpu_xchg(s.slot0, 0)                    # for (i...) { s = this_cpu_xchg(cached_stacks[i], NULL);
        if vm == 0 and s.nr_cached == 2:                    #         if (!s) continue;
            k.label("alloc")
            vm = k.this_cpu_xchg(s.slot1, 0)
        if vm != 0:                                         # a cached stack (ghosts: which, and that one was)
            s.got[t] = vm
            s.cached_got[t] = 1
            s.reused = 1
            k.label("reuse")
            with k.atomic():                                # (reordered, first) if (memcg_charge_kernel_stack(s)) {
                k.might_sleep()
                fails = k.choose(range(s.failures + 1))
                s.charged[vm - 1] = 0 if fails else 1
                if fails:
                    k.update(_free_if(s, True, vm))         #         vfree(s->addr);
                    s.enomem[t] = 1                         #         return -ENOMEM; }
                    return
            k.label("zero")
            with k.atomic():                                # (then) memset(stack, 0, THREAD_SIZE);
                k.update(s.spec.memset_stack(s, vm))
        else:
            with k.atomic():                                # stack = __vmalloc_node_range(...);
                k.might_sleep()                             # (GFP_KERNEL)
                ok = k.choose((True, False))
                vm = s.next_vm
                ok = ok and vm <= s.stacks                  # (the model has `stacks` of them)
                k.assume(ok or s.failures == 1)
                if ok:
                    k.update(_vmalloc(s, vm))
                    s.got[t] = vm
                else:
                    s.enomem[t] = 1                         # if (!stack) return -ENOMEM;
                    return
            k.label("charge")
            with k.atomic():                                    # if (memcg_charge_kernel_stack(vm)) {
                k.might_sleep()                                 # (memcg_kmem_charge_page(..., GFP_KERNEL, 0))
                fails = k.choose(range(s.failures + 1))
                s.charged[vm - 1] = 0 if fails else 1
                if fails:
                    k.update(_free_if(s, True, vm))             #         vfree(vm->addr);
                    s.enomem[t] = 1                             #         return -ENOMEM; }
                    return
        s.tvm[t] = vm                                       # tsk->stack_vm_area = vm;
        s.taddr[t] = vm                                     # tsk->stack = stack;
        k.label("live")
        with k.atomic():                                    # the child runs, then do_exit(): exit_task_stack_account()
            fails = k.choose(range(s.failures + 1))         # or the fork fails later (free_stack:, bad_fork_free:)
            s.charged[s.tvm[t] - 1] = 0                     # memcg_kmem_uncharge_page() for each page
            if fails:
                s.forkfail[t] = 1
                s.rel[t] = 1                                # the parent releases it, preemptible
            else:
                k.update(_written(s, s.tvm[t]))             # (the child's data is on its stack)
        if not fails:
            k.label("dead")                                 # the last put_task_stack(): finish_task_switch()
            holder = k.choose((False, True))                # here, or a preemptible try_get_task_stack() holder
            if holder:
                with k.atomic():
                    cpu = k.choose(s.cpus)
                    k.assume(s.online[cpu] == 1 and s.busy[cpu] == 0)
                    s.on[t] = cpu
                    s.rel[t] = 1
            else:
                k.assume(_task_ok(s, t))
        k.label("free")                                     # free_thread_stack():
        vm = s.tvm[t]
        s.busy[s.on[t]] = 1 if s.rel[t] == 0 else s.busy[s.on[t]]  # (finish_task_switch: preemption off)
        cached = s.spec.try_release_thread_stack_to_cache(k, s, vm)
        if not cached:                                      # thread_stack_delayed_free(tsk):
            k.label("delayed")
            with k.atomic():                                # vm_stack = tsk->stack; vm_stack->stack_vm_area = ...;
                k.update(_written(s, s.taddr[t]))
                s.pending[s.taddr[t] - 1] = 1               # call_rcu(&vm_stack->rcu, thread_stack_free_rcu);
        k.label("clear")
        with k.atomic():                                    # tsk->stack = NULL; tsk->stack_vm_area = NULL;
            s.tvm[t] = 0
            s.taddr[t] = 0
            s.busy[s.on[t]] = 0 if s.rel[t] == 0 else s.busy[s.on[t]]  # finish_task_switch's preempt_enable()
            s.rel[t] = 0
