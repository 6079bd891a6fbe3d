# SPDX-License-Identifier: GPL-2.0-only
"""The per-CPU cache of vmapped thread stacks (seed 003; kernel/fork.c, CONFIG_VMAP_STACK), written as the kernel
functions.

The process-function port of ``stack_cache`` (its docstring describes the model, its assumptions hold here; the
equality test is tests/test_process_stack.py). One process function, ``task_stack``, is one child's stack life as
the C runs it: ``alloc_thread_stack_node()`` (with ``memcg_charge_kernel_stack()``), the child's
``exit_task_stack_account()`` or the fork failing after it, then the last ``put_task_stack()``'s
``free_thread_stack()`` in task context (``finish_task_switch()``, preemption off, or a preemptible holder).
``thread_stack_free_rcu()`` is a softirq of the CPUs, one step. NR_CACHED_STACKS is at most 2 here, so the
kernel's ``for (i = 0; i < NR_CACHED_STACKS; i++)`` over ``cached_stacks[i]`` is written out as its two
iterations (``slot0``, ``slot1``; the second only where ``nr_cached == 2``). The labels (``k.label("dead")``)
name the control points the hand-written spec's ``TASK`` enum names.

Which way the release goes, and whether vmalloc, the memcg charge or the rest of the fork fails, are choices of
the step that makes them (``k.choose``): a ``vmalloc`` that fails is a way through that step.

``free_vm_stack_cache()`` is the hotplug CPU-dead callback, one step on a control CPU, called again after each
``cpu_up`` (``calls=True``: back to ``idle`` with no budget). Plain actions, as in the hand-written spec: the
scheduler's ``migrate``; the hotplug steps ``cpu_down`` and ``cpu_up`` (the hotplug state machine, no code of
the model's); and the two one-step releases of the CPUs
(``put_task_stack_irqs_off``, ``put_task_stack_hardirq``), which finish a dead task's release from another
CPU: they move the task's generated program counter from ``dead`` to ``done``.

Against ``stack_cache``: the same verdicts, depth and shortest traces; fewer states, as the port resets a dead
local that the hand-written spec keeps: its ``ti`` (the loop index ``i``) after the loop has ended, which
records which slot a stack came from or went to for the rest of the task's life.

The C (kernel/fork.c, v6.1; the 2024 ``this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm_area)`` with ``tmp =
NULL`` is the same step)::

    static int alloc_thread_stack_node(struct task_struct *tsk, int node)
    {
            struct vm_struct *vm;
            void *stack;
            int i;

            for (i = 0; i < NR_CACHED_STACKS; i++) {
                    struct vm_struct *s;

                    s = this_cpu_xchg(cached_stacks[i], NULL);
                    if (!s)
                            continue;
                    /* Reset stack metadata. */
                    kasan_unpoison_range(s->addr, THREAD_SIZE);
                    stack = kasan_reset_tag(s->addr);
                    /* Clear stale pointers from reused stack. */
                    memset(stack, 0, THREAD_SIZE);
                    if (memcg_charge_kernel_stack(s)) {
                            vfree(s->addr);
                            return -ENOMEM;
                    }
                    tsk->stack_vm_area = s;
                    tsk->stack = stack;
                    return 0;
            }
            stack = __vmalloc_node_range(THREAD_SIZE, THREAD_ALIGN, VMALLOC_START, VMALLOC_END,
                                         THREADINFO_GFP & ~__GFP_ACCOUNT, PAGE_KERNEL,
                                         0, node, __builtin_return_address(0));
            if (!stack)
                    return -ENOMEM;
            vm = find_vm_area(stack);
            if (memcg_charge_kernel_stack(vm)) {
                    vfree(stack);
                    return -ENOMEM;
            }
            tsk->stack_vm_area = vm;
            stack = kasan_reset_tag(stack);
            tsk->stack = stack;
            return 0;
    }

    void exit_task_stack_account(struct task_struct *tsk)
    {
            account_kernel_stack(tsk, -1);
            if (IS_ENABLED(CONFIG_VMAP_STACK)) {
                    struct vm_struct *vm;
                    int i;

                    vm = task_stack_vm_area(tsk);
                    for (i = 0; i < THREAD_SIZE / PAGE_SIZE; i++)
                            memcg_kmem_uncharge_page(vm->pages[i], 0);
            }
    }

    static bool try_release_thread_stack_to_cache(struct vm_struct *vm)
    {
            unsigned int i;

            for (i = 0; i < NR_CACHED_STACKS; i++) {
                    if (this_cpu_cmpxchg(cached_stacks[i], NULL, vm) != NULL)
                            continue;
                    return true;
            }
            return false;
    }

    static void thread_stack_free_rcu(struct rcu_head *rh)
    {
            struct vm_stack *vm_stack = container_of(rh, struct vm_stack, rcu);

            if (try_release_thread_stack_to_cache(vm_stack->stack_vm_area))
                    return;
            vfree(vm_stack);
    }

    static void thread_stack_delayed_free(struct task_struct *tsk)
    {
            struct vm_stack *vm_stack = tsk->stack;

            vm_stack->stack_vm_area = tsk->stack_vm_area;
            call_rcu(&vm_stack->rcu, thread_stack_free_rcu);
    }

    static void free_thread_stack(struct task_struct *tsk)
    {
            if (!try_release_thread_stack_to_cache(tsk->stack_vm_area))
                    thread_stack_delayed_free(tsk);
            tsk->stack = NULL;
            tsk->stack_vm_area = NULL;
    }

    static int free_vm_stack_cache(unsigned int cpu)
    {
            struct vm_struct **cached_vm_stacks = per_cpu_ptr(cached_stacks, cpu);
            int i;

            for (i = 0; i < NR_CACHED_STACKS; i++) {
                    struct vm_struct *vm_stack = cached_vm_stacks[i];

                    if (!vm_stack)
                            continue;
                    vfree(vm_stack->addr);
                    cached_vm_stacks[i] = NULL;
            }
            return 0;
    }
"""
from __future__ import annotations

from checker import (And, Array, Bool, CpuId, Ghost, If, Implies, Not, Or, Param, PerCpu, Role, Select, Shared, Spec,
                     action, invariant, smp_mb, sometimes, terminal, when)
from checker.kernel.memory import MEM, ptr
from checker.language.process import at, process
from checker.specs.stack_cache import (HEAP, MAX_STACKS, SLOTS, STALE, StackCache, _VARS, _access_if,
                                       _free_if, _mem, _set_k, _slots, _stack_ptr, _try_cache)

FN = "task_stack"
IDLE, DONE = 0, 1  # the generated pc's values: idle 0, done 1, then the control points
#: The control points of task_stack, by the hand-written spec's TASK names ("free": before either cmpxchg).
OWNING = ("live", "dead")
FREEING = ("free", "delayed", "clear")
RELEASING = ("free", "delayed")
HOLDING = ("reuse", "charge")


def _at(s, t, *labels):
    return Or(*[at(s, t, FN, x) for x in labels])


def _failed(s, t):
    """The fork returned -ENOMEM (hand-written: TASK.failed)."""
    return And(s.tasks_pc[t] == DONE, Or(s.enomem[t] == 1, s.forkfail[t] == 1))


def _released(s, t):
    return And(s.tasks_pc[t] == DONE, s.enomem[t] == 0, s.forkfail[t] == 0)


def _task_ok(s, t):
    """Task ``t`` can take a task-context step: its CPU is not inside another task's preempt-off section
    (finish_task_switch's free_thread_stack; the task in one is the one there)."""
    return Or(Select(s.busy, s.on[t]) == 0, And(_at(s, t, *FREEING), s.rel[t] == 0))


def _runs(s, t):
    """Every step of task_stack waits for _task_ok, but those of the dead task's releasers (a holder, at dead, is
    another task on another CPU; the cmpxchg from dead asks itself) and the delayed free and the clearing, which
    run where the cmpxchg steps ran."""
    return Or(_at(s, t, "dead", "delayed", "clear"), _task_ok(s, t))


def _vmalloc(s, k):
    """__vmalloc_node_range() returns stack ``k``, never used before."""
    return {_VARS[j]: If(k == j, MEM.live, _mem(s, j)) for j in range(1, s.stacks + 1)}


def _vfree_cached(s, vm, after):
    """free_vm_stack_cache's ``if (!vm_stack) continue; vfree(vm_stack->addr);`` (``after``: the updates of the
    slot before it), and the ghost that a cached stack was freed."""
    return dict(_free_if(s, vm != 0, vm, after=after), torn_freed=If(vm != 0, 1, after.get("torn_freed", s.torn_freed)))


def _queuer_done(s, k):
    """The grace period: the free_thread_stack that queued stack ``k`` has left its preempt-off section."""
    return And(*[Not(And(_at(s, t, *FREEING), s.taddr[t] == k, s.rel[t] == 0)) for t in s.tasks])


class StackCacheProcess(Spec, on_demand=True):
    """alloc_thread_stack_node / free_thread_stack / thread_stack_free_rcu with NR_CACHED_STACKS slots per CPU,
    as code."""

    kernel = StackCache.kernel
    assumptions = StackCache.assumptions

    ncpus = Param(2, domain=range(1, 4), doc="CPUs")
    ntasks = Param(2, domain=range(1, 4), doc="children forked (each: alloc, run, exit, release)")
    nr_cached = Param(2, domain=(1, 2), explore=(1, 2), doc="NR_CACHED_STACKS (2 in the kernel)")
    stacks = Param(lambda p: p.ntasks, domain=range(1, MAX_STACKS + 1), doc="distinct stacks vmalloc can return")
    failures = Param(1, domain=(0, 1), doc="1: vmalloc, the memcg charge and the rest of the fork may fail")
    migrations = Param(1, domain=range(0, 4), doc="task migrations allowed (a budget)")
    hotplug = Param(0, domain=(0, 1), explore=(0, 1), doc="1: one CPU may go down (and come back up)")

    cpus = Role("ncpus", symmetric=True, doc="CPUs: their slots, softirqs (RCU callbacks), hotplug")
    tasks = Role("ntasks", symmetric=True, cpu=lambda s, t: s.on[t],
                 doc="one child each: forked, runs, exits, its stack released; its steps run on CPU on[t]")

    heap = HEAP

    slot0 = PerCpu(0, role="cpus", doc="cached_stacks[0]: a stack number, 0 for NULL")
    slot1 = PerCpu(0, role="cpus", doc="cached_stacks[1] (with NR_CACHED_STACKS = 2)")
    online = PerCpu(1, type=Bool, role="cpus", doc="in cpu_online_mask")
    torn = PerCpu(0, type=Bool, role="cpus", doc="dead: cpu_down() has run its teardown states for it")
    busy = PerCpu(0, type=Bool, role="cpus", doc="a task is in finish_task_switch's preempt-off free_thread_stack here")

    on = PerCpu(0, type=CpuId, role="tasks", doc="the CPU the task's current step runs on")
    tvm = PerCpu(0, role="tasks", doc="tsk->stack_vm_area: a stack number or 0")
    taddr = PerCpu(0, role="tasks", doc="tsk->stack: a stack number, 0, or STALE (garbage)")
    got = PerCpu(0, role="tasks", doc="ghost: the stack this fork obtained (for the failure property)")
    cached_got = PerCpu(0, type=Bool, role="tasks", doc="ghost: this fork took its stack from the cache")
    rel = PerCpu(0, type=Bool, role="tasks", doc="the release in flight is preemptible (a try_get_task_stack "
                 "holder, or a failed fork's parent) rather than finish_task_switch's preempt-off one")
    forkfail = PerCpu(0, type=Bool, role="tasks", doc="the fork failed after alloc_thread_stack_node")
    enomem = PerCpu(0, type=Bool, role="tasks", doc="alloc_thread_stack_node returned -ENOMEM")

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

    @process(role="tasks", runs=_runs)
    def task_stack(k, s, t):
        """One child's stack: alloc_thread_stack_node(), the child's life, the last put_task_stack()."""
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
                s.dirty[vm - 1] = 0
                k.update(HEAP.access(s, _stack_ptr(vm)))
        else:
            with k.atomic():                                # stack = __vmalloc_node_range(...);
                k.might_sleep()                             # (GFP_KERNEL)
                ok = k.choose((True, False))
                vm = s.next_vm
                ok = ok and vm <= s.stacks                  # (the model has `stacks` of them)
                k.assume(ok or s.failures == 1)
                if ok:
                    k.update(_vmalloc(s, vm))
                    s.next_vm = vm + 1
                    s.got[t] = vm
                else:
                    s.enomem[t] = 1                         # if (!stack) return -ENOMEM;
            if not ok:
                return
        k.label("charge")
        with k.atomic():                                    # if (memcg_charge_kernel_stack(vm)) {
            k.might_sleep()                                 # (memcg_kmem_charge_page(..., GFP_KERNEL, 0))
            ok = k.choose((True, False))
            k.assume(ok or s.failures == 1)
            s.charged[vm - 1] = 1 if ok else 0
            if not ok:
                k.update(_free_if(s, True, vm))             #         vfree(vm->addr);
                s.enomem[t] = 1                             #         return -ENOMEM; }
        if not ok:
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
                s.dirty[s.tvm[t] - 1] = 1                   # (the child's data is on its stack)
                k.update(HEAP.access(s, _stack_ptr(s.tvm[t])))
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
        k.label("free")                                     # free_thread_stack(): try_release_thread_stack_to_cache()
        old = k.this_cpu_cmpxchg(s.slot0, 0, s.tvm[t])      # if (this_cpu_cmpxchg(cached_stacks[i], NULL, vm) != NULL)
        s.busy[s.on[t]] = 1 if s.rel[t] == 0 else s.busy[s.on[t]]
        if old != 0 and s.nr_cached == 2:                   #         continue;
            k.label("free")
            old = k.this_cpu_cmpxchg(s.slot1, 0, s.tvm[t])
        if old != 0:                                        # thread_stack_delayed_free(tsk):
            k.label("delayed")
            with k.atomic():                                # vm_stack = tsk->stack; vm_stack->stack_vm_area = ...;
                a = s.taddr[t]
                s.pending[a - 1] = 1                        # call_rcu(&vm_stack->rcu, thread_stack_free_rcu);
                s.dirty[a - 1] = 1
                k.update(HEAP.access(s, _stack_ptr(a)))
        k.label("clear")
        with k.atomic():                                    # tsk->stack = NULL; tsk->stack_vm_area = NULL;
            s.tvm[t] = 0
            s.taddr[t] = 0
            s.busy[s.on[t]] = 0 if s.rel[t] == 0 else s.busy[s.on[t]]  # finish_task_switch's preempt_enable()
            s.rel[t] = 0

    @process(role="cpus", irq=True)
    def thread_stack_free_rcu(k, s, cpu):
        """The RCU callback, a softirq on this CPU (the one that queued it, or the one its callbacks moved to)."""
        with k.atomic():
            vm = k.choose(range(1, s.stacks + 1))           # vm_stack = container_of(rh, struct vm_stack, rcu);
            k.assume(s.pending[vm - 1] == 1 and s.online[cpu] == 1 and _queuer_done(s, vm))
            s.pending[vm - 1] = 0
            s.nested = 1 if s.busy[cpu] == 1 else s.nested
            old = k.this_cpu_cmpxchg(s.slot0, 0, vm)        # try_release_thread_stack_to_cache(vm_stack->...)
            if old != 0 and s.nr_cached == 2:
                old = k.this_cpu_cmpxchg(s.slot1, 0, vm)
            k.update(_free_if(s, old != 0, vm, after=HEAP.access(s, ptr(vm - 1))))  # else vfree(vm_stack);
            s.rcu_cached = 1 if old == 0 else s.rcu_cached
            s.rcu_freed = 1 if old != 0 else s.rcu_freed

    # -- the scheduler, hotplug and the one-step releases: plain actions (stack_cache's) ----------------------
    @action(role="tasks", choose={"dest": lambda p: p.cpus})
    def migrate(s, t, dest):
        """The scheduler moves the task (preemptible: before the fork, between this_cpu_xchg steps, while the
        child runs) or a preemptible releaser (between its this_cpu_cmpxchg steps)."""
        releasing = And(_at(s, t, *RELEASING), s.rel[t] == 1)
        return when(And(Or(s.tasks_pc[t] == IDLE, _at(s, t, "alloc", "live"), releasing), s.moves > 0,
                        s.on[t] != dest, Select(s.online, dest) == 1, _task_ok(s, t)),
                    on={t: dest}, moves=s.moves - 1, rel_moved=If(releasing, 1, s.rel_moved))

    @action(role="cpus", choose={"t": lambda p: p.tasks}, access=SLOTS)
    def put_task_stack_irqs_off(s, cpu, t):
        """get_wchan(p) on ``cpu``: raw_spin_lock_irqsave(&p->pi_lock); if (try_get_task_stack(p)) { ...;
        put_task_stack(p); }: the whole free_thread_stack with interrupts off, one step."""
        return _release_in_one_step(s, t, cpu, Select(s.busy, cpu) == 0)

    @action(role="cpus", choose={"t": lambda p: p.tasks}, access=SLOTS)
    def put_task_stack_hardirq(s, cpu, t):
        """sched_show_task(p) in hard-irq context on ``cpu``: put_task_stack(), the whole free_thread_stack in the
        interrupt, one step; it may land inside a task-context free_thread_stack there."""
        return _release_in_one_step(s, t, cpu, True)

    @action(role="cpus", choose={"dest": lambda p: p.cpus}, access=smp_mb())
    def cpu_down(s, cpu, dest):
        """takedown_cpu(): the CPU leaves cpu_online_mask; its tasks are migrated to ``dest``."""
        return when(And(s.online[cpu] == 1, s.downs > 0, dest != cpu, s.online[dest] == 1, s.busy[cpu] == 0),
                    online={cpu: 0}, downs=s.downs - 1, on={t: If(s.on[t] == cpu, dest, s.on[t]) for t in s.tasks})

    @process(role="cpus", calls=True, args={"cpu": lambda p: p.cpus})
    def free_vm_stack_cache(k, s, ctl, cpu):
        """The CPU-dead callback on the control CPU ``ctl`` once ``cpu`` is dead (its C in the module docstring): one
        step between the hotplug state machine's full barriers, NR_CACHED_STACKS's loop written out; a NULL slot
        is set NULL again (the same value; stack_cache's TEARDOWN annotation stores both slots too)."""
        with k.atomic():
            k.assume(s.online[cpu] == 0 and s.torn[cpu] == 0 and s.online[ctl] == 1)
            k.smp_mb()                                      # (takedown_cpu(): the dead CPU's stores are seen)
            vm = k.per_cpu(s.slot0, cpu)                    # vm_stack = cached_vm_stacks[i]; if (!vm_stack) ...
            freed = _vfree_cached(s, vm, {})                # vfree(vm_stack->addr);
            s.slot0[cpu] = 0                                # cached_vm_stacks[i] = NULL;
            if s.nr_cached == 2:
                vm = k.per_cpu(s.slot1, cpu)
                freed = _vfree_cached(s, vm, freed)
                s.slot1[cpu] = 0
            k.update(freed)
            s.torn[cpu] = 1
            k.smp_mb()                                      # (the rest of _cpu_down(), the next _cpu_up())

    @action(role="cpus", access=smp_mb())
    def cpu_up(s, cpu):
        """The CPU comes back online (its slots as the teardown left them)."""
        return when(And(s.online[cpu] == 0, s.torn[cpu] == 1), online={cpu: 1}, torn={cpu: 0})

    @terminal
    def finished(s):
        return And(*[s.tasks_pc[t] == DONE for t in s.tasks], *[s.pending[j] == 0 for j in range(s.stacks)],
                   *[Or(s.online[c] == 1, s.torn[c] == 1) for c in s.cpus])

    # -- properties: stack_cache's, with control points for its pc --------------------------------------------
    @invariant
    def never_two_live_owners(s):
        """ST-OWN: no stack is the stack of two tasks that are alive (running, or dead and not released)."""
        return And(*[_owners(s, k) <= 1 for k in range(1, s.stacks + 1)])

    @invariant
    def stack_in_one_place(s):
        """ST-OWN/ST-NOLEAK: a live stack is in at most one place and, with the operation in flight, in at least
        one; at an operation boundary in exactly one. A freed stack is in none."""
        rest = _at_rest(s)
        out = []
        for k in range(1, s.stacks + 1):
            places, flight = _places(s, k), _in_flight(s, k)
            out.append(Implies(_mem(s, k) == MEM.live, And(places <= 1, places + flight >= 1, flight <= 1,
                                                           Implies(rest, places == 1))))
            out.append(Implies(_mem(s, k) == MEM.freed, places == 0))
        return And(*out)

    @invariant
    def freed_never_handed_out(s):
        """ST-NOUAF: no slot, task field or pending callback refers to a freed stack."""
        out = [Implies(k != 0, _state(s, k) == MEM.live) for c in s.cpus for _, k in _slots(s, c)]
        for t in s.tasks:
            out.append(Implies(_at(s, t, *OWNING, *RELEASING), _state(s, s.tvm[t]) == MEM.live))
            out.append(Implies(_at(s, t, *HOLDING), _state(s, s.tasks_vm[t]) == MEM.live))
        out += [Implies(s.pending[k - 1] == 1, _mem(s, k) == MEM.live) for k in range(1, s.stacks + 1)]
        return And(*out)

    @invariant
    def reused_stack_zeroed(s):
        """ST-ZERO: a task starting on its stack finds it zeroed (no previous user's data)."""
        return And(*[Implies(_at(s, t, "live"), Select(s.dirty, s.tvm[t] - 1) == 0) for t in s.tasks])

    @invariant
    def an_empty_slot_takes_the_stack(s):
        """ST-CACHE: a release's cmpxchg fails only on a full slot."""
        return s.skipped_empty == 0

    @invariant
    def dead_cpus_cached_stacks_are_freed(s):
        """ST-NOLEAK at CPU death, the promise: no stack cached in a dead CPU's slots is still allocated."""
        return And(*[Implies(s.torn[c] == 1, And(*[Or(k == 0, _state(s, k) != MEM.live) for _, k in _slots(s, c)]))
                     for c in s.cpus])

    @invariant
    def dead_cpu_cache_empty(s):
        """ST-NOLEAK at CPU death, the mechanism: once free_vm_stack_cache has run for a dead CPU, its slots are
        empty."""
        return And(*[Implies(s.torn[c] == 1, And(*[k == 0 for _, k in _slots(s, c)])) for c in s.cpus])

    @invariant
    def memcg_charge_balanced(s):
        """ST-FAIL (memcg): at an operation boundary a stack is charged exactly while a live task owns it; in
        between only a stack an operation holds may be charged without such an owner."""
        rest = _at_rest(s)
        out = []
        for k in range(1, s.stacks + 1):
            owned = Or(*[And(_at(s, t, "live"), s.tvm[t] == k) for t in s.tasks])
            charged = s.charged[k - 1] == 1
            out.append(Implies(rest, charged == owned))
            out.append(Implies(charged, Or(owned, _in_flight(s, k) >= 1)))
        return And(*out)

    @invariant
    def failed_charge_frees_its_stack(s):
        """ST-FAIL: after a fork failed with a stack in hand, the task's fields point at nothing and that stack
        was released: freed, or in a place, never left live and unreachable."""
        out = []
        for t in s.tasks:
            k = s.got[t]
            released = And(*[Implies(k == j, Or(_mem(s, j) == MEM.freed, _places(s, j) + _in_flight(s, j) >= 1))
                             for j in range(1, s.stacks + 1)])
            out.append(Implies(And(_failed(s, t), k != 0),
                               And(released, s.tvm[t] != k, Or(s.taddr[t] == 0, s.taddr[t] == STALE))))
        return And(*out)

    @sometimes
    def a_stack_is_reused(s):
        """A fork takes its stack from the cache."""
        return s.reused == 1

    @sometimes
    def a_reused_stack_goes_to_a_new_task(s):
        """A task runs on a stack that an earlier task used (the zeroing matters)."""
        return Or(*[And(_at(s, t, "live"), s.cached_got[t] == 1) for t in s.tasks])

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
        return Or(*[And(_failed(s, t), s.got[t] != 0) for t in s.tasks])

    @sometimes(applies=lambda p: p.ncpus >= 2 and p.ntasks >= 2)
    def an_interrupt_frees_inside_a_task_free(s):
        """ST-CTX: a hard irq or softirq uses a CPU's slots inside a task-context free_thread_stack there."""
        return s.nested == 1

    @sometimes(applies=lambda p: p.migrations > 0 and p.ncpus >= 2 and p.nr_cached >= 2)
    def a_preemptible_release_migrates(s):
        """A preemptible releaser (holder or failed fork) moves to another CPU between its slot cmpxchgs."""
        return s.rel_moved == 1

    @sometimes(applies=lambda p: p.failures == 1)
    def a_failed_fork_uncharges_and_releases_its_stack(s):
        """A fork fails after its stack was charged (free_stack: / bad_fork_free:): uncharged and released."""
        return Or(*[And(_failed(s, t), s.forkfail[t] == 1) for t in s.tasks])

    @sometimes(applies=lambda p: p.hotplug == 1 and p.ncpus >= 2)
    def a_dead_cpus_cache_is_freed(s):
        """free_vm_stack_cache frees a cached stack of a dead CPU."""
        return s.torn_freed == 1


# -- helpers of the properties and the one-step releases (stack_cache's, over the generated pc) ---------------

def _state(s, k):
    """The allocation state of stack ``k`` (a state value; 0 and STALE are no stack: unalloc)."""
    return Select(tuple([MEM.unalloc] + [_mem(s, j) for j in range(1, s.stacks + 1)]), k)


def _owners(s, k: int):
    return sum(If(And(_at(s, t, *OWNING), s.tvm[t] == k), 1, 0) for t in s.tasks)


def _places(s, k: int):
    """The places stack ``k`` is in: slots, live or dead-unreleased tasks, pending callbacks."""
    slots = sum(If(v == k, 1, 0) for c in s.cpus for _, v in _slots(s, c))
    return slots + _owners(s, k) + s.pending[k - 1]


def _in_flight(s, k: int):
    """References to stack ``k`` from operations in flight: alloc's local vm, a task-context free's fields."""
    return sum(If(Or(And(_at(s, t, *HOLDING), s.tasks_vm[t] == k), And(_at(s, t, *RELEASING), s.tvm[t] == k)), 1, 0)
               for t in s.tasks)


def _at_rest(s):
    return And(*[Or(s.tasks_pc[t] == IDLE, s.tasks_pc[t] == DONE, _at(s, t, "live", "dead")) for t in s.tasks])


def _release_in_one_step(s, t, cpu, guard):
    """free_thread_stack() run to the end on ``cpu`` with interrupts off, for the dead task ``t``."""
    k = s.tvm[t]
    slots, cached = _try_cache(s, cpu, k)
    a = s.taddr[t]
    return when(And(_at(s, t, "dead"), Select(s.online, cpu) == 1, guard),
                tasks_pc={t: DONE}, tvm={t: 0}, taddr={t: 0},
                pending=_set_k(s, "pending", a, If(cached, Select(s.pending, a - 1), 1)),
                dirty=_set_k(s, "dirty", a, If(cached, Select(s.dirty, a - 1), 1)),
                nested=If(Select(s.busy, cpu) == 1, 1, s.nested),
                **_access_if(s, Not(cached), a), **slots)
