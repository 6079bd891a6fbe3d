"""The eager counter across CPU hotplug: lib/percpu_counter.c and kernel/cpu.c.

Three designs of reference section 1.4, chosen with ``design``:

- H1: the fold in ``percpu_counter_cpu_dead`` (CPUHP_PERCPU_CNT_DEAD, on a
  control CPU after the CPU is dead) and ``__percpu_counter_sum`` over
  ``cpu_online_mask``: the 6.2 code that made check_mm print "BUG: Bad
  rss-counter state" (K-SUM-HOTPLUG);
- H2: the same fold, ``sum`` over ``cpu_online_mask | cpu_dying_mask``
  (Dave Chinner's 8b57b11cca88, v6.6);
- H3: the fold in ``percpu_counter_cpu_dying`` (CPUHP_AP_PERCPU_COUNTER_STARTING,
  on the outgoing CPU inside stop_machine) and ``sum`` over online CPUs
  (Thomas Gleixner's rework posted by Dennis Zhou, 2024-01).

Adds are variant B (``local_irq_save`` around the whole add, the code of all
three designs' era). ``percpu_counter_batch`` is recomputed by
``compute_batch_value`` as the designs do: ``max(batch_floor, 2 *
num_online_cpus())`` (``batch_floor`` is 32 in the kernel; explored smaller so
that the batch changes with 2 or 3 CPUs, as it does above 16 in the kernel).
"""
from checker import (NOBODY, S32, S64, AllOf, And, Bool, Enum, Fill, Ghost, If, Int, Lock, Max, Or, Param, PerCpu,
                     Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when)

#: The hotplug designs of reference section 1.4.
DESIGN = Enum("H1", "H2", "H3", name="design")
#: Where a CPU is in the hotplug state machine, as far as the counter can tell.
HP = Enum("online", "offline", "dead", "coming", name="hotplug")
#: Where the CPU's task is in percpu_counter_add_batch() (variant B).
ADD = Enum("idle", "acquire", "fold", "zero", "release", name="add_pc")
#: Where the summer is in __percpu_counter_sum().
SUM = Enum("idle", "locked", "scan", "done", name="sum_pc")


def _batch(s, online):
    """compute_batch_value(): max(32, 2 * num_online_cpus()), with the floor a parameter."""
    return Max(s.batch_floor, 2 * online)


def _online(s):
    return Sum(If(s.hp[c] == HP.online, 1, 0) for c in s.adders)


def compare_margin_covers(s):
    """|count - E| <= percpu_counter_batch * num_online_cpus()."""
    return abs(s.count - s.exact) <= s.batch * _online(s)


def _in_sum_mask(s, c):
    """The CPUs __percpu_counter_sum walks: online (H1, H3) or online | dying (H2)."""
    online = s.hp[c] == HP.online
    return Or(online, s.dying[c] == 1) if s.design == DESIGN.H2 else online


class PercpuHotplug(Spec):
    """percpu_counter_add_batch (B) and __percpu_counter_sum while CPUs go down and up under H1, H2 or H3."""

    kernel = ("lib/percpu_counter.c: compute_batch_value, percpu_counter_cpu_dead (H1, H2: v6.2 / v6.6 "
              "8b57b11cca88), percpu_counter_cpu_dying (H3: 'lib/percpu_counter: Fix CPU hotplug handling', "
              "2024-01), __percpu_counter_sum, __percpu_counter_compare; kernel/cpu.c cpuhp_set_state "
              "(the dying mask), take_cpu_down (stop_machine)")
    assumptions = (
        "one counter: percpu_counters_lock (taken by the fold around the list walk, and by init/destroy, "
        "which are not modelled) is uncontended and left out",
        "take_cpu_down runs under stop_machine: it waits until no CPU is inside an interrupts-off section "
        "(an add's slow path, a sum) and no other CPU takes a step while it runs, so it is one step",
        "the fold under fbc->lock in percpu_counter_cpu_dead is one step taken when the lock is free, with "
        "compute_batch_value just before it",
        "an add reads percpu_counter_batch in its first step (the kernel loads the argument just before; a "
        "store in between only changes which batch the add uses, and the bounds are stated over the batches "
        "adds used)",
        "__percpu_counter_sum's mask walk visits the CPUs in any order (see percpu_eager)",
    )

    design = Param(DESIGN.H3, domain=DESIGN, doc="H1 fold at DEAD, online sum; H2 online|dying sum; H3 fold "
                   "at DYING under stop_machine")
    explore_sweeps = ({"ncpus": 2, "reonline": (0, 1)}, {"ncpus": 3})

    ncpus = Param(2, domain=range(2, 65), doc="CPUs, each with a task adding")
    ops = Param(2, domain=range(0, 17), doc="percpu_counter_add calls per task")
    batch_floor = Param(lambda p: 2 * p.ncpus, domain=range(1, 1 << 16), explore=(1, "default"),
                        doc="the floor of compute_batch_value (32 in the kernel; default 2 * ncpus keeps the batch "
                            "fixed, as 32 does up to 16 CPUs; 1 makes it shrink when a CPU goes down)")
    downs = Param(1, domain=range(0, 3), doc="CPUs that go offline (cpu_down)")
    reonline = Param(0, domain=(0, 1), doc="1: an offlined CPU may come back (cpu_up)")
    partial = Param(0, domain=(0, 1), doc="H1, H2: a cpu_down may stop between CPUHP_TEARDOWN_CPU and "
                    "CPUHP_PERCPU_CNT_DEAD (sysfs hotplug/target) and the CPU be brought back up from there")
    summers = Param(1, domain=(0, 1), doc="a CPU doing one __percpu_counter_sum")

    adders = Role("ncpus", symmetric=True, doc="CPUs that add and may go offline")
    summer = Role("summers", doc="a CPU that stays online and calls __percpu_counter_sum")

    count = Shared(0, type=S64, doc="fbc->count")
    lock = Lock(doc="fbc->lock (raw_spinlock_t)")
    batch = Shared(lambda p: Max(p.batch_floor, 2 * p.ncpus), type=Int, doc="percpu_counter_batch")
    local = PerCpu(0, type=S32, role="adders", doc="*per_cpu_ptr(fbc->counters, cpu)")
    hp = PerCpu(HP.online, type=HP, role="adders", doc="the CPU's hotplug state")
    dying = PerCpu(0, type=Bool, role="adders", doc="cpu_dying_mask: set when a teardown starts, cleared "
                   "when a bringup starts (cpuhp_set_state)")
    pc = PerCpu(ADD.idle, type=ADD, role="adders")
    pending = PerCpu(0, type=Int, role="adders")
    ops_left = PerCpu(lambda p: p.ops, role="adders")
    slack = PerCpu(0, type=Int, role="adders", doc="ghost: the largest batch - 1 an add used on this CPU "
                   "since its local was last folded")
    downs_left = Ghost(lambda p: p.downs, doc="cpu_down operations still to come")
    hotplug_folded = Ghost(0, type=Bool, doc="a hotplug callback folded a non-zero local")
    exact = Ghost(0, doc="E")

    sum_pc = PerCpu(SUM.idle, type=SUM, role="summer")
    sum_acc = PerCpu(0, role="summer", doc="ret in __percpu_counter_sum")
    summed = PerCpu(0, type=Bool, role="adders", doc="the summer has visited this CPU")
    sum_overlap = Ghost(0, type=Bool, doc="a lockless add ran while the summer was scanning")
    sum_exact_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned E, or an add overlapped it")
    sum_off = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned something other than E")

    # -- percpu_counter_add_batch(fbc, amount, percpu_counter_batch), variant B -------------------
    @action(role="adders", choose={"amount": (-1, 1)})
    def add_fast(s, cpu, amount):
        """local_irq_save(); abs(local + amount) < batch: this_cpu_add(); local_irq_restore()."""
        c = s.local[cpu] + amount
        scanning = s.sum_pc[s.summer[0]] == SUM.scan if s.summers else False
        return when(And(s.hp[cpu] == HP.online, s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0, abs(c) < s.batch),
                    local={cpu: c}, ops_left={cpu: s.ops_left[cpu] - 1}, exact=s.exact + amount,
                    slack={cpu: Max(s.slack[cpu], s.batch - 1)}, sum_overlap=If(scanning, 1, s.sum_overlap))

    @action(role="adders", choose={"amount": (-1, 1)})
    def add_slow(s, cpu, amount):
        """local_irq_save(); abs(local + amount) >= batch: the slow path."""
        return when(And(s.hp[cpu] == HP.online, s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0,
                        abs(s.local[cpu] + amount) >= s.batch),
                    pc={cpu: ADD.acquire}, pending={cpu: amount}, ops_left={cpu: s.ops_left[cpu] - 1})

    @action(role="adders")
    def acquire(s, cpu):
        """raw_spin_lock(&fbc->lock)."""
        return when(And(s.pc[cpu] == ADD.acquire, s.lock == NOBODY), lock=cpu, pc={cpu: ADD.fold})

    @action(role="adders")
    def fold(s, cpu):
        """fbc->count += count (local + amount)."""
        return when(s.pc[cpu] == ADD.fold, count=s.count + s.local[cpu] + s.pending[cpu],
                    exact=s.exact + s.pending[cpu], pc={cpu: ADD.zero})

    @action(role="adders")
    def zero(s, cpu):
        """__this_cpu_sub(*fbc->counters, count - amount): the local becomes 0."""
        return when(s.pc[cpu] == ADD.zero, local={cpu: 0}, pending={cpu: 0}, slack={cpu: 0},
                    pc={cpu: ADD.release})

    @action(role="adders")
    def release(s, cpu):
        """raw_spin_unlock(&fbc->lock); local_irq_restore()."""
        return when(s.pc[cpu] == ADD.release, lock=NOBODY, pc={cpu: ADD.idle})

    # -- CPU hotplug ----------------------------------------------------------------------------
    @action(choose={"cpu": lambda p: p.adders})
    def take_cpu_down(s, cpu):
        """cpu_down(): cpuhp_set_state sets the dying bit; take_cpu_down under stop_machine clears the online
        bit. H3 runs percpu_counter_cpu_dying there: compute_batch_value, then the fold of this CPU's local
        into fbc->count."""
        quiet = AllOf([s.pc[c] == ADD.idle for c in s.adders] + [s.sum_pc[c] != SUM.locked for c in s.summer]
                      + [s.sum_pc[c] != SUM.scan for c in s.summer])
        h3 = s.design == DESIGN.H3
        online = _online(s) - 1
        return when(And(s.downs_left > 0, s.hp[cpu] == HP.online, online >= 1, quiet),
                    hp={cpu: HP.dead if h3 else HP.offline}, dying={cpu: 1}, downs_left=s.downs_left - 1,
                    **({"batch": _batch(s, online), "count": s.count + s.local[cpu], "local": {cpu: 0},
                        "slack": {cpu: 0}, "hotplug_folded": If(s.local[cpu] != 0, 1, s.hotplug_folded)}
                       if h3 else {}))

    @action(choose={"cpu": lambda p: p.adders})
    def percpu_counter_cpu_dead(s, cpu):
        """H1, H2: on a control CPU after the CPU is dead: compute_batch_value(); under fbc->lock,
        fbc->count += *per_cpu_ptr(counters, cpu); *pcount = 0."""
        return when(And(s.design != DESIGN.H3, s.hp[cpu] == HP.offline, s.lock == NOBODY),
                    batch=_batch(s, _online(s)), count=s.count + s.local[cpu], local={cpu: 0}, slack={cpu: 0},
                    hp={cpu: HP.dead}, hotplug_folded=If(s.local[cpu] != 0, 1, s.hotplug_folded))

    @action(choose={"cpu": lambda p: p.adders})
    def cpu_up_start(s, cpu):
        """cpu_up(): cpuhp_set_state clears the dying bit. From DEAD, or (partial) from a teardown stopped
        above CPUHP_PERCPU_CNT_DEAD, whose fold never ran."""
        from_partial = And(s.partial == 1, s.design != DESIGN.H3, s.hp[cpu] == HP.offline)
        return when(And(s.reonline == 1, Or(s.hp[cpu] == HP.dead, from_partial)), hp={cpu: HP.coming},
                    dying={cpu: 0})

    @action(choose={"cpu": lambda p: p.adders})
    def cpu_online(s, cpu):
        """The CPU is marked online; compute_batch_value() runs for it (H1, H2: CPUHP_AP_ONLINE_DYN;
        H3: percpu_counter_cpu_starting with num_online_cpus() + 1)."""
        return when(s.hp[cpu] == HP.coming, hp={cpu: HP.online}, batch=_batch(s, _online(s) + 1))

    # -- __percpu_counter_sum() --------------------------------------------------------------------
    @action(role="summer")
    def sum_lock(s, cpu):
        """raw_spin_lock_irqsave(&fbc->lock); ret = fbc->count."""
        return when(And(s.sum_pc[cpu] == SUM.idle, s.lock == NOBODY), lock=cpu, sum_pc={cpu: SUM.scan},
                    sum_acc={cpu: s.count})

    @action(role="summer", choose={"other": lambda p: p.adders})
    def sum_local(s, cpu, other):
        """for each CPU of the mask: ret += *per_cpu_ptr(counters, cpu); a CPU outside it is passed over."""
        return when(And(s.sum_pc[cpu] == SUM.scan, s.summed[other] == 0),
                    sum_acc={cpu: s.sum_acc[cpu] + If(_in_sum_mask(s, other), s.local[other], 0)},
                    summed={other: 1})

    @action(role="summer")
    def sum_unlock(s, cpu):
        """raw_spin_unlock_irqrestore(); return ret (judged against E now)."""
        ret = s.sum_acc[cpu]
        return when(And(s.sum_pc[cpu] == SUM.scan, Sum(s.summed) == s.ncpus), lock=NOBODY,
                    sum_pc={cpu: SUM.done}, sum_acc={cpu: 0}, summed=Fill(0), sum_overlap=0,
                    sum_exact_ok={cpu: Or(ret == s.exact, s.sum_overlap == 1)}, sum_off={cpu: ret != s.exact})

    @terminal
    def work_done(s):
        """Every online CPU's task has made its adds, the sum has returned (an offline CPU's task waits)."""
        return AllOf([Or(s.hp[c] != HP.online, And(s.pc[c] == ADD.idle, s.ops_left[c] == 0)) for c in s.adders]
                     + [s.sum_pc[c] == SUM.done for c in s.summer])

    # -- properties ------------------------------------------------------------------------------
    @invariant
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + every possible CPU's local == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @invariant(role="adders")
    def local_bound(s, c):
        """PC-LOCAL: a local is within the largest batch - 1 used on it since it was last folded."""
        return abs(s.local[c]) <= s.slack[c]

    @invariant
    def read_bound(s):
        """PC-READ with hotplug: |count - E| <= sum over CPUs of (largest batch used since the last fold - 1)."""
        return abs(s.count - s.exact) <= Sum(s.slack)

    @invariant(applies=lambda p: p.summers)
    def sum_exact_without_overlap(s):
        """PC-SUM: a sum that no lockless add overlapped returns E, whatever hotplug state a CPU is in."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.sum_exact_ok[c] == 1)

    @invariant(applies=lambda p: p.batch_floor >= 2 * p.ncpus)
    def compare_margin_sound(s):
        """__percpu_counter_compare(fbc, rhs, batch): its rough answer (when |count - rhs| > batch *
        num_online_cpus()) is the exact comparison for every rhs iff |count - E| <= batch *
        num_online_cpus() (rhs = E is the counterexample otherwise). Stated where the batch cannot shrink
        (the kernel's 32 floor up to 16 CPUs); bugs/hotplug_compare_shrink.py is the rest."""
        return compare_margin_covers(s)

    @sometimes(applies=lambda p: p.downs > 0 and p.ops > 0)
    def a_hotplug_fold_moves_a_count(s):
        """The hotplug callback folds a non-zero local (the case it exists for)."""
        return s.hotplug_folded == 1

    @sometimes(applies=lambda p: p.summers and p.downs > 0)
    def a_sum_runs_with_a_cpu_down(s):
        """A sum returns while some CPU is not online."""
        return And(s.sum_pc[s.summer[0]] == SUM.done, _online(s) < s.ncpus)

    @sometimes(applies=lambda p: p.reonline and p.downs > 0)
    def a_cpu_comes_back(s):
        """An offlined CPU is online again."""
        return And(s.downs_left < s.downs, _online(s) == s.ncpus)

