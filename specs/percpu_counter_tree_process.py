# SPDX-License-Identifier: GPL-2.0-only
"""The hierarchical per-CPU counter tree written as its kernel function: lib/percpu_counter_tree.c.

The process-function port of ``percpu_counter_tree`` (the equality test is tests/test_process_tree.py): the
same versions (``design``: latest, noskip, v6), tree shapes, carries, tasks, migrations and properties, with
``percpu_counter_tree_add()`` and its slow path written as the C. The program counter, the registers (the
carry ``inc``, the ``level`` of the walk and its ``cpu``), the guards and the memory-ordering annotations
(``this_cpu_add_return``: a this_cpu RMW; ``atomic_long_add_return_relaxed`` on ``item[i]``: a relaxed RMW of
that element; ``atomic_long_add``: an unordered RMW) are generated from the primitive table
(``checker.language.primitives``), so the spec runs under ``--memory tso`` and ``--memory lkmm`` with nothing
annotated by hand. The shapes, the carry and the claimed ranges are ``percpu_counter_tree``'s.

Two things are written differently from the C, because a process function's loop must take a step on every
way round: the latest slow path's ``if (abs(inc) & (bit_mask - 1))`` (a level whose bits ``inc`` does not
touch is passed over) is the helper ``next_level``, which picks the next level the walk takes a step at
(noskip and v6: ``level + 1``); and ``bit_mask``, ``level_items`` and ``item`` are looked up by level
(``level_carry``, ``item_of``) instead of shifted along. The scheduler's move between the fast path and the
slow path's ``raw_smp_processor_id()`` is the action ``migrate``, as in ``percpu_counter_tree``: it may
change the ``cpu`` the walk uses while ``fresh`` (no slow-path step taken yet).

The reads stay what they are in ``percpu_counter_tree``, values read at an instant in the properties
(``approximate_sum``, ``precise_sum``): as steps of a reader they would add states the hand-written spec
does not have. The bug spec ``counter_tree_read_in_flight`` is a variant of this port as of the original:
a subclass with its ``accuracy_at_any_moment`` invariant (tests/test_process_tree.py writes it so and finds
the same counterexamples).
"""
from checker import (AllOf, And, AnyOf, Array, Bool, CpuId, Ghost, If, Implies, Int, Interchangeable, Or, Param,
                     PerCpu, Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when, witness)
from checker.language.process import at, process
from checker.specs.percpu_counter_tree import (DESIGN, MAX_CPUS, PercpuCounterTree, Shape, _amounts, _batch_ok,
                                               _cpus, _migratable, _shape, _smp, claimed_range, subtrees,
                                               tree_carry)

ADD = "percpu_counter_tree_add"


def _in_slow_path(s, t):
    """Task t is between its level-0 add and its last carry (at the slow path's loop head)."""
    return at(s, t, ADD, "loop")


def _runs_on(s, t):
    """The CPU task t's step runs on: its home CPU (t mod ncpus), or in its slow path the CPU it read."""
    home = s.cpu.start + (t - s.adders.start) % s.ncpus
    return If(s.adders_pc[t] != 0, s.adders_cpu[t], home)


class PercpuCounterTreeProcess(Spec, on_demand=True):
    """percpu_counter_tree_add() (fast path, slow path level by level) and its two sums, as process functions.

    Task ``t`` of the role ``adders`` runs on CPU ``t mod ncpus`` and makes ``ops`` calls of
    ``percpu_counter_tree_add(counter, inc)``, inc +/-1 or +/-``large`` pages. A reader may run between any
    two steps: every property is a predicate on the state, and both sums are read from it."""

    kernel = PercpuCounterTree.kernel
    assumptions = PercpuCounterTree.assumptions + (
        "v6's guard(migrate)() around the add is the absence of migrate (no migrate_disable() is stepped)",
    )
    explore_sweeps = PercpuCounterTree.explore_sweeps

    design = Param(DESIGN.latest, domain=DESIGN, explore=(DESIGN.latest,),
                   prove=(DESIGN.latest, DESIGN.v6, DESIGN.noskip),
                   doc="the version: latest (mm tree), noskip (compudj/linux-dev), v6 (RFC v6, migration disabled)")
    ncpus = Param(2, domain=range(1, MAX_CPUS + 1), explore=(1, 2, 3), prove=(1, 2),
                  doc="nr_cpu_ids (1 .. 2^20, the table's range)")
    batch = Param(2, domain=_batch_ok, explore=(2,), prove=(32,),
                  doc="batch_size, a power of two > 1 (mm: RSS_STAT_BATCH_SIZE = 32)")
    large = Param(lambda p: 2 * p.batch, domain=range(0, 1 << 30),
                  doc="the larger folio size added and removed (0: single pages only)")
    tasks = Param(1, domain=(1, 2), prove=(2,), doc="tasks per CPU calling percpu_counter_tree_add")
    fill = Param(0, domain=(0, 1), doc="1: the point of the fill_every_counter witness (positive folio sizes)")
    ops = Param(lambda p: p.batch + 80 if p.fill else 2, domain=range(0, 1 << 20),
                doc="percpu_counter_tree_add calls per task (fill=1: enough for the witness)")
    migrations = Param(1, domain=range(0, 4), doc="latest/noskip: slow paths that may start on another CPU")
    ntasks = Param(lambda p: p.tasks * p.ncpus, domain=range(1, 2 * MAX_CPUS + 1), doc="tasks in all (derived)")
    nitems = Param(lambda p: max(1, _shape(p).nr_items - 1), domain=range(1, 70000),
                   doc="intermediate tree items (derived)")

    cpu = Role("ncpus", doc="CPUs, each with its level-0 counter")
    adders = Role("ntasks", cpu=lambda s, t: _runs_on(s, t), cpus="cpu",
                 doc="tasks adding to the counter; task t runs on CPU t mod ncpus (its slow path: on adders_cpu[t])")

    #: as percpu_counter_tree's: CPUs under one item are interchangeable, and so are sibling items with their
    #: subtrees; a task (with its registers) moves with its home CPU.
    by_item = Interchangeable(subtrees, role="cpu", follow={"adders": lambda p, i: i % p.ncpus})

    level0 = PerCpu(0, type=Int, role="cpu", doc="*per_cpu_ptr(counter->level0, cpu)")
    item = Array("nitems", 0, type=Int, doc="counter->items[i].count, levels 1 .. nr_levels-1")
    approx = Shared(0, type=Int, doc="*counter->approx_sum.a (the last item); one CPU: level0[0] is read")
    fresh = PerCpu(0, type=Bool, role="adders", doc="the slow path has taken no step yet (the scheduler may move "
                   "the task before its raw_smp_processor_id())")
    ops_left = PerCpu(lambda p: p.ops, role="adders", doc="adds the task has still to make")
    moves = Ghost(0, doc="slow paths started on another CPU so far")
    exact = Ghost(0, doc="E: the sum of every amount added")

    # -- helpers of values (a bug spec may override one) --------------------------------------
    @staticmethod
    def home(s, t):
        """The CPU task t runs on."""
        return (t - s.adders.start) % s.ncpus

    @staticmethod
    def next_level(s, inc, after):
        """The next level the walk takes a step at once inc leaves level ``after`` (nr_levels: the final
        atomic_long_add). latest passes over every level whose bits inc does not touch
        (``if (abs(inc) & (bit_mask - 1))``); noskip and v6 take each level."""
        sh = _shape(s)
        if s.design == DESIGN.latest:
            nxt = sh.nr_levels
            for level in reversed(range(1, sh.nr_levels)):
                nxt = If(And(level > after, abs(inc) % sh.mask[level] != 0), level, nxt)
            return nxt
        return after + 1

    @staticmethod
    def item_of(s, level, cpu):
        """``item + cpu & (level_items - 1)`` at ``level``: the index in the items array."""
        sh = _shape(s)
        if level.__class__ is int and cpu.__class__ is int:
            return sh.item(level, cpu) if level in sh.items else 0
        out = 0
        for lv in reversed(range(1, sh.nr_levels)):
            out = If(level == lv, sh.offset[lv] + cpu % sh.items[lv], out)
        return out

    @staticmethod
    def level_carry(s, level, orig, res, inc):
        """percpu_counter_tree_carry(orig, res, inc, bit_mask) with ``level``'s bit_mask."""
        sh = _shape(s)
        if level.__class__ is int:
            return tree_carry(orig, res, inc, sh.mask[level]) if level in sh.mask else 0
        out = 0
        for lv in reversed(range(1, sh.nr_levels)):
            out = If(level == lv, tree_carry(orig, res, inc, sh.mask[lv]), out)
        return out

    # -- percpu_counter_tree_add() and percpu_counter_tree_add_slowpath() ----------------------
    @process(role="adders", calls="ops_left", args={"inc": _amounts})
    def percpu_counter_tree_add(k, s, t, inc):
        """latest (linux-mm 23b86b4b6be9), inlining its slow path::

            res = this_cpu_add_return(*counter->level0, inc);
            orig = res - inc;
            inc = percpu_counter_tree_carry(orig, res, inc, bit_mask);
            if (likely(!inc))
                    return;
            percpu_counter_tree_add_slowpath(counter, inc);
          /* the slow path: */
            unsigned int cpu = raw_smp_processor_id();
            ...
            for (level = 1; level < nr_levels; level++) {
                    if (abs(inc) & (bit_mask - 1)) {
                            atomic_long_t *count = &item[cpu & (level_items - 1)].count;
                            res = atomic_long_add_return_relaxed(inc, count);
                            orig = res - inc;
                            inc = percpu_counter_tree_carry(orig, res, inc, bit_mask);
                            if (likely(!inc))
                                    return;
                    }
                    item += level_items; ... bit_mask <<= n_arity_order;
            }
            atomic_long_add(inc, counter->approx_sum.a);

        noskip (compudj/linux-dev 42bfc99db86c) and v6 (RFC v6, under guard(migrate)) have the same loop
        without the ``if``: ``next_level`` is then ``level + 1``. ``fresh`` is the scheduler's window before
        the first slow-path step (``migrate``)."""
        res = k.this_cpu_add_return(s.level0, inc)
        s.exact += inc
        orig = res - inc
        inc = tree_carry(orig, res, inc, _shape(s).level0_mask)
        if inc == 0:
            return
        cpu: CpuId = k.raw_smp_processor_id()
        s.fresh[t] = 1
        level = s.spec.next_level(s, inc, 0)
        while level < _shape(s).nr_levels:
            s.fresh[t] = 0
            res = k.atomic_long_add_return_relaxed(inc, s.item[s.spec.item_of(s, level, cpu)])
            orig = res - inc
            inc = s.spec.level_carry(s, level, orig, res, inc)
            if inc == 0:
                return
            level = s.spec.next_level(s, inc, level)
        s.fresh[t] = 0
        k.atomic_long_add(inc, s.approx)

    # -- a move between the fast path and raw_smp_processor_id() -------------------------------
    @action(role="adders", choose={"to": _cpus}, applies=_migratable)
    def migrate(s, t, to):
        """latest/noskip: preemption is on after this_cpu_add_return(); the scheduler moves the task before
        percpu_counter_tree_add_slowpath() reads raw_smp_processor_id(). (v6 holds guard(migrate).)"""
        return when(And(_in_slow_path(s, t), s.fresh[t] == 1, s.adders_cpu[t] != to, s.moves < s.migrations),
                    adders_cpu={t: to}, moves=s.moves + 1)

    @terminal
    def all_added(s):
        return AllOf(And(s.ops_left[t] == 0, s.adders_pc[t] == 0) for t in s.adders)

    # -- what the two sums return ---------------------------------------------------------------
    @staticmethod
    def approximate_sum(s):
        """percpu_counter_tree_approximate_sum(): ``atomic_long_read(counter->approx_sum.a)``, or with one CPU
        ``READ_ONCE(*counter->approx_sum.i)``, CPU 0's level-0 counter (bias 0). Read at an instant."""
        return s.level0[0] if s.ncpus == 1 else s.approx

    @staticmethod
    def precise_sum(s):
        """percpu_counter_tree_precise_sum(): ``for_each_possible_cpu(cpu) sum += *per_cpu_ptr(counter->level0,
        cpu);`` (bias 0), read at an instant."""
        return Sum(s.level0)

    @staticmethod
    def settled(s):
        """No update in progress: no task between its level-0 add and its last carry."""
        return AllOf(s.adders_pc[t] == 0 for t in s.adders)

    # -- properties (percpu_counter_tree's, on the generated registers) -------------------------
    @invariant(inductive=True)
    def precise_sum_is_exact(s):
        """Conservation: the precise sum is E in every state (each add lands in level 0 in one step)."""
        return Sum(s.level0) == s.exact

    @invariant(lemma=True)
    def carries_conserved(s):
        """No carry lost or counted twice: the approximate sum, what every counter keeps below its carry bit
        and the carries in flight add up to E."""
        sh = _shape(s)
        if not sh.order:
            return s.level0[0] == s.exact
        kept = Sum(s.level0[c] % sh.level0_mask for c in s.cpu)
        for level in range(1, sh.nr_levels):
            kept = kept + Sum(s.item[sh.offset[level] + k] % sh.mask[level] for k in range(sh.items[level]))
        return s.approx + kept + Sum(s.adders_inc[t] for t in s.adders) == s.exact

    @invariant(role="adders", lemma=True)
    def carry_in_flight_is_whole(s, t):
        """A task is idle with no carry, or at a level of the walk with a nonzero carry that is a whole
        multiple of the carry bit below that level."""
        sh = _shape(s)
        cases = [s.adders_pc[t] == 0]
        for level in range(1, sh.nr_levels + 1):
            below = sh.mask.get(level - 1, sh.level0_mask)
            cases.append(And(_in_slow_path(s, t), s.adders_level[t] == level, s.adders_inc[t] != 0,
                             s.adders_inc[t] % below == 0))
        return And(Or(*cases), Implies(s.adders_pc[t] == 0, s.adders_inc[t] == 0))

    @invariant(lemma=True, applies=lambda p: _shape(p).nr_levels > 1)  # a one-level tree has no such item
    def items_hold_whole_carries(s):
        """Each intermediate item holds a multiple of the carry bit below its level."""
        sh = _shape(s)
        return AllOf(s.item[sh.offset[level] + k] % sh.mask.get(level - 1, sh.level0_mask) == 0
                     for level in range(1, sh.nr_levels) for k in range(sh.items[level]))

    @invariant
    def settled_claim(s):
        """The claim as the version's header states it, for a settled counter."""
        under, over = claimed_range(s)
        a, p = s.spec.approximate_sum(s), s.spec.precise_sum(s)
        return Implies(s.spec.settled(s), And(p - under <= a, a <= p + over))

    @invariant
    def settled_gap_bound(s):
        """The range the code gives a settled counter: 0 <= precise - approx <= settled_max."""
        a, p = s.spec.approximate_sum(s), s.spec.precise_sum(s)
        return Implies(s.spec.settled(s), And(a <= p, p - a <= _shape(s).settled_max(s.ncpus)))

    @invariant(expect="violated", applies=lambda p: p.fill == 1)
    def settled_gap_minus_one(s):
        """False on purpose: settled_max one smaller. Violated (by the witness), so settled_max is exact."""
        a, p = s.spec.approximate_sum(s), s.spec.precise_sum(s)
        return Implies(s.spec.settled(s), p - a <= _shape(s).settled_max(s.ncpus) - 1)

    @sometimes(applies=lambda p: p.fill == 1)
    def settled_gap_is_max(s):
        """A settled tree holds back settled_max: every counter full below its carry bit."""
        a, p = s.spec.approximate_sum(s), s.spec.precise_sum(s)
        return And(s.spec.settled(s), p - a == _shape(s).settled_max(s.ncpus))

    @sometimes(applies=_smp)
    def a_carry_reaches_the_root(s):
        """A slow path completes: the approximate sum moves."""
        return s.approx != 0

    @sometimes(applies=lambda p: _smp(p) and p.ops > 0)
    def a_settled_read_is_inexact(s):
        """A settled counter whose approximate sum differs from the precise sum."""
        return And(s.spec.settled(s), s.spec.approximate_sum(s) != s.spec.precise_sum(s))

    @sometimes(applies=_smp)
    def a_carry_is_in_flight(s):
        """A task is between its level-0 add and its last carry."""
        return AnyOf(_in_slow_path(s, t) for t in s.adders)

    @sometimes(applies=lambda p: _shape(p).nr_levels > 1)
    def a_carry_stops_midway(s):
        """An intermediate item holds a value: a carry absorbed below the root."""
        return AnyOf(s.item[i] != 0 for i in range(_shape(s).nr_items - 1))

    @sometimes(applies=lambda p: p.design == DESIGN.latest and _shape(p).nr_levels > 1 and p.large
               and p.large % (2 * p.batch) == 0)
    def a_level_is_skipped(s):
        """latest: a carry goes past a level it has no bits for (straight to the root here)."""
        return AnyOf(And(_in_slow_path(s, t), s.adders_level[t] == _shape(s).nr_levels, s.fresh[t] == 1)
                     for t in s.adders)

    @sometimes(applies=lambda p: p.tasks == 2 and _smp(p))
    def two_carries_in_flight_on_one_cpu(s):
        """Both tasks of a CPU are in the slow path: one was preempted in it."""
        return AnyOf(And(_in_slow_path(s, t), _in_slow_path(s, t + s.ncpus)) for t in list(s.adders)[:s.ncpus])

    @sometimes(applies=_migratable)
    def a_slow_path_starts_elsewhere(s):
        """latest/noskip: a slow path walks the items of a CPU other than the one it added on."""
        return AnyOf(And(_in_slow_path(s, t), s.adders_cpu[t] != s.spec.home(s, t)) for t in s.adders)

    @witness(reaches=("settled_gap_is_max",), violates=("settled_gap_minus_one",),
             at={"ncpus": (4, 26, 64, 256), "batch": (32,), "fill": (1,), "tasks": (1,), "migrations": (0,)},
             applies=lambda p: p.ops >= p.batch + 80)  # fill's own ops: a smaller --set ops cannot fill the tree
    def fill_every_counter(p):
        """percpu_counter_tree's witness on the port's steps: every level-0 counter to m0 - 1 with single
        pages; then each item gets m - m_below through carries of +m_below routed from one of its CPUs."""
        sh = Shape(p.ncpus, p.batch)
        tasks = list(p.adders)
        if not sh.order:
            return
        for c in range(p.ncpus):
            yield ((FAST_RET, tasks[c], {"inc": 1}),), sh.level0_mask - 1
        below = sh.level0_mask
        for level in range(1, sh.nr_levels):
            for k in range(sh.items[level]):
                yield add_at(p, sh, tasks[k], level, below), sh.mask[level] // below - 1
            below = sh.mask[level]


def add_at(p, sh: Shape, t: int, level: int, amount: int):
    """One add of ``amount`` pages (= the mask below ``level``) by task ``t``: level 0 passes it whole, the
    levels below ``level`` pass it whole (noskip, v6) or are passed over (latest), ``level`` keeps it."""
    steps = [(FAST_ON, t, {"inc": amount})]
    for lv in range(1, level + 1):
        if p.design == DESIGN.latest and lv < level:
            continue  # abs(inc) & (bit_mask - 1) is 0 below: passed over
        steps.append((LEVEL_RET if lv == level else LEVEL_ON, t, {}))
    return tuple(steps)


def _step_names(prim: str) -> tuple[str, str]:
    """The generated names of a step's two ways: (back to idle, on to the slow path's loop head)."""
    names = [n for n in vars(PercpuCounterTreeProcess) if n.startswith(ADD + "_L") and n.split("_L", 1)[1].split(
        "_", 1)[1].rsplit("_", 1)[0] == prim]
    return next(n for n in names if n.endswith("_ret")), next(n for n in names if not n.endswith("_ret"))


#: the witness's steps: the fast path that returns, the one that enters the slow path; a level's step that
#: absorbs the carry, and the one that passes it on
FAST_RET, FAST_ON = _step_names("this_cpu_add_return")
LEVEL_RET, LEVEL_ON = _step_names("atomic_long_add_return_relaxed")
