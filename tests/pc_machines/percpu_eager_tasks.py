# SPDX-License-Identifier: GPL-2.0-only
"""percpu_eager_tasks as the hand-written pc machine it was before its process-function port replaced it.

Kept as a test (issue 28): tests/test_process_tasks.py explores it and the built-in ``percpu_eager_tasks``
(specs/percpu_eager_tasks.py, variants A and C of percpu_counter_add_batch() as process functions run by tasks)
at the same points and asserts the same states, verdicts and trace lengths. Its own program counter (``pc``)
and registers (``pending``, ``seen``). The properties stated on the shared state alone (the bounds,
conservation, the witnesses of a fold and of a migration) and ``folds`` are the built-in spec's, imported;
``an_add_is_preempted`` names the program counter, which differs.

Each action is one atomic step of percpu_counter_add_batch() as quoted in the built-in spec.
"""
from checker import (IRQS_OFF, NOBODY, PREEMPT_COUNT, S32, S64, AllOf, And, AnyOf, Enum, Ghost, If, Int,
                     Lock, Not, Param, PerCpu, PerTask, Role, Select, Shared, Spec, Task, action, sometimes, terminal, when)
from checker.specs.percpu_eager_tasks import VARIANT
from checker.specs.percpu_eager_tasks import PercpuEagerTasks as Port

ADD = Enum("idle", "read", "fold", "zero", "release", name="add_pc")


def _cpu(s, t):
    """The CPU task ``t`` is on now: what ``this_cpu_*`` and ``__this_cpu_*`` resolve through."""
    return s.task_cpu[t]


class PercpuEagerTasks(Spec):
    """percpu_counter_add_batch() A and C with tasks the scheduler preempts and migrates, and interrupts.

    ``ntasks`` tasks (one per CPU by default) each make ``ops`` calls; each
    CPU's interrupt handler makes ``irq`` adds wherever the task it runs has
    interrupts on. ``preempt_disable=0`` drops variant A's preempt_disable()
    /preempt_enable() (to show what it protects)."""

    kernel = ("lib/percpu_counter.c: percpu_counter_add_batch as before 805afd830099 (A) and as in v6.11 "
              "(C, this_cpu_try_cmpxchg)")
    assumptions = (
        "no CPU hotplug: every CPU stays online",
        "the counter starts at 0 (percpu_counter_init(fbc, 0, gfp))",
        "an interrupt handler's add is one step on its CPU (its slow path is taken when fbc->lock is free)",
    )
    explore_sweeps = (
        {"variant": VARIANT.C, "ncpus": (1, 2), "migrations": (0, 1)},
        {"variant": VARIANT.A, "ncpus": (1, 2), "migrations": (0, 1)},
        {"variant": VARIANT.C, "ncpus": 1, "ntasks": 2, "irq": (0, 1), "preemptions": 1},
        # (A with interrupts breaks the bounds, on this model as on percpu_eager's: its decision is stale)
        {"variant": VARIANT.A, "ncpus": 1, "ntasks": 2, "preemptions": 1},
    )

    variant = Param(VARIANT.C, domain=VARIANT, explore=(VARIANT.C, VARIANT.A), doc="the add_batch variant")
    ncpus = Param(2, domain=range(1, 5), doc="CPUs")
    ntasks = Param(lambda p: p.ncpus, domain=range(1, 9), doc="tasks calling add_batch (task i starts on CPU "
                   "i % ncpus)")
    batch = Param(2, domain=range(1, 1 << 16), doc="the batch")
    ops = Param(lambda p: p.batch, domain=range(0, 1 << 8), doc="add_batch calls per task")
    irq = Param(0, domain=range(0, 4), doc="adds made by each CPU's interrupt handler")
    preempt_disable = Param(1, domain=(0, 1), doc="0: variant A without its preempt_disable()")
    preemptions = Param(0, domain=range(-1, 65), doc="preemptions in a run (-1: no bound)")
    migrations = Param(0, domain=range(-1, 65), doc="migrations in a run (-1: no bound)")

    cpus = Role("ncpus", symmetric=True, doc="CPUs, each with its local")
    tasks = Task("ntasks", cpus="cpus", symmetric=True, doc="tasks calling percpu_counter_add_batch")

    count = Shared(0, type=S64, doc="fbc->count, written under fbc->lock")
    lock = Lock(doc="fbc->lock (raw_spinlock_t): the task holding it")
    local = PerCpu(0, type=S32, role="cpus", doc="*per_cpu_ptr(fbc->counters, cpu)")
    irq_left = PerCpu(lambda p: p.irq, role="cpus", doc="adds this CPU's interrupt handler has still to make")
    pc = PerTask(ADD.idle, type=ADD, role="tasks", doc="where the task is in add_batch")
    pending = PerTask(0, type=Int, role="tasks", doc="amount")
    seen = PerTask(0, type=Int, role="tasks", doc="count: the local it read (A, C) or folds")
    ops_left = PerTask(lambda p: p.ops, role="tasks", doc="adds the task has still to make")
    irqs = PerTask(0, type=IRQS_OFF, role="tasks", doc="the task's interrupts off (raw_spin_lock_irqsave)")
    pcount = PerTask(0, type=PREEMPT_COUNT, role="tasks", doc="the task's preempt_count (variant A)")
    exact = Ghost(0, doc="E: every add past its linearisation point")

    folds = staticmethod(Port.folds)

    # -- variant A --------------------------------------------------------------------------
    @action(role="tasks", choose={"amount": (-1, 1)}, applies=lambda p: p.variant == VARIANT.A)
    def preempt_read(s, t, amount):
        """A: preempt_disable(); count = __this_cpu_read(*fbc->counters) + amount."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0), pc={t: ADD.read}, pending={t: amount},
                    seen={t: Select(s.local, _cpu(s, t))}, ops_left={t: s.ops_left[t] - 1},
                    pcount={t: s.preempt_disable})

    @action(role="tasks", applies=lambda p: p.variant == VARIANT.A)
    def this_cpu_add(s, t):
        """A: abs(count) < batch: this_cpu_add(*fbc->counters, amount); preempt_enable()."""
        c = _cpu(s, t)
        return when(And(s.pc[t] == ADD.read, Not(s.spec.folds(s, s.seen[t] + s.pending[t]))),
                    local={c: Select(s.local, c) + s.pending[t]}, exact=s.exact + s.pending[t], pc={t: ADD.idle},
                    pending={t: 0}, seen={t: 0}, pcount={t: 0})

    # -- variant C ------------------------------------------------------------------------
    @action(role="tasks", choose={"amount": (-1, 1)}, applies=lambda p: p.variant == VARIANT.C)
    def this_cpu_read(s, t, amount):
        """C: count = this_cpu_read(*fbc->counters)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0), pc={t: ADD.read}, pending={t: amount},
                    seen={t: Select(s.local, _cpu(s, t))}, ops_left={t: s.ops_left[t] - 1})

    @action(role="tasks", applies=lambda p: p.variant == VARIANT.C)
    def try_cmpxchg(s, t):
        """C: abs(count + amount) < batch: this_cpu_try_cmpxchg(*fbc->counters, &count, count + amount)
        succeeds (the local of the CPU it is on now still holds count)."""
        c = _cpu(s, t)
        return when(And(s.pc[t] == ADD.read, Not(s.spec.folds(s, s.seen[t] + s.pending[t])),
                        Select(s.local, c) == s.seen[t]),
                    local={c: s.seen[t] + s.pending[t]}, exact=s.exact + s.pending[t], pc={t: ADD.idle},
                    pending={t: 0}, seen={t: 0})

    @action(role="tasks", applies=lambda p: p.variant == VARIANT.C)
    def try_cmpxchg_fails(s, t):
        """C: the cmpxchg fails (an interrupt, another task or a migration changed the local it compares):
        count = that local's value, and the loop repeats its batch check."""
        c = _cpu(s, t)
        return when(And(s.pc[t] == ADD.read, Not(s.spec.folds(s, s.seen[t] + s.pending[t])),
                        Select(s.local, c) != s.seen[t]), seen={t: Select(s.local, c)})

    # -- the slow path: raw_spin_lock_irqsave ----------------------------------------------
    @action(role="tasks", fair="strong")
    def lock_irqsave(s, t):
        """abs(count) >= batch: raw_spin_lock_irqsave(&fbc->lock, flags)."""
        return when(And(s.pc[t] == ADD.read, s.spec.folds(s, s.seen[t] + s.pending[t]), s.lock == NOBODY),
                    lock=t, irqs={t: 1}, pc={t: ADD.fold})

    @action(role="tasks", fair="weak")
    def fold(s, t):
        """fbc->count += count (+ amount): A folds the count it read; C re-reads the local of the CPU it is on."""
        c = If(s.variant == VARIANT.A, s.seen[t], Select(s.local, _cpu(s, t)))
        return when(s.pc[t] == ADD.fold, count=s.count + c + s.pending[t], exact=s.exact + s.pending[t],
                    seen={t: c}, pc={t: ADD.zero})

    @action(role="tasks", fair="weak")
    def zero(s, t):
        """__this_cpu_sub(*fbc->counters, count - amount)."""
        c = _cpu(s, t)
        return when(s.pc[t] == ADD.zero, local={c: Select(s.local, c) - s.seen[t]}, pending={t: 0}, seen={t: 0},
                    pc={t: ADD.release})

    @action(role="tasks", fair="weak")
    def release(s, t):
        """raw_spin_unlock_irqrestore(&fbc->lock, flags) (A: and preempt_enable())."""
        return when(s.pc[t] == ADD.release, lock=NOBODY, pc={t: ADD.idle}, irqs={t: 0}, pcount={t: 0})

    # -- the interrupt handler ---------------------------------------------------------------
    @action(role="cpus", choose={"amount": (-1, 1)}, irq=True, applies=lambda p: p.irq)
    def irq_add_fast(s, c, amount):
        """Interrupt: percpu_counter_add(fbc, amount) with abs(local + amount) < batch."""
        v = s.local[c] + amount
        return when(And(s.irq_left[c] > 0, Not(s.spec.folds(s, v))), local={c: v},
                    irq_left={c: s.irq_left[c] - 1}, exact=s.exact + amount)

    @action(role="cpus", choose={"amount": (-1, 1)}, irq=True, applies=lambda p: p.irq)
    def irq_add_slow(s, c, amount):
        """Interrupt: the slow path, once fbc->lock is free: fbc->count += local + amount; local = 0."""
        v = s.local[c] + amount
        return when(And(s.irq_left[c] > 0, s.spec.folds(s, v), s.lock == NOBODY), count=s.count + v, local={c: 0},
                    irq_left={c: s.irq_left[c] - 1}, exact=s.exact + amount)

    @terminal
    def all_work_done(s):
        return AllOf([And(s.pc[t] == ADD.idle, s.ops_left[t] == 0) for t in s.tasks])

    # -- properties -------------------------------------------------------------------------
    read_bound = Port.read_bound

    local_bound = Port.local_bound

    conservation = Port.conservation

    a_fold_happens = Port.a_fold_happens

    a_task_migrates = Port.a_task_migrates

    @sometimes(applies=lambda p: p.ntasks > p.ncpus and p.preemptions != 0
               and (p.variant == VARIANT.C or not p.preempt_disable))
    def an_add_is_preempted(s):
        """A task is switched out between its read and its update (C: preemptible there; A: only without its
        preempt_disable)."""
        return AnyOf([And(s.pc[t] == ADD.read, Select(s.curr, s.task_cpu[t]) != t) for t in s.tasks])
