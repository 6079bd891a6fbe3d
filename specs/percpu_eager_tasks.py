# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counter_add_batch() variants A and C on the task model: lib/percpu_counter.c, written as its kernel function.

``percpu_eager`` welds one task to each CPU and hand-rolls variant C's
migration (a ``moved_to`` per task, a ``migrate`` step allowed only between
the read and the cmpxchg, the moved task running on its new CPU beside
that CPU's own task). Here the tasks are a ``Task`` role and the kernel's
scheduler (``checker.kernel.tasks``) decides where a task may be preempted
or moved: anywhere its context allows, so every ``preempt_disable()`` and
irqs-off section of the code acts, and removing one lets the scheduler in.
That context (interrupts off under ``raw_spin_lock_irqsave``, preemption off
under ``preempt_disable``) is set by the primitives themselves
(``checker.language.primitives``); the program counter, the registers, the
guards and ``access=`` are generated (``checker.language.process``). Each
function quotes the C it is written from.

The hand-written pc machine this replaced is kept as
tests/pc_machines/percpu_eager_tasks.py and checked against it, state for
state (tests/test_process_tasks.py).
"""
from checker import (IRQS_OFF, NOBODY, PREEMPT_COUNT, S32, Enum, S64, AllOf, And, AnyOf, Lock, Or, Param, PerCpu, PerTask, Role, Select, Shared,
                     Ghost, Spec, Sum, Task, invariant, sometimes, terminal)
from checker.language.process import at, process

ADD, ADD_A = "percpu_counter_add_batch", "percpu_counter_add_batch_a"
#: The variants of reference section 1.2 modelled here (B, all under local_irq_save, leaves nothing to move).
VARIANT = Enum("A", "C", name="variant")


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
    ops_left = PerTask(lambda p: p.ops, role="tasks", doc="adds the task has still to make")
    irqs = PerTask(0, type=IRQS_OFF, role="tasks", doc="the task's interrupts off (raw_spin_lock_irqsave)")
    pcount = PerTask(0, type=PREEMPT_COUNT, role="tasks", doc="the task's preempt_count (variant A)")
    exact = Ghost(0, doc="E: every add past its linearisation point")

    @staticmethod
    def folds(s, count):
        """abs(count) >= batch: the add must fold into fbc->count."""
        return abs(count) >= s.batch

    @process(role="tasks", calls="ops_left", args={"amount": (-1, 1)}, applies=lambda p: p.variant == VARIANT.C)
    def percpu_counter_add_batch(k, s, t, amount):
        """v6.11, CONFIG_HAVE_CMPXCHG_LOCAL::

            count = this_cpu_read(*fbc->counters);
            do {
                    if (unlikely(abs(count + amount) >= batch)) {
                            raw_spin_lock_irqsave(&fbc->lock, flags);
                            count = __this_cpu_read(*fbc->counters);
                            fbc->count += count + amount;
                            __this_cpu_sub(*fbc->counters, count);
                            raw_spin_unlock_irqrestore(&fbc->lock, flags);
                            return;
                    }
            } while (!this_cpu_try_cmpxchg(*fbc->counters, &count, count + amount));
        """
        count = k.this_cpu_read(s.local)
        while True:
            if s.spec.folds(s, count + amount):
                flags = k.raw_spin_lock_irqsave(s.lock)
                with k.atomic():
                    count = k.raw_cpu_read(s.local)
                    s.count += count + amount
                    s.exact += amount
                k.raw_cpu_sub(s.local, count)
                k.raw_spin_unlock_irqrestore(s.lock, flags)
                return
            ok, count = k.this_cpu_try_cmpxchg(s.local, count, count + amount)
            if ok:
                s.exact += amount
                return

    @process(role="tasks", calls="ops_left", args={"amount": (-1, 1)}, applies=lambda p: p.variant == VARIANT.A)
    def percpu_counter_add_batch_a(k, s, t, amount):
        """A (before 805afd830099)::

            preempt_disable();
            count = __this_cpu_read(*fbc->counters) + amount;
            if (abs(count) >= batch) {
                    raw_spin_lock_irqsave(&fbc->lock, flags);
                    fbc->count += count;
                    __this_cpu_sub(*fbc->counters, count - amount);
                    raw_spin_unlock_irqrestore(&fbc->lock, flags);
            } else {
                    this_cpu_add(*fbc->counters, amount);
            }
            preempt_enable();

        ``preempt_disable=0`` drops the preempt_disable()/preempt_enable() pair (to show what it protects;
        specs/bugs/eager_tasks_no_preempt_disable.py). preempt_enable() joins the step before it (a context-only
        primitive is no step of its own)."""
        if s.preempt_disable:
            k.preempt_disable()
        count = k.raw_cpu_read(s.local) + amount
        if s.spec.folds(s, count):
            flags = k.raw_spin_lock_irqsave(s.lock)
            with k.atomic():
                s.count += count
                s.exact += amount
            k.raw_cpu_sub(s.local, count - amount)
            k.raw_spin_unlock_irqrestore(s.lock, flags)
        else:
            k.this_cpu_add(s.local, amount)
            s.exact += amount
        if s.preempt_disable:
            k.preempt_enable()

    @process(role="cpus", irq=True, calls="irq_left", args={"amount": (-1, 1)}, applies=lambda p: p.irq)
    def percpu_counter_add(k, s, c, amount):
        """The interrupt handler: percpu_counter_add(fbc, amount) in hard-irq context, one step (its slow path
        waits for fbc->lock to be free)."""
        with k.atomic():
            count = k.raw_cpu_read(s.local) + amount
            if s.spec.folds(s, count):
                k.raw_spin_lock(s.lock)
                s.count += count
                k.raw_cpu_sub(s.local, count - amount)
                s.exact += amount
                k.raw_spin_unlock(s.lock)
            else:
                k.this_cpu_add(s.local, amount)
                s.exact += amount

    @terminal
    def all_work_done(s):
        """Every task has made its adds."""
        return AllOf([And(s.tasks_pc[t] == 0, s.ops_left[t] == 0) for t in s.tasks])

    # -- properties -------------------------------------------------------------------------
    @invariant
    def read_bound(s):
        """PC-READ: |fbc->count - E| <= ncpus * (batch - 1)."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1)

    @invariant(role="cpus")
    def local_bound(s, c):
        """PC-LOCAL: every local stays within batch - 1 of zero."""
        return abs(s.local[c]) <= s.batch - 1

    @invariant
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + sum of locals == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @sometimes
    def a_fold_happens(s):
        """Some add takes the slow path and folds into fbc->count."""
        return s.count != 0

    @sometimes(applies=lambda p: p.migrations != 0 and p.ncpus > 1 and p.ops > 0)
    def a_task_migrates(s):
        """The scheduler moves a task (the migrations are not vacuous)."""
        return s.migrations_done > 0

    @sometimes(applies=lambda p: p.ntasks > p.ncpus and p.preemptions != 0
               and (p.variant == VARIANT.C or not p.preempt_disable))
    def an_add_is_preempted(s):
        """A task is switched out between its read and its update (C: preemptible there; A: only without its
        preempt_disable)."""
        read = (lambda t: at(s, t, ADD, "loop")) if s.variant == VARIANT.C else \
            (lambda t: Or(at(s, t, ADD_A, "raw_spin_lock_irqsave"), at(s, t, ADD_A, "this_cpu_add")))
        return AnyOf([And(read(t), Select(s.curr, s.task_cpu[t]) != t) for t in s.tasks])
