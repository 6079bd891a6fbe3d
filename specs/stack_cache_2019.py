# SPDX-License-Identifier: GPL-2.0-only
"""The stack cache in its 2018-19 structure: the memcg charge in dup_task_struct (K-STACK-MEMCG's code).

kernel/fork.c after Roman Gushchin's 9b6f7e163cd0 ("mm: rework memcg kernel
stack accounting", v4.19, 2018) and before the 5.18 rework:
``alloc_thread_stack_node()`` returns the stack address and sets
``tsk->stack_vm_area`` (the cached path after the 2018 unconditional memset);
``dup_task_struct()`` then calls ``memcg_charge_kernel_stack(tsk)`` and on
failure ``goto free_stack``: ``free_thread_stack(tsk)``, which uncharges the
pages, tries ``this_cpu_cmpxchg(cached_stacks[i], NULL,
tsk->stack_vm_area)`` and else ``vfree_atomic(tsk->stack)``; on success
``tsk->stack = stack`` after ``arch_dup_task_struct()``. The task_struct
comes from ``kmem_cache_alloc`` uninitialised, so until something writes it
``tsk->stack`` is garbage (``STALE`` here). There is no RCU-delayed free and
no ``exit_task_stack_account``: the stack stays charged until
``free_thread_stack``.

Who releases a dead task's stack in this structure (kernel/fork.c and
kernel/sched/core.c, v4.19-v5.17, CONFIG_VMAP_STACK, so
CONFIG_THREAD_INFO_IN_TASK on every architecture that had it then: x86-64,
arm64, s390): the last ``put_task_stack()``, ``refcount_dec_and_test(
&tsk->stack_refcount)`` -> ``release_task_stack()`` -> ``free_thread_stack()``
(the uncharge, the cmpxchg loop, else ``vfree_atomic(tsk->stack)``), then
``tsk->stack = NULL``. It comes from one of:

- ``finish_task_switch()`` on the CPU the task died on (``/* Task is done
  with its stack. */ put_task_stack(prev);``: task context, preemption off);
- a ``try_get_task_stack()`` holder in task context, preemptible: x86's
  ``save_stack_trace_tsk()`` (/proc/PID/stack) and ``get_wchan()``
  (/proc/PID/wchan; it took ``p->pi_lock`` around the walk only from 5.16's
  ``get_wchan()`` wrapper, so in 2019 it is preemptible): it can migrate
  between its slot cmpxchgs;
- ``sched_show_task()`` in hard-irq context (sysrq-t -> ``show_state_filter()``;
  its ``try_get_task_stack()``/``put_task_stack()`` pin came with the 4.9
  THREAD_INFO_IN_TASK work): the whole ``free_thread_stack()`` in the
  interrupt, which is why it frees with ``vfree_atomic()``.

There is no release from ``delayed_put_task_struct()`` (the RCU callback that
drops the task_struct reference in softirq): with THREAD_INFO_IN_TASK
``free_task()`` only does ``WARN_ON_ONCE(refcount_read(&tsk->stack_refcount)
!= 0)``; ``free_thread_stack()`` from ``free_task()`` is the
!THREAD_INFO_IN_TASK form, which no VMAP_STACK architecture used. (An earlier
version of this spec released from that softirq.)

``fixes`` selects the two fixes of K-STACK-MEMCG: 1 adds Rik van Riel's
5eed6f1dff87 (``tsk->stack = stack`` where the stack is vmalloc'ed), 2 adds
Shakeel Butt's ba4a45746c36 (``tsk->stack = s->addr`` for a cached stack).
With both (the default) every property holds; the bug spec
``stack_memcg_charge_fail`` explores 0 and 1.

Written, as ``stack_cache``, as the kernel functions: ``task_stack`` here is the 2018-19 code (the charge in
``dup_task_struct()`` with its ``free_stack:`` label, the uncharge in ``free_thread_stack()``, ``vfree_atomic``
instead of the RCU callback); the variables, the CPUs' steps and the properties are ``stack_cache``'s, but the
memcg balance (the stack stays charged until it is released).
"""
from checker import And, If, Implies, Not, Or, Param, PerCpu, Select, action, invariant, sometimes, when
from checker.language.process import process
from checker.specs.stack_cache import (DONE, HEAP, SLOTS, STALE, StackCache, _at, _at_rest, _free_if, _in_flight,
                                       _runs, _stack_ptr, _task_ok, _try_cache, _vmalloc)


class StackCache2019(StackCache, name="stack_cache_2019"):
    """alloc_thread_stack_node / dup_task_struct's memcg charge / free_thread_stack, 2019 (with fixes)."""

    kernel = ("kernel/fork.c 2018-19 (v4.19-v5.17 structure, from 9b6f7e163cd0 in v4.19): alloc_thread_stack_node "
              "returning the address, "
              "dup_task_struct with memcg_charge_kernel_stack(tsk) and its free_stack label, free_thread_stack "
              "with the uncharge, the cmpxchg loop and vfree_atomic(tsk->stack), put_task_stack from "
              "finish_task_switch, task-context holders (save_stack_trace_tsk, get_wchan) and a hard-irq "
              "sched_show_task; with fixes=2 both "
              "5eed6f1dff87 and ba4a45746c36")
    assumptions = (
        "tsk->stack of a fresh task_struct is garbage (kmem_cache_alloc does not zero it): a pointer the "
        "allocator never returned, so vfree_atomic of it is an invalid free",
        "vfree_atomic frees at once (its deferral to a work item does not change who owns the stack)",
        "the last put_task_stack is nondeterministically finish_task_switch's (preemption off), a preemptible "
        "holder's on any online CPU (save_stack_trace_tsk, get_wchan: one step per this_cpu_cmpxchg, migrating "
        "in between), or a hard-irq sched_show_task's on any online CPU (one step); the refcount decrement that "
        "picks the last one is not modelled",
    )

    fixes = Param(2, domain=(0, 1, 2), doc="0: 9b6f7e163cd0 alone; 1: + 5eed6f1dff87; 2: + ba4a45746c36")
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (and come back up)")
    taddr = PerCpu(STALE, role="tasks", doc="tsk->stack: STALE (slab garbage) until written")

    @process(role="tasks", runs=_runs)
    def task_stack(k, s, t):
        """One child's stack, 2018-19: alloc_thread_stack_node(), dup_task_struct()'s charge, the child's life, the
        last put_task_stack()'s free_thread_stack() (or free_stack:'s)."""
        vm = k.this_cpu_xchg(s.slot0, 0)                    # for (i...) { s = this_cpu_xchg(cached_stacks[i], NULL);
        if vm == 0 and s.nr_cached == 2:                    #         if (!s) continue;
            k.label("alloc")
            vm = k.this_cpu_xchg(s.slot1, 0)
        if vm != 0:
            s.got[t] = vm
            s.cached_got[t] = 1
            s.reused = 1
            k.label("reuse")
            with k.atomic():                                # memset(s->addr, 0, THREAD_SIZE);
                k.update(s.spec.memset_stack(s, vm))
                s.tvm[t] = vm                               # tsk->stack_vm_area = s;
                if s.fixes >= 2:
                    s.taddr[t] = vm                         # [ba4a45746c36] tsk->stack = s->addr;
        else:
            with k.atomic():                                # stack = __vmalloc_node_range(...);
                k.might_sleep()
                ok = k.choose((True, False))
                vm = s.next_vm
                ok = ok and vm <= s.stacks
                k.assume(ok or s.failures == 1)
                if ok:
                    k.update(_vmalloc(s, vm))
                    s.got[t] = vm
                    s.tvm[t] = vm                           # tsk->stack_vm_area = find_vm_area(stack);
                    if s.fixes >= 1:
                        s.taddr[t] = vm                     # [5eed6f1dff87] tsk->stack = stack;
                else:
                    s.enomem[t] = 1                         # return NULL
            if not ok:
                return
        k.label("charge")
        with k.atomic():                                    # dup_task_struct(): if (memcg_charge_kernel_stack(tsk))
            k.might_sleep()                                 #         goto free_stack;
            ok = k.choose((True, False))
            k.assume(ok or s.failures == 1)
            s.charged[vm - 1] = 1 if ok else 0
            if ok:
                s.taddr[t] = vm                             # tsk->stack = stack;
            else:
                s.forkfail[t] = 1                           # free_stack: free_thread_stack(tsk), preemptible
                s.rel[t] = 1
        if ok:
            k.label("live")
            with k.atomic():                                # the child runs on its stack and exits
                s.dirty[s.tvm[t] - 1] = 1
                k.update(HEAP.access(s, _stack_ptr(s.tvm[t])))
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
        k.label("free")                                     # free_thread_stack(): memcg_kmem_uncharge() each page;
        s.charged[s.tvm[t] - 1] = 0
        vm = s.tvm[t]
        s.busy[s.on[t]] = 1 if s.rel[t] == 0 else s.busy[s.on[t]]
        cached = s.spec.try_release_thread_stack_to_cache(k, s, vm)  # (the same loop, inline in 2019's
        if not cached:                                                #  free_thread_stack; factored out in 2022)
            k.label("delayed")
            with k.atomic():                                # vfree_atomic(tsk->stack);
                k.update(_free_if(s, True, s.taddr[t]))
        k.label("clear")
        with k.atomic():                                    # tsk->stack = NULL; tsk->stack_vm_area = NULL;
            s.tvm[t] = 0
            s.taddr[t] = 0
            s.busy[s.on[t]] = 0 if s.rel[t] == 0 else s.busy[s.on[t]]
            s.rel[t] = 0

    @process(role="cpus", irq=True, applies=lambda p: False)
    def thread_stack_free_rcu(k, s, cpu):
        """(no RCU-delayed free before 5.18)"""
        with k.atomic():
            k.assume(False)

    @action(role="cpus", choose={"t": lambda p: p.tasks}, access=SLOTS)
    def put_task_stack_hardirq(s, cpu, t):
        """sched_show_task(p) in hard-irq context on ``cpu`` (sysrq-t): if (!try_get_task_stack(p)) return; ...
        put_task_stack(p): the last reference -> release_task_stack() -> free_thread_stack(): uncharge, the
        cmpxchg loop on that CPU's slots, else vfree_atomic(tsk->stack); tsk->stack = NULL; ...  One step (a
        step of the CPU it runs on: under tso and lkmm its this_cpu_cmpxchg loop is that CPU's); it may land
        inside a task-context free_thread_stack there."""
        k = s.tvm[t]
        slots, cached = _try_cache(s, cpu, k)
        return when(And(_at(s, t, "dead"), Select(s.online, cpu) == 1),
                    tasks_pc={t: DONE}, tvm={t: 0}, taddr={t: 0},
                    charged={j: If(k == j + 1, 0, s.charged[j]) for j in range(s.stacks)},
                    nested=If(Select(s.busy, cpu) == 1, 1, s.nested),
                    **_free_if(s, Not(cached), s.taddr[t]), **slots)

    @invariant
    def memcg_charge_balanced(s):
        """ST-FAIL (memcg), 2019 form: at an operation boundary a stack is charged exactly while it is the
        stack of a task not yet released (charged in dup_task_struct, uncharged in free_thread_stack)."""
        rest = _at_rest(s)
        out = []
        for k in range(1, s.stacks + 1):
            owned = Or(*[And(_at(s, t, *s.spec.OWNING), s.tvm[t] == k) for t in s.tasks])
            charged = s.charged[k - 1] == 1
            out.append(Implies(rest, charged == owned))
            out.append(Implies(charged, Or(owned, _in_flight(s, k) >= 1)))
        return And(*out)

    @action(role="cpus", choose={"t": lambda p: p.tasks})
    def put_task_stack_irqs_off(s, cpu, t):
        """(none in 2019: get_wchan() ran its walk under p->pi_lock only from 5.16; before, it is a preemptible
        holder, task_stack's releaser at dead)"""
        return when(False)

    @sometimes(applies=lambda p: False)
    def a_failed_fork_uncharges_and_releases_its_stack(s):
        """(5.18+ fork failure unwind only)"""
        return Or(*[s.forkfail[t] == 1 for t in s.tasks])

    @sometimes(applies=lambda p: False)
    def an_rcu_callback_caches_its_stack(s):
        """(no RCU-delayed free before 5.18)"""
        return s.rcu_cached == 1

    @sometimes(applies=lambda p: False)
    def an_rcu_callback_frees_its_stack(s):
        """(no RCU-delayed free before 5.18)"""
        return s.rcu_freed == 1

    @sometimes(applies=lambda p: p.failures == 1)
    def a_failed_fork_returns_its_stack_to_the_cache(s):
        """dup_task_struct's free_stack path caches the stack it could not charge."""
        return Or(*[And(s.spec.failed(s, t), s.got[t] != 0,
                        Or(*[v == s.got[t] for c in s.cpus for v in (s.slot0[c], s.slot1[c])])) for t in s.tasks])
