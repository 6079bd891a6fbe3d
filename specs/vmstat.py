# SPDX-License-Identifier: GPL-2.0-only
"""The vm statistics counters: mm/vmstat.c and include/linux/vmstat.h.

Read in torvalds/linux (mm/vmstat.c at 00c010e130e5, include/linux/vmstat.h at
091b2ecaa308; mm/page_alloc.c ``page_alloc_cpu_dead``, v6.x). One zone counter
item (``zone->vm_stat[item]``, e.g. NR_FREE_PAGES) with its per-CPU
differential ``vm_stat_diff[item]`` (an s8) and each CPU's
``stat_threshold``:

- the update paths: ``__inc_zone_state`` / ``__dec_zone_state`` (the node
  forms ``__inc_node_state`` / ``__dec_node_state`` are the same code on
  ``vm_node_stat_diff``): ``v = __this_cpu_inc_return(*p)``, and past the
  threshold ``zone_page_state_add(v + overstep)`` and ``__this_cpu_write(*p,
  -overstep)`` with ``overstep = t >> 1``; ``__mod_zone_page_state`` (and
  ``__mod_node_page_state``): ``x = delta + __this_cpu_read(*p)``, past the
  threshold ``zone_page_state_add(x)`` and 0, else ``x``, written back. Their
  comment: "For use when we know that interrupts are disabled, or when we
  know that preemption is disabled and that particular counter cannot be
  updated from interrupt context" (``ctx``: both contexts);
- ``mod_zone_state()`` (``CONFIG_HAVE_CMPXCHG_LOCAL``, ``variant=cmpxchg``):
  ``o = this_cpu_read(*p)``, a ``this_cpu_try_cmpxchg`` loop that computes
  ``n``, and the overflow ``z`` added to the zone after the loop, with
  interrupts on and preemption enabled; ``overstep_mode`` 1 / -1 for
  inc / dec;
- the folds: ``refresh_cpu_vm_stats()`` (``v = this_cpu_xchg(diff, 0)`` then
  ``atomic_long_add(v, &zone->vm_stat[i])``, from the per-CPU vmstat_update
  work, interrupts on), ``cpu_vm_stats_fold(cpu)`` for a dead CPU
  (``page_alloc_cpu_dead``, a CPUHP_PAGE_ALLOC teardown callback run on a
  control CPU after the CPU left ``cpu_online_mask``);
- the threshold lowered under memory pressure: ``set_pgdat_percpu_threshold(
  pgdat, calculate_pressure_threshold)`` (kswapd) stores the pressure
  threshold into each online CPU's ``stat_threshold``, one CPU at a time,
  while updates run;
- the readers: ``zone_page_state()`` (``atomic_long_read(&zone->vm_stat[item])``,
  clamped at 0) and ``zone_page_state_snapshot()`` (that plus the diffs of
  ``for_each_online_cpu``), stated as properties of the state.

The bound the kernel relies on: ``refresh_zone_stat_thresholds`` sets
``percpu_drift_mark`` when ``max_drift = num_online_cpus() * threshold``
exceeds the low-min watermark distance, and ``calculate_pressure_threshold``
picks ``distance / num_online_cpus()`` "such that even the maximum amount
of drift will not accidentally breach the min watermark": both assume
``|zone_page_state - exact| <= ncpus * threshold``; ``zone_watermark_ok_safe``
(mm/page_alloc.c) reads ``zone_page_state_snapshot`` only below
``percpu_drift_mark``. What the spec finds:

- ``zone_drift_bound`` holds, proved by Z3 for ncpus 1..8192, any threshold,
  both update variants, refreshes and kswapd's threshold change, and is
  reached (``drift_bound_is_tight``; one smaller violated) at 1..3 CPUs and,
  replayed, at 4, 64 and 256 CPUs with threshold 125: as long as nothing
  else updates the item on a CPU inside a fold's window. An interrupt (or,
  with CONFIG_PREEMPT, another task) doing so between
  ``refresh_cpu_vm_stats``' xchg and add, or between ``mod_zone_state``'s
  cmpxchg and add, takes it to 2 and 2.5 thresholds per CPU:
  ``bugs/vmstat_refresh_window.py``, ``bugs/vmstat_cmpxchg_window.py``;
- no update is lost in the contexts the __ functions require (interrupts
  off; preemption off with no interrupt-context update); on PREEMPT_RT before
  aa3bdc05710e the __ functions ran preemptible and lost one:
  ``bugs/vmstat_rt_preempted_update.py``;
- right after kswapd stores the pressure threshold, the drift is still that
  of the normal threshold (``drift_within_pressure_threshold``, an expected
  violation: the diffs made before the store stay until each CPU's next fold);
- between a CPU leaving ``cpu_online_mask`` and ``page_alloc_cpu_dead``'s
  fold, ``zone_page_state_snapshot`` misses the dead CPU's diff and the drift
  exceeds ``num_online_cpus() * threshold`` (``snapshot_exact_across_offline``,
  ``drift_within_online_cpus``: expected violations); after the fold the
  snapshot is exact again at quiescence (``snapshot_exact_at_quiescence``);
- ``zone_page_state_snapshot`` as a reader's scan (``readers=1``) returns E
  when nothing overlaps it and no update or fold is inside its window when it
  begins (``snapshot_exact_without_overlap``); begun inside a refresh's or
  mod_zone_state's window it misses the amount in flight with nothing
  overlapping it (``a_snapshot_misses_a_fold_in_flight``), and begun between a
  CPU's death and its fold it misses that CPU's diff
  (``snapshot_exact_without_overlap_across_offline``, expected violation). A
  threshold change does not disturb it.
"""
from checker import (IRQS_OFF, PREEMPT_COUNT, AllOf, And, AnyOf, Bool, Enum, Fill, Ghost, If, Implies, Int, Load, Not, Or,
                     Param, PerCpu, Role, Shared, Spec, Sum, action, atomic, invariant, sometimes, terminal, this_cpu,
                     when, witness)

#: Which update functions the CPUs' tasks call.
VARIANT = Enum("irqoff", "cmpxchg", name="vmstat_variant")
#: The context the __ functions run in: interrupts off, only preemption off, or (PREEMPT_RT before
#: aa3bdc05710e, under spin_lock_irq / local_lock_irq) only migration off: preemptible.
CTX = Enum("irqs_off", "preempt_off", "migrate_off", name="vmstat_ctx")
#: Where a CPU's task is inside an update or a refresh.
PC = Enum("idle", "inc_fold", "dec_fold", "mod_write", "cas", "cas_add", "refresh_add", name="vmstat_pc")
#: Where a reader is in zone_page_state_snapshot().
SNAP = Enum("idle", "scan", "done", name="vmstat_snap")
#: A CPU's hotplug state, as far as the counter can tell.
HP = Enum("online", "dead", "folded", name="vmstat_hp")

# access=, in program order, as the kernel writes the steps (docs/weak-memory.md): the __ functions' plain
# __this_cpu ops, mod_zone_state's this_cpu_read / this_cpu_try_cmpxchg, refresh_cpu_vm_stats' this_cpu_xchg,
# zone_page_state_add's atomic_long_add (unordered), zone_page_state_snapshot's atomic_long_read and its plain
# remote loads of the diffs (an approximate read by design: never a data race). cpu_down, cpu_vm_stats_fold of a
# dead CPU and kswapd's threshold store have none: such a step is fully ordered (the hotplug machinery's
# barriers, and kswapd's store taken as seen by the CPU at once; docs/weak-memory.md says what that leaves out).
_INC = (this_cpu("__this_cpu_inc_return", "diff"), this_cpu("__this_cpu_read", "thresh"))
_DEC = (this_cpu("__this_cpu_dec_return", "diff"), this_cpu("__this_cpu_read", "thresh"))
_FOLD = (atomic("atomic_long_add", "zone"), this_cpu("__this_cpu_write", "diff"))
_MOD = (this_cpu("__this_cpu_read", "diff"), this_cpu("__this_cpu_read", "thresh"),
        atomic("atomic_long_add", "zone"), this_cpu("__this_cpu_write", "diff"))


def _undisturbed(p):
    """No update of the item by another context on a CPU inside an update's or a fold's window: no
    interrupt updates, or only ones that the __ functions' interrupts-off section keeps out and no refresh
    (whose xchg-to-add window an interrupt can enter). specs/bugs/vmstat_* are the other points."""
    return p.irq == 0 or (p.variant == VARIANT.irqoff and p.ctx == CTX.irqs_off and p.refreshes == 0)


def _amounts(p):
    """__mod_zone_page_state / mod_zone_page_state deltas: +-1, and +-large (a folio's pages)."""
    return (-1, 1) + ((p.large, -p.large) if p.large else ())


def _ops(p):
    """mod_zone_state's (delta, overstep_mode): inc_zone_page_state (1, 1), dec (-1, -1), mod (+-large, 0)."""
    return (1, -1) + ((p.large, -p.large) if p.large else ())


def _mode(op):
    """overstep_mode of mod_zone_state for the chosen op (a mod of +-large has none)."""
    return If(op == 1, 1, If(op == -1, -1, 0))


def _pending(s, c):
    """The delta of CPU c's update that is in its diff or its z but not yet counted in E."""
    return If(Or(s.pc[c] == PC.inc_fold, s.pc[c] == PC.dec_fold, s.pc[c] == PC.cas_add), s.delta[c], 0)


def _section(s, c, on):
    """The context the __ functions run in, entered (on=1) or left (on=0), on CPU c."""
    if s.ctx == CTX.irqs_off:
        return {"irqs": {c: on}}
    if s.ctx == CTX.preempt_off:
        return {"preempt": {c: on}}
    return {}  # migrate_off: nothing this model's context rules know of is disabled


def _touch(s):
    """A step that changes vm_stat, a diff or the online mask overlaps a reader's scan, if one is scanning."""
    if not s.readers:
        return {}
    r = s.reader[0]
    return {"snap_over": {r: If(s.snap_pc[r] == SNAP.scan, 1, s.snap_over[r])}}


def _idle(s, c):
    return s.pc[c] == PC.idle


def _online(s):
    return Sum(If(s.hp[c] == HP.online, 1, 0) for c in s.cpus)


def _snapshot(s):
    """zone_page_state_snapshot() before its clamp: vm_stat plus the diffs of the online CPUs."""
    return s.zone + Sum(If(s.hp[c] == HP.online, s.diff[c], 0) for c in s.cpus)


def _all_idle(s):
    return AllOf([And(s.pc[c] == PC.idle, s.z[c] == 0) for c in s.cpus])


class Vmstat(Spec):
    """A zone stat item: per-CPU s8 diffs with a threshold, the __ and cmpxchg updates, the folds, hotplug,
    kswapd's threshold change, zone_page_state and zone_page_state_snapshot."""

    kernel = ("torvalds/linux mm/vmstat.c @00c010e130e5 (__mod_zone_page_state, __inc_zone_state, "
              "__dec_zone_state, mod_zone_state, refresh_cpu_vm_stats, cpu_vm_stats_fold, set_pgdat_percpu_threshold, "
              "calculate_pressure_threshold), include/linux/vmstat.h @091b2ecaa308 (zone_page_state, "
              "zone_page_state_snapshot, zone_page_state_add), mm/page_alloc.c page_alloc_cpu_dead")
    assumptions = (
        "one zone, one item; the node forms (__inc_node_state, __mod_node_page_state, mod_node_state) are the "
        "same code on vm_node_stat_diff and are covered by it; zone_page_state_add's second atomic (the "
        "global vm_zone_stat) moves with the zone's and is not modelled apart",
        "each CPU has one task; a refresh_cpu_vm_stats (the vmstat_update work) runs on a CPU between that "
        "task's updates, not inside one (with variant=irqoff and ctx irqs_off or preempt_off the __ section is "
        "not preemptible anyway)",
        "an update's zone_page_state_add (two atomics) and the diff write after it in __mod_zone_page_state / "
        "__inc_zone_state's fold are one step: zone->vm_stat changes once, and the intermediate diff is seen "
        "only by zone_page_state_snapshot, which is judged at quiescence",
        "the readers are properties of the state (an atomic read); zone_page_state_snapshot's walk of the "
        "online CPUs is one step, so its claim is made at quiescence only",
        "a CPU goes down only while its task is between updates (a task preempted inside mod_zone_state "
        "would be migrated; not modelled); refresh_zone_stat_thresholds in vmstat_cpu_dead is left out (it "
        "stores the normal threshold, recomputed for fewer CPUs)",
        "kswapd lowers each online CPU's stat_threshold once (set_pgdat_percpu_threshold with "
        "calculate_pressure_threshold) and does not restore it within a run",
        "values are not clamped in the model (the kernel clamps a read below 0 to 0); E may go negative",
    )

    # Default run: each variant, the context rules, the folds, hotplug and pressure, in seconds.
    explore_sweeps = (
        {},
        {"variant": VARIANT.cmpxchg, "ncpus": (1, 2)},
        {"variant": VARIANT.irqoff, "ncpus": (1, 2), "irq": 1, "refreshes": 0},
        {"variant": VARIANT.irqoff, "ctx": CTX.preempt_off, "ncpus": (1, 2), "refreshes": 0},
        {"variant": VARIANT.irqoff, "ncpus": 2, "downs": 1, "refreshes": 0},
        {"variant": VARIANT.irqoff, "ncpus": 2, "pressure": 1, "refreshes": 0},
        {"variant": VARIANT.cmpxchg, "ncpus": 1, "large": 3, "ops": 2},
        # zone_page_state_snapshot() as a reader's scan: with refreshes, a cmpxchg fold, hotplug, pressure
        {"readers": 1, "ncpus": (1, 2), "ops": 2},
        {"readers": 1, "variant": VARIANT.cmpxchg, "ncpus": 1, "refreshes": 0},
        {"readers": 1, "ncpus": 2, "downs": 1, "refreshes": 0, "ops": 2},
        {"readers": 1, "ncpus": 2, "pressure": 1, "refreshes": 0, "ops": 2},
    )

    variant = Param(VARIANT.irqoff, domain=VARIANT, prove=(VARIANT.irqoff, VARIANT.cmpxchg),
                    doc="irqoff: the __ functions (and !CONFIG_HAVE_CMPXCHG_LOCAL's local_irq_save wrappers); "
                        "cmpxchg: mod_zone_state with this_cpu_try_cmpxchg")
    ctx = Param(CTX.irqs_off, domain=CTX, doc="irqoff: the __ functions' context (interrupts off; preemption "
                                               "off only; migration off only, PREEMPT_RT before aa3bdc05710e)")
    ncpus = Param(2, domain=range(1, 8193), explore=(1, 2, 3), prove=range(1, 8193), doc="CPUs")
    threshold = Param(2, domain=range(1, 126), prove=("symbolic",),
                      doc="stat_threshold (calculate_normal_threshold: at most 125)")
    ops = Param(lambda p: p.threshold + 1, domain=range(0, 1 << 16), prove=("symbolic",),
                doc="updates per CPU's task (default threshold + 1: enough to overstep)")
    large = Param(0, domain=range(0, 1 << 16), doc="an extra delta +-large for the mod functions (0: none)")
    irq = Param(0, domain=range(0, 9), doc="updates of the same item by each CPU's interrupt handler "
                                           "(irq-safe: one step)")
    refreshes = Param(1, domain=range(0, 9), explore=(0, 1), prove=("symbolic",),
                      doc="refresh_cpu_vm_stats runs on each CPU")
    downs = Param(0, domain=range(0, 2), prove=(0,), doc="CPUs that go offline (then cpu_vm_stats_fold)")
    pressure = Param(0, domain=range(0, 126), prove=("symbolic",),
                     doc="kswapd's pressure threshold stored into each online CPU (0: no pressure)")
    readers = Param(0, domain=(0, 1), prove=(0,), doc="a CPU calling zone_page_state_snapshot() once")

    cpus = Role("ncpus", symmetric=True, doc="CPUs, each with a task updating the item")
    reader = Role("readers", doc="a CPU calling zone_page_state_snapshot (it does not update the item)")

    zone = Shared(0, type=Int, doc="zone->vm_stat[item] (atomic_long_t)")
    diff = PerCpu(0, type=Int, role="cpus", doc="per_cpu_ptr(zone->per_cpu_zonestats, cpu)->vm_stat_diff[item] (s8)")
    thresh = PerCpu(lambda p: p.threshold, type=Int, role="cpus", doc="per_cpu_zonestats->stat_threshold")
    hp = PerCpu(HP.online, type=HP, role="cpus", doc="online, dead (not yet folded) or folded")
    pc = PerCpu(PC.idle, type=PC, role="cpus", doc="where the task is")
    seen = PerCpu(0, type=Int, role="cpus", doc="the task's register: v (inc/dec), x (mod) or o (cmpxchg)")
    tseen = PerCpu(0, type=Int, role="cpus", doc="the threshold t the task read")
    delta = PerCpu(0, type=Int, role="cpus", doc="the delta of the update in flight")
    z = PerCpu(0, type=Int, role="cpus", doc="an amount out of the diff and not yet in vm_stat: mod_zone_state's "
                                             "z after the cmpxchg, refresh_cpu_vm_stats's v after the xchg")
    ops_left = PerCpu(lambda p: p.ops, role="cpus")
    refresh_left = PerCpu(lambda p: p.refreshes, role="cpus")
    irq_left = PerCpu(lambda p: p.irq, role="cpus")
    irqs = PerCpu(0, type=IRQS_OFF, role="cpus", doc="interrupts off on this CPU")
    preempt = PerCpu(0, type=PREEMPT_COUNT, role="cpus", doc="preempt_disable_nested() count")
    downs_left = Shared(lambda p: p.downs, doc="cpu_down calls left")

    snap_pc = PerCpu(SNAP.idle, type=SNAP, role="reader")
    snap_acc = PerCpu(0, type=Int, role="reader", doc="x in zone_page_state_snapshot")
    snapped = PerCpu(0, type=Bool, role="cpus", doc="the reader's for_each_online_cpu has visited this CPU")
    snap_over = PerCpu(0, type=Bool, role="reader", doc="ghost: a step changed vm_stat, a diff or the online "
                                                        "mask during the scan")
    snap_busy = PerCpu(0, type=Bool, role="reader", doc="ghost: an update or a fold was in flight (inside its "
                                                        "window) when the scan began")
    snap_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the snapshot returned E, or was overlapped or began "
                                                      "with an update or fold in flight")
    snap_off = PerCpu(0, type=Bool, role="reader", doc="ghost: the snapshot returned a value other than E")

    exact = Ghost(0, doc="E: every update past its linearisation point (the step that changes vm_stat for a "
                         "fold, the diff store otherwise)")
    owed = PerCpu(0, type=Int, role="cpus", doc="ghost: what this CPU holds of E that vm_stat does not")
    overstepped = Ghost(0, type=Bool, doc="a fold left the diff at -+overstep != 0")
    retried = Ghost(0, type=Bool, doc="a this_cpu_try_cmpxchg failed")
    refreshed = Ghost(0, type=Bool, doc="refresh_cpu_vm_stats folded a non-zero diff")
    dead_folded = Ghost(0, type=Bool, doc="cpu_vm_stats_fold folded a non-zero diff of a dead CPU")

    sum_bounds = {"owed": lambda s: (-s.threshold, s.threshold)}

    # -- __inc_zone_state / __dec_zone_state ---------------------------------------------------------------
    @action(role="cpus", applies=lambda p: p.variant == VARIANT.irqoff, access=_INC)
    def inc(s, c):
        """__inc_zone_state(): preempt_disable_nested(); v = __this_cpu_inc_return(*p); t =
        __this_cpu_read(pcp->stat_threshold); v <= t: done (the fold, v > t, is inc_fold).
        [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        v = s.diff[c] + 1
        t = s.thresh[c]
        folds = v > t
        upd = {"diff": {c: v}, "seen": {c: If(folds, v, 0)}, "tseen": {c: If(folds, t, 0)},
               "delta": {c: If(folds, 1, 0)},
               "pc": {c: If(folds, PC.inc_fold, PC.idle)}, "ops_left": {c: s.ops_left[c] - 1},
               "exact": If(folds, s.exact, s.exact + 1), "owed": {c: If(folds, s.owed[c], s.owed[c] + 1)}}
        upd.update(_touch(s))
        upd.update(_section(s, c, If(folds, 1, 0)))
        return when(And(_idle(s, c), s.ops_left[c] > 0, s.hp[c] == HP.online), **upd)

    @action(role="cpus", applies=lambda p: p.variant == VARIANT.irqoff, access=_FOLD)
    def inc_fold(s, c):
        """__inc_zone_state(): v > t: overstep = t >> 1; zone_page_state_add(v + overstep, zone, item);
        __this_cpu_write(*p, -overstep); preempt_enable_nested(). [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        os = s.tseen[c] // 2
        add = s.seen[c] + os
        upd = {"zone": s.zone + add, "diff": {c: -os}, "exact": s.exact + 1, "owed": {c: s.owed[c] + 1 - add},
               "pc": {c: PC.idle}, "seen": {c: 0}, "tseen": {c: 0}, "delta": {c: 0},
               "overstepped": If(os != 0, 1, s.overstepped)}
        upd.update(_touch(s))
        upd.update(_section(s, c, 0))
        return when(s.pc[c] == PC.inc_fold, **upd)

    @action(role="cpus", applies=lambda p: p.variant == VARIANT.irqoff, access=_DEC)
    def dec(s, c):
        """__dec_zone_state(): v = __this_cpu_dec_return(*p); t = __this_cpu_read(pcp->stat_threshold);
        v >= -t: done (the fold, v < -t, is dec_fold). [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        v = s.diff[c] - 1
        t = s.thresh[c]
        folds = v < -t
        upd = {"diff": {c: v}, "seen": {c: If(folds, v, 0)}, "tseen": {c: If(folds, t, 0)},
               "delta": {c: If(folds, -1, 0)},
               "pc": {c: If(folds, PC.dec_fold, PC.idle)}, "ops_left": {c: s.ops_left[c] - 1},
               "exact": If(folds, s.exact, s.exact - 1), "owed": {c: If(folds, s.owed[c], s.owed[c] - 1)}}
        upd.update(_touch(s))
        upd.update(_section(s, c, If(folds, 1, 0)))
        return when(And(_idle(s, c), s.ops_left[c] > 0, s.hp[c] == HP.online), **upd)

    @action(role="cpus", applies=lambda p: p.variant == VARIANT.irqoff, access=_FOLD)
    def dec_fold(s, c):
        """__dec_zone_state(): v < -t: overstep = t >> 1; zone_page_state_add(v - overstep, zone, item);
        __this_cpu_write(*p, overstep); preempt_enable_nested(). [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        os = s.tseen[c] // 2
        add = s.seen[c] - os
        upd = {"zone": s.zone + add, "diff": {c: os}, "exact": s.exact - 1, "owed": {c: s.owed[c] - 1 - add},
               "pc": {c: PC.idle}, "seen": {c: 0}, "tseen": {c: 0}, "delta": {c: 0},
               "overstepped": If(os != 0, 1, s.overstepped)}
        upd.update(_touch(s))
        upd.update(_section(s, c, 0))
        return when(s.pc[c] == PC.dec_fold, **upd)

    # -- __mod_zone_page_state -------------------------------------------------------------------------------
    @action(role="cpus", choose={"amount": _amounts}, applies=lambda p: p.variant == VARIANT.irqoff,
            access=_MOD[:2])
    def mod_read(s, c, amount):
        """__mod_zone_page_state(): preempt_disable_nested(); x = delta + __this_cpu_read(*p); t =
        __this_cpu_read(pcp->stat_threshold). [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        upd = {"seen": {c: amount + s.diff[c]}, "tseen": {c: s.thresh[c]}, "delta": {c: amount},
               "pc": {c: PC.mod_write}, "ops_left": {c: s.ops_left[c] - 1}}
        upd.update(_section(s, c, 1))
        return when(And(_idle(s, c), s.ops_left[c] > 0, s.hp[c] == HP.online), **upd)

    @action(role="cpus", applies=lambda p: p.variant == VARIANT.irqoff, access=_FOLD)
    def mod_write(s, c):
        """__mod_zone_page_state(): abs(x) > t: zone_page_state_add(x, zone, item), x = 0;
        __this_cpu_write(*p, x); preempt_enable_nested(). [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        x = s.seen[c]
        folds = abs(x) > s.tseen[c]
        add = If(folds, x, 0)
        upd = {"zone": s.zone + add, "diff": {c: If(folds, 0, x)}, "exact": s.exact + s.delta[c],
               "owed": {c: s.owed[c] + s.delta[c] - add}, "pc": {c: PC.idle}, "seen": {c: 0}, "tseen": {c: 0},
               "delta": {c: 0}}
        upd.update(_touch(s))
        upd.update(_section(s, c, 0))
        return when(s.pc[c] == PC.mod_write, **upd)

    # -- mod_zone_state (CONFIG_HAVE_CMPXCHG_LOCAL) ------------------------------------------------------------
    @action(role="cpus", choose={"op": _ops}, applies=lambda p: p.variant == VARIANT.cmpxchg,
            access=this_cpu("this_cpu_read", "diff"))
    def cas_read(s, c, op):
        """mod_zone_state(zone, item, delta, overstep_mode): o = this_cpu_read(*p) (interrupts on,
        preemptible). op: inc_zone_page_state (1, 1), dec_zone_page_state (-1, -1), mod_zone_page_state
        (+-large, 0). [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        return when(And(_idle(s, c), s.ops_left[c] > 0, s.hp[c] == HP.online), seen={c: s.diff[c]},
                    delta={c: op}, pc={c: PC.cas}, ops_left={c: s.ops_left[c] - 1})

    @action(role="cpus", applies=lambda p: p.variant == VARIANT.cmpxchg,
            access=(this_cpu("this_cpu_read", "thresh"), this_cpu("this_cpu_try_cmpxchg", "diff")))
    def cas_try(s, c):
        """mod_zone_state(): t = this_cpu_read(pcp->stat_threshold); n = delta + o; abs(n) > t: os =
        overstep_mode * (t >> 1), z = n + os, n = -os; this_cpu_try_cmpxchg(*p, &o, n) (fails, o updated,
        if the diff moved since o was read). The threshold load and the cmpxchg are one step: a remote
        store to stat_threshold between them orders the same as one after the cmpxchg.
        [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        o = s.seen[c]
        t = s.thresh[c]
        d = s.delta[c]
        n = d + o
        folds = abs(n) > t
        os = _mode(d) * (t // 2)
        zz = If(folds, n + os, 0)
        new = If(folds, -os, n)
        ok = s.diff[c] == o
        return when(s.pc[c] == PC.cas,
                    diff={c: If(ok, new, s.diff[c])},
                    seen={c: If(ok, 0, s.diff[c])},
                    z={c: If(ok, zz, 0)},
                    pc={c: If(ok, If(folds, PC.cas_add, PC.idle), PC.cas)},
                    delta={c: If(And(ok, Not(folds)), 0, d)},
                    exact=If(And(ok, Not(folds)), s.exact + d, s.exact),
                    owed={c: If(And(ok, Not(folds)), s.owed[c] + d, s.owed[c])},
                    overstepped=If(And(ok, folds, os != 0), 1, s.overstepped),
                    retried=If(ok, s.retried, 1), **_touch(s))

    @action(role="cpus", applies=lambda p: p.variant == VARIANT.cmpxchg, access=atomic("atomic_long_add", "zone"))
    def cas_add(s, c):
        """mod_zone_state(): if (z) zone_page_state_add(z, zone, item) (after the loop, preemptible).
        [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        zz = s.z[c]
        return when(s.pc[c] == PC.cas_add, zone=s.zone + zz, exact=s.exact + s.delta[c],
                    owed={c: s.owed[c] + s.delta[c] - zz}, z={c: 0}, delta={c: 0}, pc={c: PC.idle}, **_touch(s))

    # -- refresh_cpu_vm_stats (vmstat_update) ----------------------------------------------------------------
    @action(role="cpus", applies=lambda p: p.refreshes > 0, access=this_cpu("this_cpu_xchg", "diff"))
    def refresh_xchg(s, c):
        """refresh_cpu_vm_stats(): v = this_cpu_xchg(pzstats->vm_stat_diff[i], 0) (the vmstat_update work
        on this CPU, interrupts on); if (v) the add follows. [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        v = s.diff[c]
        return when(And(_idle(s, c), s.refresh_left[c] > 0, s.hp[c] == HP.online), diff={c: 0}, z={c: v},
                    refresh_left={c: s.refresh_left[c] - 1}, pc={c: If(v != 0, PC.refresh_add, PC.idle)}, **_touch(s))

    @action(role="cpus", applies=lambda p: p.refreshes > 0, access=atomic("atomic_long_add", "zone"))
    def refresh_add(s, c):
        """refresh_cpu_vm_stats(): atomic_long_add(v, &zone->vm_stat[i]) (fold_diff adds the global later).
        [torvalds/linux mm/vmstat.c @00c010e130e5]"""
        v = s.z[c]
        return when(s.pc[c] == PC.refresh_add, zone=s.zone + v, owed={c: s.owed[c] - v}, z={c: 0},
                    pc={c: PC.idle}, refreshed=1, **_touch(s))

    # -- an interrupt handler updating the same item ---------------------------------------------------------
    @action(role="cpus", choose={"amount": (-1, 1)}, irq=True, applies=lambda p: p.irq > 0, access=_MOD)
    def irq_update(s, c, amount):
        """Interrupt: __mod_zone_page_state(zone, item, amount) (e.g. a page freed in interrupt context,
        under zone->lock with interrupts off), run to completion on the CPU: x = amount + diff; abs(x) > t:
        zone_page_state_add(x), 0; else x.
        [torvalds/linux mm/vmstat.c @00c010e130e5, mm/page_alloc.c account_freepages]"""
        x = amount + s.diff[c]
        folds = abs(x) > s.thresh[c]
        add = If(folds, x, 0)
        return when(And(s.irq_left[c] > 0, s.hp[c] == HP.online), irq_left={c: s.irq_left[c] - 1},
                    zone=s.zone + add, diff={c: If(folds, 0, x)}, exact=s.exact + amount,
                    owed={c: s.owed[c] + amount - add}, **_touch(s))

    # -- CPU hotplug ---------------------------------------------------------------------------------------
    @action(role="cpus", applies=lambda p: p.downs > 0 and p.ncpus > 1)
    def cpu_down(s, c):
        """cpu_down(): the CPU leaves cpu_online_mask (takedown_cpu) and dies; its task has finished its
        update (the one in flight, if any, ran to its end). [torvalds/linux kernel/cpu.c]"""
        return when(And(s.downs_left > 0, s.hp[c] == HP.online, _idle(s, c), _online(s) > 1),
                    hp={c: HP.dead}, downs_left=s.downs_left - 1, **_touch(s))

    @action(role="cpus", applies=lambda p: p.downs > 0 and p.ncpus > 1)
    def dead_fold(s, c):
        """page_alloc_cpu_dead() -> cpu_vm_stats_fold(cpu), on a control CPU: v = pzstats->vm_stat_diff[i];
        pzstats->vm_stat_diff[i] = 0; atomic_long_add(v, &zone->vm_stat[i]) (plain accesses: the CPU is
        dead). [torvalds/linux mm/page_alloc.c page_alloc_cpu_dead, mm/vmstat.c]"""
        v = s.diff[c]
        return when(s.hp[c] == HP.dead, hp={c: HP.folded}, zone=s.zone + v, diff={c: 0}, owed={c: s.owed[c] - v},
                    dead_folded=If(v != 0, 1, s.dead_folded), **_touch(s))

    # -- kswapd: set_pgdat_percpu_threshold(pgdat, calculate_pressure_threshold) -----------------------------
    @action(role="cpus", applies=lambda p: p.pressure > 0)
    def lower_threshold(s, c):
        """set_pgdat_percpu_threshold(): for_each_online_cpu(cpu) per_cpu_ptr(zone->per_cpu_zonestats,
        cpu)->stat_threshold = calculate_pressure_threshold(zone) (one CPU's store). Only for a zone with
        percpu_drift_mark set, i.e. num_online_cpus() * threshold > low - min watermark distance, so the pressure
        threshold max(1, distance / num_online_cpus()) is below the normal one (a pressure >= threshold never
        stores). [torvalds/linux mm/vmstat.c @00c010e130e5, mm/vmscan.c kswapd]"""
        return when(And(s.pressure > 0, s.thresh[c] != s.pressure, s.pressure < s.threshold, s.hp[c] == HP.online),
                    thresh={c: s.pressure})

    # -- zone_page_state_snapshot() ------------------------------------------------------------------------
    @action(role="reader", applies=lambda p: p.readers > 0, access=atomic("atomic_long_read", "zone"))
    def snap_zone(s, r):
        """zone_page_state_snapshot(): x = atomic_long_read(&zone->vm_stat[item])
        [torvalds/linux include/linux/vmstat.h @091b2ecaa308]"""
        busy = AnyOf([Or(s.pc[c] != PC.idle, s.z[c] != 0) for c in s.cpus])
        return when(s.snap_pc[r] == SNAP.idle, snap_pc={r: SNAP.scan}, snap_acc={r: s.zone},
                    snap_busy={r: If(busy, 1, 0)})

    @action(role="reader", choose={"other": lambda p: p.cpus}, applies=lambda p: p.readers > 0,
            access=Load("diff", "plain", slot=lambda s, r, other: other, race_ok=True))
    def snap_diff(s, r, other):
        """zone_page_state_snapshot(): for_each_online_cpu(cpu) x += per_cpu_ptr(zone->per_cpu_zonestats,
        cpu)->vm_stat_diff[item], for an online CPU not yet visited (a CPU that left the mask is skipped)
        [torvalds/linux include/linux/vmstat.h @091b2ecaa308]"""
        return when(And(s.snap_pc[r] == SNAP.scan, s.snapped[other] == 0, s.hp[other] == HP.online),
                    snap_acc={r: s.snap_acc[r] + s.diff[other]}, snapped={other: 1})

    @action(role="reader", applies=lambda p: p.readers > 0)
    def snap_return(s, r):
        """zone_page_state_snapshot(): return x (before its clamp at 0), once every online CPU is visited;
        judged here against E [torvalds/linux include/linux/vmstat.h @091b2ecaa308]"""
        x = s.snap_acc[r]
        visited = AllOf([Or(s.snapped[c] == 1, s.hp[c] != HP.online) for c in s.cpus])
        return when(And(s.snap_pc[r] == SNAP.scan, visited), snap_pc={r: SNAP.done}, snapped=Fill(0),
                    snap_ok={r: Or(x == s.exact, s.snap_over[r] == 1, s.snap_busy[r] == 1)},
                    snap_off={r: x != s.exact})

    @terminal
    def all_done(s):
        """Every task made its updates and refreshes (or its CPU went down), every dead CPU was folded and
        the reader returned."""
        return AllOf([Or(s.hp[c] == HP.folded,
                         And(s.pc[c] == PC.idle, s.ops_left[c] == 0, s.refresh_left[c] == 0)) for c in s.cpus]
                     + [s.snap_pc[r] == SNAP.done for r in s.reader])

    # -- properties ----------------------------------------------------------------------------------------
    @invariant(proof=False)
    def no_update_lost(s):
        """vm_stat + the sum of every CPU's diff + the amounts in flight (z) == E, the in-flight update's
        own delta aside: no update is lost or counted twice."""
        return s.zone + Sum(s.diff[c] + s.z[c] - _pending(s, c) for c in s.cpus) == s.exact

    @invariant(inductive=True)
    def conservation(s):
        """vm_stat + what each CPU holds (owed) == E."""
        return s.zone + Sum(s.owed) == s.exact

    @invariant(role="cpus", inductive=True)
    def owed_is_held(s, c):
        """What a CPU holds is its diff and its z, less the delta not yet counted."""
        return s.owed[c] == s.diff[c] + s.z[c] - _pending(s, c)

    @invariant(role="cpus", inductive=True, applies=lambda p: _undisturbed(p))
    def owed_within_threshold(s, c):
        """A CPU holds at most stat_threshold (normal, the largest a CPU's threshold is)."""
        return abs(s.owed[c]) <= s.threshold

    @invariant(role="cpus", inductive=True)
    def threshold_in_range(s, c):
        """stat_threshold is the normal threshold or the pressure one (1 <= pressure < normal)."""
        return Or(s.thresh[c] == s.threshold, And(s.pressure > 0, s.thresh[c] == s.pressure,
                                                  s.pressure < s.threshold))

    @invariant(role="cpus", inductive=True, applies=lambda p: _undisturbed(p))
    def registers_match(s, c):
        """Between the steps of an update nothing else touched the diff: the fold's v is the diff, the
        threshold read is the CPU's, a refresh's or a fold's z is what was taken."""
        infold = Or(s.pc[c] == PC.inc_fold, s.pc[c] == PC.dec_fold)
        return And(Implies(infold, And(s.diff[c] == s.seen[c], s.tseen[c] >= 1, s.tseen[c] <= s.threshold,
                                        abs(s.seen[c]) > s.tseen[c], abs(s.seen[c]) <= s.threshold + 1,
                                        If(s.pc[c] == PC.inc_fold, s.delta[c] == 1, s.delta[c] == -1))),
                   Implies(s.pc[c] == PC.mod_write, And(s.seen[c] == s.diff[c] + s.delta[c],
                                                         s.tseen[c] >= 1, s.tseen[c] <= s.threshold)),
                   Implies(Not(Or(s.pc[c] == PC.cas_add, s.pc[c] == PC.refresh_add)), s.z[c] == 0),
                   Implies(s.pc[c] == PC.idle, abs(s.diff[c]) <= s.threshold),
                   Implies(s.pc[c] == PC.refresh_add, s.diff[c] == 0),
                   Implies(Or(s.pc[c] == PC.idle, s.pc[c] == PC.refresh_add), s.delta[c] == 0),
                   Implies(s.pc[c] == PC.cas_add, And(abs(s.diff[c]) <= s.threshold // 2,
                                                        abs(s.z[c] + s.diff[c] - s.delta[c]) <= s.threshold)))

    @invariant
    def zone_drift_bound(s):
        """|zone_page_state - E| <= ncpus * stat_threshold: the drift percpu_drift_mark and
        calculate_pressure_threshold assume (max_drift = num_online_cpus() * threshold)."""
        return abs(s.zone - s.exact) <= s.ncpus * s.threshold

    @invariant(role="cpus", proof=False)
    def diff_fits_s8(s, c):
        """vm_stat_diff is an s8: it stays within [-128, 127] (the transient v = t + 1 of __inc_zone_state
        included), since stat_threshold <= 125."""
        return And(s.diff[c] >= -128, s.diff[c] <= 127)

    @invariant(expect="violated", applies=lambda p: p.ops >= p.threshold)
    def zone_drift_bound_minus_one(s):
        """False on purpose: the bound one smaller. Violated, so ncpus * threshold is reached."""
        return abs(s.zone - s.exact) <= s.ncpus * s.threshold - 1

    @invariant(expect="violated", applies=lambda p: 0 < p.pressure < p.threshold and p.ops >= p.threshold
               and p.variant == VARIANT.irqoff)
    def drift_within_pressure_threshold(s):
        """False: once kswapd has stored the pressure threshold on every online CPU, |zone_page_state - E|
        <= num_online_cpus() * pressure threshold (what calculate_pressure_threshold's comment promises). The
        diffs made under the normal threshold stay until each CPU's next fold."""
        lowered = AllOf([Or(s.hp[c] != HP.online, s.thresh[c] == s.pressure) for c in s.cpus])
        return Implies(lowered, abs(s.zone - s.exact) <= _online(s) * s.pressure)

    @invariant(proof=False)
    def snapshot_exact_at_quiescence(s):
        """zone_page_state_snapshot is E when no update, refresh or fold is in flight and every dead CPU
        has been folded."""
        quiet = And(_all_idle(s), AllOf([s.hp[c] != HP.dead for c in s.cpus]))
        return Implies(quiet, _snapshot(s) == s.exact)

    @invariant(expect="violated", applies=lambda p: p.downs > 0 and p.ncpus > 1)
    def snapshot_exact_across_offline(s):
        """False: zone_page_state_snapshot is E whenever no update is in flight. Between the CPU leaving
        cpu_online_mask and page_alloc_cpu_dead's cpu_vm_stats_fold, for_each_online_cpu skips the dead
        CPU's diff."""
        return Implies(_all_idle(s), _snapshot(s) == s.exact)

    @invariant(expect="violated", applies=lambda p: p.downs > 0 and p.ncpus > 1 and p.ops >= p.threshold)
    def drift_within_online_cpus(s):
        """False: |zone_page_state - E| <= num_online_cpus() * threshold. In the same window the dead CPU's
        diff is neither in vm_stat nor counted by num_online_cpus()."""
        return abs(s.zone - s.exact) <= _online(s) * s.threshold

    @invariant(applies=lambda p: p.readers > 0 and not p.downs, sc_only="snapshot_exact_at_quiescence")
    def snapshot_exact_without_overlap(s):
        """A zone_page_state_snapshot that no update, fold or hotplug step overlapped, and that began with no
        update or fold inside its window, returns E (a threshold change does not disturb it). "Overlapped" is
        the SC order of steps: under tso a diff store still in its CPU's buffer, under lkmm one the reader has
        not seen, is missed by a scan that SC places after it (violated at every reader point when it was
        checked there); the kernel promises the snapshot only at quiescence."""
        r = s.reader[0]
        return Or(s.snap_pc[r] != SNAP.done, s.snap_ok[r] == 1)

    @invariant(expect="violated", applies=lambda p: p.readers > 0 and p.downs > 0 and p.ncpus > 1)
    def snapshot_exact_without_overlap_across_offline(s):
        """False: the same claim with a CPU going down before the scan: a snapshot taken between the CPU
        leaving cpu_online_mask and page_alloc_cpu_dead's fold overlaps nothing and still misses its diff."""
        r = s.reader[0]
        return Or(s.snap_pc[r] != SNAP.done, s.snap_ok[r] == 1)

    @sometimes(applies=lambda p: p.readers > 0 and p.ops > 0 and (p.refreshes > 0 or (
        p.variant == VARIANT.cmpxchg and (p.ops > p.threshold or p.large > p.threshold))))
    def a_snapshot_misses_a_fold_in_flight(s):
        """A snapshot that no step overlapped returns a value other than E: it began while a refresh's or a
        mod_zone_state's amount was out of the diff and not yet in vm_stat."""
        r = s.reader[0]
        return And(s.snap_pc[r] == SNAP.done, s.snap_off[r] == 1, s.snap_over[r] == 0)

    @sometimes(applies=lambda p: p.readers > 0 and p.ops > 0)
    def an_overlapped_snapshot_is_inexact(s):
        """A snapshot overlapped by an update or a fold returns a value other than E."""
        r = s.reader[0]
        return And(s.snap_pc[r] == SNAP.done, s.snap_off[r] == 1, s.snap_over[r] == 1)

    @sometimes(applies=lambda p: p.ops > 0 and (p.ops > p.threshold or p.refreshes > 0 or p.large > p.threshold
                                                or (p.downs > 0 and p.ncpus > 1)))
    def a_fold_happens(s):
        """An update folds its diff into vm_stat."""
        return s.zone != 0

    @sometimes(applies=lambda p: p.threshold >= 2 and p.ops > p.threshold
               and (p.variant == VARIANT.irqoff or not p.large))
    def an_overstep_happens(s):
        """A fold leaves the diff at -(t >> 1) (inc) or t >> 1 (dec), not 0."""
        return s.overstepped == 1

    @sometimes(applies=lambda p: p.ops >= p.threshold)
    def drift_bound_is_tight(s):
        """|zone_page_state - E| reaches ncpus * threshold: every CPU holds its threshold."""
        return abs(s.zone - s.exact) == s.ncpus * s.threshold

    @sometimes(applies=lambda p: 0 < p.pressure < p.threshold)
    def a_threshold_is_lowered(s):
        """kswapd's store of the pressure threshold has reached every online CPU."""
        return AllOf([Or(s.hp[c] != HP.online, s.thresh[c] == s.pressure) for c in s.cpus])

    @sometimes(applies=lambda p: p.refreshes > 0 and p.ops > 0)
    def a_refresh_folds(s):
        """refresh_cpu_vm_stats folds a non-zero diff."""
        return s.refreshed == 1

    @sometimes(applies=lambda p: p.downs > 0 and p.ncpus > 1 and p.ops > 0)
    def a_dead_cpu_is_folded(s):
        """cpu_vm_stats_fold folds a dead CPU's non-zero diff."""
        return s.dead_folded == 1

    @sometimes(applies=lambda p: p.variant == VARIANT.cmpxchg and p.irq > 0 and p.ops > 0)
    def a_cmpxchg_fails(s):
        """An interrupt's update lands between mod_zone_state's read and its cmpxchg: the cmpxchg fails."""
        return s.retried == 1

    @sometimes(applies=lambda p: p.ops > 0)
    def a_snapshot_is_exact_while_zone_is_not(s):
        """At quiescence zone_page_state_snapshot is E while zone_page_state is not."""
        return And(_all_idle(s), _snapshot(s) == s.exact, s.zone != s.exact)

    @witness(reaches=("drift_bound_is_tight",), violates=("zone_drift_bound_minus_one",),
             at={"ncpus": (4, 64, 256), "threshold": (125,)},
             applies=lambda p: p.variant == VARIANT.irqoff and p.irq == 0)
    def every_cpu_fills_its_diff(p):
        """Each CPU in turn makes threshold __inc_zone_state calls: every diff at threshold, vm_stat 0."""
        for c in p.cpus:
            yield "inc", c, {}, p.threshold

    @witness(reaches=("an_overstep_happens", "a_fold_happens"), at={"ncpus": (4, 64, 256), "threshold": (125,)},
             applies=lambda p: p.variant == VARIANT.irqoff and p.irq == 0)
    def every_cpu_oversteps(p):
        """Each CPU makes threshold + 1 __inc_zone_state calls: the last folds t + 1 + (t >> 1) and leaves
        -(t >> 1)."""
        for c in p.cpus:
            yield "inc", c, {}, p.threshold + 1
            yield "inc_fold", c, {}, 1

    @witness(reaches=("a_threshold_is_lowered",), violates=("drift_within_pressure_threshold",),
             at={"ncpus": (4, 64, 256), "threshold": (125,), "pressure": (8,)},
             applies=lambda p: p.variant == VARIANT.irqoff and p.irq == 0)
    def pressure_after_fill(p):
        """Every CPU fills its diff to the normal threshold, then kswapd lowers every CPU's threshold."""
        for c in p.cpus:
            yield "inc", c, {}, p.threshold
        for c in p.cpus:
            yield "lower_threshold", c, {}, 1

