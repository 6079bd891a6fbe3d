# SPDX-License-Identifier: GPL-2.0-only
"""The eager counter across CPU hotplug: lib/percpu_counter.c and kernel/cpu.c.

Four hotplug designs, chosen with ``design``, each with the add that shipped
with it (``add``):

- N: the pre-4.10 notifier, ``percpu_counter_hotcpu_callback``, as it was
  from v4.1 to v4.9: ``compute_batch_value()`` on every event; the fold on
  ``CPU_DEAD`` and ``CPU_DEAD_FROZEN`` (the suspend path's CPU_DEAD);
  ``__percpu_counter_sum`` over ``for_each_online_cpu``. ``suspend=1`` lets
  a CPU go down the suspend path (``disable_nonboot_cpus``, the
  ``CPU_TASKS_FROZEN`` events). Before v4.1 (v3.14 among them) the callback
  folded on ``CPU_DEAD`` only (``if (action != CPU_DEAD) return NOTIFY_OK;``,
  read in a v3.13/v3.14-era lib/percpu_counter.c in the index); Jens Axboe's
  2015 "lib/percpu_counter.c: fix bad percpu counter state during suspend"
  (e39435ce68bb, an id and title not in the index: unverified; merged for v4.1, Cc stable; found after
  blk-mq's queue-usage counter hung a virtio-blk guest's suspend) added
  ``CPU_DEAD_FROZEN``. That shipped bug is ``bugs/hotplug_notifier_dead_only.py``;
- H1: the fold in ``percpu_counter_cpu_dead`` (CPUHP_PERCPU_CNT_DEAD, on a
  control CPU after the CPU is dead) and ``__percpu_counter_sum`` over
  ``cpu_online_mask``: the v6.2 code that made check_mm print "BUG: Bad
  rss-counter state" (f1a7941243c1), and its ``check_mm`` fallback
  ``percpu_counter_sum_all`` over the possible CPUs (f689054aace2,
  ``checkmm=2``);
- H2: the same fold, ``sum`` over ``cpu_online_mask | cpu_dying_mask`` (Dave
  Chinner's 8b57b11cca88, v6.3-rc3, with 7ba85fba47bd dropping check_mm's
  sum_all): mainline since, read in a 2025 tree (the fold, the or-mask sum,
  ``__percpu_counter_compare`` and ``__percpu_counter_limited_add`` as here);
- H3: the fold in ``percpu_counter_cpu_dying`` (CPUHP_AP_PERCPU_COUNTER_STARTING,
  on the outgoing CPU inside stop_machine) and ``sum`` over online CPUs
  (Thomas Gleixner's rework posted by Dennis Zhou, 2024-01; not in the
  mainline trees read).

Adds: variant B (``local_irq_save`` around the whole add; 805afd830099 to
6.10, and N's and H1's variant A is the same here: with no interrupt adder,
a preempt-disabled add also holds off stop_machine) or variant C (6.11+,
``CONFIG_HAVE_CMPXCHG_LOCAL``: ``this_cpu_read`` then a
``this_cpu_try_cmpxchg`` loop, preemptible in between, so the task can be
pushed off a CPU going down and finish its add on another). H2 defaults to
C, as mainline ships it. ``limited=1`` makes every add a shmem-style
``__percpu_counter_limited_add(fbc, limit, 1, batch)`` (v6.6+: H2, H3).
``percpu_counter_batch`` is recomputed by ``compute_batch_value`` as the
designs do: ``max(batch_floor, 2 * num_online_cpus())`` (``batch_floor`` is
32 in the kernel; explored smaller so that the batch changes with 2 or 3
CPUs, as it does above 16 in the kernel).

What each design gives (the default sweeps fill a local to batch - 1):
H3 with a fixed batch keeps every property; H2 (mainline) and H1 and N give
compare and limited_add a margin that misses the offline CPU's local
(``compare_margin_misses_an_offline_cpu``,
``limited_add_misses_an_offline_cpu``: expected violations, the shipping
design's own); H1 and N's sums miss it (``sum_misses_an_offline_cpu``);
check_mm's sum_all fallback is exact.
"""
from checker import (NOBODY, S32, S64, AllOf, And, AnyOf, Bool, CpuId, Enum, Fill, Ghost, If, Int, Load, Lock, Max, Not,
                     Or, Param, PerCpu, Rmw, Role, Select, Shared, Spec, Store, Sum, action, invariant, sometimes,
                     spin_lock, spin_unlock, smp_mb, terminal, when)

#: The hotplug designs (reference section 1.4, plus the pre-4.10 notifier).
DESIGN = Enum("H1", "H2", "H3", "N", name="design")
#: The add_batch variant paired with a design (reference section 1.2).
ADDV = Enum("B", "C", name="add")
#: Where a CPU is in the hotplug state machine, as far as the counter can tell.
HP = Enum("online", "offline", "dead", "coming", name="hotplug")
#: Where a task is in percpu_counter_add_batch() (B, C) or __percpu_counter_limited_add().
ADD = Enum("idle", "acquire", "fold", "zero", "release", "read", "lim_scan", "lim_fold", name="add_pc")
#: Where the summer is in __percpu_counter_sum() or check_mm().
SUM = Enum("idle", "locked", "scan", "all_scan", "done", name="sum_pc")

#: Task states inside an interrupts-off section (stop_machine cannot run on that CPU).
IRQS_OFF = (ADD.acquire, ADD.fold, ADD.zero, ADD.release, ADD.lim_scan, ADD.lim_fold)


def _batch(s, online):
    """compute_batch_value(): max(32, 2 * num_online_cpus()), with the floor a parameter."""
    return Max(s.batch_floor, 2 * online)


def _online(s):
    return Sum(If(s.hp[c] == HP.online, 1, 0) for c in s.adders)


#: The memory-model annotations (--memory tso|lkmm), as percpu_eager's: this_cpu_* ops are atomic only to
#: their own CPU and order nothing for others; __this_cpu_read is a plain load of the own local (of the CPU the
#: task runs on: a C task pushed off an outgoing CPU uses its new CPU's); fbc->count is plain under fbc->lock;
#: the remote loads of a sum, of limited_add's sum and of the DEAD fold are plain (the fold's under fbc->lock).
THIS_CPU = Rmw("local", "this_cpu")
OWN_LOCAL = Load("local", "plain")
COUNT_RMW = (Load("count", "plain"), Store("count", "plain"))
#: A remote local and the dying mask's bit for it, as __percpu_counter_sum's and limited_add's walks load them
#: (for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask): plain bitmap loads, against set_bit/clear_bit).
#: The dying mask is weak; it is written by take_cpu_down (stop_machine: a full barrier on every CPU) and
#: cpu_up_start, steps of no CPU (fully ordered for every CPU). The online mask (`hp`) stays sc: it changes under
#: stop_machine (take_cpu_down) and at cpu_online, fully ordered for every CPU, as the dying mask's writers.
WALK = (Load("dying", "plain", slot=lambda s, cpu, other: other, race_ok=True),
        Load("local", "plain", slot=lambda s, cpu, other: other, race_ok=True))


def _dead_cpu(s, ctl, cpu):
    """The slot the DEAD fold loads and stores: the dead CPU's local."""
    return cpu


def _in(x, values):
    return Or(*[x == v for v in values])


def _on(s, t):
    """The CPU task ``t`` runs on: its own unless a cpu_down pushed it off (variant C)."""
    if s.add != ADDV.C or s.limited:
        return t
    return If(s.moved_to[t] == NOBODY, t, s.moved_to[t])


def _runs(s, t):
    """Task ``t`` can take a step: its CPU is online and no other task there is inside an irqs-off
    section (a task pushed onto another CPU shares it with that CPU's own task)."""
    c = _on(s, t)
    others = [And(_on(s, u) == c, _in(s.pc[u], IRQS_OFF)) for u in s.adders if u != t]
    return And(Select(s.hp, c) == HP.online, Not(Or(*others)) if others else True)


def _mm_alive(s):
    """With checkmm, the adds stop once check_mm has begun (the mm is being freed)."""
    return True if not s.checkmm or not s.summers else s.sum_pc[s.summer[0]] == SUM.idle


def compare_margin_covers(s):
    """|count - E| <= percpu_counter_batch * num_online_cpus()."""
    return abs(s.count - s.exact) <= s.batch * _online(s)


def _in_sum_mask(s, c):
    """The CPUs __percpu_counter_sum walks: online (N, H1, H3) or online | dying (H2)."""
    online = s.hp[c] == HP.online
    return Or(online, s.dying[c] == 1) if s.design == DESIGN.H2 else online


def _overlap(s):
    """The sum_overlap ghost after a lockless add: set if the summer is scanning."""
    if not s.summers:
        return s.sum_overlap
    pc = s.sum_pc[s.summer[0]]
    return If(Or(pc == SUM.scan, pc == SUM.all_scan), 1, s.sum_overlap)


def _sum_result(s):
    """The summer's last result against E (a sum that no lockless add overlapped is exact)."""
    c = s.summer[0]
    return Or(s.sum_pc[c] != SUM.done, s.sum_exact_ok[c] == 1)


def _sum_bound(s):
    """2 * ncpus * (the largest batch compute_batch_value can give - 1): each local the sum reads, or misses, is
    within that batch of zero, then and now."""
    return 2 * s.ncpus * (Max(s.batch_floor, 2 * s.ncpus) - 1 + s.limited)


def _limited_margin_result(s):
    return s.lim_over == 0


_FIXED = lambda p: p.batch_floor >= 2 * p.ncpus  # noqa: E731  (the kernel's 32 floor up to 16 CPUs)
_WINDOW = (DESIGN.H1, DESIGN.H2, DESIGN.N)  # the fold runs after the CPU left the online mask


def _fills(p):
    """The adds can fill a local to batch - 1 (limited_add: to batch)."""
    return p.ops >= Max(p.batch_floor, 2 * p.ncpus) - 1 + p.limited


class PercpuHotplug(Spec):
    """percpu_counter_add_batch (B or C), limited_add, __percpu_counter_sum and check_mm while CPUs go down and
    up under N, H1, H2 or H3."""

    kernel = ("lib/percpu_counter.c: compute_batch_value, percpu_counter_hotcpu_callback (N: v4.1 to v4.9, after "
              "the 2015 CPU_DEAD_FROZEN fix; v3.14 to v4.0 folded on CPU_DEAD only), "
              "percpu_counter_cpu_dead (H1: v6.2 f1a7941243c1 era; H2: 8b57b11cca88, v6.3-rc3 to today), "
              "percpu_counter_cpu_dying (H3: 'lib/percpu_counter: Fix CPU hotplug handling', 2024-01), "
              "percpu_counter_add_batch (B: 805afd830099; C: v6.11 this_cpu_try_cmpxchg), __percpu_counter_sum, "
              "percpu_counter_sum_all (f689054aace2, v6.2), __percpu_counter_compare, "
              "__percpu_counter_limited_add (v6.6); kernel/fork.c check_mm (v6.2 and since 7ba85fba47bd); "
              "kernel/cpu.c cpuhp_set_state (the dying mask), take_cpu_down (stop_machine), "
              "kernel/sched/core.c balance_push (tasks pushed off an outgoing CPU)")
    assumptions = (
        "one counter: percpu_counters_lock (taken by the fold around the list walk, and by init/destroy, "
        "which are not modelled) is uncontended and left out",
        "take_cpu_down runs under stop_machine: it waits until no CPU is inside an interrupts-off section "
        "(an add's slow path, a sum) and no other CPU takes a step while it runs, so it is one step; the "
        "steps before it (sched_cpu_deactivate, balance_push moving the CPU's runnable tasks off) are merged "
        "into it",
        "variant C: a task preempted between its this_cpu_read and its this_cpu_try_cmpxchg on a CPU going "
        "down is pushed to another online CPU (chosen) and finishes its add there; an idle task on that CPU "
        "waits for it to come back (its later adds elsewhere would only use locals other tasks already use)",
        "the fold under fbc->lock in percpu_counter_cpu_dead is one step taken when the lock is free, with "
        "compute_batch_value just before it",
        "an add reads percpu_counter_batch in its first step (the kernel loads the argument just before; a "
        "store in between only changes which batch the add uses, and the bounds are stated over the batches "
        "adds used)",
        "__percpu_counter_sum's mask walk visits the CPUs in any order (see percpu_eager)",
        "limited_add's fast path is one step: interrupts are off on its CPU, and its lockless read of "
        "fbc->count is judged at that step (where its decision is made)",
        "check_mm (checkmm > 0) runs when the mm is freed: no add in flight, every page unmapped (E = 0), and "
        "no add after it begins",
        "suspend (N): the CPU goes down and comes back up the same way as cpu_down/cpu_up, with the "
        "CPU_TASKS_FROZEN events; user tasks are not frozen in the model (more orders than the kernel allows)",
    )

    design = Param(DESIGN.H2, domain=DESIGN, doc="N pre-4.10 notifier; H1 fold at DEAD, online sum; H2 online|dying "
                   "sum (mainline); H3 fold at DYING under stop_machine")
    add = Param(lambda p: ADDV.C if p.design == DESIGN.H2 else ADDV.B, domain=ADDV,
                doc="the add_batch variant: C for H2 (mainline since 6.11), B otherwise")
    # The default run: every design with the add it shipped with, a local filled to batch - 1 at 2 CPUs;
    # limited_add and check_mm where they exist; the suspend path for the notifier. The sweeps that take
    # minutes (mainline's C adds with a summer, reonline at the fill, 3 CPUs with a shrinking batch) are
    # the named sweep percpu_hotplug_deep.
    explore_sweeps = (
        {"design": DESIGN.H3, "ncpus": 2},
        {"design": DESIGN.H3, "ncpus": 2, "ops": 2, "reonline": 1, "batch_floor": "default"},
        {"design": DESIGN.H3, "ncpus": 3, "ops": 2, "batch_floor": "default"},
        # mainline: H2 with C adds and a summer, each local filled to batch - 1 (93562 states; issue 29 moved it
        # here from the deep sweep), and the same without the summer and with one add each
        {"design": DESIGN.H2, "ncpus": 2, "batch_floor": "default"},
        {"design": DESIGN.H2, "ncpus": 2, "summers": 0, "batch_floor": "default"},
        {"design": DESIGN.H2, "ncpus": 2, "ops": 1, "batch_floor": "default"},
        {"design": DESIGN.H2, "add": ADDV.B, "ncpus": 2, "batch_floor": "default"},
        {"design": DESIGN.H1, "ncpus": 2, "checkmm": (0, 2), "batch_floor": "default"},
        {"design": (DESIGN.H2, DESIGN.H3), "limited": 1, "ncpus": 2, "summers": 0, "batch_floor": "default"},
        {"design": DESIGN.N, "ncpus": 2, "suspend": 1, "batch_floor": "default"},
    )

    ncpus = Param(2, domain=range(2, 65), doc="CPUs, each with a task adding")
    batch_floor = Param(lambda p: 2 * p.ncpus, domain=range(1, 1 << 16), explore=(1, "default"),
                        doc="the floor of compute_batch_value (32 in the kernel; default 2 * ncpus keeps the batch "
                            "fixed, as 32 does up to 16 CPUs; 1 makes it shrink when a CPU goes down)")
    limited = Param(0, domain=(0, 1), doc="1: every add is __percpu_counter_limited_add(fbc, limit, 1, batch) "
                    "(v6.6+: H2, H3)")
    ops = Param(lambda p: Max(p.batch_floor, 2 * p.ncpus) - 1 + 2 * p.limited, domain=range(0, 17),
                doc="adds per task (default: enough to fill a local to batch - 1; limited: past batch)")
    limit = Param(lambda p: p.ncpus * Max(p.batch_floor, 2 * p.ncpus), domain=range(0, 1 << 16),
                  doc="limited_add's limit (default ncpus * batch: its fast path is open from the start)")
    downs = Param(1, domain=range(0, 3), doc="CPUs that go offline (cpu_down)")
    reonline = Param(0, domain=(0, 1), doc="1: an offlined CPU may come back (cpu_up)")
    partial = Param(0, domain=(0, 1), doc="H1, H2: a cpu_down may stop between CPUHP_TEARDOWN_CPU and "
                    "CPUHP_PERCPU_CNT_DEAD (sysfs hotplug/target) and the CPU be brought back up from there")
    suspend = Param(0, domain=(0, 1), doc="N: a cpu_down may be the suspend path's (CPU_DEAD_FROZEN)")
    summers = Param(1, domain=(0, 1), doc="a CPU doing one __percpu_counter_sum (or check_mm)")
    checkmm = Param(0, domain=(0, 1, 2), doc="the summer is kernel/fork.c check_mm: 1 percpu_counter_sum only "
                    "(v6.2-rc f1a7941243c1, and since 7ba85fba47bd); 2 then percpu_counter_sum_all if non-zero "
                    "(f689054aace2, v6.2)")

    adders = Role("ncpus", symmetric=True, cpu=_on, cpus="adders",
                  doc="CPUs that add and may go offline, each with its task (variant C: a task pushed off an "
                      "outgoing CPU runs on another)")
    summer = Role("summers", doc="a CPU that stays online and calls __percpu_counter_sum")
    control = Role(1, doc="the control CPU that runs cpu_down()'s teardown callbacks after the CPU is dead "
                   "(CPUHP_PERCPU_CNT_DEAD)")

    count = Shared(0, type=S64, doc="fbc->count")
    lock = Lock(doc="fbc->lock (raw_spinlock_t)")
    batch = Shared(lambda p: Max(p.batch_floor, 2 * p.ncpus), type=Int, doc="percpu_counter_batch")
    local = PerCpu(0, type=S32, role="adders", doc="*per_cpu_ptr(fbc->counters, cpu)")
    hp = PerCpu(HP.online, type=HP, role="adders", doc="the CPU's hotplug state")
    dying = PerCpu(0, type=Bool, role="adders", doc="cpu_dying_mask: set when a teardown starts, cleared "
                   "when a bringup starts (cpuhp_set_state)")
    frozen = PerCpu(0, type=Bool, role="adders", doc="N: the CPU went down the suspend path (CPU_TASKS_FROZEN)")
    pc = PerCpu(ADD.idle, type=ADD, role="adders")
    pending = PerCpu(0, type=Int, role="adders", doc="the amount of the task's add in flight")
    seen = PerCpu(0, type=Int, role="adders", doc="C: the task's `count` (the local it read, or folds)")
    tbatch = PerCpu(0, type=Int, role="adders", doc="the batch argument of the task's add in flight")
    unknown = PerCpu(0, type=Int, role="adders", doc="limited_add's local unknown = batch * num_online_cpus(), "
                     "computed at its entry")
    moved_to = PerCpu(NOBODY, type=CpuId, role="adders", doc="C: the CPU the task was pushed to, if any")
    ops_left = PerCpu(lambda p: p.ops, role="adders")
    slack = PerCpu(0, type=Int, role="adders", doc="ghost: the largest batch - 1 (limited_add: batch) an add used "
                   "on this CPU since its local was last folded")
    downs_left = Ghost(lambda p: p.downs, doc="cpu_down operations still to come")
    hotplug_folded = Ghost(0, type=Bool, doc="a hotplug callback folded a non-zero local")
    pushed = Ghost(0, type=Bool, doc="a task pushed off an outgoing CPU completed its add on another")
    exact = Ghost(0, doc="E")
    lim_acc = Shared(0, type=S64, doc="limited_add's `count` while it sums under fbc->lock")
    lim_over = Ghost(0, type=Bool, doc="a limited_add accepted without a sum took E past the limit")
    lim_refused = Ghost(0, type=Bool, doc="a limited_add returned false")

    sum_pc = PerCpu(SUM.idle, type=SUM, role="summer")
    sum_acc = PerCpu(0, role="summer", doc="ret in __percpu_counter_sum")
    summed = PerCpu(0, type=Bool, role="adders", doc="the scan under fbc->lock has visited this CPU")
    sum_overlap = Ghost(0, type=Bool, doc="a lockless add ran while the summer was scanning")
    sum_settled = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum began with no CPU between leaving the "
                         "online mask and its DEAD callback")
    sum_exact_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned E, or an add overlapped it")
    sum_off = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned something other than E")
    sum_ok = PerCpu(1, type=Bool, role="summer", doc="ghost: the sum returned was within 2 * ncpus * (the largest "
                    "batch - 1) of E")
    cm_alarm = PerCpu(0, type=Bool, role="summer", doc="ghost: check_mm printed 'BUG: Bad rss-counter state'")
    cm_fallback = PerCpu(0, type=Bool, role="summer", doc="ghost: check_mm called percpu_counter_sum_all")

    # -- percpu_counter_add_batch(fbc, amount, percpu_counter_batch), variant B -------------------
    @action(role="adders", choose={"amount": (-1, 1)}, applies=lambda p: p.add == ADDV.B and not p.limited,
            access=THIS_CPU)
    def add_fast(s, cpu, amount):
        """B: local_irq_save(); abs(local + amount) < batch: this_cpu_add(); local_irq_restore()."""
        c = s.local[cpu] + amount
        return when(And(s.hp[cpu] == HP.online, s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0, abs(c) < s.batch,
                        _mm_alive(s)),
                    local={cpu: c}, ops_left={cpu: s.ops_left[cpu] - 1}, exact=s.exact + amount,
                    slack={cpu: Max(s.slack[cpu], s.batch - 1)}, sum_overlap=_overlap(s))

    @action(role="adders", choose={"amount": (-1, 1)}, applies=lambda p: p.add == ADDV.B and not p.limited,
            access=OWN_LOCAL)
    def add_slow(s, cpu, amount):
        """B: local_irq_save(); abs(local + amount) >= batch: the slow path."""
        return when(And(s.hp[cpu] == HP.online, s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0,
                        abs(s.local[cpu] + amount) >= s.batch, _mm_alive(s)),
                    pc={cpu: ADD.acquire}, pending={cpu: amount}, ops_left={cpu: s.ops_left[cpu] - 1})

    @action(role="adders", applies=lambda p: p.add == ADDV.B and not p.limited)
    def acquire(s, cpu):
        """B: raw_spin_lock(&fbc->lock)."""
        return when(And(s.pc[cpu] == ADD.acquire, s.lock == NOBODY), lock=cpu, pc={cpu: ADD.fold})

    # -- variant C: this_cpu_read, then a this_cpu_try_cmpxchg loop (preemptible in between) -----------
    @action(role="adders", choose={"amount": (-1, 1)}, applies=lambda p: p.add == ADDV.C and not p.limited,
            access=Load("local", "once"))
    def this_cpu_read(s, t, amount):
        """C: count = this_cpu_read(*fbc->counters) (preemptible: the task may be pushed off after this)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _runs(s, t), _mm_alive(s)),
                    pc={t: ADD.read}, pending={t: amount}, seen={t: Select(s.local, _on(s, t))},
                    tbatch={t: s.batch}, ops_left={t: s.ops_left[t] - 1})

    @action(role="adders", applies=lambda p: p.add == ADDV.C and not p.limited, access=THIS_CPU)
    def try_cmpxchg(s, t):
        """C: abs(count + amount) < batch: this_cpu_try_cmpxchg(*fbc->counters, &count, count + amount) on the
        CPU it runs on now: succeeds if that local still holds count, else count = the local (loop)."""
        c = _on(s, t)
        cur = Select(s.local, c)
        ok = cur == s.seen[t]
        new = s.seen[t] + s.pending[t]
        return when(And(s.pc[t] == ADD.read, _runs(s, t), abs(new) < s.tbatch[t]),
                    local={c: If(ok, new, cur)}, exact=If(ok, s.exact + s.pending[t], s.exact),
                    slack={c: If(ok, Max(Select(s.slack, c), s.tbatch[t] - 1), Select(s.slack, c))},
                    pc={t: If(ok, ADD.idle, ADD.read)}, pending={t: If(ok, 0, s.pending[t])},
                    seen={t: If(ok, 0, cur)}, tbatch={t: If(ok, 0, s.tbatch[t])}, pushed=If(And(ok, s.moved_to[t] != NOBODY), 1, s.pushed),
                    sum_overlap=If(ok, _overlap(s), s.sum_overlap))

    @action(role="adders", applies=lambda p: p.add == ADDV.C and not p.limited)
    def lock_irqsave(s, t):
        """C: abs(count + amount) >= batch: raw_spin_lock_irqsave(&fbc->lock, flags)."""
        return when(And(s.pc[t] == ADD.read, _runs(s, t), abs(s.seen[t] + s.pending[t]) >= s.tbatch[t],
                        s.lock == NOBODY),
                    lock=t, pc={t: ADD.fold})

    # -- the fold, common to B and C --------------------------------------------------------------
    @action(role="adders", applies=lambda p: not p.limited, access=(OWN_LOCAL, *COUNT_RMW))
    def fold(s, t):
        """B: fbc->count += count (local + amount); C: count = __this_cpu_read(*fbc->counters) on the CPU it
        is on now; fbc->count += count + amount."""
        c = _on(s, t)
        cur = Select(s.local, c)
        return when(s.pc[t] == ADD.fold, count=s.count + cur + s.pending[t], exact=s.exact + s.pending[t],
                    seen={t: cur}, pushed=If(s.moved_to[t] != NOBODY, 1, s.pushed), pc={t: ADD.zero})

    @action(role="adders", applies=lambda p: not p.limited, access=THIS_CPU)
    def zero(s, t):
        """__this_cpu_sub(*fbc->counters, count - amount) (B) / (count) (C): the local becomes 0."""
        c = _on(s, t)
        return when(s.pc[t] == ADD.zero, local={c: Select(s.local, c) - s.seen[t]}, pending={t: 0}, seen={t: 0},
                    slack={c: 0}, pc={t: ADD.release})

    @action(role="adders", applies=lambda p: not p.limited)
    def release(s, t):
        """raw_spin_unlock(&fbc->lock); local_irq_restore() (C: the irqrestore)."""
        return when(s.pc[t] == ADD.release, lock=NOBODY, pc={t: ADD.idle}, tbatch={t: 0})

    # -- __percpu_counter_limited_add(fbc, limit, 1, batch), v6.6 ----------------------------------
    # (the __this_cpu_read and the this_cpu_add, interrupts off, are one read of the own local: the Rmw's)
    @action(role="adders", applies=lambda p: p.limited, access=(Load("count", "plain", race_ok=True), THIS_CPU))
    def limited_fast(s, t):
        """limited_add: local_irq_save(); unknown = batch * num_online_cpus(); count = __this_cpu_read();
        abs(count + amount) <= batch && fbc->count + unknown <= limit: this_cpu_add(); local_irq_restore()."""
        unknown = s.batch * _online(s)
        return when(And(s.hp[t] == HP.online, s.pc[t] == ADD.idle, s.ops_left[t] > 0,
                        abs(s.local[t] + 1) <= s.batch, s.count + unknown <= s.limit, _mm_alive(s)),
                    local={t: s.local[t] + 1}, exact=s.exact + 1, ops_left={t: s.ops_left[t] - 1},
                    slack={t: Max(s.slack[t], s.batch)}, lim_over=If(s.exact + 1 > s.limit, 1, s.lim_over))

    @action(role="adders", applies=lambda p: p.limited, access=(OWN_LOCAL, Load("count", "plain", race_ok=True)))
    def limited_slow(s, t):
        """limited_add: local_irq_save(); unknown = batch * num_online_cpus();  (at entry, as the kernel does: the
        mask may change before the lock is taken, e.g. a CPU coming online) the fast-path test fails: on to
        raw_spin_lock (interrupts stay off)."""
        unknown = s.batch * _online(s)
        return when(And(s.hp[t] == HP.online, s.pc[t] == ADD.idle, s.ops_left[t] > 0,
                        Or(abs(s.local[t] + 1) > s.batch, s.count + unknown > s.limit), _mm_alive(s)),
                    pc={t: ADD.acquire}, unknown={t: unknown}, ops_left={t: s.ops_left[t] - 1})

    @action(role="adders", applies=lambda p: p.limited, access=Load("count", "plain"))
    def limited_lock(s, t):
        """limited_add: raw_spin_lock(); count = fbc->count + amount; count - unknown > limit: refuse; count +
        unknown <= limit: good without a sum; else sum the CPUs (unknown as computed at entry)."""
        acc = s.count + 1
        unknown = s.unknown[t]
        refuse = acc - unknown > s.limit
        good = And(Not(refuse), acc + unknown <= s.limit)
        return when(And(s.pc[t] == ADD.acquire, s.lock == NOBODY),
                    lock=If(refuse, NOBODY, t), lim_acc=If(refuse, 0, acc),
                    lim_refused=If(refuse, 1, s.lim_refused), unknown={t: If(refuse, 0, s.unknown[t])},
                    lim_over=If(And(good, s.exact + 1 > s.limit), 1, s.lim_over),
                    pc={t: If(refuse, ADD.idle, If(good, ADD.lim_fold, ADD.lim_scan))})

    @action(role="adders", choose={"other": lambda p: p.adders}, applies=lambda p: p.limited, access=WALK)
    def limited_sum(s, t, other):
        """limited_add: for_each_cpu_or(cpu, cpu_online_mask, cpu_dying_mask) (H3: online):
        count += *per_cpu_ptr(counters, cpu); a CPU outside the mask is passed over."""
        return when(And(s.pc[t] == ADD.lim_scan, s.summed[other] == 0),
                    lim_acc=s.lim_acc + If(_in_sum_mask(s, other), s.local[other], 0), summed={other: 1})

    @action(role="adders", applies=lambda p: p.limited)
    def limited_sum_done(s, t):
        """limited_add: count > limit: refuse (unlock, return false); else good."""
        refuse = s.lim_acc > s.limit
        return when(And(s.pc[t] == ADD.lim_scan, Sum(s.summed) == s.ncpus),
                    summed=Fill(0), lim_acc=0, lock=If(refuse, NOBODY, t), unknown={t: If(refuse, 0, s.unknown[t])},
                    lim_refused=If(refuse, 1, s.lim_refused), pc={t: If(refuse, ADD.idle, ADD.lim_fold)})

    @action(role="adders", applies=lambda p: p.limited, access=(OWN_LOCAL, *COUNT_RMW, THIS_CPU))
    def limited_fold(s, t):
        """limited_add: count = __this_cpu_read(); fbc->count += count + amount; __this_cpu_sub(count);
        raw_spin_unlock(); local_irq_restore(); return true."""
        return when(s.pc[t] == ADD.lim_fold, count=s.count + s.local[t] + 1, local={t: 0}, exact=s.exact + 1,
                    slack={t: 0}, lim_acc=0, lock=NOBODY, unknown={t: 0}, pc={t: ADD.idle})

    # -- CPU hotplug ----------------------------------------------------------------------------
    # Which CPU_DEAD events the N notifier folds on; a bug spec overrides it.
    @staticmethod
    def notifier_folds(s, frozen):
        """percpu_counter_hotcpu_callback: if (action != CPU_DEAD && action != CPU_DEAD_FROZEN) return."""
        return True

    @action(choose={"cpu": lambda p: p.adders, "dest": lambda p: p.adders,
                    "suspended": lambda p: (0, 1) if p.suspend else (0,)})
    def take_cpu_down(s, cpu, dest, suspended):
        """cpu_down() (or, suspended, disable_nonboot_cpus()): cpuhp_set_state sets the dying bit;
        sched_cpu_deactivate/balance_push push a task preempted inside a C add to ``dest``; take_cpu_down under
        stop_machine clears the online bit. H3 runs percpu_counter_cpu_dying there: compute_batch_value, then the
        fold of this CPU's local into fbc->count."""
        quiet = AllOf([Not(_in(s.pc[c], IRQS_OFF)) for c in s.adders]
                      + [Not(_in(s.sum_pc[c], (SUM.scan, SUM.all_scan))) for c in s.summer])
        h3 = s.design == DESIGN.H3
        online = _online(s) - 1
        c_tasks = s.add == ADDV.C and not s.limited
        push = ({"moved_to": {t: If(And(_on(s, t) == cpu, s.pc[t] == ADD.read), If(dest == t, NOBODY, dest),
                                    s.moved_to[t]) for t in s.adders}} if c_tasks else {})
        return when(And(s.downs_left > 0, s.hp[cpu] == HP.online, online >= 1, quiet, dest != cpu,
                        s.hp[dest] == HP.online),
                    hp={cpu: HP.dead if h3 else HP.offline}, dying={cpu: 1}, frozen={cpu: suspended},
                    downs_left=s.downs_left - 1, **push,
                    **({"batch": _batch(s, online), "count": s.count + s.local[cpu], "local": {cpu: 0},
                        "slack": {cpu: 0}, "hotplug_folded": If(s.local[cpu] != 0, 1, s.hotplug_folded)}
                       if h3 else {}))

    # On the control CPU: cpuhp_bp_sync_dead()'s atomic_try_cmpxchg() (a full barrier, paired with the dead
    # CPU's cpuhp_ap_report_dead() atomic_xchg(): the dead CPU's stores are visible), then the fold's remote
    # loads and stores under fbc->lock (raw_spin_lock/unlock around them: one step, the lock free before and after).
    @action(role="control", choose={"cpu": lambda p: p.adders}, applies=lambda p: p.design != DESIGN.H3,
            access=(smp_mb(), spin_lock("lock"), Load("local", "plain", slot=_dead_cpu), *COUNT_RMW,
                    Store("local", "plain", slot=_dead_cpu), spin_unlock("lock")))
    def percpu_counter_cpu_dead(s, ctl, cpu):
        """H1, H2: on a control CPU after the CPU is dead: compute_batch_value(); under fbc->lock,
        fbc->count += *per_cpu_ptr(counters, cpu); *pcount = 0. N: percpu_counter_hotcpu_callback(CPU_DEAD or
        CPU_DEAD_FROZEN): the same, if the notifier handles that event."""
        folds = s.spec.notifier_folds(s, s.frozen[cpu] == 1) if s.design == DESIGN.N else True
        moved = s.local[cpu]
        return when(And(s.hp[cpu] == HP.offline, s.lock == NOBODY),
                    batch=_batch(s, _online(s)), count=If(folds, s.count + moved, s.count),
                    local={cpu: If(folds, 0, moved)}, slack={cpu: If(folds, 0, s.slack[cpu])},
                    hp={cpu: HP.dead}, hotplug_folded=If(And(folds, moved != 0), 1, s.hotplug_folded))

    @action(choose={"cpu": lambda p: p.adders})
    def cpu_up_start(s, cpu):
        """cpu_up() (or the resume path's enable_nonboot_cpus()): cpuhp_set_state clears the dying bit. From
        DEAD, or (partial) from a teardown stopped above CPUHP_PERCPU_CNT_DEAD, whose fold never ran."""
        from_partial = And(s.partial == 1, s.design != DESIGN.H3, s.hp[cpu] == HP.offline)
        return when(And(s.reonline == 1, Or(s.hp[cpu] == HP.dead, from_partial)), hp={cpu: HP.coming},
                    dying={cpu: 0}, frozen={cpu: 0})

    @action(choose={"cpu": lambda p: p.adders})
    def cpu_online(s, cpu):
        """The CPU is marked online; compute_batch_value() runs for it (N: CPU_ONLINE notifier; H1, H2:
        CPUHP_AP_ONLINE_DYN; H3: percpu_counter_cpu_starting with num_online_cpus() + 1)."""
        return when(s.hp[cpu] == HP.coming, hp={cpu: HP.online}, batch=_batch(s, _online(s) + 1))

    # -- __percpu_counter_sum(), and check_mm() ---------------------------------------------------
    @action(role="summer", access=Load("count", "plain"))
    def sum_lock(s, cpu):
        """raw_spin_lock_irqsave(&fbc->lock); ret = fbc->count. (check_mm: percpu_counter_sum(&mm->rss_stat[i])
        once the mm is freed: no add in flight, E = 0.)"""
        # Tracked only for the online-only sums (N, H1): for H2 and H3 sum_exact_without_overlap is stronger.
        settled = (AllOf([Or(s.hp[c] == HP.online, s.hp[c] == HP.dead) for c in s.adders])
                   if s.design in (DESIGN.H1, DESIGN.N) else 0)
        freed = AllOf([s.pc[c] == ADD.idle for c in s.adders] + [s.exact == 0]) if s.checkmm else True
        return when(And(s.sum_pc[cpu] == SUM.idle, s.lock == NOBODY, freed), lock=cpu, sum_pc={cpu: SUM.scan},
                    sum_acc={cpu: s.count}, sum_settled={cpu: settled})

    @action(role="summer", choose={"other": lambda p: p.adders}, access=WALK)
    def sum_local(s, cpu, other):
        """for each CPU of the mask: ret += *per_cpu_ptr(counters, cpu); a CPU outside it is passed over
        (percpu_counter_sum_all: the mask is cpu_possible_mask)."""
        in_mask = Or(s.sum_pc[cpu] == SUM.all_scan, _in_sum_mask(s, other))
        return when(And(_in(s.sum_pc[cpu], (SUM.scan, SUM.all_scan)), s.summed[other] == 0),
                    sum_acc={cpu: s.sum_acc[cpu] + If(in_mask, s.local[other], 0)}, summed={other: 1})

    @action(role="summer")
    def sum_unlock(s, cpu):
        """raw_spin_unlock_irqrestore(); return ret (judged against E now). check_mm: if (likely(!x))
        continue; checkmm=2: x = percpu_counter_sum_all(); if (unlikely(x)) pr_alert("BUG: Bad rss-counter
        state")."""
        ret = s.sum_acc[cpu]
        first = s.sum_pc[cpu] == SUM.scan
        again = And(first, s.checkmm == 2, ret != 0)
        return when(And(_in(s.sum_pc[cpu], (SUM.scan, SUM.all_scan)), Sum(s.summed) == s.ncpus), lock=NOBODY,
                    sum_pc={cpu: If(again, SUM.locked, SUM.done)}, sum_acc={cpu: 0}, summed=Fill(0), sum_overlap=0,
                    sum_exact_ok={cpu: If(first, Or(ret == s.exact, s.sum_overlap == 1), s.sum_exact_ok[cpu])},
                    sum_off={cpu: If(first, ret != s.exact, s.sum_off[cpu])},
                    sum_ok={cpu: If(first, abs(ret - s.exact) <= _sum_bound(s), s.sum_ok[cpu])},
                    cm_alarm={cpu: And(s.checkmm > 0, Not(again), ret != 0)},
                    cm_fallback={cpu: Or(again, s.cm_fallback[cpu] == 1)})

    @action(role="summer", applies=lambda p: p.checkmm == 2, access=Load("count", "plain"))
    def sum_all_lock(s, cpu):
        """percpu_counter_sum_all() -> __percpu_counter_sum_mask(fbc, cpu_possible_mask):
        raw_spin_lock_irqsave(&fbc->lock); ret = fbc->count."""
        return when(And(s.sum_pc[cpu] == SUM.locked, s.lock == NOBODY), lock=cpu, sum_pc={cpu: SUM.all_scan},
                    sum_acc={cpu: s.count})

    @terminal
    def work_done(s):
        """Every online CPU's task has made its adds, the sum has returned (an offline CPU's task waits);
        with checkmm, a run whose adds left E != 0 never frees the mm (check_mm's claim is about E = 0)."""
        if s.checkmm and s.summers:  # check_mm ends the mm's life, or the mm is never freed with E = 0
            c = s.summer[0]
            adds_done = AllOf([Or(s.hp[t] != HP.online, And(s.pc[t] == ADD.idle, s.ops_left[t] == 0))
                               for t in s.adders])
            return Or(s.sum_pc[c] == SUM.done, And(s.sum_pc[c] == SUM.idle, s.exact != 0, adds_done))
        return AllOf([Or(s.hp[c] != HP.online, And(s.pc[c] == ADD.idle, s.ops_left[c] == 0)) for c in s.adders]
                     + [s.sum_pc[c] == SUM.done for c in s.summer])

    # -- properties ------------------------------------------------------------------------------
    @invariant
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + every possible CPU's local == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @invariant(role="adders")
    def local_bound(s, c):
        """PC-LOCAL: a local is within the largest batch - 1 (limited_add: batch) used on it since it was
        last folded."""
        return abs(s.local[c]) <= s.slack[c]

    @invariant
    def read_bound(s):
        """PC-READ with hotplug: |count - E| <= sum over CPUs of (largest batch used since the last fold - 1)."""
        return abs(s.count - s.exact) <= Sum(s.slack)

    @invariant(applies=lambda p: p.summers)
    def sum_within_bound(s):
        """A sum (check_mm's too) returns E within 2 * ncpus * (the largest batch - 1): what the kernel's callers
        can rely on under every memory model (sc, tso, lkmm), with adds and hotplug running."""
        return s.sum_ok[s.summer[0]] == 1

    @sometimes(applies=lambda p: p.summers and p.ops > 0 and not p.checkmm)
    def a_sum_is_approximate(s):
        """A sum returns a value other than E (sum_within_bound is judged off E, not only at exact sums)."""
        return s.sum_off[s.summer[0]] == 1

    # (sc only: "no lockless add overlapped" is the SC order of steps; under tso an add's this_cpu_add may wait
    # in its CPU's store buffer while the sum reads memory, under lkmm the sum may read a local's older store, and
    # nothing in the kernel orders the add before the sum: the caller's own ordering does, as check_mm_refcount
    # checks for check_mm. Under tso and lkmm: not_applicable, and sum_within_bound is checked.)
    @invariant(applies=lambda p: p.summers and not p.checkmm and p.design in (DESIGN.H2, DESIGN.H3),
               sc_only="sum_within_bound")
    def sum_exact_without_overlap(s):
        """PC-SUM: a sum that no lockless add overlapped returns E, whatever hotplug state a CPU is in
        (H2 with partial transitions: bugs/hotplug_dying_partial.py)."""
        return _sum_result(s)

    @invariant(expect="violated", applies=lambda p: p.summers and not p.checkmm
               and p.design in (DESIGN.H1, DESIGN.N) and p.ops > 0)
    def sum_misses_an_offline_cpu(s):
        """K-SUM-HOTPLUG, false on purpose for N and H1: their online-only sum misses a CPU between leaving
        cpu_online_mask and its fold (the check_mm report against f1a7941243c1; bugs/hotplug_sum_dead.py)."""
        return _sum_result(s)

    @invariant(applies=lambda p: p.summers and not p.checkmm and p.design in (DESIGN.H1, DESIGN.N),
               sc_only="sum_within_bound")
    def sum_exact_once_folded(s):
        """A sum that began with no CPU between leaving the online mask and its DEAD callback, and that no
        lockless add overlapped, returns E (N, H1: their sums are exact once every fold has run;
        bugs/hotplug_notifier_dead_only.py breaks it; for H2 and H3 sum_exact_without_overlap says more)."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.sum_settled[c] == 0, s.sum_exact_ok[c] == 1)

    # (sc only: "the mm is freed, no add in flight" is the SC order of steps; check_mm_refcount checks the
    # ordering mmput()'s atomic_dec_and_test() gives check_mm under tso and lkmm)
    @invariant(applies=lambda p: p.summers and p.checkmm and not (p.checkmm == 1 and p.design in (DESIGN.H1,
                                                                                                    DESIGN.N)),
               sc_only="sum_within_bound")
    def check_mm_no_false_alarm(s):
        """check_mm prints 'BUG: Bad rss-counter state' only for a real leak: here E = 0, so never (H1 needs
        its percpu_counter_sum_all fallback: bugs/hotplug_check_mm_online_sum.py)."""
        return s.cm_alarm[s.summer[0]] == 0

    @invariant(applies=lambda p: _FIXED(p) and p.design == DESIGN.H3)
    def compare_margin_sound(s):
        """__percpu_counter_compare(fbc, rhs, batch): its rough answer (when |count - rhs| > batch *
        num_online_cpus()) is the exact comparison for every rhs iff |count - E| <= batch *
        num_online_cpus() (rhs = E is the counterexample otherwise). Stated where the batch cannot shrink
        (the kernel's 32 floor up to 16 CPUs); bugs/hotplug_compare_shrink.py is the rest."""
        return compare_margin_covers(s)

    @invariant(expect="violated", applies=lambda p: _FIXED(p) and p.design in _WINDOW and p.downs > 0
               and _fills(p) and not p.limited)
    def compare_margin_misses_an_offline_cpu(s):
        """False on purpose for N, H1 and H2 (mainline): between the CPU leaving the online mask and its
        fold, its local is in neither fbc->count nor batch * num_online_cpus(), so compare can answer from
        the rough count and be wrong (Ye Bin's 2023 report; bugs/hotplug_compare_dying.py)."""
        return compare_margin_covers(s)

    # (sc only, found under lkmm in issue 29: the claim judges the fast path's lockless plain load of
    # fbc->count "at that step"; under lkmm that load may return a store older than a fold another CPU has made
    # (nothing orders it), and the margin unknown = batch * num_online_cpus() does not cover the local the fold
    # emptied and its CPU refilled: E passes the limit (H3, limited=1, ncpus=2). Under tso it holds. What holds
    # under every model is limit_overshoot_bounded, below.)
    @invariant(applies=lambda p: p.limited and _FIXED(p) and p.design == DESIGN.H3,
               sc_only="limit_overshoot_bounded")
    def limited_add_keeps_the_limit(s):
        """__percpu_counter_limited_add: an add it accepts without summing the CPUs (its fast path, or the
        `count + unknown <= limit` test under the lock) leaves E <= limit: unknown = batch *
        num_online_cpus() covers every local it does not read."""
        return _limited_margin_result(s)

    @invariant(applies=lambda p: p.limited and _FIXED(p) and p.design == DESIGN.H3)
    def limit_overshoot_bounded(s):
        """__percpu_counter_limited_add under every memory model: E exceeds the limit by at most (ncpus - 1) *
        (2 * batch - 1), the bound percpu_eager_calls states for the same function under weak memory
        (limit_overshoot_bounded_under_weak_memory gives the walk's reason). Checked at the explore points, not
        proved for every run of a fast path that read an old fbc->count."""
        return s.exact <= s.limit + (s.ncpus - 1) * (2 * s.batch - 1)

    @sometimes(applies=lambda p: p.limited and _FIXED(p) and p.design == DESIGN.H3 and p.ops > 0)
    def the_limit_is_passed(s):
        """E passes the limit (a fast add whose check passed before the walk read its CPU): the bound above is
        not met by never passing it."""
        return s.exact > s.limit

    @invariant(expect="violated", applies=lambda p: p.limited and _FIXED(p) and p.design == DESIGN.H2
               and p.downs > 0 and p.ops >= Max(p.batch_floor, 2 * p.ncpus) + 1 and p.limit >= p.ncpus
               * Max(p.batch_floor, 2 * p.ncpus))
    def limited_add_misses_an_offline_cpu(s):
        """False on purpose for H2 (mainline, v6.6+): during the offline window the dying CPU's local is not
        in unknown = batch * num_online_cpus(), so an accept without a sum takes E past the limit, with no
        add racing it (the same hole as compare)."""
        return _limited_margin_result(s)

    @sometimes(applies=lambda p: _fills(p) and p.ops > 0)
    def a_local_reaches_its_slack(s):
        """Some local holds the largest batch - 1 (limited_add: batch) used on it: the bounds are exercised at
        their edge."""
        return AnyOf([And(s.slack[c] > 0, abs(s.local[c]) == s.slack[c]) for c in s.adders])

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

    @sometimes(applies=lambda p: p.add == ADDV.C and not p.limited and p.downs > 0 and p.ops > 0)
    def an_add_migrates_across_an_offline(s):
        """A C add preempted after its this_cpu_read on a CPU going down completes on another CPU."""
        return s.pushed == 1

    @sometimes(applies=lambda p: p.checkmm == 2 and p.summers and p.downs > 0 and p.design in _WINDOW)
    def check_mm_falls_back_to_sum_all(s):
        """check_mm's percpu_counter_sum is non-zero (a CPU in the offline window) and sum_all runs."""
        return s.cm_fallback[s.summer[0]] == 1

    @sometimes(applies=lambda p: p.limited and p.ncpus * p.ops > p.limit)
    def a_limited_add_is_refused(s):
        """limited_add returns false: the limit is reached."""
        return s.lim_refused == 1

    @sometimes(applies=lambda p: p.suspend and p.downs > 0)
    def a_cpu_goes_down_for_suspend(s):
        """A CPU goes down the suspend path (CPU_DEAD_FROZEN)."""
        return AnyOf([s.frozen[c] == 1 for c in s.adders])


class PercpuHotplugDeep(PercpuHotplug, name="percpu_hotplug_deep", on_demand=True):
    """The named deep sweep of percpu_hotplug (minutes): mainline's H2 with C adds and a summer at the fill,
    every design with a shrinking batch at the fill, reonline at the fill, 3 CPUs with a shrinking batch."""

    # Cheapest first (tools that take a spec's first point, e.g. the cluster tests, stay quick).
    explore_sweeps = (
        {"design": DESIGN.H1, "ncpus": 2, "checkmm": (0, 2), "batch_floor": 1},
        {"design": DESIGN.N, "ncpus": 2, "suspend": 1, "reonline": 1},
        {"design": DESIGN.H3, "ncpus": 2, "reonline": 1},
        {"design": DESIGN.H3, "ncpus": 3, "ops": 2, "batch_floor": 1},
        {"design": DESIGN.H2, "add": ADDV.B, "ncpus": 2, "reonline": 1},
        {"design": DESIGN.H2, "ncpus": 2, "summers": 0, "batch_floor": 1},
        {"design": DESIGN.H2, "ncpus": 2, "batch_floor": "default"},
    )
