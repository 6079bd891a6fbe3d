"""The eager per-CPU counter: lib/percpu_counter.c.

Models ``percpu_counter_add_batch()`` in its interrupts-off form (reference
section 1.2, Variant B: early 2023 to 6.10, and the fallback without
``CONFIG_HAVE_CMPXCHG_LOCAL`` since), ``percpu_counter_read()`` /
``percpu_counter_read_positive()``, and ``__percpu_counter_sum()``.
"""
from checker import (NOBODY, S32, S64, AllOf, And, Bool, Enum, Ghost, If, Implies, Int, Lock, Max, Or, Param, PerCpu,
                     Role, Select, Shared, Spec, Sum, action, invariant, sometimes, terminal, when, witness)

#: Where an adder is inside percpu_counter_add_batch().
ADD = Enum("idle", "acquire", "fold", "zero", "release", name="add_pc")
#: Where a summer is inside __percpu_counter_sum().
SUM = Enum("idle", "locked", "scan", "done", name="sum_pc")
#: Whether a reader has done its percpu_counter_read().
READ = Enum("idle", "done", name="read_pc")


def _amounts(p):
    return (-1, 1) + ((p.large,) if p.large else ())


class PercpuEager(Spec):
    """percpu_counter_add_batch() (irqs off), read(), read_positive(), __percpu_counter_sum().

    Each adder CPU performs ``ops`` calls of ``percpu_counter_add_batch(fbc,
    amount, batch)``. With interrupts off for the whole call nothing else
    runs on that CPU, so the fast path is one step; the slow path is split
    where other CPUs can interleave: the decision, ``raw_spin_lock``, the
    fold into ``fbc->count``, the ``__this_cpu_sub`` that zeroes the local,
    and ``raw_spin_unlock``. Readers do one lockless ``percpu_counter_read``
    each; a summer runs ``__percpu_counter_sum`` one CPU's local per step.
    """

    kernel = ("lib/percpu_counter.c as of v6.6 (c439d5e8a0de): percpu_counter_add_batch with "
              "local_irq_save around the whole add (Variant B), percpu_counter_read, "
              "percpu_counter_read_positive, __percpu_counter_sum")
    assumptions = (
        "no CPU hotplug: every adder CPU stays online, so sum's online mask is every adder",
        "no interrupt-context adders: with irqs off for the whole add they could only run between "
        "two adds, where they behave as one more add of the same CPU",
        "the v6.6 walk for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask) in __percpu_counter_sum (the "
        "online CPUs, with no hotplug) is modelled as 'any CPU not yet visited' "
        "(an over-approximation of the kernel's ascending walk, needed for CPU symmetry); the summer "
        "visits adder CPUs only, since the other CPUs' locals stay 0",
        "the counter starts at 0 (percpu_counter_init(fbc, 0, gfp))",
    )

    ncpus = Param(2, domain=range(1, 8193), explore=range(1, 4), prove=range(1, 8193),
                  doc="adder CPUs (each has its own local)")
    batch = Param(lambda p: Max(32, 2 * p.ncpus), domain=range(1, 1 << 31), explore=(2, 3),
                  prove=("default", "symbolic"),
                  doc="the batch; percpu_counter_batch = max(32, 2 * num_online_cpus())")
    ops = Param(lambda p: p.batch, domain=range(0, 1 << 16), prove=("symbolic",),
                doc="percpu_counter_add_batch calls per adder CPU (default: batch, enough to fold)")
    large = Param(0, domain=range(0, 1 << 31), doc="an extra amount to add, 0 for none "
                  "(an amount >= batch always takes the slow path)")
    readers = Param(0, domain=(0, 1), explore=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(0, domain=(0, 1), explore=(0, 1), doc="CPUs doing one __percpu_counter_sum")

    adders = Role("ncpus", symmetric=True, doc="CPUs calling percpu_counter_add_batch")
    reader = Role("readers", doc="a CPU calling percpu_counter_read / read_positive")
    summer = Role("summers", doc="a CPU calling __percpu_counter_sum")

    count = Shared(0, type=S64, doc="fbc->count, written under fbc->lock")
    lock = Lock(doc="fbc->lock (raw_spinlock_t)")
    local = PerCpu(0, type=S32, role="adders", doc="*per_cpu_ptr(fbc->counters, cpu)")
    pc = PerCpu(ADD.idle, type=ADD, role="adders", doc="where the CPU is in add_batch")
    pending = PerCpu(0, type=Int, role="adders", doc="the amount of the add in its slow path")
    ops_left = PerCpu(lambda p: p.ops, role="adders", doc="adds this CPU has still to make")
    exact = Ghost(0, doc="E: every add past its linearisation point")

    # A returned value is checked the moment it is returned and only the verdict is kept
    # (the caller's copy is dead afterwards): the state stays small, the claim is the same.
    read_pc = PerCpu(READ.idle, type=READ, role="reader")
    read_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the read was within the bound of E")
    read_pos_ok = PerCpu(0, type=Bool, role="reader",
                         doc="ghost: read_positive was within the bound of max(E, 0)")
    read_off = PerCpu(0, type=Bool, role="reader", doc="ghost: the read differed from E")

    sum_pc = PerCpu(SUM.idle, type=SUM, role="summer")
    sum_acc = PerCpu(0, role="summer", doc="ret in __percpu_counter_sum")
    summed = PerCpu(0, type=Bool, role="adders", doc="the summer has read this CPU's local")
    sum_overlap = Ghost(0, type=Bool, doc="a lockless add ran while the summer was scanning")
    sum_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned was within its bound of E")
    sum_exact_ok = PerCpu(0, type=Bool, role="summer",
                          doc="ghost: the sum returned was E, or an add overlapped it")
    sum_off = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned differed from E")

    # -- percpu_counter_add_batch() -------------------------------------------
    @action(role="adders", choose={"amount": _amounts})
    def add_fast(s, cpu, amount):
        """add_batch(): this_cpu_add(*fbc->counters, amount) while |local + amount| < batch."""
        c = s.local[cpu] + amount
        scanning = s.sum_pc[s.summer[0]] == SUM.scan if s.summers else False
        return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0, abs(c) < s.batch),
                    local={cpu: c}, ops_left={cpu: s.ops_left[cpu] - 1}, exact=s.exact + amount,
                    sum_overlap=If(scanning, 1, s.sum_overlap))

    @action(role="adders", choose={"amount": _amounts})
    def add_slow(s, cpu, amount):
        """add_batch(): count = __this_cpu_read(local) + amount; abs(count) >= batch: take the slow path."""
        return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0, abs(s.local[cpu] + amount) >= s.batch),
                    pc={cpu: ADD.acquire}, pending={cpu: amount}, ops_left={cpu: s.ops_left[cpu] - 1})

    @action(role="adders")
    def acquire(s, cpu):
        """add_batch(): raw_spin_lock(&fbc->lock)."""
        return when(And(s.pc[cpu] == ADD.acquire, s.lock == NOBODY), lock=cpu, pc={cpu: ADD.fold})

    @action(role="adders")
    def fold(s, cpu):
        """add_batch(): fbc->count += count (count = local + amount): the linearisation point."""
        return when(s.pc[cpu] == ADD.fold, count=s.count + s.local[cpu] + s.pending[cpu],
                    exact=s.exact + s.pending[cpu], pc={cpu: ADD.zero})

    @action(role="adders")
    def zero(s, cpu):
        """add_batch(): __this_cpu_sub(*fbc->counters, count - amount): the local becomes 0."""
        c = s.local[cpu] + s.pending[cpu]
        return when(s.pc[cpu] == ADD.zero, local={cpu: s.local[cpu] - (c - s.pending[cpu])},
                    pending={cpu: 0}, pc={cpu: ADD.release})

    @action(role="adders")
    def release(s, cpu):
        """add_batch(): raw_spin_unlock(&fbc->lock); local_irq_restore()."""
        return when(s.pc[cpu] == ADD.release, lock=NOBODY, pc={cpu: ADD.idle})

    # -- percpu_counter_read() ----------------------------------------------------
    @action(role="reader")
    def read(s, cpu):
        """percpu_counter_read(): one lockless load of fbc->count (read_positive clamps it at 0)."""
        bound = s.ncpus * (s.batch - 1)
        return when(s.read_pc[cpu] == READ.idle, read_pc={cpu: READ.done},
                    read_ok={cpu: abs(s.count - s.exact) <= bound},
                    read_pos_ok={cpu: abs(Max(s.count, 0) - Max(s.exact, 0)) <= bound},
                    read_off={cpu: s.count != s.exact})

    # -- __percpu_counter_sum() ------------------------------------------------------
    @action(role="summer")
    def sum_lock(s, cpu):
        """__percpu_counter_sum(): raw_spin_lock_irqsave(&fbc->lock)."""
        return when(And(s.sum_pc[cpu] == SUM.idle, s.lock == NOBODY), lock=cpu, sum_pc={cpu: SUM.locked})

    @action(role="summer")
    def sum_count(s, cpu):
        """__percpu_counter_sum(): ret = fbc->count."""
        return when(s.sum_pc[cpu] == SUM.locked, sum_acc={cpu: s.count}, sum_pc={cpu: SUM.scan})

    @action(role="summer", choose={"other": lambda p: p.adders})
    def sum_local(s, cpu, other):
        """__percpu_counter_sum(): ret += *per_cpu_ptr(fbc->counters, other), for a CPU not yet visited."""
        return when(And(s.sum_pc[cpu] == SUM.scan, s.summed[other] == 0),
                    sum_acc={cpu: s.sum_acc[cpu] + s.local[other]}, summed={other: 1})

    @action(role="summer")
    def sum_unlock(s, cpu):
        """__percpu_counter_sum(): raw_spin_unlock_irqrestore(); return ret.

        The returned value is judged here against E at the moment of return."""
        ret = s.sum_acc[cpu]
        return when(And(s.sum_pc[cpu] == SUM.scan, Sum(s.summed) == len(s.adders)),
                    lock=NOBODY, sum_pc={cpu: SUM.done}, sum_acc={cpu: 0},
                    summed={c: 0 for c in s.adders}, sum_overlap=0,
                    sum_ok={cpu: abs(ret - s.exact) <= 2 * s.ncpus * (s.batch - 1)},
                    sum_exact_ok={cpu: Or(ret == s.exact, s.sum_overlap == 1)},
                    sum_off={cpu: ret != s.exact})

    @terminal
    def all_work_done(s):
        return AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.adders]
                     + [s.read_pc[c] == READ.done for c in s.reader]
                     + [s.sum_pc[c] == SUM.done for c in s.summer])

    # -- properties --------------------------------------------------------------------
    # The sum lemma's per-element bounds (each proved from the invariants above).
    sum_bounds = {"local": lambda s: (-(s.batch - 1), s.batch - 1)}

    @invariant
    def read_bound(s):
        """PC-READ: |fbc->count - E| <= ncpus * (batch - 1) in every state."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1)

    @sometimes(applies=lambda p: p.ops >= p.batch - 1 and not p.large)
    def read_bound_is_tight(s):
        """The read bound is reached: every CPU holds batch - 1 in its local."""
        return abs(s.count - s.exact) == s.ncpus * (s.batch - 1)

    @witness(reaches=("read_bound_is_tight",), violates=("read_bound_minus_one",),
             at={"ncpus": (4, 26, 64, 256)})
    def every_cpu_fills_its_local(p):
        """Each CPU in turn adds +1 batch - 1 times: every local at batch - 1, count still 0."""
        for c in p.adders:
            yield "add_fast", c, {"amount": 1}, p.batch - 1

    @invariant(expect="violated", applies=lambda p: p.ops >= p.batch and not p.large)
    def read_bound_minus_one(s):
        """False on purpose: the bound one smaller. Violated, so the bound above is exact."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1) - 1

    @invariant(expect="violated", applies=lambda p: p.ops >= p.batch and not p.large)
    def read_bound_counting_pending(s):
        """False on purpose: E taken to include the amounts of adds that have only decided
        the slow path. Such an add is not yet visible anywhere, so this claim fails."""
        waiting = Sum(If(Or(s.pc[c] == ADD.acquire, s.pc[c] == ADD.fold), s.pending[c], 0) for c in s.adders)
        return abs(s.count - (s.exact + waiting)) <= s.ncpus * (s.batch - 1)

    @invariant(role="adders", inductive=True)
    def local_bound(s, cpu):
        """PC-LOCAL: every local stays within batch - 1 of zero."""
        return abs(s.local[cpu]) <= s.batch - 1

    @invariant
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + sum of locals == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    # The strengthening that makes the bounds inductive (proved by the Z3 backend,
    # checked in every state by the explorer).
    @invariant(role="adders", inductive=True)
    def lock_held_in_critical_section(s, cpu):
        """A CPU holds fbc->lock exactly from its acquire to its release."""
        in_cs = Or(s.pc[cpu] == ADD.fold, s.pc[cpu] == ADD.zero, s.pc[cpu] == ADD.release)
        return And(Implies(s.lock == cpu, in_cs), Implies(in_cs, s.lock == cpu))

    @invariant(inductive=True)
    def conservation_through_fold(s):
        """count + sum of locals == E, except between the holder's fold and its zero,
        when count already holds that CPU's local as well."""
        folded = If(s.lock == NOBODY, 0, If(Select(s.pc, s.lock) == ADD.zero, Select(s.local, s.lock), 0))
        return s.count + Sum(s.local) - folded == s.exact

    @sometimes
    def a_fold_happens(s):
        """Some add takes the slow path and folds into fbc->count."""
        return s.count != 0

    @invariant(applies=lambda p: p.readers > 0)
    def read_within_bound(s):
        """What percpu_counter_read returned is within the bound of E at that moment."""
        r = s.reader[0]
        return Or(s.read_pc[r] == READ.idle, s.read_ok[r] == 1)

    @invariant(applies=lambda p: p.readers > 0)
    def read_positive_within_bound(s):
        """percpu_counter_read_positive (ret < 0 ? 0 : ret) is within the bound of max(E, 0)."""
        r = s.reader[0]
        return Or(s.read_pc[r] == READ.idle, s.read_pos_ok[r] == 1)

    @sometimes(applies=lambda p: p.readers > 0 and p.ops >= p.batch - 1 and p.batch > 1)
    def a_read_is_approximate(s):
        """A read returns a value other than E."""
        return s.read_off[s.reader[0]] == 1

    @invariant(applies=lambda p: p.summers > 0)
    def sum_within_bound(s):
        """A sum overlapping lockless adds is off by at most 2 * (batch - 1) per CPU: each local
        it read lies in [-(batch-1), batch-1] and so does that local when the sum returns."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.sum_ok[c] == 1)

    @invariant(applies=lambda p: p.summers > 0)
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
