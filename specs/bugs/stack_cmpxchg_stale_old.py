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
from checker.language.process import process
from checker.specs.stack_cache import StackCache, _free_if, _runs, _task_ok, _vmalloc, _written


class StackCmpxchgStaleOld(StackCache, expect_violated=("an_empty_slot_takes_the_stack",)):
    """free_thread_stack()'s cache loop with `struct vm_struct *tmp = NULL;` before the loop."""

    kernel = StackCache.kernel + "; try_release_thread_stack_to_cache() with tmp initialised once, before the loop"
    explore_sweeps = ({"nr_cached": 2, "hotplug": 0},)

    @process(role="tasks", runs=_runs)
    def task_stack(k, s, t):
        """stack_cache's task_stack with try_release_thread_stack_to_cache()'s tmp set once, before the loop."""
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
        k.label("free")                                     # (the bug) struct vm_struct *tmp = NULL; for (i...)
        ok, tmp = k.this_cpu_try_cmpxchg(s.slot0, 0, s.tvm[t])  # if (this_cpu_try_cmpxchg(cached_stacks[i], &tmp,
        s.busy[s.on[t]] = 1 if s.rel[t] == 0 else s.busy[s.on[t]]  #     vm_area)) return true;  (tmp: the slot's)
        if not ok and s.nr_cached == 2:
            k.label("free")
            ok, cur = k.this_cpu_try_cmpxchg(s.slot1, tmp, s.tvm[t])  # tmp is slot 0's stack, not NULL
            s.skipped_empty = 1 if not ok and cur == 0 else s.skipped_empty
        old = 0 if ok else 1
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
