# SPDX-License-Identifier: GPL-2.0-only
"""Kent Overstreet's lazy per-CPU counter written as its kernel functions, run by tasks: lib/lazy-percpu-counter.c.

The counter is one 64-bit atomic word: bit 0 the mode (0 atomic, 1 per-CPU), bits 1..55 the value in two's
complement, bits 56..63 a modification count that every atomic-mode add bumps. When an add's ``cmpxchg`` replaces
a word whose modification field is 0 and the last such wrap was less than a second ago, the adder allocates
per-CPU storage, copies the value into its own slot and publishes ``pcpu_v | 1`` with a second ``cmpxchg`` loop;
from then on adds go to ``this_cpu_add``. Reference section 4.3 restates the code step by step; the code itself
(koverstreet/bcachefs, the same as ZhangPeng's RFC 1/3) was read and agrees with it.

The word is kept as the kernel keeps it: ``word`` is the 64-bit value with the modification field cut to
``mod_bits`` bits, the encoded add is the kernel's ``(i << 1) & ~COUNTER_MOD_MASK | 1 << 56`` added modulo the
word, and the decode is the kernel's arithmetic shift pair, written with ``//`` and ``%`` so that the Z3 backend
can run it too. A carry out of the value field therefore lands in the modification field exactly as in the kernel.

Why a small modification width says something about 8 bits: the value arithmetic never reads bits 56 and up (the
bit-vector lemmas of ``checker/prove/bitvector.py`` prove, on the real 64-bit word, that the decoded value after
an add is the sum and that a carry out of the value field changes only the modification field). The width only
decides which adds run the wrap check, and the check's outcome is a nondeterministic choice here. At
``mod_bits=0`` (COUNTER_MOD_MASK = 0: every add sees a zero field) every add runs the check, and choosing "not
within a second" there does what skipping the check does (``last_wrap`` only ever goes from unset to set, and the
very first add sets it at every width): every run at width 8 is a run at width 0 up to the modification field,
which nothing else reads. So the properties checked at width 0 hold at 8; widths 1 and 2 are explored as well, as
real instances of the code.

This spec replaced the hand-written pc machine it was checked against, state for state (kept as
tests/pc_machines/percpu_lazy.py; tests/test_process_lazy.py). ``lazy_percpu_counter_add()`` with its slow path and ``switch_to_pcpu()``
inlined is one process function run by tasks on the task model (``checker.kernel.tasks``): the scheduler
preempts and migrates them wherever their context allows, and ``preempt_disable()`` in the switch is a
primitive that sets that context. ``lazy_percpu_counter_read()`` is a second process function, run by the
reader's CPU. The program counters, registers, guards and ``access=`` annotations are generated
(``checker.language.process``); ``c->v`` is one word to the memory models (``OneWord``) and one value to the
code (``CV``: ``k.atomic64_read(s.c_v)``, ``k.atomic64_cmpxchg(s.c_v, old, new)``).

The kernel C, beside each function (koverstreet/bcachefs lib/lazy-percpu-counter.c and
include/linux/lazy-percpu-counter.h, = ZhangPeng RFC 1/3)::

    static inline void lazy_percpu_counter_add(struct lazy_percpu_counter *c, s64 i)
    {
            u64 v = atomic64_read(&c->v);
            u64 __percpu *pcpu_v = lazy_percpu_counter_is_pcpu(v);

            if (likely(pcpu_v))
                    this_cpu_add(*pcpu_v, i);
            else
                    lazy_percpu_counter_add_slowpath(c, i);
    }

    void lazy_percpu_counter_add_slowpath(struct lazy_percpu_counter *c, s64 i)
    {
            u64 atomic_i;
            u64 old, v = atomic64_read(&c->v);
            u64 __percpu *pcpu_v;

            atomic_i  = i << COUNTER_IS_PCPU_BIT;
            atomic_i &= ~COUNTER_MOD_MASK;
            atomic_i |= 1ULL << COUNTER_MOD_BITS_START;

            do {
                    pcpu_v = lazy_percpu_counter_is_pcpu(v);
                    if (pcpu_v) {
                            this_cpu_add(*pcpu_v, i);
                            return;
                    }

                    old = v;
            } while ((v = atomic64_cmpxchg(&c->v, old, old + atomic_i)) != old);

            if (unlikely(!(v & COUNTER_MOD_MASK))) {
                    unsigned long now = jiffies;

                    if (c->last_wrap &&
                        unlikely(time_after(c->last_wrap + HZ, now)))
                            lazy_percpu_counter_switch_to_pcpu(c);
                    else
                            c->last_wrap = now;
            }
    }

    static void lazy_percpu_counter_switch_to_pcpu(struct lazy_percpu_counter *c)
    {
            u64 __percpu *pcpu_v = alloc_percpu_gfp(u64, GFP_ATOMIC|__GFP_NOWARN);
            u64 old, new, v;

            if (!pcpu_v)
                    return;

            preempt_disable();
            v = atomic64_read(&c->v);
            do {
                    if (lazy_percpu_counter_is_pcpu(v)) {
                            free_percpu(pcpu_v);
                            return;              /* the fix: preempt_enable(); return; */
                    }

                    old = v;
                    new = (unsigned long)pcpu_v | 1;

                    *this_cpu_ptr(pcpu_v) = lazy_percpu_counter_atomic_val(v);
            } while ((v = atomic64_cmpxchg(&c->v, old, new)) != old);
            preempt_enable();
    }

    s64 lazy_percpu_counter_read(struct lazy_percpu_counter *c)
    {
            s64 v = atomic64_read(&c->v);
            u64 __percpu *pcpu_v = lazy_percpu_counter_is_pcpu(v);

            if (pcpu_v) {
                    int cpu;

                    v = 0;
                    for_each_possible_cpu(cpu)
                            v += *per_cpu_ptr(pcpu_v, cpu);
            } else {
                    v = lazy_percpu_counter_atomic_val(v);
            }

            return v;
    }

Lines of step code against lines of C (the bodies' statements and braces; blank lines, comments and
declarations without a value left out; benchmarks/process_lines.py): ``lazy_percpu_counter_add`` with its slow
path and switch inlined, 61 against 41 (6 + 20 + 15), 1.49x, of which 17 are ghost updates, the
``preempt_off`` variant and a bug spec's hook, which have no C (44 without them, 1.07x; the ghosts of ``this_cpu_add`` and
``free_percpu``, which the handler shares, are the helpers ``_added`` and ``_freed``); the same add as a hard-irq
handler, ``lazy_percpu_counter_add_irq``, 53 against 41, 1.29x; ``lazy_percpu_counter_read``, 14 against 10,
1.4x.

How the port writes what the C leaves implicit, and why the states are the same as ``percpu_lazy``'s:

- ``c->v`` read back in per-CPU mode is ``PCPU`` (odd: ``pcpu_v | 1``), whoever published it: the pointer a
  task reads is the published one (it never changes once published: ``mode_changes_once``), so the
  value kept between steps names no task (which keeps symmetry reduction as it is for the pc-machine).
  A store of ``PCPU`` by the publishing ``cmpxchg`` records its task as the owner (``CV.store``).
- The fast path's ``this_cpu_add`` is the slow path's: after a per-CPU ``atomic64_read`` both run the
  same step on the same state, so the port sends the fast path to the slow path's loop head, where
  ``is_pcpu(v)`` holds (the pc-machine's ``pcpu_add``).
- The copy ``*this_cpu_ptr(pcpu_v) = atomic_val(v)`` is a plain store to storage nobody else can read
  until the ``cmpxchg`` after it publishes it; it is that step's first access (``raw_cpu_write``), and
  it lands in ``slot`` (the published storage) only if the ``cmpxchg`` succeeds (``_into_published``).
- The wrap check reads ``last_wrap`` and jiffies and stores ``last_wrap`` in one step; ``time_after`` is
  a choice (``k.choose``); the allocation's success is a choice too.

- Interrupt-context adds (``irq > 0``): ``lazy_percpu_counter_add_irq`` is the same code as each CPU's hard-irq
  handler, several steps on a role of handlers only (the CPUs: its own pc and registers), over the task its CPU
  runs, which waits (``runs=``) wherever it is, even inside its own ``switch_to_pcpu``. Its publishing
  ``cmpxchg`` stores ``PCPU_IRQ``, the handler's own ``pcpu_v | 1``, which records the CPU in ``published_irq``.

32-bit kernels (``bits=32``; the named sweep ``percpu_lazy_32bit``): the ``atomic64_t`` word stays whole, the
``u64`` slots do not. ``this_cpu_add`` of a u64 is whole to its own CPU (the generic ``this_cpu_generic_to_op``
runs it with interrupts off) but two stores to a remote reader, and the read's ``v += *per_cpu_ptr(pcpu_v, cpu)``
is a plain load, split in halves by the tearing pass (``checker.kernel.tearing``), both orders. A task's add stays
one step (its slot is ``slot[task_cpu[t]]``, a term of the scheduler's state): a read whose halves fall on either
side of it sees every torn value the two stores could show. The handler's add (its own CPU's slot) is split into
its two stores, so ``no_update_lost`` is judged between them there (``no_update_lost_between_stores``). A read
while a slot crosses a multiple of 2^32 (0 - 1) returns a sum about 2^32 off: ``bugs/lazy_read_torn_32bit.py``.
The pc machine split the task's store too: its 32-bit state counts differ, its verdicts do not
(tests/test_process_lazy.py).
"""
import inspect

from checker import (NOBODY, PREEMPT_COUNT, Abstraction, And, AnyOf, Bool, CpuId, Enum, Ghost, If, Implies, Int, Max,
                     Not, OneWord, Or, Param, PerCpu, PerTask, Role, S64, Select, Shared, Spec, Sum, Task, action,
                     invariant, leads_to, sometimes, terminal, when)
from checker.kernel.config import Bits
from checker.kernel.memory import MEM
from checker.kernel.tasks import TaskId
from checker.language.process import at, process
from checker.prove.bitvector import WordLemmas
from checker.types import IntType

#: The first misuse of per-CPU memory.
MEMERR = Enum("none", "add_to_dead", "double_free", name="pcpu_error")

VALUE_BITS = 55        # bits 1..55
MOD_SHIFT = 56         # COUNTER_MOD_BITS_START (64 - COUNTER_MOD_BITS)
FIELD = 1 << VALUE_BITS
MOD_UNIT = 1 << MOD_SHIFT  # bit 56, the modification field's unit


def word_modulus(mod_bits):
    """The word's range: 56 low bits plus the modification field."""
    return 2 ** (MOD_SHIFT + mod_bits)  # (arithmetic, not <<: the spec computes on unbounded ints, not C words)


def encode_add(i):
    """atomic_i = i << 1; atomic_i &= ~COUNTER_MOD_MASK; atomic_i |= 1ULL << COUNTER_MOD_BITS_START."""
    return (2 * i) % MOD_UNIT + MOD_UNIT


def decode(word):
    """lazy_percpu_counter_atomic_val(): (v << 8) >> 9 on an s64, i.e. bits 1..55 sign-extended."""
    f = (word // 2) % FIELD
    return If(f >= FIELD // 2, f - FIELD, f)


def decode_logical(word):
    """The decode with a logical right shift (a bug): bits 1..55 read as unsigned."""
    return (word // 2) % FIELD


def mod_field(word):
    return word // MOD_UNIT


class _Word(IntType):
    """The atomic word; traces show its fields."""

    def show(self, v):
        if not isinstance(v, int):
            return str(v)
        f = (v // 2) % FIELD
        val = f - FIELD if f >= FIELD // 2 else f
        return f"{v:#x} (val {val}, mod {v // MOD_UNIT})"


WORD = _Word("word", None, False)

#: Under the liveness abstraction the word's value is kept modulo this (its field wraps there).
LIVE_VALUES = 4

ADD, READ = "lazy_percpu_counter_add", "lazy_percpu_counter_read"
#: c->v in per-CPU mode as the code reads it back: ``pcpu_v | 1`` of the published storage (there is only one).
PCPU = 1
#: c->v as a hard-irq handler's publishing cmpxchg stores it: ``pcpu_v | 1`` of the handler's own storage (another
#: pointer than any task's; read back as ``PCPU``, as every published pointer is).
PCPU_IRQ = 3


class CV(OneWord):
    """c->v: one atomic64_t, kept as ``word`` (atomic mode), ``published`` and ``published_irq`` (per-CPU mode:
    whose storage, a task's or a CPU's interrupt handler's); one location to the memory models, one value to the
    process functions."""

    def load(self, word, published, published_irq):
        """What a load of c->v returns: the atomic-mode word, or ``PCPU``."""
        return If(And(published == NOBODY, published_irq == NOBODY), word, PCPU)

    def store(self, value, me, word, published, published_irq):
        """A store of ``value`` by ``me``: a word, ``PCPU`` (``pcpu_v | 1`` of task ``me``'s storage) or
        ``PCPU_IRQ`` (of CPU ``me``'s handler's); a store of the value the word holds (a failed cmpxchg's)
        changes nothing."""
        same = value == self.load(word, published, published_irq)
        return (If(same, word, If(Or(value == PCPU, value == PCPU_IRQ), 0, value)),
                If(same, published, If(value == PCPU, me, NOBODY)),
                If(same, published_irq, If(value == PCPU_IRQ, me, NOBODY)))


def is_pcpu(v):
    """lazy_percpu_counter_is_pcpu(v): the mode bit."""
    return v == PCPU


def _amounts(p):
    return (1, -1) if p.neg else (1,)


def _atomic_mode(s):
    """c->v holds no pointer: no storage is published, a task's or a handler's."""
    return And(s.published == NOBODY, s.published_irq == NOBODY)


def _into_published(s, cpu, old, copy):
    """The slot of the storage a copy on ``cpu`` is stored into, as ``slot`` (the published storage) holds it
    after the cmpxchg that follows: the copy if that cmpxchg publishes the storage, else the slot unchanged
    (until then nobody reads the storage)."""
    return If(And(_atomic_mode(s), s.word == old), copy, Select(s.slot, cpu))


def _added(s, i):
    """The ghosts of this_cpu_add(*pcpu_v, i), the add's linearisation point: E, a read it overlaps, an add to
    freed storage."""
    bad = And(_published_alloc(s) != MEM.live, s.pcpu_error == MEMERR.none)
    return {"exact": s.exact + i, "read_overlap": If(_reading(s), 1, s.read_overlap),
            "pcpu_error": If(bad, MEMERR.add_to_dead, s.pcpu_error)}


def _freed(s, alloc, who):
    """free_percpu() of the storage ``alloc`` (``alloc`` or ``irq_alloc``) of ``who``: freed twice is an error."""
    bad = And(Select(getattr(s, alloc), who) != MEM.live, s.pcpu_error == MEMERR.none)
    return {alloc: {who: MEM.freed}, "pcpu_error": If(bad, MEMERR.double_free, s.pcpu_error)}


def _no_irq_inside(s, t):
    """The task's CPU has no interrupt handler inside its add: a hard-irq handler runs to its return before the
    task it interrupted resumes (other CPUs run meanwhile)."""
    return Select(s.cpus_pc, s.task_cpu[t]) == 0


def _task_inside(s, cpu):
    """The task ``cpu`` runs is inside lazy_percpu_counter_add."""
    return AnyOf([And(s.curr[cpu] == t, s.adders_pc[t] != 0) for t in s.adders])


def _task_in_switch_loop(s, cpu):
    """The task ``cpu`` runs is inside switch_to_pcpu's loop: between its copy and its cmpxchg, preemption off."""
    return AnyOf([And(s.curr[cpu] == t, at(s, t, ADD, SWITCH_LOOP)) for t in s.adders])


def _stale_copy_lands(s, t, old):
    """Without preempt_disable() (``preempt_off=0``), a retry after a migration copies the word into another
    CPU's slot of the task's storage, and the earlier copy stays in the first CPU's slot. Kept as
    ``stale``/``stale_cpu`` from a failed publishing cmpxchg (the last one on another CPU: exact while a task
    changes CPU at most once inside its switch), it lands in ``slot`` (the published storage) when this
    cmpxchg publishes the storage from another CPU. With preemption off (the kernel's code) the retry runs on
    the same CPU and overwrites its slot: nothing is kept."""
    if s.preempt_off:
        return False
    was = Select(s.stale_cpu, t)
    return And(_atomic_mode(s), s.word == old, was != NOBODY, was != Select(s.task_cpu, t))


def _stale_copy(s, t, old):
    """The earlier copy kept after this publishing cmpxchg (``preempt_off=0``): the copy, and the CPU it was
    stored on, where the cmpxchg fails on an atomic word (the task may move and retry); nothing otherwise."""
    if s.preempt_off:
        return {}
    failed = And(_atomic_mode(s), s.word != old)
    return {"stale": {t: If(failed, decode(old), 0)},
            "stale_cpu": {t: If(failed, Select(s.task_cpu, t), NOBODY)}}


def _no_stale_copy(s, t):
    """The storage is freed: its stale copy with it (``preempt_off=0``)."""
    return {} if s.preempt_off else {"stale": {t: 0}, "stale_cpu": {t: NOBODY}}


def _reading(s):
    """The reader is summing slots (an add linearised now overlaps its read)."""
    return at(s, s.reader[0], READ, "loop") if s.readers else False


def _published_alloc(s):
    """The state of the published storage: the allocation of task ``published``, or of CPU ``published_irq``'s
    interrupt handler."""
    return If(s.published_irq != NOBODY, Select(s.irq_alloc, s.published_irq), Select(s.alloc, s.published))


def _line(fn, marker):
    """The line (counted from the ``def``, as control points are) of the first line of ``fn`` holding ``marker``."""
    lines = inspect.getsource(fn).splitlines()
    first = next(i for i, x in enumerate(lines) if x.lstrip().startswith("def "))
    return next(i for i, x in enumerate(lines) if marker in x) - first + 1


class PercpuLazy(Spec):
    """lazy_percpu_counter_add() (fast path, slow path, switch_to_pcpu), _read(), _exit() as kernel code, on tasks.

    Each task makes ``ops`` calls of ``lazy_percpu_counter_add``; a reader CPU runs ``lazy_percpu_counter_read``
    (one slot per step); at the end ``lazy_percpu_counter_exit`` frees the storage. With ``irq`` > 0 each CPU's
    hard-irq handler adds too, over the task its CPU runs wherever that task is, even inside its own
    ``switch_to_pcpu`` with preemption off (``an_irq_switch_nests_in_the_task_switch``,
    ``a_task_loses_the_switch_to_its_own_irq``). What the code relies on holds: ``this_cpu_add`` is one irq-safe
    step, the cmpxchg loops retry on any change, the handler's storage is its own ``alloc_percpu_gfp(GFP_ATOMIC)``
    and its loser's ``free_percpu`` is allowed in hard-irq context. No update is lost, the read is exact at
    quiescence, storage is freed once, and both contexts' preemption counts return to 0.

    This spec has the fix: a switch loser leaves through ``preempt_enable()``; ``bugs/lazy_switch_loser_preempt.py``
    is the code as posted, ``bugs/lazy_switch_no_preempt_disable.py`` the switch without its
    ``preempt_disable()``.
    """

    kernel = ("koverstreet/bcachefs lib/lazy-percpu-counter.c (79ded5acf1ac) and "
              "include/linux/lazy-percpu-counter.h, = ZhangPeng RFC 1/3 (20240412092441.3112481-2): "
              "lazy_percpu_counter_add, _add_slowpath, lazy_percpu_counter_switch_to_pcpu, _read, _exit; "
              "with the switch loser's `return` replaced by leaving through preempt_enable()")
    assumptions = (
        "COUNTER_MOD_BITS is the parameter mod_bits (8 in the kernel); percpu_lazy's docstring says why results "
        "at 0, 1 and 2 carry over to 8",
        "the test `c->last_wrap && time_after(c->last_wrap + HZ, now)` is a nondeterministic choice once last_wrap "
        "is set; its read, the jiffies read and its plain store are one step",
        "the pointer a task read from the word is the published one: once published it never changes (checked: "
        "mode_changes_once)",
        "the copy into the task's own storage before it is published is merged into the cmpxchg step after it",
        "adds are process context only, unless irq > 0: then each CPU's hard-irq handler adds too (the "
        "allocation-tag counters), over the task its CPU runs wherever that task is; the handler's "
        "preempt_disable() depth is kept apart from the task's (preempt_count() is one counter: each part must "
        "return to 0)",
        "exit runs when no add is in flight (its callers' guarantee)",
    )
    lemmas = WordLemmas("arithmetic")

    ncpus = Param(2, domain=range(1, 4), explore=(2, 3), doc="CPUs, each with one adding task at the start")
    ntasks = Param(lambda p: p.ncpus, domain=range(1, 5), doc="tasks calling lazy_percpu_counter_add")
    mod_bits = Param(1, domain=range(0, 9), explore=(0, 1, 2),
                     doc="COUNTER_MOD_BITS (8 in the kernel): 0 makes every add run the wrap check")
    ops = Param(lambda p: Max(2, -(-(2 * 2 ** p.mod_bits + 1) // p.ncpus)), domain=range(0, 64),
                doc="lazy_percpu_counter_add calls per task")
    neg = Param(lambda p: 1 if p.ncpus == 2 and p.mod_bits == 0 else 0, domain=(0, 1),
                doc="1: amounts +1 and -1")
    readers = Param(lambda p: 1 if p.ncpus == 2 and p.mod_bits <= 1 else 0, domain=(0, 1),
                    doc="a CPU doing one lazy_percpu_counter_read")
    forever = Param(0, domain=(0, 1), doc="1: the liveness abstraction: tasks add forever, the value is kept "
                    f"modulo {LIVE_VALUES} and E and the per-CPU slots are dropped (with mod_bits=0, readers=0)")
    preempt_off = Param(1, domain=(0, 1), doc="0: switch_to_pcpu without its preempt_disable()/preempt_enable() "
                        "(specs/bugs/lazy_switch_no_preempt_disable.py)")
    preemptions = Param(0, domain=range(-1, 65), doc="preemptions in a run (-1: no bound)")
    migrations = Param(0, domain=range(-1, 65), doc="migrations in a run (-1: no bound)")
    irq = Param(0, domain=range(0, 4), explore=(0,),
                doc="lazy_percpu_counter_add calls from each CPU's hard-irq handler (the allocation-tag counters "
                    "are updated from any context)")
    bits = Bits(64, explore=(64,), doc="CONFIG_64BIT: 64, or 32 (the u64 slots' plain accesses in halves; the "
                "atomic64_t word stays whole): the named sweep percpu_lazy_32bit")

    # percpu_lazy's points (the default run, the liveness abstraction, interrupt-context adds: one CPU whose
    # handler's switch nests in its task's, two CPUs with a reader), and a point where tasks migrate
    explore_sweeps = ({}, {"forever": 1, "mod_bits": 0, "ncpus": 2, "readers": 0},
                      {"irq": 1, "mod_bits": 0, "ncpus": 1, "ops": 2, "readers": 0},
                      {"irq": 1, "mod_bits": 0, "ncpus": 2, "ops": 1, "neg": 0},
                      {"ncpus": 2, "mod_bits": 0, "readers": 0, "neg": 0, "ops": 2, "migrations": 1,
                       "preemptions": 1})

    cpus = Role("ncpus", symmetric=True, doc="CPUs, each with its slot of the per-CPU storage")
    reader = Role("readers", doc="a CPU calling lazy_percpu_counter_read")
    adders = Task("ntasks", cpus="cpus", symmetric=True, doc="tasks calling lazy_percpu_counter_add")

    word = Shared(0, type=WORD, doc="c->v in atomic mode (mode bit 0); 0 once published")
    published = Shared(NOBODY, type=TaskId, doc="c->v in per-CPU mode: whose storage pcpu_v | 1 points at (a task)")
    published_irq = Shared(NOBODY, type=CpuId, doc="c->v in per-CPU mode: the CPU whose interrupt handler's "
                           "storage pcpu_v | 1 points at")
    c_v = CV("word", "published", "published_irq", doc="c->v: one atomic64_t, one location under tso/lkmm")
    last_wrap = Shared(0, type=Bool, doc="c->last_wrap != 0")
    slot = PerCpu(0, type=S64, role="cpus", doc="*per_cpu_ptr(published pcpu_v, cpu): a u64, kept as its two's complement s64")
    destroyed = Shared(0, type=Bool, doc="lazy_percpu_counter_exit has run")
    ops_left = PerTask(lambda p: p.ops, role="adders", doc="adds this task has still to start")
    pcount = PerTask(0, type=PREEMPT_COUNT, role="adders", doc="preempt_count()")
    alloc = PerTask(MEM.unalloc, type=MEM, role="adders", doc="the per-CPU storage this task's switch allocated")
    stale = PerTask(0, type=Int, role="adders", doc="preempt_off=0: an earlier copy left in another CPU's slot "
                    "of the task's storage")
    stale_cpu = PerTask(NOBODY, type=CpuId, role="adders", doc="preempt_off=0: the CPU whose slot holds it")
    exact = Ghost(0, doc="E: every add past its linearisation point")
    publishes = Ghost(0, doc="successful publishing cmpxchgs")
    retried = Ghost(0, type=Bool, doc="a publishing cmpxchg failed on an atomic word and was retried")
    pcpu_error = Ghost(MEMERR.none, type=MEMERR)
    slow_found_pcpu = Ghost(0, type=Bool, doc="a slow path found the word per-CPU after its fast path had not")

    # each CPU's hard-irq handler (irq > 0): its adds, its own part of preempt_count(), its switch's storage
    irq_left = PerCpu(lambda p: p.irq, role="cpus", doc="adds this CPU's interrupt handler has still to make")
    irq_pcount = PerCpu(0, type=PREEMPT_COUNT, role="cpus",
                        doc="the handler's own part of preempt_count() (its switch's preempt_disable())")
    irq_alloc = PerCpu(MEM.unalloc, type=MEM, role="cpus", doc="the per-CPU storage the handler's switch allocated")
    irq_over_task = Ghost(0, type=Bool, doc="a handler's add started while its CPU's task was inside an add")
    irq_nested = Ghost(0, type=Bool,
                       doc="a handler entered switch_to_pcpu while its CPU's task was inside its own (preemption off)")

    read_acc = PerCpu(0, type=Int, role="reader", doc="what lazy_percpu_counter_read returned")
    read_seen = PerCpu(0, type=Bool, role="cpus", doc="the reader has read this CPU's slot")
    read_overlap = Ghost(0, type=Bool, doc="an add was linearised while the read was in progress")
    read_exact = PerCpu(0, type=Bool, role="reader", doc="ghost: the read returned E")
    read_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the read returned E or an add overlapped it")

    unbounded = Abstraction(lambda p: p.forever == 1, freeze=("ops_left", "exact", "slot"),
                            modulo={"word": lambda p: 2 * LIVE_VALUES},
                            requires=(lambda p: p.mod_bits == 0 and p.readers == 0,
                                      "mod_bits=0 and readers=0 (the word's modification field and the "
                                      "reader's sums are not kept)"),
                            doc=f"forever=1: tasks add forever; the value modulo {LIVE_VALUES}; E and slots dropped")

    @process(role="adders", calls="ops_left", args={"i": _amounts}, runs=_no_irq_inside)
    def lazy_percpu_counter_add(k, s, t, i):
        """lazy_percpu_counter_add(c, i), its slow path and switch_to_pcpu, with the fix."""
        k.assume(s.destroyed == 0)
        v = k.atomic64_read(s.c_v)                                      # fast path
        if not is_pcpu(v):
            v = k.atomic64_read(s.c_v)                                  # lazy_percpu_counter_add_slowpath()
            s.slow_found_pcpu = 1 if is_pcpu(v) else s.slow_found_pcpu
        while True:                                                     # do {
            if is_pcpu(v):
                with k.atomic():
                    k.this_cpu_add(s.slot, i)
                    k.update(_added(s, i))
                return
            old = v
            with k.atomic():                                            # } while (cmpxchg(...) != old)
                v = k.atomic64_cmpxchg(s.c_v, old, (old + encode_add(i)) % word_modulus(s.mod_bits))
                s.exact += i if v == old else 0
                s.read_overlap = 1 if v == old and _reading(s) else s.read_overlap
                s.slow_found_pcpu = 1 if is_pcpu(v) else s.slow_found_pcpu
            if v == old:
                break
            v = s.spec.slowpath_retry(v, old)
        if mod_field(v) != 0:                                           # if (!(v & COUNTER_MOD_MASK))
            return
        with k.atomic():                                                # now = jiffies; if (c->last_wrap &&
            recent = k.choose((0, 1))                                   #     time_after(c->last_wrap + HZ, now))
            switch = s.last_wrap == 1 and recent == 1
            s.last_wrap = 1                                             # else c->last_wrap = now;
        if not switch:
            return
        with k.atomic():                                                # switch_to_pcpu(): pcpu_v = alloc_percpu_gfp()
            got = k.choose((1, 0))
            s.alloc[t] = MEM.live if got else s.alloc[t]
        if not got:
            return
        with k.atomic():                                                # preempt_disable(); v = atomic64_read()
            if s.preempt_off:
                k.preempt_disable()
            v = k.atomic64_read(s.c_v)
        while True:                                                     # do {  (the switch's loop)
            if is_pcpu(v):
                with k.atomic():                                        # free_percpu(pcpu_v);
                    k.update(_freed(s, "alloc", t))
                    k.update(_no_stale_copy(s, t))
                    if s.preempt_off and s.spec.loser_enables_preemption:
                        k.preempt_enable()                              # the fix; return;
                return
            old = v
            with k.atomic():                                            # *this_cpu_ptr(pcpu_v) = atomic_val(v);
                if _stale_copy_lands(s, t, old):                        # (preempt_off=0: the copy this task
                    first = k.choose(s.cpus)                            #  stored on the CPU it ran on before
                    k.assume(first == s.stale_cpu[t])                   #  its migration, a plain store ordered
                    s.slot[first] = s.stale[t]                          #  before the cmpxchg as this one is)
                k.update(_stale_copy(s, t, old))
                k.update(s.spec.publishing(s, t, old, s.spec.atomic_val(old)))
                k.raw_cpu_write(s.slot, _into_published(s, s.task_cpu[t], old, s.spec.atomic_val(old)))
                v = k.atomic64_cmpxchg(s.c_v, old, PCPU)                # } while (cmpxchg(.., pcpu_v | 1) != old)
                s.publishes += 1 if v == old else 0
                s.retried = 1 if v != old and not is_pcpu(v) else s.retried
                if v == old and s.preempt_off:
                    k.preempt_enable()
            if v == old:
                return

    # The same add from each CPU's hard-irq handler (irq > 0), step by step on the handler's own registers, over
    # the task its CPU runs (which waits: runs=_no_irq_inside) wherever that task is, even inside its own
    # switch_to_pcpu (preempt_disable() does not mask interrupts); other CPUs run meanwhile.
    @process(role="cpus", irq=True, calls="irq_left", args={"i": _amounts}, applies=lambda p: p.irq > 0)
    def lazy_percpu_counter_add_irq(k, s, cpu, i):
        """lazy_percpu_counter_add(c, i) in a hard-irq handler: the code above, the handler's own storage."""
        k.assume(s.destroyed == 0)
        s.irq_over_task = 1 if _task_inside(s, cpu) else s.irq_over_task
        v = k.atomic64_read(s.c_v)                                      # fast path
        if not is_pcpu(v):
            v = k.atomic64_read(s.c_v)                                  # lazy_percpu_counter_add_slowpath()
        while True:                                                     # do {
            if is_pcpu(v):
                with k.atomic():
                    k.this_cpu_add(s.slot, i)
                    k.update(_added(s, i))
                return
            old = v
            with k.atomic():                                            # } while (cmpxchg(...) != old)
                v = k.atomic64_cmpxchg(s.c_v, old, (old + encode_add(i)) % word_modulus(s.mod_bits))
                s.exact += i if v == old else 0
                s.read_overlap = 1 if v == old and _reading(s) else s.read_overlap
            if v == old:
                break
            v = s.spec.slowpath_retry(v, old)
        if mod_field(v) != 0:                                           # if (!(v & COUNTER_MOD_MASK))
            return
        with k.atomic():                                                # now = jiffies; if (c->last_wrap &&
            recent = k.choose((0, 1))                                   #     time_after(c->last_wrap + HZ, now))
            switch = s.last_wrap == 1 and recent == 1
            s.last_wrap = 1                                             # else c->last_wrap = now;
        if not switch:
            return
        with k.atomic():                                                # switch_to_pcpu(): pcpu_v = alloc_percpu_gfp()
            got = k.choose((1, 0))
            s.irq_alloc[cpu] = MEM.live if got else s.irq_alloc[cpu]
        if not got:
            return
        with k.atomic():                                                # preempt_disable(); v = atomic64_read()
            k.preempt_disable()
            v = k.atomic64_read(s.c_v)
            s.irq_nested = 1 if _task_in_switch_loop(s, cpu) else s.irq_nested
        while True:                                                     # do {  (the switch's loop)
            if is_pcpu(v):
                with k.atomic():                                        # free_percpu(pcpu_v);
                    k.update(_freed(s, "irq_alloc", cpu))
                    if s.spec.loser_enables_preemption:
                        k.preempt_enable()                              # the fix; return;
                return
            old = v
            with k.atomic():                                            # *this_cpu_ptr(pcpu_v) = atomic_val(v);
                k.raw_cpu_write(s.slot, _into_published(s, cpu, old, s.spec.atomic_val(old)))
                v = k.atomic64_cmpxchg(s.c_v, old, PCPU_IRQ)            # } while (cmpxchg(.., pcpu_v | 1) != old)
                s.publishes += 1 if v == old else 0
                s.retried = 1 if v != old and not is_pcpu(v) else s.retried
                if v == old:
                    k.preempt_enable()
            if v == old:
                return

    @process(role="reader")
    def lazy_percpu_counter_read(k, s, r):
        """lazy_percpu_counter_read(c); the value it returns is kept in read_acc, judged against E."""
        v = k.atomic64_read(s.c_v)
        s.read_overlap = 0
        if is_pcpu(v):
            v = 0
            while Sum(s.read_seen) < s.ncpus:                           # for_each_possible_cpu(cpu)
                cpu = k.any_cpu(s.read_seen)
                x = k.data_race(k.address_dep(s.c_v, k.per_cpu(s.slot, cpu)))
                v += x
                k.update(s.spec.slot_read(s, cpu, x))
        else:
            v = s.spec.atomic_val(v)
        s.read_acc[r] = v                                               # return v;
        s.read_exact[r] = v == s.exact
        s.read_ok[r] = v == s.exact or s.read_overlap == 1

    @staticmethod
    def publishing(s, t, old, copy):
        """Ghost updates of a publishing cmpxchg step (none; percpu_lazy_publish records the copy)."""
        return {}

    @staticmethod
    def slot_read(s, cpu, value):
        """Ghost updates of the read's step that read ``value`` from ``cpu``'s slot (none here)."""
        return {}

    # -- the code's decisions a bug spec changes (specs/bugs/lazy_*.py) --------------------------------
    #: A switch loser leaves through preempt_enable() (the fix); False: it returns with preemption off, as posted
    #: (specs/bugs/lazy_switch_loser_preempt.py).
    loser_enables_preemption = True

    @staticmethod
    def atomic_val(v):
        """lazy_percpu_counter_atomic_val(v), as the switch's copy and the read decode the word (s64 v: the shift
        is arithmetic; specs/bugs/lazy_decode_logical_shift.py takes a u64)."""
        return decode(v)

    @staticmethod
    def slowpath_retry(v, old):
        """The value the slow path's loop goes round with after a failed cmpxchg: the one the cmpxchg returned
        (specs/bugs/lazy_cmpxchg_stale_old.py keeps ``old``)."""
        return v

    # -- lazy_percpu_counter_exit() ------------------------------------------------------------------
    @action()
    def exit(s):
        """lazy_percpu_counter_exit(): free_percpu(is_pcpu(atomic64_read(&c->v))) once no add is in flight."""
        quiet = And(*[And(s.adders_pc[t] == 0, s.ops_left[t] == 0) for t in s.adders],
                    *[And(s.cpus_pc[c] == 0, s.irq_left[c] == 0) for c in s.cpus],
                    *[s.reader_pc[r] == 1 for r in s.reader])  # idle; the reader done
        p, q = s.published, s.published_irq
        bad = And(Not(_atomic_mode(s)), _published_alloc(s) != MEM.live)
        return when(And(quiet, s.destroyed == 0), destroyed=1,
                    alloc={t: If(p == t, MEM.freed, s.alloc[t]) for t in s.adders},
                    irq_alloc={c: If(q == c, MEM.freed, s.irq_alloc[c]) for c in s.cpus},
                    pcpu_error=If(And(bad, s.pcpu_error == MEMERR.none), MEMERR.double_free, s.pcpu_error))

    @terminal
    def all_done(s):
        return s.destroyed == 1

    # -- properties (percpu_lazy's, on the generated control points) -----------------------------------
    @invariant(applies=lambda p: p.bits == 64 or p.irq == 0)
    def no_update_lost(s):
        """LZ-EXACT / LZ-SWITCH: the counter's value is E in every state (on a 32-bit kernel with interrupt-context
        adds, between a handler's two stores: no_update_lost_between_stores)."""
        return _value(s) == s.exact

    @invariant(applies=lambda p: p.bits == 32 and p.irq > 0)
    def no_update_lost_between_stores(s):
        """no_update_lost on a 32-bit kernel, where a handler's this_cpu_add leaves its slot half-written between
        its two stores (memory that says nothing of the counter; readers are judged by what they return): in every
        state with no such store in progress, the counter's value is E."""
        adding = AnyOf([And(at(s, c, ADD_IRQ, IRQ_SLOW_LOOP), is_pcpu(s.cpus_v[c])) for c in s.cpus])
        return Implies(Not(adding), _value(s) == s.exact)

    @invariant
    def mode_changes_once(s):
        """LZ-MONO: at most one publishing cmpxchg succeeds; once per-CPU, the word stays per-CPU."""
        pcpu = Not(_atomic_mode(s))
        return And(s.publishes <= 1, pcpu == (s.publishes == 1), Implies(pcpu, s.word == 0))

    @invariant(role="adders")
    def losers_free_their_storage(s, t):
        """LZ-RES: outside switch_to_pcpu, a task's allocation is live only if it is the published one."""
        return Implies(And(s.alloc[t] == MEM.live, Not(_in_switch(s, t))), s.published == t)

    @invariant
    def published_storage_live(s):
        """The published storage stays allocated until exit, and nothing touches freed storage."""
        live = _published_alloc(s) == MEM.live
        return And(Implies(And(Not(_atomic_mode(s)), s.destroyed == 0), live), s.pcpu_error == MEMERR.none)

    @invariant
    def nothing_leaks_at_exit(s):
        """After lazy_percpu_counter_exit, no per-CPU storage is left allocated."""
        return Implies(s.destroyed == 1, And(*[s.alloc[t] != MEM.live for t in s.adders],
                                             *[s.irq_alloc[c] != MEM.live for c in s.cpus]))

    @invariant(role="adders")
    def preempt_balanced_on_return(s, t):
        """Every return from lazy_percpu_counter_add leaves preempt_count() as it found it (0)."""
        return Implies(s.adders_pc[t] == 0, s.pcount[t] == 0)

    @invariant(applies=lambda p: p.readers > 0)
    def read_within_adds(s):
        """A lazy_percpu_counter_read returns E give or take the adds made while it summed."""
        r = s.reader[0]
        return Implies(s.reader_pc[r] == 1, abs(s.read_acc[r] - s.exact) <= s.ntasks * s.ops + s.ncpus * s.irq)

    @invariant(applies=lambda p: p.readers > 0, sc_only="read_within_adds")
    def read_exact_at_quiescence(s):
        """A lazy_percpu_counter_read that no add overlapped returns E."""
        return Or(s.reader_pc[s.reader[0]] != 1, s.read_ok[s.reader[0]] == 1)

    @sometimes
    def a_switch_happens(s):
        """The counter goes per-CPU."""
        return Not(_atomic_mode(s))

    @sometimes(applies=lambda p: p.ntasks > 1)
    def two_cpus_race_to_switch(s):
        """Two tasks hold their own fresh per-CPU storage inside switch_to_pcpu at once."""
        inside = [And(s.alloc[t] == MEM.live, s.published != t, s.published_irq != Select(s.task_cpu, t),
                      _in_switch(s, t)) for t in s.adders]
        return Sum(If(x, 1, 0) for x in inside) + If(_atomic_mode(s), 0, 1) >= 2

    @sometimes
    def a_switch_loser_frees(s):
        """A task that lost the switch race has freed its storage."""
        return Or(*[s.alloc[t] == MEM.freed for t in s.adders])

    @sometimes
    def a_publish_retries(s):
        """An atomic-mode add lands between the switch's copy and its cmpxchg: the copy is redone."""
        return s.retried == 1

    @sometimes
    def an_add_finds_the_switch_in_its_slowpath(s):
        """The fast path read an atomic word, the slow path found the word per-CPU."""
        return s.slow_found_pcpu == 1

    @leads_to(fair=False, applies=lambda p: p.forever == 1)
    def cmpxchg_loops_are_lock_free(s):
        """While some task is in a cmpxchg retry loop, some lazy_percpu_counter_add returns later."""
        looping = AnyOf([And(Or(at(s, t, ADD, SLOW_LOOP), at(s, t, ADD, SWITCH_LOOP)), Not(is_pcpu(s.adders_v[t])))
                         for t in s.adders])
        return looping, an_add_returns

    @sometimes(applies=lambda p: p.readers > 0)
    def a_per_cpu_read_is_exact(s):
        """A read in per-CPU mode returns E."""
        r = s.reader[0]
        return And(s.reader_pc[r] == 1, s.read_exact[r] == 1, Not(_atomic_mode(s)))

    # -- interrupt context (irq > 0) -----------------------------------------------------------------
    @invariant(role="cpus", applies=lambda p: p.irq > 0)
    def irq_preempt_balanced_on_return(s, cpu):
        """Every return of a handler's lazy_percpu_counter_add leaves its part of preempt_count() at 0."""
        return Implies(s.cpus_pc[cpu] == 0, s.irq_pcount[cpu] == 0)

    @invariant(role="cpus", applies=lambda p: p.irq > 0)
    def irq_losers_free_their_storage(s, cpu):
        """LZ-RES for the handler: outside its switch_to_pcpu, its allocation is live only if published."""
        inside = Or(at(s, cpu, ADD_IRQ, IRQ_SWITCH_READ), at(s, cpu, ADD_IRQ, IRQ_SWITCH_LOOP))
        return Implies(And(s.irq_alloc[cpu] == MEM.live, Not(inside)), s.published_irq == cpu)

    @sometimes(applies=lambda p: p.irq > 0)
    def an_irq_adds_over_a_task_add(s):
        """A handler's add starts while its CPU's task is inside lazy_percpu_counter_add."""
        return s.irq_over_task == 1

    @sometimes(applies=lambda p: p.irq > 0)
    def an_irq_switch_nests_in_the_task_switch(s):
        """A handler enters switch_to_pcpu while its CPU's task is inside its own, between its copy and its
        cmpxchg (preemption off, interrupts on)."""
        return s.irq_nested == 1

    @sometimes(applies=lambda p: p.irq > 0)
    def a_task_loses_the_switch_to_its_own_irq(s):
        """The handler's storage is published while the interrupted task's switch is about to free its own."""
        return Or(*[And(s.published_irq == s.task_cpu[t], at(s, t, ADD, SWITCH_LOOP), is_pcpu(s.adders_v[t]))
                    for t in s.adders])

    @sometimes(applies=lambda p: p.irq > 0 and p.ncpus > 1)
    def an_irq_add_goes_per_cpu(s):
        """A handler's add ends in this_cpu_add on the published storage (after a switch)."""
        return Or(*[And(at(s, c, ADD_IRQ, IRQ_SLOW_LOOP), is_pcpu(s.cpus_v[c])) for c in s.cpus])

    @sometimes(applies=lambda p: p.migrations != 0 and p.ncpus > 1 and p.ops > 0)
    def a_task_migrates(s):
        """The scheduler moves a task (the migrations are not vacuous)."""
        return s.migrations_done > 0


def an_add_returns(s, t):
    """A step in which some task's lazy_percpu_counter_add returns."""
    return AnyOf([And(s.adders_pc[a] != 0, t.adders_pc[a] == 0) for a in s.adders])


#: Control points named by their source lines (counted from the def): the slow path's and the switch's loops.
SLOW_LOOP = _line(PercpuLazy.lazy_percpu_counter_add, "# do {")
SWITCH_LOOP = _line(PercpuLazy.lazy_percpu_counter_add, "# do {  (the switch's loop)")
#: The switch after its allocation: before the preempt_disable() with the atomic64_read, and its loop.
SWITCH_READ = _line(PercpuLazy.lazy_percpu_counter_add, "# preempt_disable(); v = atomic64_read()")
#: The same control points of the interrupt handler's add.
ADD_IRQ = "lazy_percpu_counter_add_irq"
IRQ_SLOW_LOOP = _line(PercpuLazy.lazy_percpu_counter_add_irq, "# do {")
IRQ_SWITCH_LOOP = _line(PercpuLazy.lazy_percpu_counter_add_irq, "# do {  (the switch's loop)")
IRQ_SWITCH_READ = _line(PercpuLazy.lazy_percpu_counter_add_irq, "# preempt_disable(); v = atomic64_read()")


def _value(s):
    """The counter's value: the atomic word's, or the sum of the published storage's slots."""
    return If(_atomic_mode(s), decode(s.word), Sum(s.slot))


def _in_switch(s, t):
    """Task ``t`` is inside switch_to_pcpu with its storage allocated (percpu_lazy's sw_read, sw_cmpxchg, sw_lost)."""
    return Or(at(s, t, ADD, SWITCH_READ), at(s, t, ADD, SWITCH_LOOP))


class PercpuLazy32bit(PercpuLazy, name="percpu_lazy_32bit", on_demand=True):
    """The named 32-bit sweep of percpu_lazy: every point at bits=32 where the code holds.

    On a 32-bit kernel the atomic64_t word stays whole (atomic64_* are whole on every architecture), the u64
    slots do not: this_cpu_add of a u64 is irq-safe and whole to its own CPU but two stores to a remote reader, and
    lazy_percpu_counter_read's ``v += *per_cpu_ptr(pcpu_v, cpu)`` is a plain load. The adds, the switch and the
    memory properties keep their verdicts; with readers and amounts of both signs the read tears, the expected
    violation of ``bugs/lazy_read_torn_32bit.py``, so readers here add +1 only (no slot crosses 2^32).
    """

    explore_sweeps = (
        {"bits": 32, "ncpus": 2, "mod_bits": (0, 1), "readers": 0},
        {"bits": 32, "ncpus": 3, "mod_bits": 0, "readers": 0},
        {"bits": 32, "ncpus": 2, "mod_bits": 1, "readers": 1, "neg": 0},
        {"bits": 32, "irq": 1, "ncpus": 1, "mod_bits": 0, "ops": 2, "readers": 0, "neg": (0, 1)},
        {"bits": 32, "irq": 1, "ncpus": 2, "mod_bits": 0, "ops": 1, "readers": 0, "neg": 1},
    )
    bits = Bits(32, explore=(32,), doc="CONFIG_64BIT=n")
