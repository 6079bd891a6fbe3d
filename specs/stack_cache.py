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

Written as the kernel functions (process functions, docs/spec-authoring.md): one process function,
``task_stack``, is one child's stack life as the C runs it: ``alloc_thread_stack_node()`` (with ``memcg_charge_kernel_stack()``), the child's
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

Against the hand-written pc machine this spec was before (tests/pc_machines/stack_cache.py; the equality test
is tests/test_process_stack.py): the same verdicts, depth and shortest traces; fewer states, as this spec resets a
dead local that the pc machine keeps: its ``ti`` (the loop index ``i``) after the loop has ended, which
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

from checker import (And, Array, Bool, CpuId, Ghost, If, Implies, Not, Or, Param, PerCpu, Rmw, Role, Select, Shared,
                     Spec, action, invariant, smp_mb, sometimes, terminal, when)
from checker.kernel.memory import MEM, MEM_ERROR, Heap, ptr
from checker.language.process import at, process

MAX_STACKS = 4
HEAP = Heap(*[f"stack{k}" for k in range(1, MAX_STACKS + 1)],
            survive=tuple(f"stack{k}" for k in range(1, MAX_STACKS + 1)))
#: tsk->stack of a task_struct fresh from kmem_cache_alloc (not yet written by this fork): garbage.
STALE = -1

#: The slot accesses of the one-step releases of a CPU (``--memory tso|lkmm``; nothing changes under sc): every
#: one of cached_stacks[i] of the CPU a step runs on is a this_cpu read-modify-write (``this_cpu_cmpxchg`` /
#: ``this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm)``), atomic only with respect to that CPU and not LOCKed on
#: x86 (a gs-relative cmpxchg without the lock prefix: its store goes through the store buffer and it drains
#: nothing); the loop tries slot 0, then slot 1: program order. (The process functions' steps are annotated
#: from the primitive table.)
SLOTS = (Rmw("slot0", "this_cpu"), Rmw("slot1", "this_cpu"))

FN = "task_stack"
IDLE, DONE = 0, 1  # the generated pc's values: idle 0, done 1, then the control points


def _at(s, t, *labels):
    """Task ``t`` is at one of the control points ``labels`` (their names: ``s.spec``'s, so that the pc machine
    of tests/pc_machines/stack_cache.py shares the properties)."""
    return s.spec.at(s, t, *labels)


def _task_ok(s, t):
    """Task ``t`` can take a task-context step: its CPU is not inside another task's preempt-off section
    (finish_task_switch's free_thread_stack; the task in one is the one there)."""
    return Or(Select(s.busy, s.on[t]) == 0, And(_at(s, t, *s.spec.FREEING), s.rel[t] == 0))


def _runs(s, t):
    """Every step of task_stack waits for _task_ok, but those of the dead task's releasers (a holder, at dead, is
    another task on another CPU; the cmpxchg from dead asks itself) and the delayed free and the clearing, which
    run where the cmpxchg steps ran."""
    return Or(_at(s, t, "dead", "delayed", "clear"), _task_ok(s, t))


def _reused(s, t, vm):
    """The ghosts of a fork that took cached stack ``vm``: which stack, that it was a cached one, that one was."""
    return {"got": {t: vm}, "cached_got": {t: 1}, "reused": 1}


def _stack_ptr(k):
    """The vm_struct / stack base of stack ``k`` (1..MAX_STACKS; 0 is NULL)."""
    return If(k == 0, 0, ptr(k - 1))


def _mem(s, k: int):
    """The allocation state of stack ``k`` (a plain number)."""
    return getattr(s, _VARS[k])


def _slots(s, c):
    """cached_stacks[0..NR_CACHED_STACKS-1] of CPU ``c``, as (name, value) pairs."""
    return [(f"slot{i}", getattr(s, f"slot{i}")[c]) for i in range(s.nr_cached)]


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


def _vmalloc(s, k):
    """__vmalloc_node_range() returns stack ``k``, never used before; the next call returns the one after."""
    return {"next_vm": k + 1, **{_VARS[j]: If(k == j, MEM.live, _mem(s, j)) for j in range(1, s.stacks + 1)}}


def _memset(s, k):
    """kasan_unpoison_range(); memset(kasan_reset_tag(s->addr), 0, THREAD_SIZE): stack ``k`` is written, and
    holds no previous user's data."""
    return {"dirty": _set_k(s, "dirty", k, 0), **HEAP.access(s, _stack_ptr(k))}


def _written(s, k):
    """Stack ``k`` is written with someone's data (the child's frames; thread_stack_delayed_free's struct
    vm_stack): a use of its memory, and a previous user's data for the next fork to clear."""
    return {"dirty": _set_k(s, "dirty", k, 1), **HEAP.access(s, _stack_ptr(k))}


def _vfree_cached(s, vm, after):
    """free_vm_stack_cache's ``if (!vm_stack) continue; vfree(vm_stack->addr);`` (``after``: the updates of the
    slot before it), and the ghost that a cached stack was freed."""
    return dict(_free_if(s, vm != 0, vm, after=after), torn_freed=If(vm != 0, 1, after.get("torn_freed", s.torn_freed)))


def _queuer_done(s, k):
    """The grace period: the free_thread_stack that queued stack ``k`` has left its preempt-off section."""
    return And(*[Not(And(_at(s, t, *s.spec.FREEING), s.taddr[t] == k, s.rel[t] == 0)) for t in s.tasks])


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

    #: The control points of task_stack the properties name (its labels; "free": before either cmpxchg): those
    #: of a task that owns its stack as a live or dead-not-released task; inside free_thread_stack() in task
    #: context; of those, the ones that still use tsk->stack_vm_area / tsk->stack; and those that hold the stack
    #: in a local (``vm``) during alloc_thread_stack_node(). A bug spec whose task_stack has other points adds them.
    OWNING = ("live", "dead")
    FREEING = ("free", "delayed", "clear")
    RELEASING = ("free", "delayed")
    HOLDING = ("reuse", "charge")

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


    # -- where a task is, for the properties (the pc machine of tests/pc_machines/stack_cache.py answers these
    #    from its own program counter and shares every property) ---------------------------------------------
    @staticmethod
    def at(s, t, *labels):
        """Task ``t`` is at one of task_stack's control points ``labels``."""
        return Or(*[at(s, t, FN, x) for x in labels])

    @staticmethod
    def in_hand(s, t):
        """alloc_thread_stack_node's local ``vm`` (the stack in hand before the task has it)."""
        return s.tasks_vm[t]

    @staticmethod
    def failed(s, t):
        """The fork returned -ENOMEM."""
        return And(s.tasks_pc[t] == DONE, Or(s.enomem[t] == 1, s.forkfail[t] == 1))

    @staticmethod
    def at_rest(s, t):
        """Task ``t`` is at an operation boundary: not forked yet, live, dead and not released, or done."""
        return Or(s.tasks_pc[t] == IDLE, s.tasks_pc[t] == DONE, _at(s, t, "live", "dead"))

    @staticmethod
    def finished_task(s, t):
        """Task ``t`` has run task_stack to its end (released, or its fork failed)."""
        return s.tasks_pc[t] == DONE

    @staticmethod
    def memset_stack(s, k):
        """alloc_thread_stack_node(): the reused stack ``k`` is cleared (``bugs/stack_stale.py``: not)."""
        return _memset(s, k)

    @process(role="tasks", runs=_runs)
    def task_stack(k, s, t):
        """One child's stack: alloc_thread_stack_node(), the child's life, the last put_task_stack()."""
        vm = k.this_cpu_xchg(s.slot0, 0)                    # for (i...) { s = this_cpu_xchg(cached_stacks[i], NULL);
        if vm == 0 and s.nr_cached == 2:                    #         if (!s) continue;
            k.label("alloc")
            vm = k.this_cpu_xchg(s.slot1, 0)
        if vm != 0:                                         # a cached stack (ghosts: which, and that one was)
            k.update(_reused(s, t, vm))
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
        k.label("free")                                     # free_thread_stack():
        s.busy[s.on[t]] = 1 if s.rel[t] == 0 else s.busy[s.on[t]]  # (finish_task_switch: preemption off)
        cached = s.spec.try_release_thread_stack_to_cache(k, s, s.tvm[t])
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

    @process(role="cpus", irq=True)
    def thread_stack_free_rcu(k, s, cpu):
        """The RCU callback, a softirq on this CPU (the one that queued it, or the one its callbacks moved to)."""
        with k.atomic():
            vm = k.choose(range(1, s.stacks + 1))           # vm_stack = container_of(rh, struct vm_stack, rcu);
            k.assume(s.pending[vm - 1] == 1 and s.online[cpu] == 1 and _queuer_done(s, vm))
            s.pending[vm - 1] = 0
            s.nested = 1 if s.busy[cpu] == 1 else s.nested
            cached = s.spec.try_release_thread_stack_to_cache(k, s, vm)
            k.update(_free_if(s, not cached, vm, after=HEAP.access(s, ptr(vm - 1))))  # else vfree(vm_stack);
            s.rcu_cached = 1 if cached else s.rcu_cached
            s.rcu_freed = 1 if not cached else s.rcu_freed

    @staticmethod
    def try_release_thread_stack_to_cache(k, s, vm):
        """try_release_thread_stack_to_cache() (kernel/fork.c, v5.18), NR_CACHED_STACKS's loop written out::

            for (i = 0; i < NR_CACHED_STACKS; i++) {
                    if (this_cpu_cmpxchg(cached_stacks[i], NULL, vm_area) != NULL)
                            continue;
                    return true;
            }
            return false;

        Inlined where it is called: a step per this_cpu_cmpxchg in task context, part of one step in the RCU
        callback. A bug spec redefines it (specs/bugs/stack_release_read_write.py, stack_cmpxchg_stale_old.py)."""
        old = k.this_cpu_cmpxchg(s.slot0, 0, vm)
        if old != 0 and s.nr_cached == 2:
            k.label("free")
            old = k.this_cpu_cmpxchg(s.slot1, 0, vm)
        return old == 0

    # -- the scheduler, hotplug and the one-step releases: plain actions (stack_cache's) ----------------------
    @action(role="tasks", choose={"dest": lambda p: p.cpus})
    def migrate(s, t, dest):
        """The scheduler moves the task (preemptible: before the fork, between this_cpu_xchg steps, while the
        child runs) or a preemptible releaser (between its this_cpu_cmpxchg steps)."""
        releasing = And(_at(s, t, *s.spec.RELEASING), s.rel[t] == 1)
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
        return And(*[s.spec.finished_task(s, t) for t in s.tasks], *[s.pending[j] == 0 for j in range(s.stacks)],
                   *[Or(s.online[c] == 1, s.torn[c] == 1) for c in s.cpus])

    # -- properties (tests/pc_machines/stack_cache.py shares them: where a task is comes from s.spec) ---------
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
            out.append(Implies(_at(s, t, *s.spec.OWNING, *s.spec.RELEASING), _state(s, s.tvm[t]) == MEM.live))
            out.append(Implies(_at(s, t, *s.spec.HOLDING), _state(s, s.spec.in_hand(s, t)) == MEM.live))
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
            out.append(Implies(And(s.spec.failed(s, t), k != 0),
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
        return Or(*[And(s.spec.failed(s, t), s.got[t] != 0) for t in s.tasks])

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
        return Or(*[And(s.spec.failed(s, t), s.forkfail[t] == 1) for t in s.tasks])

    @sometimes(applies=lambda p: p.hotplug == 1 and p.ncpus >= 2)
    def a_dead_cpus_cache_is_freed(s):
        """free_vm_stack_cache frees a cached stack of a dead CPU."""
        return s.torn_freed == 1


#: The heap's variable for stack k (the heap is named once the class has been created).
_VARS = (None,) + tuple(HEAP.var_name(f"stack{k}") for k in range(1, MAX_STACKS + 1))


# -- helpers of the properties and the one-step releases -------------------------------------------------

def _state(s, k):
    """The allocation state of stack ``k`` (a state value; 0 and STALE are no stack: unalloc)."""
    return Select(tuple([MEM.unalloc] + [_mem(s, j) for j in range(1, s.stacks + 1)]), k)


def _owners(s, k: int):
    return sum(If(And(_at(s, t, *s.spec.OWNING), s.tvm[t] == k), 1, 0) for t in s.tasks)


def _places(s, k: int):
    """The places stack ``k`` is in: slots, live or dead-unreleased tasks, pending callbacks."""
    slots = sum(If(v == k, 1, 0) for c in s.cpus for _, v in _slots(s, c))
    return slots + _owners(s, k) + s.pending[k - 1]


def _in_flight(s, k: int):
    """References to stack ``k`` from operations in flight: alloc's local vm, a task-context free's fields."""
    return sum(If(Or(And(_at(s, t, *s.spec.HOLDING), s.spec.in_hand(s, t) == k), And(_at(s, t, *s.spec.RELEASING), s.tvm[t] == k)), 1, 0)
               for t in s.tasks)


def _at_rest(s):
    return And(*[s.spec.at_rest(s, t) for t in s.tasks])


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
