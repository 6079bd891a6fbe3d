# SPDX-License-Identifier: GPL-2.0-only
"""stack_cache as the hand-written pc machine it was before its process-function port replaced it.

Kept as a test (issue 28): tests/test_process_stack.py explores it and the built-in ``stack_cache``
(specs/stack_cache.py, the kernel functions written as process functions) at the same points and asserts the same
verdicts, shortest-trace lengths and depth, and the same states up to the loop index ``ti`` this machine keeps
after its loops have ended. One action per atomic step of kernel/fork.c, with its own program counter (``pc``,
the ``TASK`` enum), loop index (``ti``) and alloc_thread_stack_node's local (``held``). Its kernel citation,
assumptions, parameters, variables and every property are the built-in spec's (imported: they cannot drift); a
property asks where a task is through ``s.spec`` (``at``, ``held``, ``failed``, ``at_rest``, ``finished_task``),
which this machine answers from ``pc``.
"""
from __future__ import annotations

from checker import (And, Array, Bool, CpuId, Enum, Ghost, If, Load, Not, Or, Param, PerCpu, Role, Select, Shared, Spec,
                     Store, action, smp_mb, when)
from checker.kernel.memory import MEM, ptr
from checker.specs import stack_cache as port
from checker.specs.stack_cache import (HEAP, MAX_STACKS, SLOTS, _VARS, _access_if, _free_if, _mem, _set_k, _stack_ptr,
                                       _try_cache, empty_slots)

#: Where a task is. "zero" and "write" are only used by variants (charging before zeroing; a release
#: split into a read and a write).
TASK = Enum("idle", "alloc", "reuse", "zero", "vmalloc", "charge", "live", "dead", "free", "write", "delayed", "clear",
            "released", "failed", name="task")
#: Task states inside free_thread_stack() in task context (preemption off).
FREEING = (TASK.free, TASK.write, TASK.delayed, TASK.clear)
#: Task states at an operation boundary.
AT_REST = (TASK.idle, TASK.live, TASK.dead, TASK.released, TASK.failed)


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








def _task_ok(s, t):
    """Task ``t`` can take a task-context step: its CPU is not inside another task's preempt-off section
    (at most one task is inside one per CPU, so a task in finish_task_switch's free_thread_stack is the one
    there; a preemptible releaser waits like any task)."""
    return Or(Select(s.busy, s.on[t]) == 0, And(_in(s.pc[t], FREEING), s.rel[t] == 0))






class StackCache(Spec):
    """alloc_thread_stack_node / free_thread_stack / free_vm_stack_cache with NR_CACHED_STACKS slots per CPU."""

    kernel = port.StackCache.kernel
    assumptions = port.StackCache.assumptions

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

    # -- where a task is, for the built-in spec's properties (shared below) ---------------------------------
    OWNING = ("live", "dead")
    FREEING = ("free", "write", "delayed", "clear")
    RELEASING = ("free", "write", "delayed")
    HOLDING = ("reuse", "zero", "charge")

    @staticmethod
    def at(s, t, *names):
        return _in(s.pc[t], tuple(getattr(TASK, n) for n in names))

    @staticmethod
    def in_hand(s, t):
        return s.held[t]

    @staticmethod
    def failed(s, t):
        return s.pc[t] == TASK.failed

    @staticmethod
    def at_rest(s, t):
        return _in(s.pc[t], AT_REST)

    @staticmethod
    def finished_task(s, t):
        return _in(s.pc[t], (TASK.released, TASK.failed))

    # -- the terminal predicate and the properties: the built-in spec's ---------------------------------------
    finished = port.StackCache.__dict__["finished"]
    never_two_live_owners = port.StackCache.__dict__["never_two_live_owners"]
    stack_in_one_place = port.StackCache.__dict__["stack_in_one_place"]
    freed_never_handed_out = port.StackCache.__dict__["freed_never_handed_out"]
    reused_stack_zeroed = port.StackCache.__dict__["reused_stack_zeroed"]
    an_empty_slot_takes_the_stack = port.StackCache.__dict__["an_empty_slot_takes_the_stack"]
    dead_cpus_cached_stacks_are_freed = port.StackCache.__dict__["dead_cpus_cached_stacks_are_freed"]
    dead_cpu_cache_empty = port.StackCache.__dict__["dead_cpu_cache_empty"]
    memcg_charge_balanced = port.StackCache.__dict__["memcg_charge_balanced"]
    failed_charge_frees_its_stack = port.StackCache.__dict__["failed_charge_frees_its_stack"]
    a_stack_is_reused = port.StackCache.__dict__["a_stack_is_reused"]
    a_reused_stack_goes_to_a_new_task = port.StackCache.__dict__["a_reused_stack_goes_to_a_new_task"]
    an_rcu_callback_caches_its_stack = port.StackCache.__dict__["an_rcu_callback_caches_its_stack"]
    an_rcu_callback_frees_its_stack = port.StackCache.__dict__["an_rcu_callback_frees_its_stack"]
    a_charge_fails_with_a_stack_in_hand = port.StackCache.__dict__["a_charge_fails_with_a_stack_in_hand"]
    an_interrupt_frees_inside_a_task_free = port.StackCache.__dict__["an_interrupt_frees_inside_a_task_free"]
    a_preemptible_release_migrates = port.StackCache.__dict__["a_preemptible_release_migrates"]
    a_failed_fork_uncharges_and_releases_its_stack = port.StackCache.__dict__["a_failed_fork_uncharges_and_releases_its_stack"]
    a_dead_cpus_cache_is_freed = port.StackCache.__dict__["a_dead_cpus_cache_is_freed"]


# -- helpers of the actions ------------------------------------------------------------------------------

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
