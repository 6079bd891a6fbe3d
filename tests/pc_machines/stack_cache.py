# SPDX-License-Identifier: GPL-2.0-only
"""The per-CPU cache of vmapped thread stacks (seed 003; kernel/fork.c, CONFIG_VMAP_STACK).

kernel/fork.c as of 5.18 through 2024 (reference sections 5.2 to 5.4):
``alloc_thread_stack_node()`` takes a stack from this CPU's
``cached_stacks[]`` with ``this_cpu_xchg``, zeroes it and charges it to the
memcg (a failed charge: ``vfree`` and ``-ENOMEM``), else ``vmalloc``s a
fresh one (which may fail) and charges it; ``exit_task_stack_account()``
uncharges it when the task exits; ``free_thread_stack()`` returns it to an
empty slot with ``this_cpu_cmpxchg(cached_stacks[i], NULL, vm)``, else
``thread_stack_delayed_free()`` writes a ``struct vm_stack`` into the dead
stack and ``call_rcu``s ``thread_stack_free_rcu()``, which tries the cache
again on the CPU where it runs and else ``vfree``s; the CPU-hotplug teardown
``free_vm_stack_cache()`` frees a dead CPU's slots. Seed 003 (Khlebnikov,
2018) is the structure these came from: its ``alloc_thread_stack_node``
still zeroed only under ``CONFIG_DEBUG_KMEMLEAK`` (K-STACK-STALE) and had no
memcg charge; the 2018-19 structure with the charge in ``dup_task_struct``
is ``stack_cache_2019``.

Who runs what. A *task* of the role ``tasks`` is one child's stack life:
its parent forks it (``alloc_thread_stack_node``, task context, preemptible
and may sleep, so it can migrate between the per-slot ``this_cpu_xchg``s);
the fork may still fail after that (``dup_task_struct``'s ``free_stack:``
and ``copy_process``'s ``bad_fork_free:``: ``exit_task_stack_account`` and
the memcg uncharge, then the release in the parent's preemptible context),
or the child runs and exits (``exit_task_stack_account``). The last
``put_task_stack()`` releases the stack, and in 5.18+ it comes from one of
(kernel/fork.c and kernel/sched/core.c as read in a 2025 tree; with
THREAD_INFO_IN_TASK ``free_task()`` only warns, so there is no release from
``delayed_put_task_struct``):

- ``finish_task_switch`` on the CPU the task died on (task context,
  preemption off: no other task runs there, but interrupts and softirqs can);
- a preemptible ``try_get_task_stack()`` holder (``stack_trace_save_tsk()``
  for /proc/PID/stack) or the fork failure paths: task context, preemption
  on, so the releaser can migrate between its slot cmpxchgs;
- an interrupts-off holder (``get_wchan()`` under ``p->pi_lock``) or a
  hard-irq ``sched_show_task()``: one step on its CPU (interrupts off,
  nothing else uses that CPU's slots meanwhile); the hard-irq one can land
  inside another release's preempt-off section there.

``thread_stack_free_rcu`` is a softirq on any online CPU (the CPU that
queued it, or the one its callbacks migrated to when that CPU died). A CPU
may go down (tasks migrate off, the teardown runs on a control CPU) and come
back.

The stacks are allocation sites of a heap (``vmalloc`` returns the next
site never used), so ``memory_safe`` reports a use or a free of a freed
stack; which place each stack is in is computed from the kernel state (the
slots, the tasks' fields and locals, the pending RCU callbacks), not kept
as a ghost.

Under ``--memory tso|lkmm`` (docs/weak-memory.md) the slot accesses are
annotated as the code makes them: ``this_cpu`` read-modify-writes of the CPU
a step runs on (a task's steps run on ``on[t]``; the irqs-off and hard-irq
releases are steps of their CPU), and the teardown's plain accesses to a dead
CPU's slots from the control CPU between the hotplug machine's full barriers.
That is the single-writer discipline the non-LOCKed ``this_cpu_cmpxchg``
relies on; ``bugs/stack_drain_online_cpu.py`` breaks it.
"""
from __future__ import annotations

from checker import (And, Array, Bool, CpuId, Enum, Ghost, If, Implies, Load, Not, Or, Param, PerCpu, Rmw, Role,
                     Select, Shared, Spec, Store, action, invariant, smp_mb, sometimes, terminal, when)
from checker.kernel.memory import MEM, MEM_ERROR, Heap, ptr

#: Where a task is. "zero" and "write" are only used by variants (charging before zeroing; a release
#: split into a read and a write).
TASK = Enum("idle", "alloc", "reuse", "zero", "vmalloc", "charge", "live", "dead", "free", "write", "delayed", "clear",
            "released", "failed", name="task")
#: Task states that own their stack (tsk->stack_vm_area) as a live or dead-not-released task.
OWNING = (TASK.live, TASK.dead)
#: Task states inside free_thread_stack() in task context (preemption off).
FREEING = (TASK.free, TASK.write, TASK.delayed, TASK.clear)
#: ... of those, the ones that still use tsk->stack_vm_area / tsk->stack (in "clear" the stack has been
#: handed to a slot, an RCU callback or vfree, and the fields are only about to be set to NULL).
RELEASING = (TASK.free, TASK.write, TASK.delayed)
#: Task states that hold a stack in a local (s, stack, vm) during alloc_thread_stack_node().
HOLDING = (TASK.reuse, TASK.zero, TASK.charge)
#: Task states at an operation boundary.
AT_REST = (TASK.idle, TASK.live, TASK.dead, TASK.released, TASK.failed)

MAX_STACKS = 4
HEAP = Heap(*[f"stack{k}" for k in range(1, MAX_STACKS + 1)],
            survive=tuple(f"stack{k}" for k in range(1, MAX_STACKS + 1)))
#: tsk->stack of a task_struct fresh from kmem_cache_alloc (not yet written by this fork): garbage.
STALE = -1


#: The slot accesses as kernel/fork.c makes them (``--memory tso|lkmm``; nothing changes under sc). Every one of
#: cached_stacks[i] of the CPU a step runs on is a this_cpu read-modify-write: ``this_cpu_xchg(cached_stacks[i],
#: NULL)`` and ``this_cpu_cmpxchg`` / ``this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm)``, atomic only with
#: respect to that CPU and not LOCKed on x86 (a gs-relative cmpxchg without the lock prefix: its store goes
#: through the store buffer and it drains nothing). A task-context step touches the one slot ``ti[t]`` names, a
#: state value, so it lists both: on the slot it does not change it is an Rmw that leaves the value, an
#: unordered load of its own CPU's slot, which orders nothing and reads what the Rmw would read anyway (the
#: newest store: every access to a CPU's slots while it is online is an Rmw of that CPU). The loop steps of
#: one CPU (thread_stack_free_rcu, the irqs-off and hard-irq releases) try slot 0, then slot 1: program order.
SLOTS = (Rmw("slot0", "this_cpu"), Rmw("slot1", "this_cpu"))


def _dead_cpu(s, ctl, cpu):
    """free_vm_stack_cache(cpu) on the control CPU ``ctl``: per_cpu_ptr(cached_stacks, cpu), the dead CPU's."""
    return cpu


#: free_vm_stack_cache(): plain loads and stores of a dead CPU's slots from the control CPU, between the full
#: barriers of the hotplug state machine (kernel/cpu.c): before, takedown_cpu() -> cpuhp_bp_sync_dead() ->
#: cpuhp_wait_for_sync_state()'s atomic_try_cmpxchg(st, &sync, SYNC_STATE_DEAD), which reads the dying CPU's
#: cpuhp_ap_report_dead() atomic_xchg ("implies a full barrier so that the AP changes are visible before the
#: control CPU proceeds"; the cpu_down step's smp_mb()); after, the rest of _cpu_down() and the next _cpu_up()
#: before the CPU runs again (cpu_maps_update_done()'s unlock, then cpuhp_can_boot_ap()'s atomic_try_cmpxchg,
#: fully ordered; the AP's own barrier is cpu_up's smp_mb()). That is the 6.5+ CONFIG_HOTPLUG_CORE_SYNC_DEAD
#: handshake (x86 selects it); before it, and elsewhere, cpuhp_report_idle_dead() hands complete() to an online CPU
#: by smp_call_function_single() and takedown_cpu() waits in wait_for_ap_thread(): an IPI and a completion, no
#: weaker.
TEARDOWN = (smp_mb(), Load("slot0", slot=_dead_cpu), Store("slot0", slot=_dead_cpu), Load("slot1", slot=_dead_cpu),
            Store("slot1", slot=_dead_cpu), smp_mb())


def _in(x, values):
    return Or(*[x == v for v in values])


def _stack_ptr(k):
    """The vm_struct / stack base of stack ``k`` (1..MAX_STACKS; 0 is NULL)."""
    return If(k == 0, 0, ptr(k - 1))


def _mem(s, k: int):
    """The allocation state of stack ``k`` (a plain number)."""
    return getattr(s, _VARS[k])


def _slots(s, c):
    """cached_stacks[0..NR_CACHED_STACKS-1] of CPU ``c``, as (name, value) pairs."""
    return [(f"slot{i}", getattr(s, f"slot{i}")[c]) for i in range(s.nr_cached)]


def _task_ok(s, t):
    """Task ``t`` can take a task-context step: its CPU is not inside another task's preempt-off section
    (at most one task is inside one per CPU, so a task in finish_task_switch's free_thread_stack is the one
    there; a preemptible releaser waits like any task)."""
    return Or(Select(s.busy, s.on[t]) == 0, And(_in(s.pc[t], FREEING), s.rel[t] == 0))


def _set_k(s, name, k, value):
    """Array ``name``[k - 1] = value, for a stack number ``k`` that is a state value (0: nothing)."""
    arr = getattr(s, name)
    return {j: If(k == j + 1, value, arr[j]) for j in range(s.stacks)}


def _try_cache(s, c, k):
    """try_release_thread_stack_to_cache(vm) run to the end on CPU ``c``: for i in 0..NR-1,
    this_cpu_cmpxchg(cached_stacks[i], NULL, vm). Returns (updates of the slots, cached?)."""
    done = False
    out = {}
    for i in range(s.nr_cached):
        var = getattr(s, f"slot{i}")
        free_here = And(Not(done), var[c] == 0)
        out[f"slot{i}"] = {c: If(free_here, k, var[c])}
        done = Or(done, free_here)
    return out, done


class StackCache(Spec):
    """alloc_thread_stack_node / free_thread_stack / free_vm_stack_cache with NR_CACHED_STACKS slots per CPU."""

    kernel = ("kernel/fork.c, 5.18 to 2024 (Sebastian Andrzej Siewior's rework; this_cpu_try_cmpxchg in 2024 is "
              "the same step): alloc_thread_stack_node, memcg_charge_kernel_stack, exit_task_stack_account, "
              "free_thread_stack, try_release_thread_stack_to_cache, thread_stack_delayed_free, "
              "thread_stack_free_rcu, free_vm_stack_cache (CPUHP_BP_PREPARE_DYN teardown)")
    assumptions = (
        "a stack's memcg charge is one unit: memcg_charge_kernel_stack charges THREAD_SIZE/PAGE_SIZE pages and "
        "rolls back the ones it charged on failure, so it ends all or nothing, as modelled",
        "vmalloc returns a stack never used before (an address reused after vfree is a new object) and zeroed "
        "memory (THREADINFO_GFP has __GFP_ZERO)",
        "KASAN unpoisoning and tag reset, and find_vm_area, are not modelled (no effect on ownership)",
        "the last put_task_stack is nondeterministically one of: finish_task_switch on the CPU the task died on "
        "(preemption off, one step per this_cpu_cmpxchg); a preemptible holder on any online CPU (one step per "
        "this_cpu_cmpxchg, migrating in between); get_wchan's irqs-off section or a hard-irq sched_show_task on "
        "any online CPU (one step); the refcount decrement that picks the last one is not modelled, a dead task "
        "may wait for its releaser for any time",
        "a fork that fails after alloc_thread_stack_node (free_stack: in dup_task_struct, bad_fork_free: in "
        "copy_process) runs exit_task_stack_account and the release in the parent's preemptible context; the two "
        "labels do the same to the stack and are one action",
        "thread_stack_free_rcu runs as one step on any online CPU: the CPU that queued it or, after that CPU "
        "died, the one rcutree_migrate_callbacks moved it to; the grace period is modelled only as far as it "
        "matters here: the callback waits until the free_thread_stack that queued it has left its "
        "preempt-off (so RCU read-side) section, and may otherwise run at once (more orders than the kernel "
        "allows, none fewer)",
        "the RCU path (both slots full at release) needs more live stacks than slots: it is reached when "
        "ntasks > nr_cached",
        "migration happens where preemption is enabled and it matters: before the fork (which CPU's cache it "
        "tries), between the this_cpu_xchg steps of alloc_thread_stack_node, and while the child runs "
        "(which decides where it is released); a budget (migrations) bounds it",
        "a task-context step on a CPU waits while another task is in finish_task_switch's preempt-off "
        "free_thread_stack there; softirqs and hard irqs may run inside that section",
        "a dying CPU has no task in a preempt-off section; its tasks move to another online CPU; the teardown "
        "free_vm_stack_cache runs on an online control CPU after it is dead (plain accesses between the hotplug "
        "state machine's full barriers: nothing else touches that CPU's slots)",
        "the cached stacks are live at the end by design (every site survives, so the heap has no no_leak); leaks are "
        "caught by stack_in_one_place (a live stack in no place) and dead_cpu_cache_empty",
    )

    ncpus = Param(2, domain=range(1, 4), doc="CPUs")
    ntasks = Param(2, domain=range(1, 4), doc="children forked (each: alloc, run, exit, release)")
    nr_cached = Param(2, domain=(1, 2), explore=(1, 2), doc="NR_CACHED_STACKS (2 in the kernel)")
    stacks = Param(lambda p: p.ntasks, domain=range(1, MAX_STACKS + 1),
                   doc="distinct stacks vmalloc can return (one per fork is enough: a fork vmallocs at most once)")
    failures = Param(1, domain=(0, 1), doc="1: vmalloc and the memcg charge may fail")
    migrations = Param(1, domain=range(0, 4), doc="task migrations allowed (a budget)")
    hotplug = Param(0, domain=(0, 1), explore=(0, 1), doc="1: one CPU may go down (and come back up)")

    cpus = Role("ncpus", symmetric=True, doc="CPUs: their slots, softirqs (RCU callbacks), hotplug")
    tasks = Role("ntasks", symmetric=True, cpu=lambda s, t: s.on[t],
                 doc="one child each: forked, runs, exits, its stack released; its steps run on CPU on[t]")

    heap = HEAP

    slot0 = PerCpu(0, role="cpus", doc="cached_stacks[0]: a stack number, 0 for NULL")
    slot1 = PerCpu(0, role="cpus", doc="cached_stacks[1] (with NR_CACHED_STACKS = 2)")
    online = PerCpu(1, type=Bool, role="cpus", doc="in cpu_online_mask")
    torn = PerCpu(0, type=Bool, role="cpus", doc="dead: cpu_down() has run its teardown states (free_vm_stack_cache "
                  "among them) for it")
    busy = PerCpu(0, type=Bool, role="cpus", doc="a task is in finish_task_switch's preempt-off free_thread_stack here")

    pc = PerCpu(TASK.idle, type=TASK, role="tasks")
    on = PerCpu(0, type=CpuId, role="tasks", doc="the CPU the task's current step runs on")
    ti = PerCpu(0, role="tasks", doc="the loop index i over cached_stacks[]")
    held = PerCpu(0, role="tasks", doc="the local s / vm of alloc_thread_stack_node: a stack number or 0")
    tvm = PerCpu(0, role="tasks", doc="tsk->stack_vm_area: a stack number or 0")
    taddr = PerCpu(0, role="tasks", doc="tsk->stack: a stack number, 0, or STALE (garbage)")
    got = PerCpu(0, role="tasks", doc="ghost: the stack this fork obtained (for the failure property)")
    cached_got = PerCpu(0, type=Bool, role="tasks", doc="ghost: this fork took its stack from the cache")
    rel = PerCpu(0, type=Bool, role="tasks", doc="the release in flight is preemptible (a try_get_task_stack "
                 "holder, or a failed fork's parent) rather than finish_task_switch's preempt-off one")
    forkfail = PerCpu(0, type=Bool, role="tasks", doc="the fork failed after alloc_thread_stack_node")

    pending = Array("stacks", 0, type=Bool, doc="an RCU callback thread_stack_free_rcu is queued on this stack")
    dirty = Array("stacks", 0, type=Bool, doc="ghost: the stack holds a previous user's data")
    charged = Array("stacks", 0, type=Bool, doc="the stack's pages are charged to a memcg")

    next_vm = Shared(1, doc="the stack vmalloc returns next")
    moves = Shared(lambda p: p.migrations, doc="migrations left")
    downs = Shared(lambda p: p.hotplug, doc="CPU offline events left")
    reused = Ghost(0, type=Bool, doc="a stack was taken from the cache")
    rcu_cached = Ghost(0, type=Bool, doc="an RCU callback put its stack into the cache")
    rcu_freed = Ghost(0, type=Bool, doc="an RCU callback vfree'd its stack")
    torn_freed = Ghost(0, type=Bool, doc="free_vm_stack_cache freed a stack")
    nested = Ghost(0, type=Bool, doc="an interrupt or softirq used the slots inside a task-context free_thread_stack there")
    rel_moved = Ghost(0, type=Bool, doc="a preemptible release migrated between its slot cmpxchgs")
    skipped_empty = Ghost(0, type=Bool, doc="a release's this_cpu_try_cmpxchg failed on an empty slot")

    # -- alloc_thread_stack_node() -----------------------------------------------------------
    @action(role="tasks", access=SLOTS)
    def this_cpu_xchg(s, t):
        """alloc_thread_stack_node(): for (i = 0; i < NR_CACHED_STACKS; i++) { s = this_cpu_xchg(
        cached_stacks[i], NULL); if (!s) continue; ...  -- one slot of this CPU; after the last empty slot,
        on to __vmalloc_node_range."""
        c = s.on[t]
        i = s.ti[t]
        cur = Select([Select(getattr(s, f"slot{j}"), c) for j in range(s.nr_cached)], i)
        last = i + 1 >= s.nr_cached
        upd = {f"slot{j}": {x: If(And(i == j, c == x), 0, getattr(s, f"slot{j}")[x]) for x in s.cpus}
               for j in range(s.nr_cached)}
        return when(And(_in(s.pc[t], (TASK.idle, TASK.alloc)), _task_ok(s, t)),
                    held={t: cur}, got={t: cur}, cached_got={t: cur != 0}, ti={t: If(cur != 0, i, i + 1)},
                    pc={t: If(cur != 0, TASK.reuse, If(last, TASK.vmalloc, TASK.alloc))},
                    reused=If(cur != 0, 1, s.reused), **upd)

    @action(role="tasks")
    def clear_reused_stack(s, t):
        """alloc_thread_stack_node(): kasan_unpoison_range(s->addr, THREAD_SIZE); stack =
        kasan_reset_tag(s->addr); /* Clear stale pointers from reused stack. */ memset(stack, 0, THREAD_SIZE);"""
        k = s.held[t]
        return when(And(s.pc[t] == TASK.reuse, _task_ok(s, t)), pc={t: TASK.charge},
                    dirty=_set_k(s, "dirty", k, 0), **HEAP.access(s, _stack_ptr(k)))

    @action(role="tasks", choose={"ok": (True, False)}, sleeps=True)
    def vmalloc_stack(s, t, ok):
        """alloc_thread_stack_node(): stack = __vmalloc_node_range(THREAD_SIZE, THREAD_ALIGN, ...,
        THREADINFO_GFP & ~__GFP_ACCOUNT, ...); if (!stack) return -ENOMEM;  vm = find_vm_area(stack);"""
        k = s.next_vm
        ok = And(ok, k <= s.stacks)  # the model has `stacks` of them; past that vmalloc fails
        updates = {}
        for j in range(1, s.stacks + 1):
            updates[_VARS[j]] = If(And(ok, k == j), MEM.live, _mem(s, j))
        return when(And(s.pc[t] == TASK.vmalloc, _task_ok(s, t), Or(ok, s.failures == 1)),
                    pc={t: If(ok, TASK.charge, TASK.failed)}, held={t: If(ok, k, 0)}, got={t: If(ok, k, 0)},
                    next_vm=If(ok, k + 1, k), **updates)

    @action(role="tasks", choose={"ok": (True, False)}, sleeps=True)
    def memcg_charge_kernel_stack(s, t, ok):
        """alloc_thread_stack_node(): if (memcg_charge_kernel_stack(vm)) { vfree(vm->addr); return -ENOMEM; }
        tsk->stack_vm_area = vm; tsk->stack = stack; return 0;  (the same for a reused s)"""
        k = s.held[t]
        fail = Not(ok)
        return when(And(s.pc[t] == TASK.charge, _task_ok(s, t), Or(ok, s.failures == 1)),
                    pc={t: If(ok, TASK.live, TASK.failed)}, held={t: 0},
                    tvm={t: If(ok, k, s.tvm[t])}, taddr={t: If(ok, k, s.taddr[t])},
                    charged=_set_k(s, "charged", k, If(ok, 1, 0)),
                    **_free_if(s, fail, k))

    @action(role="tasks", choose={"dest": lambda p: p.cpus})
    def migrate(s, t, dest):
        """The scheduler moves the task (preemptible: before the fork, between this_cpu_xchg steps, while
        the child runs) or a preemptible releaser (between its this_cpu_cmpxchg steps)."""
        releasing = And(_in(s.pc[t], (TASK.free, TASK.write, TASK.delayed)), s.rel[t] == 1)
        return when(And(Or(_in(s.pc[t], (TASK.idle, TASK.alloc, TASK.live)), releasing), s.moves > 0,
                        s.on[t] != dest, Select(s.online, dest) == 1, _task_ok(s, t)),
                    on={t: dest}, moves=s.moves - 1, rel_moved=If(releasing, 1, s.rel_moved))

    @action(role="tasks", applies=lambda p: p.failures == 1)
    def fork_fails_after_stack(s, t):
        """A later step of the fork fails: dup_task_struct's free_stack: (exit_task_stack_account(tsk);
        free_thread_stack(tsk)) or copy_process's bad_fork_free: (WRITE_ONCE(p->__state, TASK_DEAD);
        exit_task_stack_account(p); put_task_stack(p)): memcg_kmem_uncharge_page() for each page, then the
        release, in the parent's context (preemptible)."""
        k = s.tvm[t]
        return when(And(s.pc[t] == TASK.live, _task_ok(s, t)), pc={t: TASK.free}, ti={t: 0}, rel={t: 1},
                    forkfail={t: 1}, charged=_set_k(s, "charged", k, 0))

    # -- the child runs and exits --------------------------------------------------------------
    @action(role="tasks")
    def exit_task_stack_account(s, t):
        """The child runs on its stack (its data is there now), then do_exit(): exit_task_stack_account(tsk):
        memcg_kmem_uncharge_page() for each page of the stack; ... TASK_DEAD."""
        k = s.tvm[t]
        return when(And(s.pc[t] == TASK.live, _task_ok(s, t)), pc={t: TASK.dead},
                    dirty=_set_k(s, "dirty", k, 1), charged=_set_k(s, "charged", k, 0),
                    **HEAP.access(s, _stack_ptr(k)))

    # -- free_thread_stack() from finish_task_switch (task context, preemption off) ---------------------
    @action(role="tasks", access=SLOTS)
    def this_cpu_cmpxchg(s, t):
        """finish_task_switch() (or a preemptible releaser) -> put_task_stack() -> release_task_stack() ->
        free_thread_stack(): try_release_thread_stack_to_cache(tsk->stack_vm_area): for (i = 0; i <
        NR_CACHED_STACKS; i++) { struct vm_struct *tmp = NULL; if (this_cpu_try_cmpxchg(cached_stacks[i], &tmp,
        vm_area)) return true; }  -- one slot (finish_task_switch: preempt off)."""
        c = s.on[t]
        start = s.pc[t] == TASK.dead
        i = If(start, 0, s.ti[t])
        cur = Select([Select(getattr(s, f"slot{j}"), c) for j in range(s.nr_cached)], i)
        hit = cur == 0
        last = i + 1 >= s.nr_cached
        upd = {f"slot{j}": {x: If(And(hit, i == j, c == x), s.tvm[t], getattr(s, f"slot{j}")[x]) for x in s.cpus}
               for j in range(s.nr_cached)}
        return when(And(_in(s.pc[t], (TASK.dead, TASK.free)), _task_ok(s, t)),
                    busy=_busy(s, t, c), ti={t: If(hit, i, i + 1)},
                    pc={t: If(hit, TASK.clear, If(last, TASK.delayed, TASK.free))}, **upd)

    @action(role="tasks")
    def thread_stack_delayed_free(s, t):
        """free_thread_stack(): thread_stack_delayed_free(tsk): vm_stack = tsk->stack;
        vm_stack->stack_vm_area = tsk->stack_vm_area; call_rcu(&vm_stack->rcu, thread_stack_free_rcu);"""
        a = s.taddr[t]
        return when(s.pc[t] == TASK.delayed, pc={t: TASK.clear}, pending=_set_k(s, "pending", a, 1),
                    dirty=_set_k(s, "dirty", a, 1), **HEAP.access(s, _stack_ptr(a)))

    @action(role="tasks")
    def free_thread_stack_clear(s, t):
        """free_thread_stack(): tsk->stack = NULL; tsk->stack_vm_area = NULL;  (and preempt_enable in
        finish_task_switch; a failed fork returns -ENOMEM)"""
        return when(s.pc[t] == TASK.clear, pc={t: If(s.forkfail[t] == 1, TASK.failed, TASK.released)}, tvm={t: 0},
                    taddr={t: 0}, busy=_unbusy(s, t), rel={t: 0})

    # -- the last put_task_stack() from a try_get_task_stack() holder ----------------------------------
    @action(role="tasks", choose={"cpu": lambda p: p.cpus})
    def put_task_stack_holder(s, t, cpu):
        """A preemptible holder on ``cpu`` drops the last reference: proc_pid_stack() ->
        stack_trace_save_tsk() -> put_task_stack(tsk): refcount_dec_and_test(&tsk->stack_refcount) ->
        release_task_stack() -> free_thread_stack(); its this_cpu_cmpxchg steps follow, preemptible."""
        return when(And(s.pc[t] == TASK.dead, Select(s.online, cpu) == 1, Select(s.busy, cpu) == 0),
                    pc={t: TASK.free}, ti={t: 0}, rel={t: 1}, on={t: cpu})

    # These two run on ``cpu``, not on the dead task's CPU: they are steps of the CPU role (the task they release
    # is a choice), so that under tso and lkmm their slot accesses are that CPU's, in its program order.
    @action(role="cpus", choose={"t": lambda p: p.tasks}, access=SLOTS)
    def put_task_stack_irqs_off(s, cpu, t):
        """get_wchan(p) on ``cpu``: raw_spin_lock_irqsave(&p->pi_lock); if (try_get_task_stack(p)) { ...;
        put_task_stack(p); }: the last reference, so the whole free_thread_stack with interrupts off: the
        cmpxchg loop on that CPU's slots, else thread_stack_delayed_free(); tsk->stack = NULL. One step: nothing
        else touches that CPU's slots meanwhile (a task: not inside another task's preempt-off section there)."""
        return _release_in_one_step(s, t, cpu, Select(s.busy, cpu) == 0)

    @action(role="cpus", choose={"t": lambda p: p.tasks}, access=SLOTS)
    def put_task_stack_hardirq(s, cpu, t):
        """sched_show_task(p) in hard-irq context on ``cpu`` (sysrq-t, show_state_filter): try_get_task_stack();
        ...; put_task_stack(): the last reference, the whole free_thread_stack in the interrupt. One step; it
        may land inside a task-context free_thread_stack there."""
        return _release_in_one_step(s, t, cpu, True)

    # -- softirq and hotplug on the CPUs ---------------------------------------------------------------
    @action(role="cpus", choose={"k": lambda p: range(1, p.stacks + 1)}, irq=True, access=SLOTS)
    def thread_stack_free_rcu(s, cpu, k):
        """thread_stack_free_rcu(rh) (softirq on this CPU): vm_stack = container_of(rh, ...);
        if (try_release_thread_stack_to_cache(vm_stack->stack_vm_area)) return; vfree(vm_stack);"""
        slots, cached = _try_cache(s, cpu, k)
        mem = HEAP.access(s, ptr(k - 1))
        freed = _free_if(s, Not(cached), k, after=mem)
        # the grace period: not before the free_thread_stack that queued it has left its preempt-off section
        # (a preemptible releaser is not in an RCU read-side section: it does not hold the grace period)
        queuer_done = And(*[Not(And(_in(s.pc[t], FREEING), s.taddr[t] == k, s.rel[t] == 0)) for t in s.tasks])
        return when(And(s.pending[k - 1] == 1, s.online[cpu] == 1, queuer_done), pending={k - 1: 0},
                    rcu_cached=If(cached, 1, s.rcu_cached), rcu_freed=If(cached, s.rcu_freed, 1), nested=If(s.busy[cpu] == 1, 1, s.nested),
                    **{**mem, **freed}, **slots)

    @action(role="cpus", choose={"dest": lambda p: p.cpus}, access=smp_mb())
    def cpu_down(s, cpu, dest):
        """takedown_cpu(): the CPU leaves cpu_online_mask; its tasks are migrated to ``dest``
        (not while a task is in a preempt-off section on it: stop_machine needs preemption); the dying CPU's
        last word is cpuhp_ap_report_dead() -> cpuhp_ap_update_sync_state(SYNC_STATE_DEAD): (void)atomic_xchg(st,
        state), fully ordered: smp_mb() (moving its tasks is the scheduler's full barrier besides)."""
        return when(And(s.online[cpu] == 1, s.downs > 0, dest != cpu, s.online[dest] == 1, s.busy[cpu] == 0),
                    online={cpu: 0}, downs=s.downs - 1, on={t: If(s.on[t] == cpu, dest, s.on[t]) for t in s.tasks})

    @action(role="cpus", choose={"cpu": lambda p: p.cpus}, access=TEARDOWN)
    def free_vm_stack_cache(s, ctl, cpu):
        """free_vm_stack_cache(cpu) on the control CPU ``ctl`` after ``cpu`` is dead (CPUHP_BP_PREPARE_DYN, a
        teardown state below CPUHP_TEARDOWN_CPU: run by the hotplug control task): cached_vm_stacks =
        per_cpu_ptr(cached_stacks, cpu); for (i = 0; i < NR_CACHED_STACKS; i++) { vm_stack =
        cached_vm_stacks[i]; if (!vm_stack) continue; vfree(vm_stack->addr); cached_vm_stacks[i] = NULL; }"""
        frees, upd, any_freed = empty_slots(s, cpu)
        return when(And(s.online[cpu] == 0, s.torn[cpu] == 0, s.online[ctl] == 1), torn={cpu: 1},
                    torn_freed=If(any_freed, 1, s.torn_freed), **frees, **upd)

    @action(role="cpus", access=smp_mb())
    def cpu_up(s, cpu):
        """The CPU comes back online (its slots as the teardown left them): _cpu_up() -> bringup_cpu(); the AP's
        cpuhp_ap_sync_alive() -> cpuhp_ap_update_sync_state(SYNC_STATE_ALIVE): atomic_xchg, fully ordered,
        before it runs tasks: smp_mb()."""
        return when(And(s.online[cpu] == 0, s.torn[cpu] == 1), online={cpu: 1}, torn={cpu: 0})

    @terminal
    def finished(s):
        return And(*[_in(s.pc[t], (TASK.released, TASK.failed)) for t in s.tasks],
                   *[s.pending[j] == 0 for j in range(s.stacks)],
                   *[Or(s.online[c] == 1, s.torn[c] == 1) for c in s.cpus])

    # -- properties ------------------------------------------------------------------------------------
    @invariant
    def never_two_live_owners(s):
        """ST-OWN: no stack is the stack of two tasks that are alive (running, or dead and not released)."""
        return And(*[_owners(s, k) <= 1 for k in range(1, s.stacks + 1)])

    @invariant
    def stack_in_one_place(s):
        """ST-OWN/ST-NOLEAK: a live stack is in at most one place (a slot, a live task, a pending RCU
        callback) and, with the operation in flight on a CPU that may also hold it, in at least one; at an
        operation boundary (no alloc or task-context free in flight) in exactly one. A freed stack is in
        none."""
        rest = _at_rest(s)
        out = []
        for k in range(1, s.stacks + 1):
            places = _places(s, k)
            flight = _in_flight(s, k)
            live = _mem(s, k) == MEM.live
            out.append(Implies(live, And(places <= 1, places + flight >= 1, flight <= 1,
                                         Implies(rest, places == 1))))
            out.append(Implies(_mem(s, k) == MEM.freed, places == 0))
        return And(*out)

    @invariant
    def freed_never_handed_out(s):
        """ST-NOUAF: no slot, task field or pending callback refers to a freed stack."""
        out = []
        for c in s.cpus:
            for _, k in _slots(s, c):
                out.append(Implies(k != 0, _state(s, k) == MEM.live))
        for t in s.tasks:
            out.append(Implies(_in(s.pc[t], OWNING + RELEASING), _state(s, s.tvm[t]) == MEM.live))
            out.append(Implies(_in(s.pc[t], HOLDING), _state(s, s.held[t]) == MEM.live))
        for k in range(1, s.stacks + 1):
            out.append(Implies(s.pending[k - 1] == 1, _mem(s, k) == MEM.live))
        return And(*out)

    @invariant
    def reused_stack_zeroed(s):
        """ST-ZERO: a task starting on its stack finds it zeroed (no previous user's data)."""
        return And(*[Implies(s.pc[t] == TASK.live, Select(s.dirty, s.tvm[t] - 1) == 0) for t in s.tasks])

    @invariant
    def an_empty_slot_takes_the_stack(s):
        """ST-CACHE: a release's this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm) fails only on a full slot
        (tmp is NULL at each iteration), so a stack is never RCU-freed past an empty slot it tried
        (bugs/stack_cmpxchg_stale_old.py carries tmp over)."""
        return s.skipped_empty == 0

    @invariant
    def dead_cpus_cached_stacks_are_freed(s):
        """ST-NOLEAK at CPU death, the promise: once cpu_down() has taken a CPU through its teardown states (it
        is dead), no stack cached in its slots is still allocated: the memory a dead CPU cached is given back
        (said of the stacks, not of how the teardown does it)."""
        return And(*[Implies(s.torn[c] == 1, And(*[Or(k == 0, _state(s, k) != MEM.live) for _, k in _slots(s, c)]))
                     for c in s.cpus])

    @invariant
    def dead_cpu_cache_empty(s):
        """ST-NOLEAK at CPU death, the mechanism: once free_vm_stack_cache has run for a dead CPU, its slots
        are empty (NULL: a CPU that comes back finds no freed stack there)."""
        return And(*[Implies(s.torn[c] == 1, And(*[k == 0 for _, k in _slots(s, c)])) for c in s.cpus])

    @invariant
    def memcg_charge_balanced(s):
        """ST-FAIL (memcg): at an operation boundary a stack is charged exactly while it is owned by a live
        task (charged when the task gets it, uncharged at exit); in between only a stack an operation
        holds may be charged without such an owner."""
        rest = _at_rest(s)
        out = []
        for k in range(1, s.stacks + 1):
            owned = Or(*[And(s.pc[t] == TASK.live, s.tvm[t] == k) for t in s.tasks])
            charged = s.charged[k - 1] == 1
            out.append(Implies(rest, charged == owned))
            out.append(Implies(charged, Or(owned, _in_flight(s, k) >= 1)))
        return And(*out)

    @invariant
    def failed_charge_frees_its_stack(s):
        """ST-FAIL: after a fork failed with a stack in hand, the task's fields point at nothing and that
        stack was released: freed, or in a place (a slot, a pending callback, or taken on from there by
        another fork), never left live and unreachable."""
        out = []
        for t in s.tasks:
            k = s.got[t]
            released = And(*[Implies(k == j, Or(_mem(s, j) == MEM.freed, _places(s, j) + _in_flight(s, j) >= 1))
                             for j in range(1, s.stacks + 1)])
            out.append(Implies(And(s.pc[t] == TASK.failed, k != 0),
                               And(released, s.tvm[t] != k, Or(s.taddr[t] == 0, s.taddr[t] == STALE))))
        return And(*out)

    @sometimes
    def a_stack_is_reused(s):
        """A fork takes its stack from the cache."""
        return s.reused == 1

    @sometimes
    def a_reused_stack_goes_to_a_new_task(s):
        """A task runs on a stack that an earlier task used (the zeroing matters)."""
        return Or(*[And(s.pc[t] == TASK.live, _born_reused(s, t)) for t in s.tasks])

    @sometimes(applies=lambda p: p.ntasks > p.nr_cached)
    def an_rcu_callback_caches_its_stack(s):
        """thread_stack_free_rcu finds an empty slot on the CPU where it runs."""
        return s.rcu_cached == 1

    @sometimes(applies=lambda p: p.ntasks > p.nr_cached)
    def an_rcu_callback_frees_its_stack(s):
        """The slots are full at release time and again in the callback: the stack is vfree'd."""
        return s.rcu_freed == 1

    @sometimes(applies=lambda p: p.failures == 1)
    def a_charge_fails_with_a_stack_in_hand(s):
        """memcg_charge_kernel_stack fails and the fork returns -ENOMEM."""
        return Or(*[And(s.pc[t] == TASK.failed, s.got[t] != 0) for t in s.tasks])

    @sometimes(applies=lambda p: p.ncpus >= 2 and p.ntasks >= 2)
    def an_interrupt_frees_inside_a_task_free(s):
        """ST-CTX: a hard irq (sched_show_task) or softirq (thread_stack_free_rcu) uses a CPU's slots while a
        task-context free_thread_stack is between its this_cpu_cmpxchg steps there."""
        return s.nested == 1

    @sometimes(applies=lambda p: p.migrations > 0 and p.ncpus >= 2 and p.nr_cached >= 2)
    def a_preemptible_release_migrates(s):
        """A preemptible releaser (holder or failed fork) moves to another CPU between its slot cmpxchgs."""
        return s.rel_moved == 1

    @sometimes(applies=lambda p: p.failures == 1)
    def a_failed_fork_uncharges_and_releases_its_stack(s):
        """A fork fails after its stack was charged (free_stack: / bad_fork_free:): uncharged and released."""
        return Or(*[And(s.pc[t] == TASK.failed, s.forkfail[t] == 1) for t in s.tasks])

    @sometimes(applies=lambda p: p.hotplug == 1 and p.ncpus >= 2)
    def a_dead_cpus_cache_is_freed(s):
        """free_vm_stack_cache frees a cached stack of a dead CPU."""
        return s.torn_freed == 1


#: The heap's variable for stack k (the heap is named once the class has been created).
_VARS = (None,) + tuple(HEAP.var_name(f"stack{k}") for k in range(1, MAX_STACKS + 1))


# -- helpers of the properties ------------------------------------------------------------------------

def _state(s, k):
    """The allocation state of stack ``k`` (a state value; 0 and STALE are no stack: unalloc)."""
    return Select(tuple([MEM.unalloc] + [_mem(s, j) for j in range(1, s.stacks + 1)]), k)


def _cached(s, k):
    return Or(*[v == k for c in s.cpus for _, v in _slots(s, c)])


def _owners(s, k: int):
    return sum(If(And(_in(s.pc[t], OWNING), s.tvm[t] == k), 1, 0) for t in s.tasks)


def _places(s, k: int):
    """The places stack ``k`` is in: slots, live or dead-unreleased tasks, pending callbacks."""
    slots = sum(If(v == k, 1, 0) for c in s.cpus for _, v in _slots(s, c))
    return slots + _owners(s, k) + s.pending[k - 1]


def _in_flight(s, k: int):
    """References to stack ``k`` from operations in flight: alloc's local, a task-context free's fields."""
    return sum(If(Or(And(_in(s.pc[t], HOLDING), s.held[t] == k), And(_in(s.pc[t], RELEASING), s.tvm[t] == k)), 1, 0)
               for t in s.tasks)


def _at_rest(s):
    return And(*[_in(s.pc[t], AT_REST) for t in s.tasks])


def _born_reused(s, t):
    return s.cached_got[t] == 1


def _unbusy(s, t):
    """preempt_enable() at the end of finish_task_switch's release (a preemptible one set nothing)."""
    return {c: If(And(s.on[t] == c, s.rel[t] == 0), 0, s.busy[c]) for c in s.cpus}


def _busy(s, t, c):
    """finish_task_switch's release runs with preemption off on its CPU ``c`` (a preemptible one does not)."""
    return {x: If(And(c == x, s.rel[t] == 0), 1, s.busy[x]) for x in s.cpus}


def _release_in_one_step(s, t, cpu, guard):
    """free_thread_stack() run to the end on ``cpu`` with interrupts off: the cmpxchg loop on that CPU's slots,
    else thread_stack_delayed_free(); then tsk->stack = NULL; tsk->stack_vm_area = NULL."""
    k = s.tvm[t]
    slots, cached = _try_cache(s, cpu, k)
    a = s.taddr[t]
    return when(And(s.pc[t] == TASK.dead, Select(s.online, cpu) == 1, guard),
                pc={t: TASK.released}, tvm={t: 0}, taddr={t: 0},
                pending=_set_k(s, "pending", a, If(cached, Select(s.pending, a - 1), 1)),
                dirty=_set_k(s, "dirty", a, If(cached, Select(s.dirty, a - 1), 1)),
                nested=If(Select(s.busy, cpu) == 1, 1, s.nested),
                **_access_if(s, Not(cached), a), **slots)


def empty_slots(s, cpu):
    """for each i: vm = cached_vm_stacks[i] of ``cpu``; if (vm) vfree(vm->addr); the slot = NULL. Returns (the
    frees, the slot updates, whether any slot held a stack)."""
    frees, upd = {}, {}
    for i in range(s.nr_cached):
        k = getattr(s, f"slot{i}")[cpu]
        frees = _free_if(s, k != 0, k, after=frees)
        upd[f"slot{i}"] = {cpu: 0}
    return frees, upd, Or(*[getattr(s, f"slot{i}")[cpu] != 0 for i in range(s.nr_cached)])


def _free_if(s, cond, k, after=None):
    """vfree(stack k) when ``cond`` (``after``: updates of earlier frees/accesses in the same step)."""
    base = dict(after or {})
    err = HEAP.error_var
    e = base.get(err, getattr(s, err))
    out = dict(base)
    for j in range(1, s.stacks + 1):
        var = _VARS[j]
        cur = base.get(var, getattr(s, var))
        here = And(cond, k == j)
        e = If(And(here, e == MEM_ERROR.none, cur != MEM.live),
               If(cur == MEM.freed, MEM_ERROR.double_free, MEM_ERROR.invalid_free), e)
        out[var] = If(here, MEM.freed, cur)
    # a pointer that is no stack at all (STALE garbage): the allocator never returned it
    e = If(And(cond, e == MEM_ERROR.none, Or(k < 1, k > s.stacks)), MEM_ERROR.invalid_free, e)
    out[err] = e
    return out


def _access_if(s, cond, k):
    """A read or write of stack ``k``'s memory when ``cond``."""
    err = HEAP.error_var
    e = getattr(s, err)
    return {err: If(And(cond, e == MEM_ERROR.none, _state(s, k) != MEM.live), MEM_ERROR.use_after_free, e)}
