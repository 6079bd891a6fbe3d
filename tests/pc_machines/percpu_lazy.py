# SPDX-License-Identifier: GPL-2.0-only
"""percpu_lazy as the hand-written pc machine it was before its process-function port replaced it.

Kept as a test (issue 28): tests/test_process_lazy.py explores it and the built-in ``percpu_lazy``
(specs/percpu_lazy.py, lib/lazy-percpu-counter.c written as process functions run by tasks) at the same points under
sc, tso and lkmm, on both explorers, and asserts the same states, verdicts and trace lengths. Its own program
counters (``pc``, ``irq_pc``, ``read_pc``), registers (``v``, ``copy``, ``amount``) and ``access=`` annotations are
written by hand beside each action; one task per CPU, never migrated. The word's encoding (``decode``,
``encode_add``, ``WORD``) is the built-in spec's, imported; see its docstring for the model and why a narrow
modification field says something about the kernel's 8 bits.
"""
from checker import (NOBODY, PREEMPT_COUNT, S64, Abstraction, And, AnyOf, Bool, CpuId, Enum, Ghost, If, Implies, Int, Load,
                     Max, Not, OneWord, Or, Param, PerCpu, Rmw, Role, Select, Shared, Spec, Store, Sum, action, invariant, leads_to,
                     sometimes, terminal, when)
from checker.kernel.config import Bits
from checker.kernel.memory import MEM
from checker.prove.bitvector import WordLemmas
from checker.specs.percpu_lazy import LIVE_VALUES, MEMERR, WORD, decode, encode_add, mod_field, word_modulus

#: Where an adder is: lazy_percpu_counter_add() and its slow path, then switch_to_pcpu().
ADD = Enum("idle", "slow_read", "cmpxchg", "pcpu_add", "wrap_check",
           "sw_alloc", "sw_read", "sw_cmpxchg", "sw_lost", name="add_pc")
#: Where the reader is in lazy_percpu_counter_read().
READ = Enum("idle", "scan", "done", name="read_pc")

#: c->v, one atomic64_t in the kernel, is three variables here: `word` (atomic mode), `published` and
#: `published_irq` (the pointer | 1: whose allocation). For the memory models (--memory tso|lkmm) they are
#: one location, the `OneWord` `c_v` (checker.ordering.words): a store of c->v writes all three, a load reads
#: all three from the same store. (Until issue 29 only `published` was weak and `word` stayed sc: a reader
#: could see the old pointer and the new word, a false alarm of the split.)
C_V = "c_v"
READ_V = Load(C_V, "once")
CMPXCHG_V = Rmw(C_V, "mb")


def _amounts(p):
    return (1, -1) if p.neg else (1,)


def an_add_returns(s, t):
    """A step in which some CPU's lazy_percpu_counter_add returns."""
    return AnyOf([And(s.pc[c] != ADD.idle, t.pc[c] == ADD.idle) for c in s.adders])


def switch_read_with(s, cpu, atomic_val):
    """switch_to_pcpu()'s preempt_disable(); atomic64_read; first copy, with the given decode."""
    return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.sw_read), preempt={cpu: s.preempt[cpu] + 1},
                v={cpu: If(s.published != NOBODY, 0, s.word)},
                copy={cpu: If(s.published != NOBODY, 0, atomic_val(s.word))},
                pc={cpu: If(s.published != NOBODY, ADD.sw_lost, ADD.sw_cmpxchg)})


def _publish_slots(s, cpu, ok, copy):
    """The published storage's slots after a publishing cmpxchg: this CPU's holds the copy, the others 0 (as
    they are). Written for every slot, not as a store to this CPU's own: the copy was stored before the
    cmpxchg, into storage no other CPU could read yet, so a 32-bit kernel's halves of it are never seen;
    the publish itself is one atomic64_cmpxchg (checker.kernel.tearing splits only own-slot stores). At 64
    bits the store is to the CPU's own slot alone, which is what a weak memory model buffers (its access=)."""
    if s.bits == 64:
        return {cpu: If(ok, copy, s.slot[cpu])}
    return {c: If(ok, copy, s.slot[c]) if c == cpu else s.slot[c] for c in s.adders}


def switch_cmpxchg_with(s, cpu, atomic_val):
    """switch_to_pcpu()'s publishing cmpxchg; on failure the copy is redone with the given decode."""
    ok = And(s.published == NOBODY, s.word == s.v[cpu])
    lost = And(Not(ok), s.published != NOBODY)
    return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.sw_cmpxchg),
                published=If(ok, cpu, s.published), word=If(ok, 0, s.word),
                publishes=If(ok, s.publishes + 1, s.publishes),
                slot=_publish_slots(s, cpu, ok, s.copy[cpu]),
                copy={cpu: If(Or(ok, lost), 0, atomic_val(s.word))},
                v={cpu: If(Or(ok, lost), 0, s.word)},
                retried=If(And(Not(ok), Not(lost)), 1, s.retried),
                preempt={cpu: If(ok, s.preempt[cpu] - 1, s.preempt[cpu])},
                pc={cpu: If(ok, ADD.idle, If(lost, ADD.sw_lost, ADD.sw_cmpxchg))})


def read_with(s, r, atomic_val):
    """lazy_percpu_counter_read()'s atomic64_read, decoding an atomic-mode word with the given decode."""
    val = atomic_val(s.word)
    atomic = s.published == NOBODY
    return when(s.read_pc[r] == READ.idle, read_pc={r: If(atomic, READ.done, READ.scan)},
                read_acc={r: If(atomic, val, 0)}, read_overlap=0,
                read_exact={r: And(atomic, val == s.exact)}, read_ok={r: Or(Not(atomic), val == s.exact)})


def _reading(s):
    """The reader is summing slots (an add linearised now overlaps its read)."""
    return s.read_pc[s.reader[0]] == READ.scan if s.readers else False


def _free_own(s, cpu, enable):
    """free_percpu(pcpu_v) of this CPU's own storage; preempt_enable() if ``enable``; return."""
    bad = s.alloc[cpu] != MEM.live
    return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.sw_lost), alloc={cpu: MEM.freed}, pc={cpu: ADD.idle},
                preempt={cpu: s.preempt[cpu] - 1 if enable else s.preempt[cpu]},
                pcpu_error=If(And(bad, s.pcpu_error == MEMERR.none), MEMERR.double_free, s.pcpu_error))


def _task_runs(s, cpu):
    """The task on this CPU steps only while no interrupt handler runs over it: a hard-irq handler runs to
    its return before the task it interrupted resumes (other CPUs run meanwhile)."""
    return s.irq_pc[cpu] == ADD.idle


def _published_alloc(s):
    """The state of the published storage: the allocation of CPU ``published``'s task, or of its interrupt
    handler (``published_irq``)."""
    return If(s.published_irq == 1, Select(s.irq_alloc, s.published), Select(s.alloc, s.published))


_IN_SWITCH = (ADD.sw_read, ADD.sw_cmpxchg, ADD.sw_lost)


class PercpuLazy(Spec):
    """lazy_percpu_counter_add() (fast path, slow path, switch_to_pcpu), _read(), _exit(): L-K with the fix.

    Each adder CPU makes ``ops`` calls of ``lazy_percpu_counter_add``. The
    steps are the kernel's shared-memory accesses: the fast path's
    ``atomic64_read``; the slow path's ``atomic64_read`` and each
    ``atomic64_cmpxchg`` of its loop; the wrap check (``last_wrap`` and
    jiffies); in ``switch_to_pcpu`` the ``alloc_percpu_gfp(GFP_ATOMIC)`` that
    may fail, ``preempt_disable`` with the ``atomic64_read``, each publishing
    ``cmpxchg``, and the loser's ``free_percpu``; ``this_cpu_add``. A reader
    runs ``lazy_percpu_counter_read`` (one slot per step); at the end
    ``lazy_percpu_counter_exit`` frees the storage.

    Interrupt context (``irq`` > 0, issue 18): each CPU's hard-irq handler
    makes ``irq`` adds, the same code step by step on its own locals, over
    its CPU's task wherever that task is (the task waits until the handler
    returns; other CPUs run on): in its fast path, in its slow path's
    cmpxchg loop, or inside its own ``switch_to_pcpu`` with preemption off
    (which does not mask interrupts), where the handler's add can wrap the
    modification field and switch first (``an_irq_switch_nests_in_the_task_switch``,
    16 steps at one CPU; ``a_task_loses_the_switch_to_its_own_irq``, 17).
    What the code relies on holds: ``this_cpu_add`` is one irq-safe step,
    the cmpxchg loops retry on any change, the handler's storage is its own
    ``alloc_percpu_gfp(GFP_ATOMIC)`` (``pcpu_lock`` with irqsave) and its
    loser's ``free_percpu`` is allowed in hard-irq context. No update is
    lost, the read is exact at quiescence, storage is freed once, and both
    contexts' preemption counts return to 0 (with the fix; the posted
    ``return`` leaves a handler returning from the interrupt with preemption
    off: ``bugs/lazy_irq_switch_loser_preempt.py``).

    32-bit kernels (``bits=32``, issue 18; the named sweep
    ``percpu_lazy_32bit``): the ``atomic64_t`` word stays whole, the ``u64``
    slots do not. ``this_cpu_add`` of a u64 is whole to its own CPU (and its
    interrupts) but two stores to a remote reader, and the read's ``v +=
    *per_cpu_ptr(pcpu_v, cpu)`` is a plain load. The adds, the switch, the
    memory and context properties keep their verdicts (``no_update_lost``
    is judged between stores there: ``no_update_lost_between_stores``); a
    read while a slot crosses a multiple of 2^32 (0 - 1) returns a torn sum
    about 2^32 off: ``read_within_adds`` violated in 17 steps, the expected
    violation of ``bugs/lazy_read_torn_32bit.py``, a finding about the code
    on 32-bit kernels.

    This spec has the fix: a switch loser leaves through ``preempt_enable()``.
    ``specs/bugs/lazy_switch_loser_preempt.py`` is the code as posted.
    """

    kernel = ("koverstreet/bcachefs lib/lazy-percpu-counter.c (79ded5acf1ac) and "
              "include/linux/lazy-percpu-counter.h, = ZhangPeng RFC 1/3 (20240412092441.3112481-2): "
              "lazy_percpu_counter_add, _add_slowpath, lazy_percpu_counter_switch_to_pcpu, _read, _exit; "
              "with the switch loser's `return` replaced by leaving through preempt_enable()")
    assumptions = (
        "COUNTER_MOD_BITS is the parameter mod_bits (8 in the kernel); the spec's docstring says why "
        "results at 0, 1 and 2 carry over to 8",
        "the test `c->last_wrap && time_after(c->last_wrap + HZ, now)` is a nondeterministic choice once "
        "last_wrap is set; last_wrap is kept as set or not (jiffies is taken to be non-zero); its read, "
        "the jiffies read and its plain store are one step (a racing check that read 0 behaves as one "
        "that read it set and chose 'not within a second')",
        "each CPU runs one task and tasks do not migrate: outside switch_to_pcpu every access is the "
        "shared word or a CPU-local atomic (this_cpu_add), so where the task runs does not matter; inside "
        "it preemption is off",
        "the pointer a CPU read from the word is the published one: once published it never changes "
        "(checked: mode_changes_once), so this_cpu_add goes to the published allocation",
        "a private write to storage not yet published (the copy into this CPU's slot) is merged into the "
        "shared-memory step before it; preempt_disable() with the atomic64_read after it",
        "adds are process context only (the mm's rss counters are not updated from interrupts), unless irq > 0: "
        "then each CPU's hard-irq handler adds too (the allocation-tag counters), over its task wherever that "
        "task is; the handler's preempt_disable() depth is kept apart from the task's (preempt_count() is one "
        "counter: each part must return to 0)",
        "exit runs when no add is in flight (its callers' guarantee)",
    )

    # What carries the explored word (narrow mod field, small values) over to the kernel's 64-bit
    # word: proved with Z3 bit-vectors in every prove run (checker/prove/bitvector.py).
    lemmas = WordLemmas("arithmetic")

    ncpus = Param(2, domain=range(1, 4), explore=(2, 3), doc="adder CPUs")
    mod_bits = Param(1, domain=range(0, 9), explore=(0, 1, 2),
                     doc="COUNTER_MOD_BITS (8 in the kernel): 0 makes every add run the wrap check")
    ops = Param(lambda p: Max(2, -(-(2 * 2 ** p.mod_bits + 1) // p.ncpus)), domain=range(0, 64),
                doc="lazy_percpu_counter_add calls per CPU (default: enough adds in all for two CPUs "
                    "to race to switch: 2 * 2^mod_bits + 1)")
    neg = Param(lambda p: 1 if p.ncpus == 2 and p.mod_bits == 0 else 0, domain=(0, 1),
                doc="1: amounts +1 and -1 (sign extension, carries into the mod field); default 1 at 2 CPUs "
                    "and mod_bits=0 only, where the state space stays small")
    readers = Param(lambda p: 1 if p.ncpus == 2 and p.mod_bits <= 1 else 0, domain=(0, 1),
                    doc="a CPU doing one lazy_percpu_counter_read; default 1 at 2 CPUs and mod_bits <= 1 (elsewhere "
                        "it multiplies the states by 10 to 50: --set readers=1)")

    forever = Param(0, domain=(0, 1), doc="1: the liveness abstraction: CPUs add forever, the value is kept modulo "
                    f"{LIVE_VALUES} and E and the per-CPU slots are dropped (with mod_bits=0, readers=0)")

    bits = Bits(64, explore=(64,), doc="CONFIG_64BIT: 64, or 32 (the u64 slots' plain accesses in halves; the "
                "atomic64_t word stays whole): the named sweep percpu_lazy_32bit")
    irq = Param(0, domain=range(0, 4), explore=(0,),
                doc="lazy_percpu_counter_add calls from each CPU's hard-irq handler (the allocation-tag counters "
                    "are updated from any context); 0 in the default sweep's first points")

    # The default run, the liveness abstraction at 2 CPUs (3: --set ncpus=3, about 7 s), and interrupt-context
    # adds: one CPU whose handler's switch nests in its task's, and two CPUs with a reader.
    explore_sweeps = ({}, {"forever": 1, "mod_bits": 0, "ncpus": 2, "readers": 0},
                      {"irq": 1, "mod_bits": 0, "ncpus": 1, "ops": 2, "readers": 0},
                      {"irq": 1, "mod_bits": 0, "ncpus": 2, "ops": 1, "neg": 0})

    adders = Role("ncpus", symmetric=True, doc="CPUs calling lazy_percpu_counter_add")
    reader = Role("readers", doc="a CPU calling lazy_percpu_counter_read")

    word = Shared(0, type=WORD, doc="c->v in atomic mode (mode bit 0); 0 once published")
    published = Shared(NOBODY, type=CpuId, doc="c->v in per-CPU mode: whose allocation pcpu_v | 1 points at")
    c_v = OneWord("word", "published", "published_irq", doc="c->v: one atomic64_t, one location under tso/lkmm")
    last_wrap = Shared(0, type=Bool, doc="c->last_wrap != 0")
    pc = PerCpu(ADD.idle, type=ADD, role="adders")
    ops_left = PerCpu(lambda p: p.ops, role="adders", doc="adds this CPU has still to start")
    amount = PerCpu(0, type=Int, role="adders", doc="i of the add in progress")
    v = PerCpu(0, type=WORD, role="adders", doc="the slow path's / switch's local v (an atomic-mode word)")
    preempt = PerCpu(0, type=PREEMPT_COUNT, role="adders", doc="preempt_count()")
    alloc = PerCpu(MEM.unalloc, type=MEM, role="adders", doc="the per-CPU storage this CPU's switch allocated")
    copy = PerCpu(0, type=Int, role="adders",
                  doc="*this_cpu_ptr(pcpu_v) of this CPU's own allocation before it is published")
    slot = PerCpu(0, type=S64, role="adders",
                  doc="*per_cpu_ptr(published pcpu_v, cpu): a u64 (kept as its two's complement s64); plain to a "
                      "remote reader, so in halves on a 32-bit kernel")
    destroyed = Shared(0, type=Bool, doc="lazy_percpu_counter_exit has run")
    exact = Ghost(0, doc="E: every add past its linearisation point")
    publishes = Ghost(0, doc="successful publishing cmpxchgs")
    retried = Ghost(0, type=Bool, doc="a publishing cmpxchg failed on an atomic word and was retried")
    pcpu_error = Ghost(MEMERR.none, type=MEMERR)
    slow_found_pcpu = Ghost(0, type=Bool, doc="a slow path found the word per-CPU after its fast path had not")

    # The hard-irq handler of each CPU (irq > 0): its own add in progress, and its own switch's storage.
    irq_left = PerCpu(lambda p: p.irq, role="adders", doc="adds this CPU's interrupt handler has still to make")
    irq_pc = PerCpu(ADD.idle, type=ADD, role="adders", doc="where the handler is in its lazy_percpu_counter_add")
    irq_amount = PerCpu(0, type=Int, role="adders", doc="i of the handler's add")
    irq_v = PerCpu(0, type=WORD, role="adders", doc="the handler's slow path's / switch's local v")
    irq_preempt = PerCpu(0, type=PREEMPT_COUNT, role="adders",
                         doc="the handler's own part of preempt_count() (its switch's preempt_disable())")
    irq_alloc = PerCpu(MEM.unalloc, type=MEM, role="adders", doc="the per-CPU storage the handler's switch allocated")
    irq_copy = PerCpu(0, type=Int, role="adders", doc="*this_cpu_ptr(pcpu_v) of the handler's own allocation")
    published_irq = Shared(0, type=Bool, doc="the published storage is the one CPU `published`'s handler allocated")
    irq_over_task = Ghost(0, type=Bool, doc="a handler's add started while its CPU's task was inside an add")
    irq_nested = Ghost(0, type=Bool,
                       doc="a handler entered switch_to_pcpu while its CPU's task was inside its own (preemption off)")

    read_pc = PerCpu(READ.idle, type=READ, role="reader")
    read_acc = PerCpu(0, type=Int, role="reader", doc="v in lazy_percpu_counter_read")
    read_seen = PerCpu(0, type=Bool, role="adders", doc="the reader has read this CPU's slot")
    read_overlap = Ghost(0, type=Bool, doc="an add was linearised while the read was in progress")
    read_exact = PerCpu(0, type=Bool, role="reader", doc="ghost: the read returned E")
    read_ok = PerCpu(0, type=Bool, role="reader", doc="ghost: the read returned E or an add overlapped it")

    # Unbounded runs for lock freedom: the add budget is never used up, E and the per-CPU slots
    # (values that only grow) are dropped, and the atomic word keeps its value modulo LIVE_VALUES
    # (at mod_bits=0 the word is 2 * value modulo 2^56, so this is the same field, narrower). The
    # cmpxchg loops ask of the word only whether it changed since it was read; a narrower field can
    # make a changed word look unchanged (a success where the kernel fails, after LIVE_VALUES adds
    # completed), never the reverse, and a success is progress. Nothing but the reader (left out)
    # and the properties reads E or the slots.
    unbounded = Abstraction(lambda p: p.forever == 1, freeze=("ops_left", "exact", "slot"),
                            modulo={"word": lambda p: 2 * LIVE_VALUES},
                            requires=(lambda p: p.mod_bits == 0 and p.readers == 0,
                                      "mod_bits=0 and readers=0 (the word's modification field and the "
                                      "reader's sums are not kept)"),
                            doc=f"forever=1: CPUs add forever; the value modulo {LIVE_VALUES}; E and slots dropped")

    # -- lazy_percpu_counter_add() (header fast path) ------------------------------------------
    @action(role="adders", choose={"i": _amounts}, access=READ_V)
    def add(s, cpu, i):
        """lazy_percpu_counter_add(c, i): v = atomic64_read(&c->v); pcpu? this_cpu_add : slowpath."""
        return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0, s.destroyed == 0),
                    ops_left={cpu: s.ops_left[cpu] - 1}, amount={cpu: i},
                    pc={cpu: If(s.published != NOBODY, ADD.pcpu_add, ADD.slow_read)})

    @action(role="adders", access=Rmw("slot", "this_cpu"))
    def this_cpu_add(s, cpu):
        """this_cpu_add(*pcpu_v, i): one CPU-local atomic step; the add's linearisation point."""
        dead = _published_alloc(s) != MEM.live
        return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.pcpu_add), slot={cpu: s.slot[cpu] + s.amount[cpu]},
                    exact=s.exact + s.amount[cpu], amount={cpu: 0}, pc={cpu: ADD.idle},
                    read_overlap=If(_reading(s), 1, s.read_overlap),
                    pcpu_error=If(And(dead, s.pcpu_error == MEMERR.none), MEMERR.add_to_dead, s.pcpu_error))

    # -- lazy_percpu_counter_add_slowpath() ----------------------------------------------------
    @action(role="adders", access=READ_V)
    def slowpath_read(s, cpu):
        """add_slowpath(): atomic_i = encoded i; v = atomic64_read(&c->v); if pcpu: this_cpu_add."""
        pcpu = s.published != NOBODY
        return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.slow_read), v={cpu: If(pcpu, 0, s.word)},
                    slow_found_pcpu=If(pcpu, 1, s.slow_found_pcpu), pc={cpu: If(pcpu, ADD.pcpu_add, ADD.cmpxchg)})

    @action(role="adders", access=CMPXCHG_V)
    def slowpath_cmpxchg(s, cpu):
        """old = v; v = atomic64_cmpxchg(&c->v, old, old + atomic_i): success is the linearisation
        point; on failure v is the word found (per-CPU: this_cpu_add; atomic: retry)."""
        ok = And(s.published == NOBODY, s.word == s.v[cpu])
        new = (s.v[cpu] + encode_add(s.amount[cpu])) % word_modulus(s.mod_bits)
        wrapped = mod_field(s.v[cpu]) == 0  # !(v & COUNTER_MOD_MASK), v the replaced word
        return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.cmpxchg),
                    word=If(ok, new, s.word), exact=If(ok, s.exact + s.amount[cpu], s.exact),
                    read_overlap=If(And(ok, _reading(s)), 1, s.read_overlap),
                    v={cpu: If(Or(ok, s.published != NOBODY), 0, s.word)},
                    slow_found_pcpu=If(s.published != NOBODY, 1, s.slow_found_pcpu),
                    amount={cpu: If(ok, 0, s.amount[cpu])},
                    pc={cpu: If(ok, If(wrapped, ADD.wrap_check, ADD.idle),
                                If(s.published != NOBODY, ADD.pcpu_add, ADD.cmpxchg))})

    @action(role="adders", choose={"recent": (0, 1)})
    def wrap_check(s, cpu, recent):
        """The replaced word's mod field was 0: now = jiffies; if (c->last_wrap &&
        time_after(c->last_wrap + HZ, now)) switch_to_pcpu(c); else c->last_wrap = now;"""
        switch = And(s.last_wrap == 1, recent == 1)
        return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.wrap_check), last_wrap=1, pc={cpu: If(switch, ADD.sw_alloc, ADD.idle)})

    # -- lazy_percpu_counter_switch_to_pcpu() ---------------------------------------------------
    @action(role="adders", choose={"ok": (1, 0)})
    def switch_alloc(s, cpu, ok):
        """pcpu_v = alloc_percpu_gfp(u64, GFP_ATOMIC|__GFP_NOWARN) (zeroed); if (!pcpu_v) return;"""
        return when(And(_task_runs(s, cpu), s.pc[cpu] == ADD.sw_alloc), alloc={cpu: If(ok, MEM.live, s.alloc[cpu])},
                    pc={cpu: If(ok, ADD.sw_read, ADD.idle)})

    @action(role="adders", access=READ_V)
    def switch_read(s, cpu):
        """preempt_disable(); v = atomic64_read(&c->v); loop: if pcpu, lost the race; else
        old = v; *this_cpu_ptr(pcpu_v) = atomic_val(v) (storage not yet published)."""
        return switch_read_with(s, cpu, decode)

    # The copy into this CPU's slot is a plain store before the cmpxchg (program order); it is written to
    # `slot` in this step, where it becomes the published storage's, so the store comes first.
    @action(role="adders", access=(Store("slot", "plain"), CMPXCHG_V))
    def switch_cmpxchg(s, cpu):
        """v = atomic64_cmpxchg(&c->v, old, pcpu_v | 1): success publishes this CPU's storage (its
        slot holds the copy), then preempt_enable(); on failure the loop copies the word found
        again, or finds it per-CPU."""
        return switch_cmpxchg_with(s, cpu, decode)

    @action(role="adders")
    def switch_lost(s, cpu):
        """Another CPU switched first: free_percpu(pcpu_v); then (the fix) preempt_enable(); return."""
        return _free_own(s, cpu, enable=True)

    # -- lazy_percpu_counter_add() from hard-irq context (irq > 0) ------------------------------------
    # The handler's add is the same code, one step per atomic step as the task's, on its own locals. It
    # runs over the task of its CPU (which waits: _task_runs) wherever that task is, even inside its own
    # switch_to_pcpu (preempt_disable() does not mask interrupts), and other CPUs run meanwhile. Every
    # step is irq=True: the handler's context, never nested.
    @action(role="adders", irq=True, choose={"i": _amounts}, applies=lambda p: p.irq > 0)
    def irq_add(s, cpu, i):
        """Interrupt: lazy_percpu_counter_add(c, i) in a hard-irq handler: v = atomic64_read(&c->v); pcpu?
        this_cpu_add : slowpath."""
        return when(And(s.irq_pc[cpu] == ADD.idle, s.irq_left[cpu] > 0, s.destroyed == 0),
                    irq_left={cpu: s.irq_left[cpu] - 1}, irq_amount={cpu: i},
                    irq_over_task=If(s.pc[cpu] != ADD.idle, 1, s.irq_over_task),
                    irq_pc={cpu: If(s.published != NOBODY, ADD.pcpu_add, ADD.slow_read)})

    @action(role="adders", irq=True, applies=lambda p: p.irq > 0)
    def irq_this_cpu_add(s, cpu):
        """Interrupt: this_cpu_add(*pcpu_v, i): irq-safe, one step on this CPU's slot of the published storage."""
        dead = _published_alloc(s) != MEM.live
        return when(s.irq_pc[cpu] == ADD.pcpu_add, slot={cpu: s.slot[cpu] + s.irq_amount[cpu]},
                    exact=s.exact + s.irq_amount[cpu], irq_amount={cpu: 0}, irq_pc={cpu: ADD.idle},
                    read_overlap=If(_reading(s), 1, s.read_overlap),
                    pcpu_error=If(And(dead, s.pcpu_error == MEMERR.none), MEMERR.add_to_dead, s.pcpu_error))

    @action(role="adders", irq=True, applies=lambda p: p.irq > 0)
    def irq_slowpath_read(s, cpu):
        """Interrupt: add_slowpath(): v = atomic64_read(&c->v); if pcpu: this_cpu_add."""
        pcpu = s.published != NOBODY
        return when(s.irq_pc[cpu] == ADD.slow_read, irq_v={cpu: If(pcpu, 0, s.word)},
                    irq_pc={cpu: If(pcpu, ADD.pcpu_add, ADD.cmpxchg)})

    @action(role="adders", irq=True, applies=lambda p: p.irq > 0)
    def irq_slowpath_cmpxchg(s, cpu):
        """Interrupt: atomic64_cmpxchg(&c->v, old, old + atomic_i): success is the handler add's
        linearisation point; on failure per-CPU: this_cpu_add, atomic: retry."""
        ok = And(s.published == NOBODY, s.word == s.irq_v[cpu])
        new = (s.irq_v[cpu] + encode_add(s.irq_amount[cpu])) % word_modulus(s.mod_bits)
        wrapped = mod_field(s.irq_v[cpu]) == 0
        return when(s.irq_pc[cpu] == ADD.cmpxchg,
                    word=If(ok, new, s.word), exact=If(ok, s.exact + s.irq_amount[cpu], s.exact),
                    read_overlap=If(And(ok, _reading(s)), 1, s.read_overlap),
                    irq_v={cpu: If(Or(ok, s.published != NOBODY), 0, s.word)},
                    irq_amount={cpu: If(ok, 0, s.irq_amount[cpu])},
                    irq_pc={cpu: If(ok, If(wrapped, ADD.wrap_check, ADD.idle),
                                    If(s.published != NOBODY, ADD.pcpu_add, ADD.cmpxchg))})

    @action(role="adders", irq=True, choose={"recent": (0, 1)}, applies=lambda p: p.irq > 0)
    def irq_wrap_check(s, cpu, recent):
        """Interrupt: the mod field wrapped: if (c->last_wrap && time_after(c->last_wrap + HZ, now))
        switch_to_pcpu(c); else c->last_wrap = now;"""
        switch = And(s.last_wrap == 1, recent == 1)
        return when(s.irq_pc[cpu] == ADD.wrap_check, last_wrap=1,
                    irq_pc={cpu: If(switch, ADD.sw_alloc, ADD.idle)})

    @action(role="adders", irq=True, choose={"ok": (1, 0)}, applies=lambda p: p.irq > 0)
    def irq_switch_alloc(s, cpu, ok):
        """Interrupt: pcpu_v = alloc_percpu_gfp(u64, GFP_ATOMIC|__GFP_NOWARN) (atomic: pcpu_lock with
        spin_lock_irqsave, allowed in hard-irq context); if (!pcpu_v) return;"""
        return when(s.irq_pc[cpu] == ADD.sw_alloc, irq_alloc={cpu: If(ok, MEM.live, s.irq_alloc[cpu])},
                    irq_pc={cpu: If(ok, ADD.sw_read, ADD.idle)})

    @action(role="adders", irq=True, applies=lambda p: p.irq > 0)
    def irq_switch_read(s, cpu):
        """Interrupt: preempt_disable(); v = atomic64_read(&c->v); pcpu: lost; else the copy into the
        handler's own storage (not yet published)."""
        pcpu = s.published != NOBODY
        return when(s.irq_pc[cpu] == ADD.sw_read, irq_preempt={cpu: s.irq_preempt[cpu] + 1},
                    irq_v={cpu: If(pcpu, 0, s.word)}, irq_copy={cpu: If(pcpu, 0, decode(s.word))},
                    irq_nested=If(Or(s.pc[cpu] == ADD.sw_cmpxchg, s.pc[cpu] == ADD.sw_lost), 1, s.irq_nested),
                    irq_pc={cpu: If(pcpu, ADD.sw_lost, ADD.sw_cmpxchg)})

    @action(role="adders", irq=True, applies=lambda p: p.irq > 0)
    def irq_switch_cmpxchg(s, cpu):
        """Interrupt: atomic64_cmpxchg(&c->v, old, pcpu_v | 1): success publishes the handler's storage,
        then preempt_enable(); on failure the copy is redone, or the word is found per-CPU."""
        ok = And(s.published == NOBODY, s.word == s.irq_v[cpu])
        lost = And(Not(ok), s.published != NOBODY)
        return when(s.irq_pc[cpu] == ADD.sw_cmpxchg,
                    published=If(ok, cpu, s.published), published_irq=If(ok, 1, s.published_irq),
                    word=If(ok, 0, s.word), publishes=If(ok, s.publishes + 1, s.publishes),
                    slot=_publish_slots(s, cpu, ok, s.irq_copy[cpu]),
                    irq_copy={cpu: If(Or(ok, lost), 0, decode(s.word))},
                    irq_v={cpu: If(Or(ok, lost), 0, s.word)},
                    retried=If(And(Not(ok), Not(lost)), 1, s.retried),
                    irq_preempt={cpu: If(ok, s.irq_preempt[cpu] - 1, s.irq_preempt[cpu])},
                    irq_pc={cpu: If(ok, ADD.idle, If(lost, ADD.sw_lost, ADD.sw_cmpxchg))})

    @action(role="adders", irq=True, applies=lambda p: p.irq > 0)
    def irq_switch_lost(s, cpu):
        """Interrupt: another context switched first: free_percpu(pcpu_v) (pcpu_lock, irq-safe); then (the
        fix) preempt_enable(); return."""
        bad = s.irq_alloc[cpu] != MEM.live
        return when(s.irq_pc[cpu] == ADD.sw_lost, irq_alloc={cpu: MEM.freed}, irq_pc={cpu: ADD.idle},
                    irq_preempt={cpu: s.irq_preempt[cpu] - 1},
                    pcpu_error=If(And(bad, s.pcpu_error == MEMERR.none), MEMERR.double_free, s.pcpu_error))

    # -- lazy_percpu_counter_read() --------------------------------------------------------------
    @action(role="reader", access=READ_V)
    def read(s, r):
        """v = atomic64_read(&c->v); atomic: return atomic_val(v); pcpu: sum the possible CPUs' slots."""
        return read_with(s, r, decode)

    # *per_cpu_ptr(pcpu_v, cpu): the address comes from the atomic64_read() of c->v (an address dependency on
    # that load, dep=C_V, for every slot read through it);
    # a plain load racing with that CPU's this_cpu_add, as the kernel leaves it.
    @action(role="reader", choose={"other": lambda p: p.adders},
            access=Load("slot", "plain", slot=lambda s, r, other: other, dep=C_V, race_ok=True))
    def read_slot(s, r, other):
        """for_each_possible_cpu(cpu) v += *per_cpu_ptr(pcpu_v, cpu); (one plain load per step, any order)"""
        return when(And(s.read_pc[r] == READ.scan, s.read_seen[other] == 0),
                    read_acc={r: s.read_acc[r] + s.slot[other]}, read_seen={other: 1})

    @action(role="reader")
    def read_return(s, r):
        """return v; (judged against E at the moment of return)"""
        ret = s.read_acc[r]
        return when(And(s.read_pc[r] == READ.scan, Sum(s.read_seen) == len(s.adders)),
                    read_pc={r: READ.done}, read_exact={r: ret == s.exact},
                    read_ok={r: Or(ret == s.exact, s.read_overlap == 1)})

    # -- lazy_percpu_counter_exit() ------------------------------------------------------------------
    @action()
    def exit(s):
        """lazy_percpu_counter_exit(): free_percpu(is_pcpu(atomic64_read(&c->v))) once no add is in flight."""
        quiet = And(*[And(s.pc[c] == ADD.idle, s.ops_left[c] == 0, s.irq_pc[c] == ADD.idle, s.irq_left[c] == 0)
                      for c in s.adders],
                    *[s.read_pc[r] == READ.done for r in s.reader])
        p = s.published
        bad = And(p != NOBODY, _published_alloc(s) != MEM.live)
        return when(And(quiet, s.destroyed == 0), destroyed=1,
                    alloc={c: If(And(p == c, s.published_irq == 0), MEM.freed, s.alloc[c]) for c in s.adders},
                    irq_alloc={c: If(And(p == c, s.published_irq == 1), MEM.freed, s.irq_alloc[c]) for c in s.adders},
                    pcpu_error=If(And(bad, s.pcpu_error == MEMERR.none), MEMERR.double_free, s.pcpu_error))

    @terminal
    def all_done(s):
        return s.destroyed == 1

    # -- properties --------------------------------------------------------------------------------
    @invariant(applies=lambda p: p.bits == 64)
    def no_update_lost(s):
        """LZ-EXACT / LZ-SWITCH: the counter's value (the decoded word in atomic mode, the sum of the
        published slots in per-CPU mode) is E in every state, so in particular across the switch."""
        return If(s.published == NOBODY, decode(s.word), Sum(s.slot)) == s.exact

    @invariant
    def mode_changes_once(s):
        """LZ-MONO: at most one publishing cmpxchg succeeds; once per-CPU, the word stays per-CPU."""
        return And(s.publishes <= 1, (s.published != NOBODY) == (s.publishes == 1),
                   Implies(s.published != NOBODY, s.word == 0))

    @invariant(role="adders")
    def losers_free_their_storage(s, cpu):
        """LZ-RES: outside switch_to_pcpu, a CPU's allocation is live only if it is the published one."""
        inside = Or(s.pc[cpu] == ADD.sw_read, s.pc[cpu] == ADD.sw_cmpxchg, s.pc[cpu] == ADD.sw_lost)
        return Implies(And(s.alloc[cpu] == MEM.live, Not(inside)), And(s.published == cpu, s.published_irq == 0))

    @invariant
    def published_storage_live(s):
        """The published storage stays allocated until exit, and nothing touches freed storage."""
        live = _published_alloc(s) == MEM.live
        return And(Implies(And(s.published != NOBODY, s.destroyed == 0), live), s.pcpu_error == MEMERR.none)

    @invariant
    def nothing_leaks_at_exit(s):
        """After lazy_percpu_counter_exit, no per-CPU storage is left allocated."""
        return Implies(s.destroyed == 1, And(*[And(s.alloc[c] != MEM.live, s.irq_alloc[c] != MEM.live)
                                               for c in s.adders]))

    @invariant(role="adders")
    def preempt_balanced_on_return(s, cpu):
        """Every return from lazy_percpu_counter_add leaves preempt_count() as it found it (0)."""
        return Implies(s.pc[cpu] == ADD.idle, s.preempt[cpu] == 0)

    @invariant(applies=lambda p: p.bits == 32)
    def no_update_lost_between_stores(s):
        """no_update_lost on a 32-bit kernel, where a this_cpu_add's two halves leave its slot half-written in
        between (memory that says nothing of the counter; readers are judged by what they return): in
        every state with no this_cpu_add in progress, the counter's value is E."""
        quiet = And(*[And(s.pc[c] != ADD.pcpu_add, s.irq_pc[c] != ADD.pcpu_add) for c in s.adders])
        return Implies(quiet, If(s.published == NOBODY, decode(s.word), Sum(s.slot)) == s.exact)

    @invariant(applies=lambda p: p.readers > 0)
    def read_within_adds(s):
        """A lazy_percpu_counter_read returns E give or take the adds made while it summed (each +-1): at
        most every add of the run away, whatever overlapped it (never a torn slot)."""
        r = s.reader[0]
        return Implies(s.read_pc[r] == READ.done, abs(s.read_acc[r] - s.exact) <= s.ncpus * (s.ops + s.irq))

    # SC-only: "no add overlapped" is the SC order of steps (and c->v is two variables here: word, published),
    # so under tso and lkmm it is not applicable; read_within_adds, beside it, is the claim checked there.
    @invariant(applies=lambda p: p.readers > 0 and p.bits == 64, sc_only="read_within_adds")
    def read_exact_at_quiescence(s):
        """A lazy_percpu_counter_read that no add overlapped returns E (no batching: it is exact). (At 32
        bits an add's first half is visible before its second, where E counts it: read_within_adds.)"""
        return Or(s.read_pc[s.reader[0]] != READ.done, s.read_ok[s.reader[0]] == 1)

    @sometimes
    def a_switch_happens(s):
        """The counter goes per-CPU."""
        return s.published != NOBODY

    @sometimes(applies=lambda p: p.ncpus > 1)
    def two_cpus_race_to_switch(s):
        """Two CPUs hold their own fresh per-CPU storage inside switch_to_pcpu at once."""
        inside = [And(s.alloc[c] == MEM.live, s.published != c,
                      Or(s.pc[c] == ADD.sw_read, s.pc[c] == ADD.sw_cmpxchg, s.pc[c] == ADD.sw_lost))
                  for c in s.adders]
        return Sum(If(x, 1, 0) for x in inside) + If(s.published != NOBODY, 1, 0) >= 2

    @sometimes
    def a_switch_loser_frees(s):
        """A CPU that lost the switch race has freed its storage."""
        return Or(*[s.alloc[c] == MEM.freed for c in s.adders])

    @sometimes
    def a_publish_retries(s):
        """An atomic-mode add lands between the switch's copy and its cmpxchg: the copy is redone."""
        return s.retried == 1

    @sometimes
    def an_add_finds_the_switch_in_its_slowpath(s):
        """The fast path read an atomic word, the slow path's cmpxchg found the word per-CPU."""
        return s.slow_found_pcpu == 1

    @leads_to(fair=False, applies=lambda p: p.forever == 1)
    def cmpxchg_loops_are_lock_free(s):
        """While some CPU is in a cmpxchg retry loop (the slow path's add, the switch's publish), some
        lazy_percpu_counter_add returns later, on every schedule, fair or not: a cmpxchg fails only
        because another CPU's succeeded."""
        looping = AnyOf([Or(s.pc[c] == ADD.cmpxchg, s.pc[c] == ADD.sw_cmpxchg) for c in s.adders])
        return looping, an_add_returns

    @sometimes(applies=lambda p: p.readers > 0)
    def a_per_cpu_read_is_exact(s):
        """A read in per-CPU mode returns E."""
        r = s.reader[0]
        return And(s.read_pc[r] == READ.done, s.read_exact[r] == 1, s.published != NOBODY)

    # -- interrupt context (irq > 0) -----------------------------------------------------------------
    @invariant(role="adders", applies=lambda p: p.irq > 0)
    def irq_preempt_balanced_on_return(s, cpu):
        """Every return of a handler's lazy_percpu_counter_add leaves its part of preempt_count() at 0."""
        return Implies(s.irq_pc[cpu] == ADD.idle, s.irq_preempt[cpu] == 0)

    @invariant(role="adders", applies=lambda p: p.irq > 0)
    def irq_losers_free_their_storage(s, cpu):
        """LZ-RES for the handler: outside its switch_to_pcpu, its allocation is live only if published."""
        inside = Or(*[s.irq_pc[cpu] == x for x in _IN_SWITCH])
        return Implies(And(s.irq_alloc[cpu] == MEM.live, Not(inside)), And(s.published == cpu, s.published_irq == 1))

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
        return Or(*[And(s.published == c, s.published_irq == 1, s.pc[c] == ADD.sw_lost) for c in s.adders])

    @sometimes(applies=lambda p: p.irq > 0 and p.ncpus > 1)
    def an_irq_add_goes_per_cpu(s):
        """A handler's add ends in this_cpu_add on the published storage (after a switch)."""
        return Or(*[And(s.irq_pc[c] == ADD.pcpu_add, s.published != NOBODY) for c in s.adders])

