# SPDX-License-Identifier: GPL-2.0-only
"""The eager per-CPU counter: lib/percpu_counter.c, written as its kernel functions (process functions).

Models the three ``percpu_counter_add_batch()`` variants kernels have run
(reference section 1.2), an interrupt handler adding on every CPU, task
migration, ``percpu_counter_read()`` / ``percpu_counter_read_positive()``,
``__percpu_counter_sum()``, the margin of ``__percpu_counter_compare()`` and
``__percpu_counter_limited_add()``:

- A (before 805afd830099, early 2023): ``preempt_disable()``, a plain read
  of the local and the decision with interrupts on, then ``this_cpu_add`` or
  ``raw_spin_lock_irqsave`` and ``__this_cpu_sub(count - amount)``;
- B (805afd830099 to 6.10, and without ``CONFIG_HAVE_CMPXCHG_LOCAL`` since):
  the whole add inside ``local_irq_save()``;
- C (6.11+, x86-64): ``this_cpu_read``, a ``this_cpu_try_cmpxchg`` loop that
  a migration or an interrupt can make fail, and a slow path that re-reads
  the local of the CPU it is on under ``fbc->lock``.

Each function is written as the C reads (quoted in its docstring), with ``k.<primitive>`` for each kernel
primitive (one atomic step each, ``checker/language/primitives.py``) and ``with k.atomic():`` where this model
merges statements that no other CPU can tell apart from one step (interrupts off on this CPU, or a lock held,
and nothing another CPU reads in between). The program counter, the registers holding
``count``/``amount``/``flags`` between steps, the guards, ``access=`` and fairness are generated
(``checker/language/process.py``). The hand-written pc machine this replaced is kept as
tests/pc_machines/percpu_eager.py and checked against it, state for state (tests/test_process_port.py).
"""
from checker import (IRQS_OFF, NOBODY, PREEMPT_COUNT, S32, S64, Abstraction, AllOf, And, AnyOf, Bool, CpuId, Enum,
                     Fence, Fill, Ghost, If, Implies, Lock, Max, Or, Param, PerCpu, Role, Select, Shared, Spec,
                     Sum, action, invariant, leads_to, sometimes, terminal, when, witness)
from checker.language.process import at, holding, irqs_off, process

VARIANT = Enum("A", "B", "C", name="variant")
ADD_B, ADD_A, ADD_C = "percpu_counter_add_batch_b", "percpu_counter_add_batch_a", "percpu_counter_add_batch"
LIMITED, SUM = "percpu_counter_limited_add", "percpu_counter_sum"


def _amounts(p):
    """The amounts add_batch is called with: with limited=1 a positive add is a limited_add, not an add_batch."""
    return tuple(a for a in (-1, 1) + ((p.large,) if p.large else ()) if a < 0 or not p.limited)


def _on(s, t):
    """The CPU task ``t`` runs on: its own unless the scheduler moved it (variant C only)."""
    if s.variant != VARIANT.C or not s.migrations:
        return t
    to = Select(s.moved_to, t)
    return If(to == NOBODY, t, to)


def _runs(s, t):
    """Task ``t`` can run: no other task holds its CPU with interrupts off."""
    return Select(s.irqs, _on(s, t)) == 0


def _variant(*names):
    return lambda p: p.variant in tuple(getattr(VARIANT, n) for n in names)


def _overlap(s):
    """The sum_overlap ghost after a lockless add: set if a summer is scanning."""
    return If(at(s, s.summer[0], SUM, "loop"), 1, s.sum_overlap) if s.summers else s.sum_overlap


def _judge_read(s, cpu, ret):
    """What percpu_counter_read() (and read_positive(): ret < 0 ? 0 : ret) returned, judged against E the moment
    it is read."""
    bound = s.ncpus * (s.batch - 1 + s.limited)
    return {"read_ok": {cpu: abs(ret - s.exact) <= bound},
            "read_pos_ok": {cpu: abs(Max(ret, 0) - Max(s.exact, 0)) <= bound}, "read_off": {cpu: ret != s.exact}}


def _judge_sum(s, cpu, ret):
    """What __percpu_counter_sum() returned, judged against E as it unlocks; the overlap flag cleared with it."""
    return {"sum_ok": {cpu: abs(ret - s.exact) <= 2 * s.ncpus * (s.batch - 1 + s.limited)},
            "sum_exact_ok": {cpu: Or(ret == s.exact, s.sum_overlap == 1)}, "sum_off": {cpu: ret != s.exact},
            "sum_overlap": 0}


class PercpuEager(Spec):
    """percpu_counter_add_batch() (A, B, C) with interrupts and migration; read, sum, compare, limited_add.

    There is one task per CPU, task ``t`` starting on CPU ``t``; each makes
    ``ops`` calls of ``percpu_counter_add_batch(fbc, amount, batch)`` (with
    ``limited=1``, its positive calls are ``__percpu_counter_limited_add(fbc,
    limit, 1, batch)``, as shmem makes them). Every step where another CPU or
    this CPU's interrupt handler can interleave is its own step; a statement
    only this CPU can see joins its neighbour (``with k.atomic():``). The
    interrupt handler of each CPU makes ``irq`` adds, wherever that CPU has
    interrupts on. With variant C the scheduler may move a task between its
    read and its cmpxchg (``migrations`` times in all).
    """

    kernel = ("lib/percpu_counter.c: percpu_counter_add_batch as before 805afd830099 (A), as in v6.6 "
              "c439d5e8a0de (B) and as in v6.11 (C, this_cpu_try_cmpxchg); percpu_counter_read, "
              "percpu_counter_read_positive, __percpu_counter_sum, __percpu_counter_compare, "
              "__percpu_counter_limited_add (v6.6)")
    assumptions = (
        "no CPU hotplug (percpu_hotplug models it): every CPU stays online, so num_online_cpus() is ncpus and "
        "sum's online mask is every CPU",
        "the v6.6 walk for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask) in __percpu_counter_sum and "
        "limited_add is modelled as 'any CPU not yet visited' (an over-approximation of the ascending walk, "
        "needed for CPU symmetry)",
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
    ops_left = PerCpu(lambda p: p.ops, role="adders", doc="adds the task has still to make")
    preempt = PerCpu(0, type=PREEMPT_COUNT, role="adders", doc="the task's preempt_count (variant A)")
    moved_to = PerCpu(NOBODY, type=CpuId, role="adders", doc="the CPU the task was moved to, if any")
    irq_left = PerCpu(lambda p: p.irq, role="adders", doc="adds this CPU's interrupt handler has still to make")
    moves = Ghost(0, doc="migrations so far")
    exact = Ghost(0, doc="E: every add past its linearisation point")
    unbounded = Abstraction(lambda p: p.forever == 1, freeze=("ops_left", "count", "exact"),
                            requires=(lambda p: not (p.limited or p.readers or p.summers),
                                      "limited=0, readers=0 and summers=0 (they read the dropped fbc->count)"),
                            doc="forever=1: every task calls add_batch forever; fbc->count and E are dropped")
    read_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the read was within the bound of E")
    read_pos_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: read_positive was within the bound of max(E, 0)")
    read_off = PerCpu(0, type=Bool, role="reader", doc="ghost: the read differed from E")
    summed = PerCpu(0, type=Bool, role="adders", doc="the scan under fbc->lock has read this CPU's local")
    sum_overlap = Ghost(0, type=Bool, doc="a lockless add ran while the summer was scanning")
    sum_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned was within its bound of E")
    sum_exact_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned was E, or an add overlapped it")
    sum_off = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned differed from E")

    # The decisions a bug spec changes without copying a function (specs/bugs/eager_*.py): what decides the slow
    # path (K-CMPXCHG-PAREN, a > for >=), what the slow path subtracts, whether the sum takes fbc->lock.
    @staticmethod
    def folds(s, count):
        """abs(count) >= batch: the add must fold into fbc->count."""
        return abs(count) >= s.batch

    @staticmethod
    def subtracted(s, folded, amount):
        """What the slow path's __this_cpu_sub takes from the local: the local it folded (count - amount in A
        and B, count in C)."""
        return folded

    @process(role="adders", calls="ops_left", args={"amount": _amounts}, applies=_variant("B"), runs=_runs)
    def percpu_counter_add_batch_b(k, s, t, amount):
        """B (805afd830099 to v6.10)::

            local_irq_save(flags);
            count = __this_cpu_read(*fbc->counters) + amount;
            if (abs(count) >= batch) {
                    raw_spin_lock(&fbc->lock);
                    fbc->count += count;
                    __this_cpu_sub(*fbc->counters, count - amount);
                    raw_spin_unlock(&fbc->lock);
            } else {
                    this_cpu_add(*fbc->counters, amount);
            }
            local_irq_restore(flags);
        """
        flags = k.local_irq_save()
        with k.atomic():  # interrupts off: the read and the fast path's add are one step (nothing between is seen)
            count = k.raw_cpu_read(s.local) + amount
            if not s.spec.folds(s, count):
                k.this_cpu_add(s.local, amount)
                s.exact += amount
                s.sum_overlap = _overlap(s)
                k.local_irq_restore(flags)
                return
        k.raw_spin_lock(s.lock)
        with k.atomic():
            s.count += count
            s.exact += amount
        k.raw_cpu_sub(s.local, s.spec.subtracted(s, count - amount, amount))
        k.raw_spin_unlock(s.lock)
        k.local_irq_restore(flags)

    @process(role="adders", calls="ops_left", args={"amount": _amounts}, applies=_variant("A"), runs=_runs)
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
        """
        k.preempt_disable()
        count = k.raw_cpu_read(s.local) + amount
        if s.spec.folds(s, count):
            flags = k.raw_spin_lock_irqsave(s.lock)
            with k.atomic():
                s.count += count
                s.exact += amount
            k.raw_cpu_sub(s.local, s.spec.subtracted(s, count - amount, amount))
            k.raw_spin_unlock_irqrestore(s.lock, flags)
        else:
            k.this_cpu_add(s.local, amount)
            s.exact += amount
            s.sum_overlap = _overlap(s)
        k.preempt_enable()

    @process(role="adders", calls="ops_left", args={"amount": _amounts}, applies=_variant("C"), runs=_runs)
    def percpu_counter_add_batch(k, s, t, amount):
        """C (v6.11, CONFIG_HAVE_CMPXCHG_LOCAL)::

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
                k.raw_cpu_sub(s.local, s.spec.subtracted(s, count, amount))
                k.raw_spin_unlock_irqrestore(s.lock, flags)
                return
            ok, count = k.this_cpu_try_cmpxchg(s.local, count, count + amount)
            if ok:
                s.exact += amount
                s.sum_overlap = _overlap(s)
                return

    @action(role="adders", choose={"dest": lambda p: p.adders},
            applies=lambda p: p.variant == VARIANT.C and p.migrations > 0 and not p.limited, access=Fence("mb"))
    def migrate(s, t, dest):
        """C: the scheduler moves the preempted task to another CPU between its read and its cmpxchg."""
        return when(And(at(s, t, ADD_C, "loop"), s.moves < s.migrations, _on(s, t) != dest),
                    moved_to={t: If(dest == t, NOBODY, dest)}, moves=s.moves + 1)

    @process(role="adders", irq=True, calls="irq_left", args={"amount": (-1, 1)}, applies=lambda p: p.irq)
    def percpu_counter_add(k, s, cpu, amount):
        """The interrupt handler: percpu_counter_add(fbc, amount) in hard-irq context (B's code: interrupts
        are already off, so it is one step; its slow path waits for fbc->lock to be free)."""
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
                s.sum_overlap = _overlap(s)

    @process(role="adders", calls="ops_left", applies=lambda p: p.limited == 1, runs=_runs)
    def percpu_counter_limited_add(k, s, t):
        """__percpu_counter_limited_add(fbc, limit, 1, batch), v6.6 (amount = 1: shmem's call)::

            local_irq_save(flags);
            unknown = batch * num_online_cpus();
            count = __this_cpu_read(*fbc->counters);
            if (abs(count + amount) <= batch && fbc->count + unknown <= limit) {
                    this_cpu_add(*fbc->counters, amount);
                    local_irq_restore(flags);
                    return true;
            }
            raw_spin_lock(&fbc->lock);
            count = fbc->count + amount;
            if (count - unknown > limit)
                    goto out;
            if (count + unknown <= limit)
                    good = true;
            if (!good) {
                    for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask)
                            count += *per_cpu_ptr(fbc->counters, cpu);
                    if (count > limit)
                            goto out;
                    good = true;
            }
            count = __this_cpu_read(*fbc->counters);
            fbc->count += count + amount;
            __this_cpu_sub(*fbc->counters, count);
        out:
            raw_spin_unlock(&fbc->lock);
            local_irq_restore(flags);
            return good;
        """
        with k.atomic():
            flags = k.local_irq_save()
            count = k.raw_cpu_read(s.local)
            rough = k.data_race(s.count)
        if abs(count + 1) <= s.batch and rough + s.batch * s.ncpus <= s.limit:
            with k.atomic():
                k.this_cpu_add(s.local, 1)
                s.exact += 1
                s.sum_overlap = _overlap(s)
                k.local_irq_restore(flags)
            return
        with k.atomic():  # a refusal from fbc->count alone unlocks at once: no other CPU sees the lock held
            k.raw_spin_lock(s.lock)
            count = s.count + 1
            if count - s.batch * s.ncpus > s.limit:
                k.raw_spin_unlock(s.lock)
                k.local_irq_restore(flags)
                return
        if count + s.batch * s.ncpus > s.limit:
            while Sum(s.summed) < s.ncpus:
                cpu = k.any_cpu(s.summed)
                count += k.data_race(k.per_cpu(s.local, cpu))
            s.summed = Fill(0)
            if count > s.limit:
                with k.atomic():
                    k.raw_spin_unlock(s.lock)
                    k.local_irq_restore(flags)
                return
        with k.atomic():
            count = k.raw_cpu_read(s.local)
            s.count += count + 1
            k.raw_cpu_sub(s.local, count)
            s.exact += 1
            k.raw_spin_unlock(s.lock)
            k.local_irq_restore(flags)

    @process(role="reader", returns=_judge_read)
    def percpu_counter_read(k, s, cpu):
        """percpu_counter_read() (include/linux/percpu_counter.h; read_positive's clamp is _judge_read's)::

            return fbc->count;
        """
        return k.data_race(s.count)

    @process(role="summer", returns=_judge_sum, fair="weak")
    def percpu_counter_sum(k, s, cpu):
        """__percpu_counter_sum()::

            raw_spin_lock_irqsave(&fbc->lock, flags);
            ret = fbc->count;
            for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask) {
                    s32 *pcount = per_cpu_ptr(fbc->counters, cpu);
                    ret += *pcount;
            }
            raw_spin_unlock_irqrestore(&fbc->lock, flags);
            return ret;
        """
        flags = k.raw_spin_lock_irqsave(s.lock)
        with k.atomic():
            ret = s.count
        while Sum(s.summed) < s.ncpus:
            other = k.any_cpu(s.summed)
            ret += k.data_race(k.per_cpu(s.local, other))
        s.summed = Fill(0)
        k.raw_spin_unlock_irqrestore(s.lock, flags)
        return ret

    @terminal
    def all_work_done(s):
        """Every task has made its adds (an interrupt that never came is fine), every read and sum returned."""
        return AllOf([And(s.adders_pc[c] == 0, s.ops_left[c] == 0) for c in s.adders]
                     + [s.reader_pc[c] != 0 for c in s.reader] + [s.summer_pc[c] != 0 for c in s.summer])

    # The sum lemma's per-element bounds (each proved from the invariants below).
    sum_bounds = {"local": lambda s: (-(s.batch - 1 + s.limited), s.batch - 1 + s.limited)}

    @invariant(applies=lambda p: not p.limited)
    def read_bound(s):
        """PC-READ: |fbc->count - E| <= ncpus * (batch - 1) in every state."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1)

    @invariant(applies=lambda p: p.limited)
    def read_bound_limited(s):
        """PC-READ with __percpu_counter_limited_add: its `abs(count + amount) <= batch` fast path lets a
        local reach batch, so |fbc->count - E| <= ncpus * batch."""
        return abs(s.count - s.exact) <= s.ncpus * s.batch

    @invariant(expect="violated", applies=lambda p: p.limited and p.ops >= p.batch)
    def add_batch_bound_with_limited_add(s):
        """False on purpose: add_batch's bound ncpus * (batch - 1) once limited_add is used. Violated:
        the difference between the two bounds is reached."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1)

    @sometimes(applies=lambda p: p.ops >= p.batch - 1 and not p.large and not p.limited)
    def read_bound_is_tight(s):
        """The read bound is reached: every CPU holds batch - 1 in its local."""
        return abs(s.count - s.exact) == s.ncpus * (s.batch - 1)

    @sometimes(applies=lambda p: p.limited and p.ops >= p.batch)
    def read_bound_limited_is_tight(s):
        """The limited_add bound is reached: every CPU holds batch in its local."""
        return abs(s.count - s.exact) == s.ncpus * s.batch

    @witness(reaches=("read_bound_is_tight",), violates=("read_bound_minus_one",),
             at={"ncpus": (4, 26, 64, 256)}, applies=lambda p: p.variant == VARIANT.B and not p.limited)
    def every_cpu_fills_its_local(p):
        """Each CPU in turn adds +1 batch - 1 times (B's fast path): every local at batch - 1, count still 0."""
        for c in p.adders:
            yield "percpu_counter_add_batch_b_L17_atomic_ret", c, {"amount": 1}, p.batch - 1

    @invariant(expect="violated", applies=lambda p: p.ops >= p.batch and not p.large and not p.limited)
    def read_bound_minus_one(s):
        """False on purpose: the bound one smaller. Violated, so the bound above is exact."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1) - 1

    @invariant(expect="violated", applies=lambda p: p.ops >= p.batch and not p.large and not p.limited)
    def read_bound_counting_pending(s):
        """False on purpose: E taken to include the amounts of adds that have only decided
        the slow path. Such an add is not yet visible anywhere, so this claim fails."""
        return abs(s.count - (s.exact + Sum(_deciding(s, c) for c in s.adders))) <= s.ncpus * (s.batch - 1)

    @invariant(role="adders", inductive=True, applies=lambda p: not p.limited)
    def local_bound(s, cpu):
        """PC-LOCAL: every local stays within batch - 1 of zero."""
        return abs(s.local[cpu]) <= s.batch - 1

    @invariant(role="adders", inductive=True, applies=lambda p: p.limited)
    def local_bound_limited(s, cpu):
        """PC-LOCAL with limited_add: every local stays within batch of zero."""
        return abs(s.local[cpu]) <= s.batch

    @invariant
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + sum of locals == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @invariant
    def compare_margin_sound(s):
        """__percpu_counter_compare(fbc, rhs, batch) answers from the rough count when |count - rhs| >
        batch * num_online_cpus(). That answer is the exact comparison with E for every rhs if and only if
        |count - E| <= batch * ncpus (rhs = E is the counterexample otherwise)."""
        return abs(s.count - s.exact) <= s.batch * s.ncpus

    @invariant(applies=lambda p: p.limited and not p.irq, proof=False)
    def limit_exceeded_by_at_most_racing_adds(s):
        """limited_add: the counter exceeds its limit by at most ncpus - 1: a slow path's sum is no snapshot,
        so each other CPU's fast-path add that passed its check before the sum read that CPU may land after
        it (bugs/eager_limited_overshoot.py shows the limit itself is not kept). Stated without interrupt
        adders, whose positive adds are plain percpu_counter_add."""
        return s.exact <= s.limit + s.ncpus - 1

    # The strengthening that makes the bounds inductive (proved by the Z3 backend, checked in every state by the
    # explorer): lemmas, not claims; --prover pdr needs none of them. The control points are named by the kernel
    # function and the primitive they stand before.
    @invariant(role="adders", lemma=True, applies=lambda p: p.variant != VARIANT.C or not p.migrations)
    def task_stays_on_its_cpu(s, t):
        """Without migration, task t runs on CPU t."""
        return s.moved_to[t] == NOBODY

    @invariant(role="adders", lemma=True)
    def lock_held_in_critical_section(s, t):
        """A task holds fbc->lock exactly between its lock and its unlock."""
        return (s.lock == t) == _holding(s, t)

    @invariant(role="adders", lemma=True)
    def interrupts_off_in_sections(s, t):
        """A task inside an irqs-off section has interrupts off on its CPU."""
        return Implies(_irqs_off(s, t), Select(s.irqs, _on(s, t)) == 1)

    @invariant(role="adders", lemma=True)
    def interrupts_off_only_in_sections(s, c):
        """Interrupts are off on a CPU only while its own task, or the task holding fbc->lock, is there
        inside an irqs-off section."""
        own = And(s.moved_to[c] == NOBODY, _irqs_off(s, c))
        holder = And(s.lock != NOBODY, _on(s, s.lock) == c)
        return Implies(s.irqs[c] == 1, Or(own, holder))

    @invariant(role="adders", lemma=True)
    def saved_flags_had_interrupts_on(s, t):
        """Every flags a task saved (local_irq_save, raw_spin_lock_irqsave) says interrupts were on: each
        irqs-off section starts where they are."""
        return s.adders_flags[t] == 0

    @invariant(role="adders", lemma=True, applies=lambda p: p.variant == VARIANT.B)
    def b_count_is_what_it_read(s, t):
        """B: from its read to its fold, the local still holds what the task read (interrupts are off)."""
        return Implies(Or(at(s, t, ADD_B, "raw_spin_lock"), at(s, t, ADD_B, "atomic")),
                       s.local[t] == s.adders_count[t] - s.adders_amount[t])

    @invariant(role="adders", lemma=True, applies=lambda p: p.limited)
    def limited_fast_path_checked(s, t):
        """limited_add: between its check and its this_cpu_add, the local still passes the check (interrupts
        are off on its CPU, so nothing else writes it)."""
        return Implies(at(s, t, LIMITED, "this_cpu_add"), abs(s.local[t] + 1) <= s.batch)

    @invariant(role="adders", lemma=True, applies=lambda p: p.variant != VARIANT.A)
    def zero_subtracts_what_was_folded(s, t):
        """B, C: between the fold and the sub the local still holds what was folded (interrupts are off
        and no other task runs there)."""
        return Implies(_at_zero(s, t), Select(s.local, _on(s, t)) == _folded(s, t))

    @invariant(lemma=True)
    def conservation_through_fold(s):
        """count + sum of locals == E, except between the holder's fold and its sub,
        when count already holds what it folded."""
        folded = If(s.lock == NOBODY, 0, If(_at_zero(s, s.lock), _folded(s, s.lock), 0))
        return s.count + Sum(s.local) - folded == s.exact

    @sometimes
    def a_fold_happens(s):
        """Some add takes the slow path and folds into fbc->count."""
        return s.count != 0

    @sometimes(applies=lambda p: p.irq > 0 and p.variant != VARIANT.B and p.ops > 0)
    def an_add_is_interrupted(s):
        """An interrupt's add lands between a task's read of its local and its update (A: the decision is
        stale; C: the cmpxchg will fail)."""
        return AnyOf([And(_reading(s, t), Select(s.local, _on(s, t)) != _read_value(s, t)) for t in s.adders])

    @sometimes(applies=lambda p: p.migrations > 0 and p.variant == VARIANT.C and p.ncpus > 1 and p.ops > 0
               and not p.limited)
    def a_task_adds_on_another_cpu(s):
        """A migrated task is between its read and its cmpxchg on its new CPU."""
        return AnyOf([And(at(s, t, ADD_C, "loop"), s.moved_to[t] != NOBODY) for t in s.adders])

    @sometimes(applies=lambda p: p.limited and p.ncpus * p.ops > p.limit)
    def a_limited_add_is_refused(s):
        """limited_add returns false: the limit is reached and an add is refused."""
        return And(s.exact == s.limit, AllOf([And(s.adders_pc[c] == 0, s.ops_left[c] == 0) for c in s.adders]),
                   s.ncpus * s.ops > s.limit)

    @leads_to(applies=lambda p: p.forever == 1)
    def every_started_fold_completes(s):
        """A task that has decided the slow path (B: waiting to take fbc->lock; A, C: its local would
        reach batch) returns from add_batch: it takes the lock in turn, folds, unlocks. Stated for
        task 0; the tasks are symmetric, so it holds for each."""
        t = s.adders[0]
        waiting = Or(_holding(s, t), at(s, t, ADD_B, "raw_spin_lock"), at(s, t, ADD_A, "raw_spin_lock_irqsave"),
                     And(at(s, t, ADD_C, "loop"), s.spec.folds(s, s.adders_count[t] + s.adders_amount[t])))
        return waiting, s.adders_pc[t] == 0

    # SC-only: "E at that moment" is the SC order of steps; under tso and lkmm the read may return a store of
    # fbc->count that E has moved past. The weak-memory claim beside it: read_bound, of every store of
    # fbc->count at the moment it is made (a read returns one of them).
    @invariant(applies=lambda p: p.readers > 0, sc_only="read_bound")
    def read_within_bound(s):
        """What percpu_counter_read returned is within the bound of E at that moment."""
        r = s.reader[0]
        return Or(s.reader_pc[r] == 0, s.read_ok[r] == 1)

    @invariant(applies=lambda p: p.readers > 0, sc_only="read_bound")
    def read_positive_within_bound(s):
        """percpu_counter_read_positive (ret < 0 ? 0 : ret) is within the bound of max(E, 0)."""
        r = s.reader[0]
        return Or(s.reader_pc[r] == 0, s.read_pos_ok[r] == 1)

    @sometimes(applies=lambda p: p.readers > 0 and p.ops >= p.batch - 1 and p.batch > 1)
    def a_read_is_approximate(s):
        """A read returns a value other than E."""
        return s.read_off[s.reader[0]] == 1

    @invariant(applies=lambda p: p.summers > 0)
    def sum_within_bound(s):
        """A sum overlapping lockless adds is off by at most 2 * (batch - 1) per CPU: each local
        it read lies in [-(batch-1), batch-1] and so does that local when the sum returns."""
        c = s.summer[0]
        return Or(s.summer_pc[c] != 1, s.sum_ok[c] == 1)

    # SC-only: "no lockless add overlapped" is the SC order of steps; nothing in add_batch or the sum orders an
    # add before the sum, so under tso and lkmm an add SC placed before it may be unseen. The weak-memory claims
    # beside it: sum_within_bound here, and check_mm_refcount's check_mm_sum_exact (the caller's ordering).
    @invariant(applies=lambda p: p.summers > 0, sc_only="sum_within_bound")
    def sum_exact_without_overlap(s):
        """A sum that no lockless add overlapped returns E exactly."""
        c = s.summer[0]
        return Or(s.summer_pc[c] != 1, s.sum_exact_ok[c] == 1)

    @sometimes(applies=lambda p: p.summers > 0)
    def a_sum_is_exact(s):
        """A sum returns E (the exactness claim above is not vacuous)."""
        c = s.summer[0]
        return And(s.summer_pc[c] == 1, s.sum_off[c] == 0)

    @sometimes(applies=lambda p: p.summers > 0 and p.batch > 1 and p.ops > 0)
    def a_sum_is_approximate(s):
        """A sum overlapped by lockless adds returns a value other than E."""
        c = s.summer[0]
        return And(s.summer_pc[c] == 1, s.sum_off[c] == 1)


def _holding(s, t):
    """Task t is between its lock and its unlock of fbc->lock (from the lowering's structure)."""
    return holding(s, t, "lock", "adders")


def _irqs_off(s, t):
    """Task t is inside an irqs-off section (local_irq_save or an irqsave lock), from the lowering's structure."""
    return irqs_off(s, t, "adders")


def _at_zero(s, t):
    """Between the fold and the __this_cpu_sub (B, C; A too)."""
    return Or(at(s, t, ADD_B, "raw_cpu_sub"), at(s, t, ADD_C, "raw_cpu_sub"), at(s, t, ADD_A, "raw_cpu_sub"))


def _folded(s, t):
    """What the fold took from the local: B and A hold count + amount, C holds count."""
    count, amount = Select(s.adders_count, t), Select(s.adders_amount, t)
    return If(s.variant == VARIANT.C, count, count - amount)


def _reading(s, t):
    """Between the read of the local and the update that relies on it (A: the decision; C: the cmpxchg)."""
    return Or(at(s, t, ADD_C, "loop"), at(s, t, ADD_A, "raw_spin_lock_irqsave"))


def _read_value(s, t):
    count, amount = Select(s.adders_count, t), Select(s.adders_amount, t)
    return If(s.variant == VARIANT.C, count, count - amount)


def _deciding(s, c):
    """The amount of an add that has decided the slow path but not folded (B, limited_add: waiting for the lock;
    A, B, C: locked, before the fold)."""
    return If(Or(at(s, c, ADD_B, "raw_spin_lock"), at(s, c, ADD_B, "atomic"), at(s, c, ADD_A, "atomic"),
                 at(s, c, ADD_C, "raw_cpu_read")), Select(s.adders_amount, c),
              If(at(s, c, LIMITED, "raw_spin_lock"), 1, 0))

