# SPDX-License-Identifier: GPL-2.0-only
"""percpu_eager as the hand-written pc machine it was before its process-function port replaced it.

Kept as a test (issue 28): tests/test_process_port.py explores it and the built-in ``percpu_eager``
(specs/percpu_eager.py, lib/percpu_counter.c written as process functions) at the same points under sc, tso and
lkmm, on both explorers, and asserts the same states, verdicts and trace lengths. Its own program counter
(``pc``, ``read_pc``, ``sum_pc``), registers (``pending``, ``seen``, ``lim_acc``, ``sum_acc``) and ``access=``
annotations written by hand beside each action. The properties stated on the shared state alone (the bounds,
conservation, the witnesses of a fold and of an approximate read) and the slow-path decision ``folds`` are the
built-in spec's, imported, so an edit of one cannot make the two drift; the others name the program counter,
which differs.

The model (one task per CPU, the three add_batch variants A, B and C, an interrupt handler adding on every CPU,
migration in variant C, read, sum, limited_add) is the built-in spec's; see its docstring.
"""
from checker import (IRQS_OFF, Abstraction, NOBODY, PREEMPT_COUNT, S32, S64, AllOf, And, AnyOf, Between, Bool, CpuId, Enum, Fill,
                     Fence, Ghost, If,
                     Implies, Int, Load, Lock, Max, Not, Or, Param, PerCpu, Rmw, Role, Select, Shared, Spec, Store, Sum,
                     action, invariant, leads_to, sometimes, terminal, when, witness)
from checker.specs.percpu_eager import VARIANT
from checker.specs.percpu_eager import PercpuEager as Port

#: Where a task is inside percpu_counter_add_batch() or __percpu_counter_limited_add().
ADD = Enum("idle", "acquire", "fold", "zero", "release", "read", "lim_add", "lim_scan", "lim_fold", name="add_pc")
#: Where a summer is inside __percpu_counter_sum().
SUM = Enum("idle", "locked", "scan", "done", name="sum_pc")
#: Whether a reader has done its percpu_counter_read().
READ = Enum("idle", "done", name="read_pc")


def _amounts(p):
    return (-1, 1) + ((p.large,) if p.large else ())


def _on(s, t):
    """The CPU task ``t`` runs on: its own unless the scheduler moved it."""
    if s.variant != VARIANT.C or not s.migrations:
        return t  # only variant C's tasks migrate
    to = Select(s.moved_to, t)
    return If(to == NOBODY, t, to)


def _runs(s, t):
    """Task ``t`` can run: no other task holds its CPU with interrupts off."""
    return Select(s.irqs, _on(s, t)) == 0


def _other(s, cpu, other):
    """The slot of a remote load: the local of the CPU being visited."""
    return other


#: The memory-model annotations (--memory tso|lkmm): this_cpu_* ops are atomic only to their own CPU
#: (no LOCK prefix on x86) and order nothing for other CPUs; __this_cpu_read is a plain load of the
#: CPU's own local; fbc->count is accessed plainly under fbc->lock. The own local is the one of the CPU the
#: task runs on (``adders``' cpu=), and an interrupt's that of the CPU it interrupts.
THIS_CPU = Rmw("local", "this_cpu")
OWN_LOCAL = Load("local", "plain")


def _variant(*names):
    return lambda p: p.variant in tuple(getattr(VARIANT, n) for n in names)


def _limited(p):
    return p.limited == 1


def _overlap(s):
    """The sum_overlap ghost after a lockless add: set if a summer is scanning."""
    return If(s.sum_pc[s.summer[0]] == SUM.scan, 1, s.sum_overlap) if s.summers else s.sum_overlap


class PercpuEager(Spec):
    """percpu_counter_add_batch() (A, B, C) with interrupts and migration; read, sum, compare, limited_add.

    There is one task per CPU, task ``t`` starting on CPU ``t``; each makes
    ``ops`` calls of ``percpu_counter_add_batch(fbc, amount, batch)`` (with
    ``limited=1``, its positive calls are ``__percpu_counter_limited_add(fbc,
    limit, 1, batch)``, as shmem makes them). Every step where another CPU or
    this CPU's interrupt handler can interleave is its own action; a step
    only this CPU can see is merged with its neighbour. The interrupt handler
    of each CPU makes ``irq`` adds, wherever that CPU has interrupts on. With
    variant C the scheduler may move a task between its read and its
    cmpxchg (``migrations`` times in all).
    """

    kernel = ("lib/percpu_counter.c: percpu_counter_add_batch as before 805afd830099 (A), as in v6.6 "
              "c439d5e8a0de (B) and as in v6.11 (C, this_cpu_try_cmpxchg); percpu_counter_read, "
              "percpu_counter_read_positive, __percpu_counter_sum, __percpu_counter_compare, "
              "__percpu_counter_limited_add (v6.6)")
    assumptions = (
        "no CPU hotplug (percpu_hotplug models it): every CPU stays online, so num_online_cpus() is ncpus and "
        "sum's online mask is every CPU",
        "the v6.6 walk for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask) in __percpu_counter_sum is "
        "modelled as 'any CPU not yet visited' (an over-approximation of the ascending walk, needed for CPU "
        "symmetry)",
        "the counter starts at 0 (percpu_counter_init(fbc, 0, gfp))",
        "an interrupt handler's add is atomic on its CPU (nothing else runs there until it returns), so its fast "
        "path is one step and its slow path is one step taken when fbc->lock is free: spinning is invisible, "
        "and between the fold and the unlock no one can look (readers read only fbc->count, which the fold "
        "wrote; summers need the lock)",
        "a task migrates only between its read and its cmpxchg in variant C: elsewhere a move only changes "
        "which local its later adds use, which the other CPUs' tasks already exercise",
    )

    # The default run: B over the foundation sweep; C, interrupts, migration, A without
    # interrupts and limited_add where the state space stays in seconds. `--set` widens any of them.
    explore_sweeps = (
        {},
        {"variant": VARIANT.C, "ncpus": (1, 2, 3), "summers": 0},
        {"variant": VARIANT.C, "ncpus": (1, 2), "summers": 1},
        {"variant": (VARIANT.B, VARIANT.C), "irq": 1, "ncpus": (1, 2), "readers": 0, "summers": 0},
        {"variant": VARIANT.C, "migrations": 1, "ncpus": 2, "readers": 0, "summers": 0},
        {"variant": VARIANT.A, "ncpus": (1, 2, 3), "readers": 0, "summers": 0},
        {"limited": 1, "ncpus": (1, 2), "batch": 2, "readers": (0, 1), "summers": 0},
        # Liveness: tasks that add forever (the abstraction below), for B's and C's slow paths.
        {"forever": 1, "variant": (VARIANT.B, VARIANT.C), "ncpus": 2, "batch": 2, "readers": 0, "summers": 0},
    )

    variant = Param(VARIANT.B, domain=VARIANT, explore=(VARIANT.B,), prove=(VARIANT.B, VARIANT.C),
                    doc="the add_batch variant (A before 805afd830099; B to 6.10; C since 6.11)")
    ncpus = Param(2, domain=range(1, 8193), explore=range(1, 4), prove=range(1, 8193),
                  doc="CPUs, each with its own local and one adding task")
    batch = Param(lambda p: Max(32, 2 * p.ncpus), domain=range(1, 1 << 31), explore=(2, 3),
                  prove=("default", "symbolic"),
                  doc="the batch; percpu_counter_batch = max(32, 2 * num_online_cpus())")
    ops = Param(lambda p: p.batch, domain=range(0, 1 << 16), prove=("symbolic",),
                doc="percpu_counter_add_batch calls per task (default: batch, enough to fold)")
    large = Param(0, domain=range(0, 1 << 31), doc="an extra amount to add, 0 for none "
                  "(an amount >= batch always takes the slow path)")
    irq = Param(0, domain=range(0, 9), prove=("symbolic",),
                doc="adds made by each CPU's interrupt handler (percpu_counter_add in hard-irq context)")
    migrations = Param(0, domain=range(0, 4), doc="variant C, limited=0: times the scheduler moves a task "
                       "between its this_cpu_read and its this_cpu_try_cmpxchg")
    limited = Param(0, domain=(0, 1), prove=(0, 1), doc="1: positive adds are __percpu_counter_limited_add(fbc, limit, 1, batch)")
    limit = Param(lambda p: p.ncpus * p.batch, domain=range(0, 1 << 31),
                  doc="limited_add's limit (default ncpus * batch: its fast path is taken from the start)")
    readers = Param(0, domain=(0, 1), explore=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    forever = Param(0, domain=(0, 1), doc="1: the liveness abstraction: tasks add forever, fbc->count and E are "
                    "dropped (with limited=0, readers=0, summers=0: nothing else reads them)")
    summers = Param(0, domain=(0, 1), explore=(0, 1), doc="CPUs doing one __percpu_counter_sum")

    adders = Role("ncpus", symmetric=True, cpu=_on, cpus="adders",
                  doc="CPUs, each with a task calling percpu_counter_add_batch (variant C: the scheduler may move it)")
    reader = Role("readers", doc="a CPU calling percpu_counter_read / read_positive")
    summer = Role("summers", doc="a CPU calling __percpu_counter_sum")

    count = Shared(0, type=S64, doc="fbc->count, written under fbc->lock")
    lock = Lock(doc="fbc->lock (raw_spinlock_t): the task holding it")
    local = PerCpu(0, type=S32, role="adders", doc="*per_cpu_ptr(fbc->counters, cpu)")
    irqs = PerCpu(0, type=IRQS_OFF, role="adders", doc="interrupts off on this CPU")
    pc = PerCpu(ADD.idle, type=ADD, role="adders", doc="where the task is in add_batch / limited_add")
    pending = PerCpu(0, type=Int, role="adders", doc="the amount of the task's add in flight")
    seen = PerCpu(0, type=Int, role="adders", doc="the task's `count`: the local it read (A, C) or folds")
    ops_left = PerCpu(lambda p: p.ops, role="adders", doc="adds the task has still to make")
    preempt = PerCpu(0, type=PREEMPT_COUNT, role="adders", doc="the task's preempt_count (variant A)")
    moved_to = PerCpu(NOBODY, type=CpuId, role="adders", doc="the CPU the task was moved to, if any")
    irq_left = PerCpu(lambda p: p.irq, role="adders", doc="adds this CPU's interrupt handler has still to make")
    moves = Ghost(0, doc="migrations so far")
    lim_acc = Shared(0, type=S64, doc="limited_add's `count` while it sums under fbc->lock")
    exact = Ghost(0, doc="E: every add past its linearisation point")

    # Unbounded runs for liveness: the add budget is never used up, and the two values that grow
    # without bound are dropped. No guard reads them, and no update of another variable does
    # except limited_add's, a reader's and a summer's, which forever=1 leaves out.
    unbounded = Abstraction(lambda p: p.forever == 1, freeze=("ops_left", "count", "exact"),
                            requires=(lambda p: not (p.limited or p.readers or p.summers),
                                      "limited=0, readers=0 and summers=0 (they read the dropped fbc->count)"),
                            doc="forever=1: every task calls add_batch forever; fbc->count and E are dropped")

    # A returned value is checked the moment it is returned and only the verdict is kept
    # (the caller's copy is dead afterwards): the state stays small, the claim is the same.
    read_pc = PerCpu(READ.idle, type=READ, role="reader")
    read_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the read was within the bound of E")
    read_pos_ok = PerCpu(0, type=Bool, role="reader",
                         doc="ghost: read_positive was within the bound of max(E, 0)")
    read_off = PerCpu(0, type=Bool, role="reader", doc="ghost: the read differed from E")

    sum_pc = PerCpu(SUM.idle, type=SUM, role="summer")
    sum_acc = PerCpu(0, role="summer", doc="ret in __percpu_counter_sum")
    summed = PerCpu(0, type=Bool, role="adders", doc="the scan under fbc->lock (sum, limited_add) has read "
                                                     "this CPU's local")
    sum_overlap = Ghost(0, type=Bool, doc="a lockless add ran while the summer was scanning")
    sum_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned was within its bound of E")
    sum_exact_ok = PerCpu(0, type=Bool, role="summer",
                          doc="ghost: the sum returned was E, or an add overlapped it")
    sum_off = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned differed from E")

    # What decides the slow path; a bug spec overrides it (K-CMPXCHG-PAREN).
    folds = staticmethod(Port.folds)

    # -- variant B: local_irq_save() around the whole add ---------------------------------
    @action(role="adders", choose={"amount": _amounts}, applies=_variant("B"), access=THIS_CPU)
    def add_fast(s, t, amount):
        """B: local_irq_save(); count = __this_cpu_read(local) + amount; this_cpu_add(); local_irq_restore()."""
        c = s.local[t] + amount
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _positive_ok(s, amount), Not(s.spec.folds(s, c))),
                    local={t: c}, ops_left={t: s.ops_left[t] - 1}, exact=s.exact + amount, sum_overlap=_overlap(s))

    @action(role="adders", choose={"amount": _amounts}, applies=_variant("B"), access=OWN_LOCAL)
    def add_slow(s, t, amount):
        """B: local_irq_save(); count = __this_cpu_read(local) + amount; abs(count) >= batch: the slow path."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _positive_ok(s, amount),
                        s.spec.folds(s, s.local[t] + amount)),
                    pc={t: ADD.acquire}, pending={t: amount}, ops_left={t: s.ops_left[t] - 1}, irqs={t: 1})

    # fbc->lock is a raw spinlock: a queued spinlock (qspinlock, FIFO), so a CPU that spins on it is
    # served once the CPUs queued before it are: strongly fair. The steps it runs with the lock held
    # are weakly fair: a CPU with interrupts off runs on.
    @action(role="adders", applies=_variant("B"), fair="strong")
    def acquire(s, t):
        """B: raw_spin_lock(&fbc->lock) (interrupts already off). A limited_add waiting here (its amount is
        positive) takes the lock in limited_lock instead."""
        return when(And(s.pc[t] == ADD.acquire, Or(s.limited == 0, s.pending[t] < 0), s.lock == NOBODY),
                    lock=t, pc={t: ADD.fold})

    # -- variant A: preempt_disable(), decision with interrupts on ----------------------
    @action(role="adders", choose={"amount": _amounts}, applies=_variant("A"), access=OWN_LOCAL)
    def preempt_read(s, t, amount):
        """A: preempt_disable(); count = __this_cpu_read(*fbc->counters) + amount (interrupts on)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _positive_ok(s, amount)),
                    pc={t: ADD.read}, pending={t: amount}, seen={t: s.local[t]}, ops_left={t: s.ops_left[t] - 1},
                    preempt={t: 1})

    @action(role="adders", applies=_variant("A"), access=THIS_CPU)
    def this_cpu_add(s, t):
        """A: abs(count) < batch: this_cpu_add(*fbc->counters, amount) (irq-safe RMW of the current local);
        preempt_enable()."""
        return when(And(s.pc[t] == ADD.read, Not(s.spec.folds(s, s.seen[t] + s.pending[t]))),
                    local={t: s.local[t] + s.pending[t]}, exact=s.exact + s.pending[t], pc={t: ADD.idle},
                    pending={t: 0}, seen={t: 0}, preempt={t: 0}, sum_overlap=_overlap(s))

    # -- variant C: this_cpu_try_cmpxchg loop ---------------------------------------------
    @action(role="adders", choose={"amount": _amounts}, applies=_variant("C"),
            access=Load("local", "once"))
    def this_cpu_read(s, t, amount):
        """C: count = this_cpu_read(*fbc->counters) (preemptible: the task may move after this)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _positive_ok(s, amount), _runs(s, t)),
                    pc={t: ADD.read}, pending={t: amount}, seen={t: Select(s.local, _on(s, t))},
                    ops_left={t: s.ops_left[t] - 1})

    @action(role="adders", applies=_variant("C"), access=THIS_CPU)
    def try_cmpxchg(s, t):
        """C: abs(count + amount) < batch: this_cpu_try_cmpxchg(*fbc->counters, &count, count + amount)
        succeeds (the local of the CPU it runs on still holds count)."""
        cpu = _on(s, t)
        return when(And(s.pc[t] == ADD.read, _runs(s, t), Not(s.spec.folds(s, s.seen[t] + s.pending[t])),
                        Select(s.local, cpu) == s.seen[t]),
                    local={cpu: s.seen[t] + s.pending[t]}, exact=s.exact + s.pending[t], pc={t: ADD.idle},
                    pending={t: 0}, seen={t: 0}, sum_overlap=_overlap(s))

    @action(role="adders", applies=_variant("C"), access=THIS_CPU)
    def try_cmpxchg_fails(s, t):
        """C: the cmpxchg fails (an interrupt or a migration changed the local it compares): count = the
        local's value, and the loop repeats its batch check."""
        cpu = _on(s, t)
        return when(And(s.pc[t] == ADD.read, _runs(s, t), Not(s.spec.folds(s, s.seen[t] + s.pending[t])),
                        Select(s.local, cpu) != s.seen[t]),
                    seen={t: Select(s.local, cpu)})

    @action(role="adders", choose={"dest": lambda p: p.adders},
            applies=lambda p: p.variant == VARIANT.C and p.migrations > 0 and not p.limited,
            access=Fence("mb"))
    def migrate(s, t, dest):
        """C: the scheduler moves the preempted task to another CPU between its read and its cmpxchg."""
        return when(And(s.pc[t] == ADD.read, s.moves < s.migrations, _on(s, t) != dest),
                    moved_to={t: If(dest == t, NOBODY, dest)}, moves=s.moves + 1)

    # -- the slow path of A and C: raw_spin_lock_irqsave ------------------------------------
    @action(role="adders", applies=_variant("A", "C"), fair="strong")
    def lock_irqsave(s, t):
        """A, C: abs(count) >= batch: raw_spin_lock_irqsave(&fbc->lock, flags)."""
        return when(And(s.pc[t] == ADD.read, _runs(s, t),
                        s.spec.folds(s, s.seen[t] + s.pending[t]), s.lock == NOBODY),
                    lock=t, irqs={_on(s, t): 1}, pc={t: ADD.fold})

    # -- the fold, common to every variant ----------------------------------------------------
    @action(role="adders", fair="weak",
            access=(OWN_LOCAL, Load("count", "plain"), Store("count", "plain")))
    def fold(s, t):
        """fbc->count += count: the linearisation point. A folds the local it read before locking
        (`count`); B and C read it now (C: `count = __this_cpu_read(*fbc->counters)`, on the CPU it
        runs on now)."""
        c = s.seen[t] if s.variant == VARIANT.A else Select(s.local, _on(s, t))
        return when(s.pc[t] == ADD.fold, count=s.count + c + s.pending[t], exact=s.exact + s.pending[t],
                    seen={t: c}, pc={t: ADD.zero})

    @action(role="adders", fair="weak", access=THIS_CPU)
    def zero(s, t):
        """__this_cpu_sub(*fbc->counters, count - amount): subtracts what was folded (in A, an interrupt's
        add since the read stays)."""
        cpu = _on(s, t)
        return when(s.pc[t] == ADD.zero, local={cpu: Select(s.local, cpu) - s.seen[t]},
                    pending={t: 0}, seen={t: 0}, pc={t: ADD.release})

    @action(role="adders", fair="weak")
    def release(s, t):
        """raw_spin_unlock(&fbc->lock); interrupts restored (B: local_irq_restore; A, C: the irqrestore;
        A: preempt_enable)."""
        return when(s.pc[t] == ADD.release, lock=NOBODY, pc={t: ADD.idle}, irqs={_on(s, t): 0}, preempt={t: 0})

    # -- the interrupt handler: percpu_counter_add() in hard-irq context ------------------------
    @action(role="adders", choose={"amount": (-1, 1)}, irq=True, applies=lambda p: p.irq, access=THIS_CPU)
    def irq_add_fast(s, cpu, amount):
        """Interrupt: percpu_counter_add(fbc, amount) with abs(local + amount) < batch: one local add."""
        c = s.local[cpu] + amount
        return when(And(s.irq_left[cpu] > 0, Not(s.spec.folds(s, c))), local={cpu: c},
                    irq_left={cpu: s.irq_left[cpu] - 1}, exact=s.exact + amount, sum_overlap=_overlap(s))

    @action(role="adders", choose={"amount": (-1, 1)}, irq=True, applies=lambda p: p.irq)
    def irq_add_slow(s, cpu, amount):
        """Interrupt: the slow path, once fbc->lock is free: fbc->count += local + amount; local = 0."""
        c = s.local[cpu] + amount
        return when(And(s.irq_left[cpu] > 0, s.spec.folds(s, c), s.lock == NOBODY), count=s.count + c, local={cpu: 0},
                    irq_left={cpu: s.irq_left[cpu] - 1}, exact=s.exact + amount)

    # -- __percpu_counter_limited_add(fbc, limit, 1, batch), v6.6 ----------------------------------
    @action(role="adders", applies=_limited, access=(OWN_LOCAL, Load("count", "plain", race_ok=True)))
    def limited_check(s, t):
        """limited_add: local_irq_save(); unknown = batch * num_online_cpus(); count = __this_cpu_read();
        abs(count + amount) <= batch && fbc->count + unknown <= limit: the lockless fast path."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _runs(s, t),
                        abs(s.local[t] + 1) <= s.batch, s.count + s.batch * s.ncpus <= s.limit),
                    pc={t: ADD.lim_add}, ops_left={t: s.ops_left[t] - 1}, irqs={t: 1})

    @action(role="adders", applies=_limited, access=THIS_CPU)
    def limited_fast_add(s, t):
        """limited_add: this_cpu_add(*fbc->counters, amount); local_irq_restore(); return true."""
        return when(s.pc[t] == ADD.lim_add, local={t: s.local[t] + 1}, exact=s.exact + 1, pc={t: ADD.idle},
                    irqs={t: 0}, sum_overlap=_overlap(s))

    @action(role="adders", applies=_limited)
    def limited_slow_check(s, t):
        """limited_add: the fast-path test fails: take the slow path (interrupts stay off)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _runs(s, t),
                        Or(abs(s.local[t] + 1) > s.batch, s.count + s.batch * s.ncpus > s.limit)),
                    pc={t: ADD.acquire}, pending={t: 1}, ops_left={t: s.ops_left[t] - 1}, irqs={t: 1})

    @action(role="adders", applies=_limited)
    def limited_lock(s, t):
        """limited_add: raw_spin_lock(); count = fbc->count + amount; count - unknown > limit: refuse
        (unlock, return false); count + unknown <= limit: good; else sum every CPU."""
        acc = s.count + 1
        unknown = s.batch * s.ncpus
        refuse = acc - unknown > s.limit
        return when(And(s.pc[t] == ADD.acquire, s.pending[t] > 0, s.lock == NOBODY),
                    lock=If(refuse, NOBODY, t), irqs={t: If(refuse, 0, 1)}, lim_acc=If(refuse, 0, acc),
                    pending={t: If(refuse, 0, 1)},
                    pc={t: If(refuse, ADD.idle, If(acc + unknown <= s.limit, ADD.lim_fold, ADD.lim_scan))})

    @action(role="adders", choose={"other": Between(0, lambda p: p.ncpus - 1)}, applies=_limited,
            access=Load("local", "plain", slot=_other, race_ok=True))
    def limited_sum(s, t, other):
        """limited_add: for_each_cpu_or(cpu, online, dying): count += *per_cpu_ptr(counters, cpu)."""
        return when(And(s.pc[t] == ADD.lim_scan, s.summed[other] == 0),
                    lim_acc=s.lim_acc + s.local[other], summed={other: 1})

    @action(role="adders", applies=_limited)
    def limited_sum_done(s, t):
        """limited_add: count > limit: refuse (unlock, return false); else good."""
        refuse = s.lim_acc > s.limit
        return when(And(s.pc[t] == ADD.lim_scan, Sum(s.summed) == s.ncpus),
                    summed=Fill(0), lim_acc=0, lock=If(refuse, NOBODY, t),
                    irqs={t: If(refuse, 0, 1)}, pending={t: If(refuse, 0, 1)},
                    pc={t: If(refuse, ADD.idle, ADD.lim_fold)})

    @action(role="adders", applies=_limited)
    def limited_fold(s, t):
        """limited_add: count = __this_cpu_read(); fbc->count += count + amount; __this_cpu_sub(count);
        raw_spin_unlock(); local_irq_restore(); return true."""
        return when(s.pc[t] == ADD.lim_fold, count=s.count + s.local[t] + 1, local={t: 0}, exact=s.exact + 1,
                    lim_acc=0, pending={t: 0}, lock=NOBODY, irqs={t: 0}, pc={t: ADD.idle})

    # -- percpu_counter_read() ----------------------------------------------------
    @action(role="reader", access=Load("count", "plain", race_ok=True))
    def read(s, cpu):
        """percpu_counter_read(): one lockless load of fbc->count (read_positive clamps it at 0)."""
        bound = s.ncpus * (s.batch - 1 + s.limited)
        return when(s.read_pc[cpu] == READ.idle, read_pc={cpu: READ.done},
                    read_ok={cpu: abs(s.count - s.exact) <= bound},
                    read_pos_ok={cpu: abs(Max(s.count, 0) - Max(s.exact, 0)) <= bound},
                    read_off={cpu: s.count != s.exact})

    # -- __percpu_counter_sum() ------------------------------------------------------
    @action(role="summer", fair="strong")
    def sum_lock(s, cpu):
        """__percpu_counter_sum(): raw_spin_lock_irqsave(&fbc->lock)."""
        return when(And(s.sum_pc[cpu] == SUM.idle, s.lock == NOBODY), lock=cpu, sum_pc={cpu: SUM.locked})

    @action(role="summer", fair="weak", access=Load("count", "plain"))
    def sum_count(s, cpu):
        """__percpu_counter_sum(): ret = fbc->count."""
        return when(s.sum_pc[cpu] == SUM.locked, sum_acc={cpu: s.count}, sum_pc={cpu: SUM.scan})

    @action(role="summer", choose={"other": lambda p: p.adders}, fair="weak",
            access=Load("local", "plain", slot=_other, race_ok=True))
    def sum_local(s, cpu, other):
        """__percpu_counter_sum(): ret += *per_cpu_ptr(fbc->counters, other), for a CPU not yet visited."""
        return when(And(s.sum_pc[cpu] == SUM.scan, s.summed[other] == 0),
                    sum_acc={cpu: s.sum_acc[cpu] + s.local[other]}, summed={other: 1})

    @action(role="summer", fair="weak")
    def sum_unlock(s, cpu):
        """__percpu_counter_sum(): raw_spin_unlock_irqrestore(); return ret.

        The returned value is judged here against E at the moment of return."""
        ret = s.sum_acc[cpu]
        return when(And(s.sum_pc[cpu] == SUM.scan, Sum(s.summed) == s.ncpus),
                    lock=NOBODY, sum_pc={cpu: SUM.done}, sum_acc={cpu: 0}, summed=Fill(0), sum_overlap=0,
                    sum_ok={cpu: abs(ret - s.exact) <= 2 * s.ncpus * (s.batch - 1 + s.limited)},
                    sum_exact_ok={cpu: Or(ret == s.exact, s.sum_overlap == 1)},
                    sum_off={cpu: ret != s.exact})

    @terminal
    def all_work_done(s):
        """Every task has made its adds (an interrupt that never came is fine), every read and sum returned."""
        return AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.adders]
                     + [s.read_pc[c] == READ.done for c in s.reader]
                     + [s.sum_pc[c] == SUM.done for c in s.summer])

    # -- properties --------------------------------------------------------------------
    # The sum lemma's per-element bounds (each proved from the invariants below).
    sum_bounds = Port.sum_bounds

    read_bound = Port.read_bound

    read_bound_limited = Port.read_bound_limited

    add_batch_bound_with_limited_add = Port.add_batch_bound_with_limited_add

    read_bound_is_tight = Port.read_bound_is_tight

    read_bound_limited_is_tight = Port.read_bound_limited_is_tight

    @witness(reaches=("read_bound_is_tight",), violates=("read_bound_minus_one",),
             at={"ncpus": (4, 26, 64, 256)}, applies=lambda p: p.variant == VARIANT.B and not p.limited)
    def every_cpu_fills_its_local(p):
        """Each CPU in turn adds +1 batch - 1 times: every local at batch - 1, count still 0."""
        for c in p.adders:
            yield "add_fast", c, {"amount": 1}, p.batch - 1

    read_bound_minus_one = Port.read_bound_minus_one

    @invariant(expect="violated", applies=lambda p: p.ops >= p.batch and not p.large and not p.limited)
    def read_bound_counting_pending(s):
        """False on purpose: E taken to include the amounts of adds that have only decided
        the slow path. Such an add is not yet visible anywhere, so this claim fails."""
        waiting = Sum(If(Or(s.pc[c] == ADD.acquire, s.pc[c] == ADD.fold), s.pending[c], 0) for c in s.adders)
        return abs(s.count - (s.exact + waiting)) <= s.ncpus * (s.batch - 1)

    local_bound = Port.local_bound

    local_bound_limited = Port.local_bound_limited

    conservation = Port.conservation

    compare_margin_sound = Port.compare_margin_sound

    limit_exceeded_by_at_most_racing_adds = Port.limit_exceeded_by_at_most_racing_adds

    # The strengthening that makes the bounds inductive (proved by the Z3 backend,
    # checked in every state by the explorer): lemmas, not claims; --prover pdr needs none of them.
    task_stays_on_its_cpu = Port.task_stays_on_its_cpu

    @invariant(role="adders", lemma=True)
    def lock_held_in_critical_section(s, t):
        """A task holds fbc->lock exactly from its lock to its unlock."""
        return (s.lock == t) == _holds_lock(s, t)

    @invariant(role="adders", lemma=True)
    def interrupts_off_in_sections(s, t):
        """A task inside an irqs-off section has interrupts off on its CPU."""
        return Implies(_irqs_off_section(s, t), Select(s.irqs, _on(s, t)) == 1)

    @invariant(role="adders", lemma=True)
    def interrupts_off_only_in_sections(s, c):
        """Interrupts are off on a CPU only while its own task, or the task holding fbc->lock, is there
        inside an irqs-off section."""
        own = And(s.moved_to[c] == NOBODY, _irqs_off_section(s, c))
        holder = And(s.lock != NOBODY, _on(s, s.lock) == c)
        return Implies(s.irqs[c] == 1, Or(own, holder))

    @invariant(role="adders", lemma=True, applies=lambda p: p.limited)
    def limited_fast_path_checked(s, t):
        """limited_add: between its check and its this_cpu_add, the local still passes the check (interrupts
        are off on its CPU, so nothing else writes it)."""
        return Implies(s.pc[t] == ADD.lim_add, abs(s.local[t] + 1) <= s.batch)

    @invariant(role="adders", lemma=True, applies=lambda p: p.variant != VARIANT.A)
    def zero_subtracts_what_was_folded(s, t):
        """B, C: between the fold and the sub the local still holds what was folded (interrupts are off
        and no other task runs there)."""
        return Implies(s.pc[t] == ADD.zero, Select(s.local, _on(s, t)) == s.seen[t])

    @invariant(lemma=True)
    def conservation_through_fold(s):
        """count + sum of locals == E, except between the holder's fold and its sub,
        when count already holds what it folded."""
        folded = If(s.lock == NOBODY, 0, If(Select(s.pc, s.lock) == ADD.zero, Select(s.seen, s.lock), 0))
        return s.count + Sum(s.local) - folded == s.exact

    a_fold_happens = Port.a_fold_happens

    @sometimes(applies=lambda p: p.irq > 0 and p.variant != VARIANT.B and p.ops > 0)
    def an_add_is_interrupted(s):
        """An interrupt's add lands between a task's read of its local and its update (A: the decision is
        stale; C: the cmpxchg will fail)."""
        return AnyOf([And(s.pc[t] == ADD.read, Select(s.local, _on(s, t)) != s.seen[t]) for t in s.adders])

    # The same condition as migrate's: with limited=1 the model moves no task (its limited_add steps act on
    # the task's own CPU), so there this witness has nothing to see and is not asked for.
    @sometimes(applies=lambda p: p.migrations > 0 and p.variant == VARIANT.C and p.ncpus > 1 and p.ops > 0
               and not p.limited)
    def a_task_adds_on_another_cpu(s):
        """A migrated task is between its read and its cmpxchg on its new CPU."""
        return AnyOf([And(s.pc[t] == ADD.read, s.moved_to[t] != NOBODY) for t in s.adders])

    @sometimes(applies=lambda p: p.limited and p.ncpus * p.ops > p.limit)
    def a_limited_add_is_refused(s):
        """limited_add returns false: the limit is reached and an add is refused."""
        return And(s.exact == s.limit, AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.adders]),
                   s.ncpus * s.ops > s.limit)

    @leads_to(applies=lambda p: p.forever == 1)
    def every_started_fold_completes(s):
        """A task that has decided the slow path (B: waiting to take fbc->lock; A, C: its local would
        reach batch) returns from add_batch: it takes the lock in turn, folds, unlocks. Stated for
        task 0; the tasks are symmetric, so it holds for each."""
        t = s.adders[0]
        waiting = Or(s.pc[t] == ADD.acquire, s.pc[t] == ADD.fold, s.pc[t] == ADD.zero, s.pc[t] == ADD.release,
                     And(s.pc[t] == ADD.read, s.spec.folds(s, s.seen[t] + s.pending[t])))
        return waiting, s.pc[t] == ADD.idle

    # SC-only: "E at that moment" is the SC order of steps; under tso and lkmm the read may return a store of
    # fbc->count that E has moved past. The weak-memory claim beside it: read_bound, of every store of
    # fbc->count at the moment it is made (a read returns one of them).
    @invariant(applies=lambda p: p.readers > 0, sc_only="read_bound")
    def read_within_bound(s):
        """What percpu_counter_read returned is within the bound of E at that moment."""
        r = s.reader[0]
        return Or(s.read_pc[r] == READ.idle, s.read_ok[r] == 1)

    @invariant(applies=lambda p: p.readers > 0, sc_only="read_bound")
    def read_positive_within_bound(s):
        """percpu_counter_read_positive (ret < 0 ? 0 : ret) is within the bound of max(E, 0)."""
        r = s.reader[0]
        return Or(s.read_pc[r] == READ.idle, s.read_pos_ok[r] == 1)

    a_read_is_approximate = Port.a_read_is_approximate

    @invariant(applies=lambda p: p.summers > 0)
    def sum_within_bound(s):
        """A sum overlapping lockless adds is off by at most 2 * (batch - 1) per CPU: each local
        it read lies in [-(batch-1), batch-1] and so does that local when the sum returns."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.sum_ok[c] == 1)

    # SC-only: "no lockless add overlapped" is the SC order of steps; nothing in add_batch or the sum orders an
    # add before the sum, so under tso and lkmm an add SC placed before it may be unseen. The weak-memory claims
    # beside it: sum_within_bound here, and check_mm_refcount's check_mm_sum_exact (the caller's ordering).
    @invariant(applies=lambda p: p.summers > 0, sc_only="sum_within_bound")
    def sum_exact_without_overlap(s):
        """A sum that no lockless add overlapped returns E exactly."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.sum_exact_ok[c] == 1)

    @sometimes(applies=lambda p: p.summers > 0)
    def a_sum_is_exact(s):
        """A sum returns E (the exactness claim above is not vacuous)."""
        c = s.summer[0]
        return And(s.sum_pc[c] == SUM.done, s.sum_off[c] == 0)

    @sometimes(applies=lambda p: p.summers > 0 and p.batch > 1 and p.ops > 0)
    def a_sum_is_approximate(s):
        """A sum overlapped by lockless adds returns a value other than E."""
        c = s.summer[0]
        return And(s.sum_pc[c] == SUM.done, s.sum_off[c] == 1)


def _holds_lock(s, t):
    pc = s.pc[t]
    return Or(pc == ADD.fold, pc == ADD.zero, pc == ADD.release, pc == ADD.lim_scan, pc == ADD.lim_fold)


def _irqs_off_section(s, t):
    """Task t is between a local_irq_save (or an irqsave lock) and its restore."""
    pc = s.pc[t]
    return Or(_holds_lock(s, t), pc == ADD.acquire, pc == ADD.lim_add)


def _positive_ok(s, amount):
    """With limited=1 a positive add is a limited_add, not an add_batch."""
    return Or(s.limited == 0, amount < 0)
