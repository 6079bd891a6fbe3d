# SPDX-License-Identifier: GPL-2.0-only
"""The eager per-CPU counter's other calls: lib/percpu_counter.c beyond add_batch, read and sum.

``percpu_eager`` checks the three ``percpu_counter_add_batch()`` variants and
states ``__percpu_counter_compare()``'s margin as a property. This spec runs,
next to variant B's add (the v6.6 code, and the ``!CONFIG_HAVE_CMPXCHG_LOCAL``
fallback since, which 32-bit ARM runs), the calls that spec does not make,
each one atomic step at a time:

- ``__percpu_counter_limited_add(fbc, limit, amount, batch)`` (shmem's
  ``shmem_inode_acct_blocks()``, amounts of 1 to ``amount`` pages, against
  ``percpu_counter_sub()`` in ``shmem_inode_unacct_blocks()``): its lockless
  fast path, ``abs(count + amount) <= batch && fbc->count + unknown <= limit``,
  then ``raw_spin_lock``, the ``unknown = batch * num_online_cpus()`` tests,
  the walk over every CPU, the fold. The bound the code gives: the total
  ends at most ``(ncpus - 1) * F`` over the limit, ``F = min(amount,
  2 * batch - 1)`` the largest amount its fast path can add (a sub leaves a
  local as low as ``-(batch - 1)``, so amounts up to ``2 * batch - 1`` pass
  ``abs(count + amount) <= batch``): each other CPU's fast add whose check
  passed may land after the slow path's walk read that CPU. Checked, and
  reached (``limit_overshoot_is_tight``);
- ``__percpu_counter_compare(fbc, rhs, batch)`` as code: ``percpu_counter_read()``,
  the margin test ``abs(count - rhs) > batch * num_online_cpus()``, and the
  ``percpu_counter_sum()`` fallback with adds running in between, with a
  ``batch`` of its own (``cmp_batch``) that need not be the adders';
- ``percpu_counter_set()`` (zero every possible CPU's local under
  ``fbc->lock``, then ``fbc->count = amount``) against lockless adds;
- ``percpu_counter_sync()`` and a batch that changes at run time:
  mm/util.c's ``overcommit_policy_handler()`` switching to
  ``OVERCOMMIT_NEVER`` does ``mm_compute_batch()`` (a smaller
  ``vm_committed_as_batch``), ``schedule_on_each_cpu(sync_overcommit_as)``
  (``percpu_counter_sync()`` on each CPU) and then publishes the policy, while
  ``vm_acct_memory()`` loads ``vm_committed_as_batch`` as its argument before
  ``percpu_counter_add_batch()`` disables interrupts;
- ``percpu_counter_add_local()`` (``add_batch`` with
  ``PERCPU_COUNTER_LOCAL_BATCH``, ``INT_MAX``) and its reader contract: only
  ``percpu_counter_sum()`` is meant to read such a counter;
- ``percpu_counter_read()``/``percpu_counter_read_positive()`` on a 32-bit
  kernel (``bits=32``): ``fbc->count`` is an s64 loaded with two 32-bit loads
  (``READ_ONCE`` does not make it whole), against a fold's two stores under
  ``fbc->lock``. include/linux/percpu_counter.h does nothing about it; Linus
  Torvalds on the KCSAN report (Message-ID
  <CAHk-=wg5+N2WS2vO6doxfza1G8zk4DP5RhodiaSeAyf+Ooy7wQ@mail.gmail.com>, Nov
  2019): "fundamentally broken on 32-bit ... this is not a problem in
  practice because the 32-bit overflow basically never happens". The high
  word changes whenever ``fbc->count`` crosses zero, which small counters do.
"""
from checker import (IRQS_OFF, NOBODY, S32, S64, AllOf, And, AnyOf, Bool, Enum, Fill, Ghost, If, Implies, Int, Load,
                     Lock, Max, Or, Param, PerCpu, Rmw, Role, Shared, Spec, Store, Sum, action, invariant, sometimes,
                     terminal, when)
from checker.kernel.config import Bits
from checker.ordering.declare import MEMORY

#: What the adders' calls are: add_batch; limited_add for positive amounts; add_local.
ADDS = Enum("batch", "limited", "local", name="adds")
#: Where a task is inside its call.
ADD = Enum("idle", "batch_read", "acquire", "fold", "lim_add", "lim_acquire", "lim_locked", "lim_scan", "lim_fold",
           name="add_pc")
#: Where a summer is inside __percpu_counter_compare / __percpu_counter_sum.
SUM = Enum("idle", "read", "locked", "scan", "done", name="sum_pc")
#: The setter, the tuner (overcommit_policy_handler) and each CPU's sync_overcommit_as work.
SET = Enum("idle", "zeroing", "done", name="set_pc")
TUNE = Enum("idle", "batch_set", "switched", name="tune_pc")
WORK = Enum("idle", "locked", "done", name="work_pc")
READ = Enum("idle", "done", name="read_pc")

#: PERCPU_COUNTER_LOCAL_BATCH (include/linux/percpu_counter.h): INT_MAX.
LOCAL_BATCH = (1 << 31) - 1


#: The memory-model annotations (--memory tso|lkmm), as percpu_eager's: this_cpu_* ops are atomic only to
#: their own CPU and order nothing for others; __this_cpu_read is a plain load of the own local; fbc->count is
#: plain under fbc->lock and read locklessly (percpu_counter_read, limited_add's and compare's tests: race_ok,
#: the kernel's own choice); the walks' remote loads are plain (race_ok). vm_committed_as_batch (`cur_batch`)
#: is not annotated (sc): mm_compute_batch()'s store reaches each CPU's adds through schedule_on_each_cpu()'s
#: queue_work_on() (a fully ordered test_and_set_bit()) and the kworker's wake-up, and its ordering is not
#: what this spec checks.
THIS_CPU = Rmw("local", "this_cpu")
OWN_LOCAL = Load("local", "plain")
COUNT_RMW = (Load("count", "plain"), Store("count", "plain"))
READ_COUNT = Load("count", "plain", race_ok=True)
REMOTE_LOCAL = Load("local", "plain", slot=lambda s, cpu, other: other, race_ok=True)


def _sign(x):
    return If(x > 0, 1, If(x < 0, -1, 0))


def _adds(*names):
    return lambda p: p.adds in tuple(getattr(ADDS, n) for n in names)


def _slack(p):
    """How far from zero a local can be: batch - 1; batch with limited_add (its `<=`); the larger batch - 1
    with a batch changing at run time."""
    if p.adds == ADDS.limited:
        return p.batch
    return (max(p.batch, p.new_batch) if p.retune else p.batch) - 1


def _fast_max(p):
    """The largest amount limited_add's fast path can add: abs(local + amount) <= batch with local down to
    -(batch - 1) (percpu_counter_sub's add_batch keeps |local| < batch), and no more than the caller passes."""
    return min(p.amount, 2 * p.batch - 1)


def _batch(s, t):
    """The batch the task's add uses: INT_MAX (add_local), its loaded argument (retune), or batch."""
    if s.adds == ADDS.local:
        return LOCAL_BATCH
    return s.my_batch[t] if s.retune else s.batch


def _cpu_free(s, t):
    """CPU t runs its task, not the sync_overcommit_as kworker that holds fbc->lock there."""
    return s.work[t] != WORK.locked if s.retune else True


def _bounded(p):
    """Where the locals keep their bounds: not with percpu_counter_set racing limited_add's fast path (the
    set can zero the local between the check and the this_cpu_add, which then lands past batch)."""
    return p.adds != ADDS.local and not (p.setters and p.adds == ADDS.limited)


def _starts(s, t):
    """A call may start (or, with retune, go on past its argument load)."""
    if s.retune:
        return And(s.pc[t] == ADD.batch_read, _cpu_free(s, t))
    return And(s.pc[t] == ADD.idle, s.ops_left[t] > 0)


def _ends(s, t):
    """The updates that end a call started by _starts (ops_left counts calls at their start)."""
    if s.retune:
        return {"my_batch": {t: 0}}
    return {"ops_left": {t: s.ops_left[t] - 1}}


def _landed(s, t, amount):
    """Ghost updates of a lockless add of ``amount`` to CPU t's local (E included)."""
    out = {"exact": s.exact + amount}
    if s.summers:
        out["overlap"] = If(s.sum_pc[s.summer[0]] == SUM.scan, 1, s.overlap)
    if s.setters:
        zeroing = s.set_pc[s.setter[0]] == SET.zeroing
        out["set_kept"] = If(And(zeroing, s.visited[t] == 1), 1, s.set_kept)
        out["set_lost"] = If(And(zeroing, s.visited[t] == 0), 1, s.set_lost)
        out["set_misordered"] = If(And(zeroing, s.visited[t] == 0, s.set_kept == 1), 1, s.set_misordered)
    if s.retune:
        out["stale"] = {t: If(And(s.work[t] == WORK.done, s.my_batch[t] != s.cur_batch), 1, s.stale[t])}
    return out


def _value_set(s):
    """E after percpu_counter_set(fbc, set_to): the callers' promise, the value set, when no lockless add landed
    during it (not the model's own locals: a set that leaves a local behind is then caught by conservation);
    the value set plus the adds kept in zeroed locals when adds raced it."""
    quiet = And(s.set_kept == 0, s.set_lost == 0) if s.setters else True
    return If(quiet, s.set_to, s.set_to + Sum(s.local))


def _racing_set_weak(p):
    """A percpu_counter_set racing lockless adds, under tso or lkmm."""
    return p.setters and p.ops > 0 and p.memory != MEMORY.sc


def _setting(s):
    """A percpu_counter_set is between its lock and its store."""
    return s.set_pc[s.setter[0]] == SET.zeroing if s.setters else False


def _rough_ok(s):
    c = s.summer[0]
    return Or(s.sum_pc[c] != SUM.done, s.rough[c] == 0, s.answer_ok[c] == 1)


class PercpuEagerCalls(Spec):
    """limited_add with shmem's amounts, compare as code, set, sync and a run-time batch, add_local, and
    read/read_positive on 32-bit, beside percpu_counter_add_batch() variant B.

    One task per CPU (``adders``) makes ``ops`` calls: ``adds=batch``
    ``percpu_counter_add_batch(fbc, +-1, batch)``; ``adds=limited``
    ``__percpu_counter_limited_add(fbc, limit, 1..amount, batch)`` for its
    positive calls and ``percpu_counter_sub(fbc, 1)`` for its negative ones;
    ``adds=local`` ``percpu_counter_add_local(fbc, +-1)``. Optional CPUs: a
    reader (``readers``), a summer (``summers``, ``cmp=1``: a comparer), a
    setter (``setters``) and, with ``retune=1``, the sysctl writer switching
    vm.overcommit_memory to OVERCOMMIT_NEVER with each CPU's kworker.
    """

    kernel = ("lib/percpu_counter.c (v6.6, c439d5e8a0de; __percpu_counter_limited_add as mainline has it since "
              "v6.7, extended to negative amounts, whose positive path refuses early where v6.6's beb986862844 sums "
              "first, to the same answer; read in the kernelorg-mirror/linux_kernel_git_dennis_percpu mirror at "
              "commit d24c23304103, the unmerged 2024-01 'lib/percpu_counter: Fix CPU hotplug handling' patch, "
              "whose hash is also the prefix of its Message-ID "
              "d24c233041035d90c0c2c3685badbcccac57ba2c.1705101789.git.dennis@kernel.org; its limited_add is "
              "mainline's): "
              "percpu_counter_add_batch (B), __percpu_counter_limited_add, __percpu_counter_compare, "
              "__percpu_counter_sum, percpu_counter_set, percpu_counter_sync; include/linux/percpu_counter.h: "
              "percpu_counter_read, percpu_counter_read_positive, percpu_counter_add_local; mm/util.c: "
              "overcommit_policy_handler, mm_compute_batch, sync_overcommit_as; include/linux/mman.h: "
              "vm_acct_memory; mm/shmem.c: shmem_inode_acct_blocks, shmem_inode_unacct_blocks")
    assumptions = (
        "no CPU hotplug (percpu_hotplug models it): num_online_cpus() is ncpus, every CPU is online",
        "no interrupt handlers (percpu_eager has them): every add here is a task's",
        "the counter starts at 0; percpu_counter_set stores set_to",
        "the walks over CPUs (sum, limited_add, set) visit them in any order (an over-approximation of the "
        "ascending walk, needed for CPU symmetry)",
        "variant B's add runs with interrupts off from its first read to its restore, so nothing else runs on "
        "its CPU in between; the kworker's sync runs on a CPU only where its task is preemptible",
    )

    explore_sweeps = (
        {"readers": (0, 1)},
        {"adds": ADDS.limited, "amount": (1, 2, 3), "ops": 3},
        {"adds": ADDS.limited, "amount": 2, "ncpus": 3},
        {"summers": 1, "cmp": 1, "cmp_batch": (1, 2), "batch": 2},
        {"summers": 1, "cmp": 1, "cmp_batch": (1, 2), "batch": 3, "ncpus": 2, "ops": 3},
        {"setters": 1},
        {"retune": 1, "batch": 3, "ops": 2},
        {"adds": ADDS.local, "summers": (0, 1), "ops": 3},
        # 32-bit: the lockless loads of fbc->count (read, read_positive, compare's read) against the folds
        {"bits": 32, "readers": 1},
        {"bits": 32, "summers": 1, "cmp": 1},
        # limited_add's lockless fbc->count check, torn: the overshoot bound still holds here
        {"bits": 32, "adds": ADDS.limited, "amount": 2, "ops": 3},
    )

    bits = Bits(explore=(64,), doc="CONFIG_64BIT: 64, or 32 (fbc->count loaded and stored in halves)")
    ncpus = Param(2, domain=range(1, 5), explore=(1, 2), doc="CPUs, each with its local and one task")
    batch = Param(2, domain=range(1, 1 << 16), doc="the adders' batch (percpu_counter_batch; "
                  "vm_committed_as_batch before the switch with retune=1)")
    ops = Param(lambda p: p.batch, domain=range(0, 1 << 8), doc="calls per task")
    adds = Param(ADDS.batch, domain=ADDS, doc="the tasks' calls: add_batch, limited_add (+ sub), add_local")
    amount = Param(1, domain=range(1, 1 << 16), doc="adds=limited: the largest amount (pages) a limited_add "
                   "passes; each passes 1..amount")
    limit = Param(lambda p: p.ncpus * p.batch, domain=range(0, 1 << 31), doc="limited_add's limit")
    readers = Param(0, domain=(0, 1), doc="a CPU doing one percpu_counter_read / read_positive")
    summers = Param(0, domain=(0, 1), doc="a CPU doing one __percpu_counter_sum (cmp=0) or compare (cmp=1)")
    cmp = Param(0, domain=(0, 1), doc="1: the summer calls __percpu_counter_compare(fbc, rhs, cmp_batch)")
    cmp_batch = Param(lambda p: p.batch, domain=range(1, 1 << 16), doc="compare's batch")
    setters = Param(0, domain=(0, 1), doc="a CPU doing one percpu_counter_set(fbc, set_to)")
    set_to = Param(0, domain=range(-(1 << 16), 1 << 16), doc="the value percpu_counter_set stores")
    retune = Param(0, domain=(0, 1), doc="1: vm_committed_as: the batch is loaded per call, and a sysctl "
                   "write switches it to new_batch and syncs every CPU")
    new_batch = Param(1, domain=range(1, 1 << 16),
                      doc="retune=1: vm_committed_as_batch after mm_compute_batch(OVERCOMMIT_NEVER)")

    adders = Role("ncpus", symmetric=True, doc="CPUs, each with a task making the adds")
    reader = Role("readers", doc="a CPU calling percpu_counter_read / read_positive")
    summer = Role("summers", doc="a CPU calling __percpu_counter_sum or __percpu_counter_compare")
    setter = Role("setters", doc="a CPU calling percpu_counter_set")
    tuner = Role("retune", doc="the task writing vm.overcommit_memory = 2 (overcommit_policy_handler)")

    count = Shared(0, type=S64, doc="fbc->count, written under fbc->lock, read locklessly")
    lock = Lock(doc="fbc->lock (raw_spinlock_t): the CPU holding it")
    local = PerCpu(0, type=S32, role="adders", doc="*per_cpu_ptr(fbc->counters, cpu)")
    irqs = PerCpu(0, type=IRQS_OFF, role="adders", doc="interrupts off on this CPU")
    pc = PerCpu(ADD.idle, type=ADD, role="adders", doc="where the task is in its call")
    pending = PerCpu(0, type=Int, role="adders", doc="the amount of the call in flight")
    seen = PerCpu(0, type=Int, role="adders", doc="add_batch's `count - amount`: the local it read")
    ops_left = PerCpu(lambda p: p.ops, role="adders", doc="calls the task has still to make")
    lim_acc = PerCpu(0, type=Int, role="adders", doc="limited_add's `count` while it sums under fbc->lock")
    visited = PerCpu(0, type=Bool, role="adders", doc="the lock holder's walk (sum, limited_add, set) has "
                                                       "been to this CPU")
    exact = Ghost(0, doc="E: the counter's value by the API: every add past its linearisation point")
    refused = Ghost(0, type=Bool, doc="a limited_add returned false")

    # __percpu_counter_sum / __percpu_counter_compare
    sum_pc = PerCpu(lambda p: SUM.idle if p.cmp else SUM.read, type=SUM, role="summer")
    rhs = PerCpu(0, type=Int, role="summer", doc="compare's rhs")
    sum_acc = PerCpu(0, type=Int, role="summer", doc="ret in __percpu_counter_sum")
    overlap = Ghost(0, type=Bool, doc="a lockless add changed a local while the summer was scanning")
    rough = PerCpu(0, type=Bool, role="summer", doc="compare answered from percpu_counter_read")
    answer_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: compare's answer was sign(E - rhs) when "
                       "it was decided (at the read; at the sum's return, or a lockless add overlapped the sum)")
    sum_exact_ok = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum (or compare's sum) was E, or an "
                          "add overlapped it")
    sum_off = PerCpu(0, type=Bool, role="summer", doc="ghost: the sum returned differed from E")
    sum_ok = PerCpu(1, type=Bool, role="summer", doc="ghost: the sum returned was within 2 * ncpus * slack of E")

    # percpu_counter_read / read_positive
    read_pc = PerCpu(READ.idle, type=READ, role="reader")
    read_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the read was within the bound of E")
    read_pos_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: read_positive was within the bound of "
                         "max(E, 0)")
    read_off = PerCpu(0, type=Bool, role="reader", doc="ghost: the read differed from E")

    # percpu_counter_set
    set_pc = PerCpu(SET.idle, type=SET, role="setter")
    set_kept = Ghost(0, type=Bool, doc="an add landed on a local the set had already zeroed")
    set_lost = Ghost(0, type=Bool, doc="an add landed on a local the set had yet to zero")
    set_misordered = Ghost(0, type=Bool, doc="a lost add came after a kept one: no moment is the set's")

    # vm_committed_as: the batch at run time, sync_overcommit_as on each CPU
    cur_batch = Shared(lambda p: p.batch, type=Int, doc="vm_committed_as_batch")
    my_batch = PerCpu(0, type=Int, role="adders", doc="the batch the task's call loaded (its argument)")
    tune_pc = PerCpu(TUNE.idle, type=TUNE, role="tuner")
    work = PerCpu(WORK.idle, type=WORK, role="adders", doc="this CPU's sync_overcommit_as work")
    stale = PerCpu(0, type=Bool, role="adders", doc="an add with the old batch landed here after the sync")

    # -- vm_acct_memory(): the batch argument ----------------------------------------------
    @action(role="adders", applies=lambda p: p.retune)
    def load_batch(s, t):
        """vm_acct_memory(): percpu_counter_add_batch(&vm_committed_as, pages, vm_committed_as_batch) loads its
        batch argument before the call disables interrupts (the task is preemptible here)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _cpu_free(s, t)),
                    pc={t: ADD.batch_read}, my_batch={t: s.cur_batch}, ops_left={t: s.ops_left[t] - 1})

    # -- percpu_counter_add_batch(), variant B -----------------------------------------------
    @action(role="adders", choose={"amount": lambda p: (-1,) if p.adds == ADDS.limited else (-1, 1)},
            access=THIS_CPU)
    def add_fast(s, t, amount):
        """add_batch: local_irq_save(); count = __this_cpu_read(*fbc->counters) + amount; abs(count) < batch:
        this_cpu_add(*fbc->counters, amount); local_irq_restore()."""
        c = s.local[t] + amount
        return when(And(_starts(s, t), abs(c) < _batch(s, t)),
                    local={t: c}, pc={t: ADD.idle}, **_ends(s, t), **_landed(s, t, amount))

    @action(role="adders", choose={"amount": lambda p: (-1,) if p.adds == ADDS.limited else (-1, 1)},
            access=OWN_LOCAL)
    def add_slow(s, t, amount):
        """add_batch: local_irq_save(); count = __this_cpu_read(*fbc->counters) + amount; abs(count) >= batch:
        the slow path (interrupts stay off)."""
        c = s.local[t] + amount
        return when(And(_starts(s, t), abs(c) >= _batch(s, t)),
                    pc={t: ADD.acquire}, pending={t: amount}, seen={t: s.local[t]}, irqs={t: 1},
                    **_ends(s, t))

    @action(role="adders", fair="strong")
    def acquire(s, t):
        """add_batch: raw_spin_lock(&fbc->lock)."""
        return when(And(s.pc[t] == ADD.acquire, s.lock == NOBODY), lock=t, pc={t: ADD.fold})

    @action(role="adders", fair="weak", access=(*COUNT_RMW, THIS_CPU))
    def fold(s, t):
        """add_batch: fbc->count += count; __this_cpu_sub(*fbc->counters, count - amount);
        raw_spin_unlock(&fbc->lock); local_irq_restore(). The linearisation point."""
        return when(s.pc[t] == ADD.fold, count=s.count + s.seen[t] + s.pending[t],
                    local={t: s.local[t] - s.seen[t]}, exact=s.exact + s.pending[t], pending={t: 0}, seen={t: 0},
                    lock=NOBODY, irqs={t: 0}, pc={t: ADD.idle})

    # -- __percpu_counter_limited_add(fbc, limit, amount, batch) ---------------------------------
    @action(role="adders", choose={"amount": lambda p: tuple(range(1, p.amount + 1))}, applies=_adds("limited"),
            access=(OWN_LOCAL, READ_COUNT))
    def limited_fast_check(s, t, amount):
        """limited_add: local_irq_save(); unknown = batch * num_online_cpus(); count = __this_cpu_read();
        abs(count + amount) <= batch && fbc->count + unknown <= limit: the lockless fast path."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _cpu_free(s, t), abs(s.local[t] + amount) <= s.batch,
                        s.count + s.batch * s.ncpus <= s.limit),
                    pc={t: ADD.lim_add}, pending={t: amount}, ops_left={t: s.ops_left[t] - 1}, irqs={t: 1})

    @action(role="adders", applies=_adds("limited"), access=THIS_CPU)
    def limited_fast_add(s, t):
        """limited_add: this_cpu_add(*fbc->counters, amount); local_irq_restore(); return true."""
        a = s.pending[t]
        return when(s.pc[t] == ADD.lim_add, local={t: s.local[t] + a}, pc={t: ADD.idle}, pending={t: 0},
                    irqs={t: 0}, **_landed(s, t, a))

    @action(role="adders", choose={"amount": lambda p: tuple(range(1, p.amount + 1))}, applies=_adds("limited"),
            access=(OWN_LOCAL, READ_COUNT))
    def limited_slow_check(s, t, amount):
        """limited_add: the fast-path test fails: the slow path (interrupts stay off)."""
        return when(And(s.pc[t] == ADD.idle, s.ops_left[t] > 0, _cpu_free(s, t),
                        Or(abs(s.local[t] + amount) > s.batch, s.count + s.batch * s.ncpus > s.limit)),
                    pc={t: ADD.lim_acquire}, pending={t: amount}, ops_left={t: s.ops_left[t] - 1}, irqs={t: 1})

    @action(role="adders", applies=_adds("limited"), fair="strong")
    def limited_lock(s, t):
        """limited_add: raw_spin_lock(&fbc->lock) (interrupts already off)."""
        return when(And(s.pc[t] == ADD.lim_acquire, s.lock == NOBODY), lock=t, pc={t: ADD.lim_locked})

    # The load of fbc->count is its own step, after the lock: on a 32-bit kernel its halves are read with
    # the lock held, so no store (every one is made under fbc->lock) comes between them.
    @action(role="adders", applies=_adds("limited"), fair="weak", access=Load("count", "plain"))
    def limited_decide(s, t):
        """limited_add: count = fbc->count + amount; count - unknown > limit: refuse (unlock, restore, return
        false); count + unknown <= limit: good; else sum every CPU."""
        acc = s.count + s.pending[t]
        unknown = s.batch * s.ncpus
        refuse = acc - unknown > s.limit
        return when(s.pc[t] == ADD.lim_locked,
                    lock=If(refuse, NOBODY, t), irqs={t: If(refuse, 0, 1)}, lim_acc={t: If(refuse, 0, acc)},
                    pending={t: If(refuse, 0, s.pending[t])}, refused=If(refuse, 1, s.refused),
                    pc={t: If(refuse, ADD.idle, If(acc + unknown <= s.limit, ADD.lim_fold, ADD.lim_scan))})

    @action(role="adders", choose={"other": lambda p: p.adders}, applies=_adds("limited"), fair="weak",
            access=REMOTE_LOCAL)
    def limited_sum(s, t, other):
        """limited_add: for_each_online_cpu(cpu) count += *per_cpu_ptr(fbc->counters, cpu)."""
        return when(And(s.pc[t] == ADD.lim_scan, s.visited[other] == 0),
                    lim_acc={t: s.lim_acc[t] + s.local[other]}, visited={other: 1})

    @action(role="adders", applies=_adds("limited"), fair="weak")
    def limited_sum_done(s, t):
        """limited_add: count > limit: refuse (unlock, restore, return false); else good."""
        refuse = s.lim_acc[t] > s.limit
        return when(And(s.pc[t] == ADD.lim_scan, Sum(s.visited) == s.ncpus),
                    visited=Fill(0), lim_acc={t: 0}, lock=If(refuse, NOBODY, t), irqs={t: If(refuse, 0, 1)},
                    pending={t: If(refuse, 0, s.pending[t])}, refused=If(refuse, 1, s.refused),
                    pc={t: If(refuse, ADD.idle, ADD.lim_fold)})

    @action(role="adders", applies=_adds("limited"), fair="weak", access=(OWN_LOCAL, *COUNT_RMW, THIS_CPU))
    def limited_fold(s, t):
        """limited_add: count = __this_cpu_read(); fbc->count += count + amount; __this_cpu_sub(count);
        raw_spin_unlock(); local_irq_restore(); return true."""
        a = s.pending[t]
        return when(s.pc[t] == ADD.lim_fold, count=s.count + s.local[t] + a, local={t: 0}, exact=s.exact + a,
                    lim_acc={t: 0}, pending={t: 0}, lock=NOBODY, irqs={t: 0}, pc={t: ADD.idle})

    # -- overcommit_policy_handler(): mm_compute_batch, schedule_on_each_cpu(sync_overcommit_as) ----------
    @action(role="tuner", applies=lambda p: p.retune)
    def mm_compute_batch(s, cpu):
        """overcommit_policy_handler(OVERCOMMIT_NEVER): mm_compute_batch(): vm_committed_as_batch = the new,
        smaller batch."""
        return when(s.tune_pc[cpu] == TUNE.idle, cur_batch=s.new_batch, tune_pc={cpu: TUNE.batch_set})

    @action(role="adders", applies=lambda p: p.retune, fair="strong")
    def sync_lock(s, c):
        """sync_overcommit_as() on CPU c (a kworker: it runs where c's task is preemptible):
        percpu_counter_sync(): raw_spin_lock_irqsave(&fbc->lock)."""
        tuner = s.tuner[0]
        return when(And(s.tune_pc[tuner] == TUNE.batch_set, s.work[c] == WORK.idle, s.irqs[c] == 0,
                        Or(s.pc[c] == ADD.idle, s.pc[c] == ADD.batch_read), s.lock == NOBODY),
                    lock=c, irqs={c: 1}, work={c: WORK.locked})

    @action(role="adders", applies=lambda p: p.retune, fair="weak", access=(OWN_LOCAL, *COUNT_RMW, THIS_CPU))
    def sync_fold(s, c):
        """percpu_counter_sync(): count = __this_cpu_read(); fbc->count += count; __this_cpu_sub(count);
        raw_spin_unlock_irqrestore()."""
        return when(s.work[c] == WORK.locked, count=s.count + s.local[c], local={c: 0}, lock=NOBODY, irqs={c: 0},
                    work={c: WORK.done})

    @action(role="tuner", applies=lambda p: p.retune)
    def switch_policy(s, cpu):
        """overcommit_policy_handler(): schedule_on_each_cpu() has returned (every CPU's work ran):
        sysctl_overcommit_memory = OVERCOMMIT_NEVER."""
        return when(And(s.tune_pc[cpu] == TUNE.batch_set, AllOf([s.work[c] == WORK.done for c in s.adders])),
                    tune_pc={cpu: TUNE.switched})

    # -- percpu_counter_set() --------------------------------------------------------------------
    @action(role="setter", fair="strong")
    def set_lock(s, cpu):
        """percpu_counter_set(): raw_spin_lock_irqsave(&fbc->lock)."""
        return when(And(s.set_pc[cpu] == SET.idle, s.lock == NOBODY), lock=cpu, set_pc={cpu: SET.zeroing})

    # (race_ok: the callers serialise a set against adds; with adds racing it, explored to state what they would
    # get, the plain store races with the owner's this_cpu_add, which set_is_atomic already reports)
    @action(role="setter", choose={"other": lambda p: p.adders}, fair="weak",
            access=Store("local", "plain", slot=lambda s, cpu, other: other, race_ok=True))
    def set_zero(s, cpu, other):
        """percpu_counter_set(): for_each_possible_cpu(cpu) *per_cpu_ptr(fbc->counters, cpu) = 0 (a plain store
        into a local its CPU may be adding to without the lock)."""
        return when(And(s.set_pc[cpu] == SET.zeroing, s.visited[other] == 0), local={other: 0}, visited={other: 1})

    @action(role="setter", fair="weak", access=Store("count", "plain"))
    def set_store(s, cpu):
        """percpu_counter_set(): fbc->count = amount; raw_spin_unlock_irqrestore(). Linearised here: E is what
        the callers rely on, the value set, when no lockless add landed during the set; with adds racing it
        (the callers' mistake: they serialise), the value set plus what adds put in locals already zeroed."""
        return when(And(s.set_pc[cpu] == SET.zeroing, Sum(s.visited) == s.ncpus),
                    count=s.set_to, exact=_value_set(s), visited=Fill(0), lock=NOBODY, set_pc={cpu: SET.done})

    # -- percpu_counter_read() / percpu_counter_read_positive() ------------------------------------
    @action(role="reader", access=READ_COUNT)
    def read(s, cpu):
        """percpu_counter_read(): return fbc->count; read_positive: ret = READ_ONCE(fbc->count); ret >= 0 ? ret : 0
        (one plain load, no lock: two 32-bit loads on a 32-bit kernel)."""
        bound = s.ncpus * _slack(s)
        return when(s.read_pc[cpu] == READ.idle, read_pc={cpu: READ.done},
                    read_ok={cpu: abs(s.count - s.exact) <= bound},
                    read_pos_ok={cpu: abs(Max(s.count, 0) - Max(s.exact, 0)) <= bound},
                    read_off={cpu: s.count != s.exact})

    # -- __percpu_counter_compare() / __percpu_counter_sum() ----------------------------------------
    @action(role="summer", choose={"rhs": lambda p: (0, p.ncpus * p.cmp_batch + 1)}, applies=lambda p: p.cmp,
            access=READ_COUNT)
    def compare_read(s, cpu, rhs):
        """compare: count = percpu_counter_read(fbc); abs(count - rhs) > batch * num_online_cpus(): return
        count > rhs ? 1 : -1; else the precise count (percpu_counter_sum)."""
        far = abs(s.count - rhs) > s.cmp_batch * s.ncpus
        return when(s.sum_pc[cpu] == SUM.idle, rhs={cpu: rhs}, rough={cpu: If(far, 1, 0)},
                    answer_ok={cpu: If(far, If(s.count > rhs, 1, -1) == _sign(s.exact - rhs), 0)},
                    sum_pc={cpu: If(far, SUM.done, SUM.read)})

    @action(role="summer", fair="strong")
    def sum_lock(s, cpu):
        """__percpu_counter_sum(): raw_spin_lock_irqsave(&fbc->lock)."""
        return when(And(s.sum_pc[cpu] == SUM.read, s.lock == NOBODY), lock=cpu, sum_pc={cpu: SUM.locked})

    @action(role="summer", fair="weak", access=Load("count", "plain"))
    def sum_count(s, cpu):
        """__percpu_counter_sum(): ret = fbc->count."""
        return when(s.sum_pc[cpu] == SUM.locked, sum_acc={cpu: s.count}, sum_pc={cpu: SUM.scan})

    @action(role="summer", choose={"other": lambda p: p.adders}, fair="weak", access=REMOTE_LOCAL)
    def sum_local(s, cpu, other):
        """__percpu_counter_sum(): for_each_online_cpu: ret += *per_cpu_ptr(fbc->counters, cpu)."""
        return when(And(s.sum_pc[cpu] == SUM.scan, s.visited[other] == 0),
                    sum_acc={cpu: s.sum_acc[cpu] + s.local[other]}, visited={other: 1})

    @action(role="summer", fair="weak")
    def sum_unlock(s, cpu):
        """__percpu_counter_sum(): raw_spin_unlock_irqrestore(); return ret (compare: count > rhs ? 1 :
        count < rhs ? -1 : 0). Judged against E at the return."""
        ret = s.sum_acc[cpu]
        return when(And(s.sum_pc[cpu] == SUM.scan, Sum(s.visited) == s.ncpus),
                    lock=NOBODY, sum_pc={cpu: SUM.done}, sum_acc={cpu: 0}, visited=Fill(0), overlap=0,
                    answer_ok={cpu: Or(_sign(ret - s.rhs[cpu]) == _sign(s.exact - s.rhs[cpu]), s.overlap == 1)},
                    sum_exact_ok={cpu: Or(ret == s.exact, s.overlap == 1)}, sum_off={cpu: ret != s.exact},
                    sum_ok={cpu: abs(ret - s.exact) <= 2 * s.ncpus * _slack(s)})

    @terminal
    def all_work_done(s):
        """Every task made its calls; every reader, summer, setter and the sysctl writer returned."""
        return AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.adders]
                     + [s.read_pc[c] == READ.done for c in s.reader]
                     + [s.sum_pc[c] == SUM.done for c in s.summer]
                     + [s.set_pc[c] == SET.done for c in s.setter]
                     + [s.tune_pc[c] == TUNE.switched for c in s.tuner])

    # -- the counter --------------------------------------------------------------------------------
    @invariant(applies=lambda p: not _racing_set_weak(p))
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + sum of locals == E (set included: it is linearised at
        its store, and the adds it overwrote came before it)."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @invariant(expect="violated", applies=_racing_set_weak)
    def racing_set_breaks_conservation_under_weak_memory(s):
        """PC-CONS with a percpu_counter_set racing lockless adds (its callers' mistake), under tso and lkmm,
        false on purpose: the set's E (the value set plus the adds it left in zeroed locals) is what the setter
        sees, and an add racing it may be unseen by the setter (still in its CPU's store buffer, or not yet
        propagated) or overwritten later by the set's delayed zeroing: count + the locals != E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @invariant(role="adders", applies=_bounded)
    def local_bound(s, c):
        """PC-LOCAL: every local stays within batch - 1 of zero (limited_add: batch; a batch changed at run
        time: the larger one's)."""
        return abs(s.local[c]) <= _slack(s)

    @invariant(applies=lambda p: p.bits == 64 and _bounded(p))
    def read_bound(s):
        """PC-READ: |fbc->count - E| <= ncpus * slack in every state (64-bit: the word is never half-written)
        outside a percpu_counter_set, whose E changes at its store."""
        return Or(_setting(s), abs(s.count - s.exact) <= s.ncpus * _slack(s))

    @sometimes(applies=lambda p: p.ops >= p.batch and _bounded(p) and not p.retune)
    def read_bound_is_tight(s):
        """The read bound is reached: every local at its slack."""
        return abs(s.count - s.exact) == s.ncpus * _slack(s)

    @sometimes(applies=lambda p: p.ops >= p.batch and p.adds != ADDS.local)
    def a_fold_happens(s):
        """Some call folds into fbc->count."""
        return s.count != 0

    # -- percpu_counter_add_local: sum only ---------------------------------------------------------
    @invariant(expect="violated", applies=lambda p: p.adds == ADDS.local and p.ops >= p.batch)
    def read_bound_with_add_local(s):
        """False on purpose: add_local's locals grow to INT_MAX, so percpu_counter_read is not within
        ncpus * (batch - 1) of E (its contract: readers use percpu_counter_sum)."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1)

    @invariant(applies=lambda p: p.summers and _bounded(p))
    def sum_within_bound(s):
        """A sum returns E within 2 * ncpus * slack (each local it reads within its slack then and now): what the
        callers can rely on under every memory model, adds running."""
        return s.sum_ok[s.summer[0]] == 1

    @sometimes(applies=lambda p: p.summers and _bounded(p) and p.ops > 0)
    def a_sum_is_approximate(s):
        """A sum (compare's too) returns a value other than E: sum_within_bound's ghost is exercised off E."""
        c = s.summer[0]
        return And(s.sum_pc[c] == SUM.done, s.sum_off[c] == 1)

    # (sc only, as percpu_eager's: "no lockless add overlapped" is the SC order of steps; under tso and lkmm an
    # add SC placed before the sum may be unseen by it, and nothing in the kernel orders it before the sum)
    @invariant(applies=lambda p: p.summers and not p.cmp, sc_only="sum_within_bound")
    def sum_exact_without_overlap(s):
        """A sum that no lockless add overlapped returns E (add_local's contract: the sum is exact)."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.sum_exact_ok[c] == 1)

    @sometimes(applies=lambda p: p.summers and not p.cmp)
    def a_sum_is_exact(s):
        """A sum returns E."""
        c = s.summer[0]
        return And(s.sum_pc[c] == SUM.done, s.sum_off[c] == 0, s.count != s.exact)

    # -- __percpu_counter_limited_add ---------------------------------------------------------------
    # (sc only, a finding of issue 29: the bound counts each other CPU's fast add whose check passed before the
    # walk read that CPU, by the SC order of steps. Under tso the walk under fbc->lock also misses an add that has
    # completed but whose this_cpu_add store still waits in its CPU's store buffer (not LOCKed): 4 + 2 * 1 = 6 is
    # passed with E = 7 at ncpus=2, amount=2, limit=4 (25 steps). The kernel documents no bound; the one its callers
    # can rely on under every memory model is limit_overshoot_bounded_under_weak_memory, below.)
    @invariant(applies=lambda p: p.adds == ADDS.limited and _bounded(p),
               sc_only="limit_overshoot_bounded_under_weak_memory")
    def limit_overshoot_bounded(s):
        """limited_add: the total exceeds its limit by at most (ncpus - 1) * F, F = min(amount, 2 * batch - 1) the
        largest amount its fast path can add: the slow path's walk is no snapshot, so each other CPU's fast add
        whose check passed before the walk read that CPU may land after it, uncounted."""
        return s.exact <= s.limit + (s.ncpus - 1) * _fast_max(s)

    @sometimes(applies=lambda p: p.adds == ADDS.limited and _bounded(p) and p.ncpus == 2 and p.ops >= 3)
    def limit_overshoot_is_tight(s):
        """The overshoot bound is reached."""
        return s.exact == s.limit + (s.ncpus - 1) * _fast_max(s)

    @invariant(applies=lambda p: p.adds == ADDS.limited and _bounded(p))
    def limit_overshoot_bounded_under_weak_memory(s):
        """limited_add under every memory model (what shmem's block accounting can rely on): the total exceeds its
        limit by at most (ncpus - 1) * (2 * batch - 1). The slow path's walk reads, for each other CPU, a value its
        local held, not always its latest (a completed this_cpu_add may wait in that CPU's store buffer, or not
        have propagated), and no lower than -(batch - 1); the local is never above batch (the fast path's
        abs(count + amount) <= batch), so each other CPU holds at most 2 * batch - 1 the walk did not count.
        limit_overshoot_bounded's bound where amount >= 2 * batch - 1."""
        return s.exact <= s.limit + (s.ncpus - 1) * (2 * s.batch - 1)

    @sometimes(applies=lambda p: p.adds == ADDS.limited and _bounded(p) and p.ncpus == 2 and p.ops >= 3
               and p.amount >= 2 and p.memory != MEMORY.sc)
    def limit_overshoot_under_weak_memory_is_tight(s):
        """The weak-memory overshoot bound is reached (an amount below 2 * batch - 1 passes the SC bound)."""
        return s.exact == s.limit + (s.ncpus - 1) * (2 * s.batch - 1)

    @sometimes(applies=lambda p: p.adds == ADDS.limited and p.ncpus * p.ops * p.amount > p.limit)
    def a_limited_add_is_refused(s):
        """limited_add returns false."""
        return s.refused == 1

    # -- __percpu_counter_compare -------------------------------------------------------------------
    @invariant(applies=lambda p: p.summers and p.cmp and p.bits == 64 and p.cmp_batch >= _slack(p),
               sc_only="read_bound")
    def compare_rough_answer_exact(s):
        """compare's answer from percpu_counter_read is the exact comparison of E with rhs at that read: its
        margin cmp_batch * ncpus is at least the read's error ncpus * slack."""
        return _rough_ok(s)

    @invariant(expect="violated", applies=lambda p: p.summers and p.cmp and p.bits == 64 and p.cmp_batch < _slack(p))
    def compare_rough_answer_with_a_smaller_batch(s):
        """False on purpose: compare called with a batch below the adders' slack answers wrongly from the read
        (the margin is smaller than the read's error)."""
        return _rough_ok(s)

    @invariant(expect="violated", applies=lambda p: p.summers and p.cmp and p.bits == 32)
    def compare_rough_answer_on_32bit(s):
        """The kernel's behaviour on 32-bit SMP: compare's percpu_counter_read loads fbc->count in halves, and
        a read between a fold's two stores is off by 2^32, far past the margin: the rough answer is wrong."""
        return _rough_ok(s)

    @invariant(applies=lambda p: p.summers and p.cmp, sc_only="sum_within_bound")
    def compare_sum_answer_exact_without_overlap(s):
        """compare's answer from percpu_counter_sum is the exact comparison of E with rhs when no lockless add
        overlapped the sum."""
        c = s.summer[0]
        return Or(s.sum_pc[c] != SUM.done, s.rough[c] == 1, s.answer_ok[c] == 1)

    @sometimes(applies=lambda p: p.summers and p.cmp)
    def a_compare_answers_from_the_read(s):
        """compare returns from the rough count."""
        c = s.summer[0]
        return And(s.sum_pc[c] == SUM.done, s.rough[c] == 1)

    @sometimes(applies=lambda p: p.summers and p.cmp and p.ops > 0)
    def a_compare_falls_back_to_the_sum_while_adds_run(s):
        """compare takes percpu_counter_sum and returns while a task is between calls with its local nonzero."""
        c = s.summer[0]
        return And(s.sum_pc[c] == SUM.done, s.rough[c] == 0, s.count != s.exact)

    # -- percpu_counter_set ---------------------------------------------------------------------------
    @invariant(expect="violated", applies=lambda p: p.setters and p.ncpus > 1 and p.ops > 0)
    def set_is_atomic(s):
        """False on purpose: percpu_counter_set zeroes the locals one by one without stopping lockless adds,
        so an add can survive it while a later one is wiped: no moment is the set's (callers serialise)."""
        return s.set_misordered == 0

    # (sc only: "a set that no lockless add raced" is the SC order of steps; under tso and lkmm an add SC placed
    # before the set may still reach the local after the set's zeroing. With the callers' own serialisation the
    # claim is theirs to order; with adds racing, racing_set_breaks_conservation_under_weak_memory says more.)
    @invariant(applies=lambda p: p.setters, sc_only="racing_set_breaks_conservation_under_weak_memory")
    def set_then_sum_reads_the_value_set(s):
        """What percpu_counter_set()'s callers rely on (mm/util.c's vm_committed_as, the block layer's counters
        reset under their own serialisation): after a set that no lockless add raced, with fbc->lock free,
        percpu_counter_sum() would return the value set plus the adds made since, i.e. count + the locals is E
        with E the value set at the set (not restated from the locals the set left)."""
        done = Or(*[s.set_pc[c] == SET.done for c in s.setter])
        quiet = And(s.set_kept == 0, s.set_lost == 0)
        return Implies(And(done, quiet, s.lock == NOBODY), s.count + Sum(s.local) == s.exact)

    @sometimes(applies=lambda p: p.setters and p.ops > 0)
    def an_add_is_lost_to_set(s):
        """An add lands on a local that the set then zeroes."""
        return s.set_lost == 1

    # -- the batch at run time (vm_committed_as) -----------------------------------------------------------
    @invariant(role="adders", applies=lambda p: p.retune)
    def synced_local_within_new_batch(s, c):
        """A CPU whose sync ran keeps |local| <= new_batch - 1 unless an add with the old batch landed there
        after the sync."""
        return Or(s.work[c] != WORK.done, s.stale[c] == 1, abs(s.local[c]) <= s.new_batch - 1)

    @invariant(expect="violated", applies=lambda p: p.retune and p.new_batch < p.batch)
    def deviation_after_switch(s):
        """False on purpose: once OVERCOMMIT_NEVER is published (every CPU synced) |count - E| <= ncpus *
        (new_batch - 1). An add that loaded the old batch before mm_compute_batch and runs after its CPU's sync
        leaves up to batch - 1 there."""
        return Or(s.tune_pc[s.tuner[0]] != TUNE.switched, abs(s.count - s.exact) <= s.ncpus * (s.new_batch - 1))

    @sometimes(applies=lambda p: p.retune and p.new_batch < p.batch and p.ops > 0)
    def a_stale_add_lands_after_sync(s):
        """An add with the old batch lands on a CPU after its sync."""
        return AnyOf([s.stale[c] == 1 for c in s.adders])

    # -- percpu_counter_read / read_positive ------------------------------------------------------------
    # (sc only: "E at that moment"; under tso and lkmm a read may return a store of fbc->count that E has moved
    # past: read_bound states the claim, every store of fbc->count is within the bound of E when it is made)
    @invariant(applies=lambda p: p.readers and p.bits == 64 and _bounded(p), sc_only="read_bound")
    def read_within_bound(s):
        """What percpu_counter_read returned is within ncpus * slack of E at that moment."""
        return Or(s.read_pc[s.reader[0]] == READ.idle, s.read_ok[s.reader[0]] == 1)

    @invariant(applies=lambda p: p.readers and p.bits == 64 and _bounded(p), sc_only="read_bound")
    def read_positive_within_bound(s):
        """percpu_counter_read_positive is within ncpus * slack of max(E, 0)."""
        return Or(s.read_pc[s.reader[0]] == READ.idle, s.read_pos_ok[s.reader[0]] == 1)

    @invariant(expect="violated", applies=lambda p: p.readers and p.bits == 32 and _bounded(p))
    def read_within_bound_on_32bit(s):
        """The kernel's behaviour on 32-bit SMP: a read between the two stores of a fold that takes fbc->count
        across zero returns a value 2^32 away from E."""
        return Or(s.read_pc[s.reader[0]] == READ.idle, s.read_ok[s.reader[0]] == 1)

    @invariant(expect="violated", applies=lambda p: p.readers and p.bits == 32 and _bounded(p))
    def read_positive_within_bound_on_32bit(s):
        """The kernel's behaviour on 32-bit SMP: read_positive's clamp does not help, the torn value is
        positive (the old high half, 0, with the new low half)."""
        return Or(s.read_pc[s.reader[0]] == READ.idle, s.read_pos_ok[s.reader[0]] == 1)

    @sometimes(applies=lambda p: p.readers and p.ops >= p.batch and p.batch > 1)
    def a_read_is_approximate(s):
        """A read returns a value other than E."""
        return s.read_off[s.reader[0]] == 1
