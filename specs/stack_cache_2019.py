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
"""
from checker import And, If, Implies, Not, Or, Param, PerCpu, Select, action, invariant, sometimes, when
from checker.kernel.memory import MEM
from checker.specs.stack_cache import (_VARS, HEAP, OWNING, SLOTS, STALE, TASK, StackCache, _at_rest, _busy, _free_if,
                                       _in, _in_flight, _mem, _set_k, _stack_ptr, _task_ok, _try_cache, _unbusy)


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
    failing = PerCpu(0, role="tasks", doc="free_thread_stack is running on dup_task_struct's free_stack path")

    @action(role="tasks")
    def clear_reused_stack(s, t):
        """alloc_thread_stack_node(): memset(s->addr, 0, THREAD_SIZE); tsk->stack_vm_area = s;
        [ba4a45746c36: tsk->stack = s->addr;] return s->addr;"""
        k = s.held[t]
        return when(And(s.pc[t] == TASK.reuse, _task_ok(s, t)), pc={t: TASK.charge}, tvm={t: k},
                    taddr={t: k if s.fixes >= 2 else s.taddr[t]},
                    dirty=_set_k(s, "dirty", k, 0), **HEAP.access(s, _stack_ptr(k)))

    @action(role="tasks", choose={"ok": (True, False)}, sleeps=True)
    def vmalloc_stack(s, t, ok):
        """alloc_thread_stack_node(): stack = __vmalloc_node_range(...); if (stack) {
        tsk->stack_vm_area = find_vm_area(stack); [5eed6f1dff87: tsk->stack = stack;] } return stack;"""
        k = s.next_vm
        ok = And(ok, k <= s.stacks)
        updates = {_VARS[j]: If(And(ok, k == j), MEM.live, _mem(s, j)) for j in range(1, s.stacks + 1)}
        return when(And(s.pc[t] == TASK.vmalloc, _task_ok(s, t), Or(ok, s.failures == 1)),
                    pc={t: If(ok, TASK.charge, TASK.failed)}, held={t: If(ok, k, 0)}, got={t: If(ok, k, 0)},
                    tvm={t: If(ok, k, s.tvm[t])}, taddr={t: If(ok, k, s.taddr[t]) if s.fixes >= 1 else s.taddr[t]},
                    next_vm=If(ok, k + 1, k), **updates)

    @action(role="tasks", choose={"ok": (True, False)}, sleeps=True)
    def memcg_charge_kernel_stack(s, t, ok):
        """dup_task_struct(): if (memcg_charge_kernel_stack(tsk)) goto free_stack;  ... arch_dup_task_struct();
        tsk->stack = stack; tsk->stack_vm_area = stack_vm_area;  (free_stack: free_thread_stack(tsk))"""
        k = s.held[t]
        return when(And(s.pc[t] == TASK.charge, _task_ok(s, t), Or(ok, s.failures == 1)),
                    pc={t: If(ok, TASK.live, TASK.free)}, held={t: 0}, ti={t: 0}, failing={t: If(ok, 0, 1)},
                    rel={t: If(ok, 0, 1)},
                    taddr={t: If(ok, k, s.taddr[t])}, charged=_set_k(s, "charged", k, If(ok, 1, 0)))

    @action(role="tasks")
    def exit_task_stack_account(s, t):
        """The child runs on its stack and exits (2019: no exit_task_stack_account; the stack stays charged)."""
        k = s.tvm[t]
        return when(And(s.pc[t] == TASK.live, _task_ok(s, t)), pc={t: TASK.dead},
                    dirty=_set_k(s, "dirty", k, 1), **HEAP.access(s, _stack_ptr(k)))

    @action(role="tasks", access=SLOTS)
    def this_cpu_cmpxchg(s, t):
        """free_thread_stack(): vm = task_stack_vm_area(tsk); if (vm) { memcg_kmem_uncharge() each page;
        for (i = 0; i < NR_CACHED_STACKS; i++) { if (this_cpu_cmpxchg(cached_stacks[i], NULL,
        tsk->stack_vm_area) != NULL) continue; return; } ...  -- one slot; preemption off when called from
        finish_task_switch, on from a task-context holder's put_task_stack and dup_task_struct's free_stack."""
        c = s.on[t]
        start = Or(s.pc[t] == TASK.dead, And(s.pc[t] == TASK.free, s.ti[t] == 0))  # the uncharge comes first
        i = If(s.pc[t] == TASK.dead, 0, s.ti[t])
        cur = Select([Select(getattr(s, f"slot{j}"), c) for j in range(s.nr_cached)], i)
        hit = cur == 0
        last = i + 1 >= s.nr_cached
        upd = {f"slot{j}": {x: If(And(hit, i == j, c == x), s.tvm[t], getattr(s, f"slot{j}")[x]) for x in s.cpus}
               for j in range(s.nr_cached)}
        return when(And(_in(s.pc[t], (TASK.dead, TASK.free)), _task_ok(s, t)),
                    busy=_busy(s, t, c), ti={t: If(hit, i, i + 1)},
                    charged={j: If(And(start, s.tvm[t] == j + 1), 0, s.charged[j]) for j in range(s.stacks)},
                    pc={t: If(hit, TASK.clear, If(last, TASK.delayed, TASK.free))}, **upd)

    @action(role="tasks")
    def thread_stack_delayed_free(s, t):
        """free_thread_stack(): vfree_atomic(tsk->stack); return;"""
        return when(s.pc[t] == TASK.delayed, pc={t: TASK.clear}, **_free_if(s, True, s.taddr[t]))

    @action(role="tasks")
    def free_thread_stack_clear(s, t):
        """release_task_stack(): tsk->stack = NULL; tsk->stack_vm_area = NULL;  (free_stack path:
        free_task_struct(tsk), the fork returns -ENOMEM)"""
        return when(s.pc[t] == TASK.clear, pc={t: If(s.failing[t] == 1, TASK.failed, TASK.released)},
                    tvm={t: 0}, taddr={t: 0}, failing={t: 0}, busy=_unbusy(s, t), rel={t: 0})

    @action(role="cpus", choose={"t": lambda p: p.tasks}, access=SLOTS)
    def put_task_stack_hardirq(s, cpu, t):
        """sched_show_task(p) in hard-irq context on ``cpu`` (sysrq-t): if (!try_get_task_stack(p)) return; ...
        put_task_stack(p): the last reference -> release_task_stack() -> free_thread_stack(): uncharge, the
        cmpxchg loop on that CPU's slots, else vfree_atomic(tsk->stack); tsk->stack = NULL; ...  One step (a
        step of the CPU it runs on: under tso and lkmm its this_cpu_cmpxchg loop is that CPU's); it may land
        inside a task-context free_thread_stack there."""
        k = s.tvm[t]
        slots, cached = _try_cache(s, cpu, k)
        return when(And(s.pc[t] == TASK.dead, Select(s.online, cpu) == 1),
                    pc={t: TASK.released}, tvm={t: 0}, taddr={t: 0},
                    charged={j: If(k == j + 1, 0, s.charged[j]) for j in range(s.stacks)},
                    nested=If(Select(s.busy, cpu) == 1, 1, s.nested),
                    **_free_if(s, Not(cached), s.taddr[t]), **slots)

    @action(role="cpus", choose={"k": lambda p: range(1, p.stacks + 1)}, irq=True)
    def thread_stack_free_rcu(s, cpu, k):
        """(no RCU-delayed free before 5.18)"""
        return when(False)

    @invariant
    def memcg_charge_balanced(s):
        """ST-FAIL (memcg), 2019 form: at an operation boundary a stack is charged exactly while it is the
        stack of a task not yet released (charged in dup_task_struct, uncharged in free_thread_stack)."""
        rest = _at_rest(s)
        out = []
        for k in range(1, s.stacks + 1):
            owned = Or(*[And(_in(s.pc[t], OWNING), s.tvm[t] == k) for t in s.tasks])
            charged = s.charged[k - 1] == 1
            out.append(Implies(rest, charged == owned))
            out.append(Implies(charged, Or(owned, _in_flight(s, k) >= 1)))
        return And(*out)

    # The 2019 release paths: finish_task_switch (this_cpu_cmpxchg above), a preemptible holder (stack_cache's
    # put_task_stack_holder, then this_cpu_cmpxchg steps), a hard-irq sched_show_task (above). No irqs-off holder.
    @action(role="tasks", choose={"cpu": lambda p: p.cpus})
    def put_task_stack_holder(s, t, cpu):
        """A preemptible holder on ``cpu`` drops the last reference: save_stack_trace_tsk() (/proc/PID/stack) or
        get_wchan() (/proc/PID/wchan): try_get_task_stack(p); ...; put_task_stack(p) -> release_task_stack() ->
        free_thread_stack(); its uncharge and this_cpu_cmpxchg steps follow, preemptible."""
        return StackCache.put_task_stack_holder(s, t, cpu)

    @action(role="cpus", choose={"t": lambda p: p.tasks})
    def put_task_stack_irqs_off(s, cpu, t):
        """(none in 2019: get_wchan() ran its walk under p->pi_lock only from 5.16; before, it is a preemptible
        holder, put_task_stack_holder)"""
        return when(False)

    @action(role="tasks")
    def fork_fails_after_stack(s, t):
        """(the 2018-19 failure path is memcg_charge_kernel_stack's: free_stack: above)"""
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
        return Or(*[And(s.pc[t] == TASK.failed, s.got[t] != 0,
                        Or(*[v == s.got[t] for c in s.cpus for v in (s.slot0[c], s.slot1[c])])) for t in s.tasks])

