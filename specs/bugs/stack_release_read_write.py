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
from checker.language.process import process
from checker.specs.stack_cache import StackCache, _free_if, _runs, _task_ok, _vmalloc, _written


class StackReleaseReadWrite(StackCache, expect_violated=("stack_in_one_place", "failed_charge_frees_its_stack")):
    """free_thread_stack() in task context: this_cpu_read of the slot, then this_cpu_write of vm."""

    kernel = StackCache.kernel + "; try_release_thread_stack_to_cache() as this_cpu_read + this_cpu_write"
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (and come back up)")
    FREEING = ("free", "write", "delayed", "clear")
    RELEASING = ("free", "write", "delayed")

    @process(role="tasks", runs=_runs)
    def task_stack(k, s, t):
        """stack_cache's task_stack with the release loop as this_cpu_read, then this_cpu_write."""
        vm = k.this_cpu_xchg(s.slot0, 0)                    # for (i...) { s = this_cpu_xchg(cached_stacks[i], NULL);
        if vm == 0 and s.nr_cached == 2:                    #         if (!s) continue;
            k.label("alloc")
            vm = k.this_cpu_xchg(s.slot1, 0)
        if vm != 0:                                         # a cached stack (ghosts: which, and that one was)
            s.got[t] = vm
            s.cached_got[t] = 1
            s.reused = 1
            k.label("reuse")
            with k.atomic():                                # memset(kasan_reset_tag(s->addr), 0, THREAD_SIZE);
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
        k.label("free")                                     # (the bug) for (i...) { if (this_cpu_read(
        old = k.this_cpu_read(s.slot0)                      #     cached_stacks[i])) continue;
        s.busy[s.on[t]] = 1 if s.rel[t] == 0 else s.busy[s.on[t]]
        if old == 0:
            k.label("write")
            k.this_cpu_write(s.slot0, s.tvm[t])             #     this_cpu_write(cached_stacks[i], vm); return true; }
        elif s.nr_cached == 2:
            k.label("free")
            old = k.this_cpu_read(s.slot1)
            if old == 0:
                k.label("write")
                k.this_cpu_write(s.slot1, s.tvm[t])
        if old != 0:                                        # thread_stack_delayed_free(tsk):
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
