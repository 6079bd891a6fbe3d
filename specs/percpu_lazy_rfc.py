# SPDX-License-Identifier: GPL-2.0-only
"""ZhangPeng's lazy per-CPU counter with an embedded percpu_counter (L-Z, RFC 2/3), as posted.

Message-ID 20240412092441.3112481-3-zhangpeng362@huawei.com ("[RFC PATCH
2/3] lazy_percpu_counter: include struct percpu_counter in struct
lazy_percpu_counter", 2024-04-12), read in the list archive: the subject of
this spec is that code (``design=posted``, the default). The atomic mode is
Kent Overstreet's word (``percpu_lazy``); in per-CPU mode the word holds
``&c->fbc | 1`` and adds go to ``percpu_counter_add(&c->fbc, i)``, the eager
counter with its batch. ``lazy_percpu_counter_switch_to_pcpu`` runs with
interrupts and preemption off (``local_irq_save``, ``preempt_disable``) and
loops: ``if (is_pcpu(v)) break; if (!allocated) { if
(percpu_counter_init(&c->fbc, 0, GFP_ATOMIC|__GFP_NOWARN)) break; allocated
= true; }`` then ``percpu_counter_set(&c->fbc, atomic_val(v))`` and the
publishing ``atomic64_cmpxchg``. ``percpu_counter_init`` allocates the
per-CPU storage, initialises the lock, the count and the list node, and
``list_add``s the counter to ``percpu_counters`` under the ``spinlock_t``
``percpu_counters_lock``.

As posted, two CPUs can both get past the word's mode test and both run
``percpu_counter_init`` on the one embedded ``c->fbc`` (K-LAZY-DOUBLEINIT,
which the reference inferred and the checker confirms:
``posted_switch_initialises_fbc_twice`` here, and every property it breaks
in ``specs/bugs/lazy_rfc_double_init.py``), and
``lazy_percpu_counter_read_positive`` returns the raw value in atomic mode
(K-LAZY-POS: ``posted_read_positive_goes_negative``;
``specs/bugs/lazy_rfc_read_positive.py``). With one adder CPU the posted
code keeps every property. ``design=claim_fix`` is ours, not posted: the
switch is claimed with one ``test_and_set_bit`` on a flag next to the word,
a CPU that finds it taken leaves the counter atomic for now, and the
claimer clears it only when its allocation failed; ``read_positive`` clamps
the atomic value at 0; with it every property holds. The thread moved to
v2's atomic-mode percpu_counter instead (``percpu_atomic_mode_rfc``).

On PREEMPT_RT, ``percpu_counters_lock`` is a sleeping lock and taking it
with interrupts off is a bug: with ``--set preempt_rt=1`` the context rule
``no_sleep_in_atomic`` is violated (exit 1), naming ``register_lock`` and
``switch_read``, with the shortest trace.
"""
from checker import (IRQS_OFF, NOBODY, PREEMPT_COUNT, And, Bool, CpuId, Enum, Ghost, If, Implies, Int, Load, Lock,
                     Max, Not, OneWord, Or, Param, PerCpu, Rmw, Role, Select, Shared, Spec, Store, Sum, action,
                     invariant, sometimes, spin_lock, spin_unlock, terminal, when)
from checker.kernel.memory import MEM
from checker.ordering.declare import MEMORY
from checker.specs.percpu_lazy import WORD, decode, encode_add, mod_field, word_modulus

#: Where an adder is: lazy_percpu_counter_add(), its slow path, percpu_counter_add(), switch_to_pcpu().
ADD = Enum("idle", "slow_read", "cmpxchg", "pcpu_add", "fold", "wrap_check",
           "sw_read", "sw_claim", "sw_init", "sw_register", "sw_set_lock", "sw_set", "sw_cmpxchg", "sw_exit",
           name="add_pc")
READ = Enum("idle", "done", name="read_pc")
#: The code checked: the RFC 2/3 as posted, or with our two fixes.
DESIGN = Enum("posted", "claim_fix", name="design")
#: The first corruption seen.
ERR = Enum("none", "list_add_twice", "add_to_null", "free_unallocated", name="fbc_error")


#: The memory-model annotations (--memory tso|lkmm). c->v, one atomic64_t, is `word` and `published` here:
#: one location (the OneWord `c_v`). atomic64_read() is a READ_ONCE, the value-returning atomic64_cmpxchg()
#: fully ordered (an unordered load where it fails). In per-CPU mode the code goes through pcpu_v =
#: lazy_percpu_counter_is_pcpu(v), a pointer computed from the word it loaded (the read_positive quoted in
#: bugs/lazy_rfc_read_positive.py; the add as in RFC 1/3's lazy_percpu_counter_add, an inference for 2/3): its
#: loads of pcpu_v->counters and pcpu_v->count carry an address dependency on that load (dep="c_v"). The
#: embedded percpu_counter is annotated as percpu_eager's: this_cpu_add/__this_cpu_sub atomic to their own CPU,
#: fbc->count plain under fbc->lock, percpu_counter_read_positive's load plain (race_ok, the kernel's choice).
C_V = "c_v"
READ_V = Load(C_V, "once")
CMPXCHG_V = Rmw(C_V, "mb")
THIS_CPU = Rmw("local", "this_cpu")


def _amounts(p):
    return (1, -1) if p.neg else (1,)


def _fault(s, cond, kind):
    return If(And(cond, s.fbc_error == ERR.none), kind, s.fbc_error)


def read_positive_with(s, r, clamp):
    """lazy_percpu_counter_read_positive(): pcpu: percpu_counter_read_positive(&c->fbc) (count clamped
    at 0); atomic: atomic_val(v), clamped only if ``clamp`` (the posted code does not)."""
    atomic = s.published == 0
    val = decode(s.word)
    ret = If(atomic, Max(val, 0) if clamp else val, Max(s.count, 0))
    err = ret - Max(s.exact, 0)
    return when(s.read_pc[r] == READ.idle, read_pc={r: READ.done}, read_ret_neg={r: ret < 0},
                read_err={r: err}, read_atomic={r: atomic})


def _unraced(p):
    """Where the double initialisation cannot happen: one adder CPU, or the claim fix."""
    return p.design == DESIGN.claim_fix or p.ncpus == 1


def _clamped(p):
    """Where read_positive cannot go negative: the clamp fix, or no negative amounts."""
    return p.design == DESIGN.claim_fix or not p.neg


def no_update_lost(s):
    """In atomic mode the decoded word is E; in per-CPU mode, whenever fbc->lock is free, fbc->count plus the
    locals is E."""
    return Or(And(s.published == 0, decode(s.word) == s.exact),
              And(s.published == 1, Or(s.fbc_lock != NOBODY, s.count + Sum(s.local) == s.exact)))


def fbc_initialised_once(s):
    return And(s.inits <= 1, s.listed <= 1, s.fbc_error == ERR.none)


def unregistered_at_destroy(s):
    return Implies(s.destroyed == 1, s.listed == 0)


def nothing_leaks_at_destroy(s):
    return Implies(s.destroyed == 1, And(*[s.alloc[c] != MEM.live for c in s.adders]))


def read_positive_never_negative(s):
    r = s.reader[0]
    return Implies(s.read_pc[r] == READ.done, s.read_ret_neg[r] == 0)


def read_positive_error_bounded(s):
    r = s.reader[0]
    bound = If(s.read_atomic[r] == 1, 0, s.ncpus * (s.batch - 1))
    return Implies(s.read_pc[r] == READ.done, abs(s.read_err[r]) <= bound)


class PercpuLazyRfc(Spec):
    """L-Z as posted (RFC 2/3): lazy_percpu_counter_add (atomic word or percpu_counter_add), switch_to_pcpu,
    read_positive, destroy_many; design=claim_fix adds our claim flag and clamp."""

    kernel = ("ZhangPeng RFC 2/3 (20240412092441.3112481-3-zhangpeng362@huawei.com, as posted) "
              "lib/lazy-percpu-counter.c: lazy_percpu_counter_add, _add_slowpath, switch_to_pcpu, read_positive, "
              "destroy_many, with v6.6 lib/percpu_counter.c percpu_counter_add_batch (irqs off), "
              "__percpu_counter_init_many, percpu_counter_set, percpu_counter_destroy; design=claim_fix: two "
              "fixes of ours (the switch claimed by a test_and_set_bit, read_positive clamping the atomic value)")
    assumptions = (
        "the atomic word as in percpu_lazy (its mod-width argument and bit-vector lemmas apply unchanged)",
        "the wrap check's time test is a nondeterministic choice (as in percpu_lazy)",
        "percpu_counter_add_batch in its irqs-off form: the fast path is one step, the slow path's lock, fold, "
        "zeroing and unlock one step (nothing else runs on the CPU; lock takers see it whole; lockless readers "
        "read only count)",
        "percpu_counter_init's field initialisation (lock, list node, count, counters) is one step after its "
        "allocation; its list_add takes percpu_counters_lock in a step of its own (the PREEMPT_RT rule sees it)",
        "percpu_counter_set's zeroing of every CPU's local and its store to count are one step under fbc->lock; "
        "with the claim fix, set only runs before publication, when no CPU adds to fbc",
        "no CPU hotplug fold is run (lazy_mmdrop has one); registration is tracked as a count of list_adds",
        "one task per CPU, no migration (switch_to_pcpu runs with interrupts and preemption off)",
        "destroy runs when no add is in flight",
    )

    design = Param(DESIGN.posted, domain=DESIGN, doc="posted: RFC 2/3 as posted; claim_fix: with our claim flag "
                   "and clamp")
    # The posted code at one CPU (it keeps everything) and at two (its bugs, named expected violations); the
    # claim fix where the posted code fails.
    explore_sweeps = (
        {"design": DESIGN.posted, "ncpus": (1, 2), "mod_bits": 1},
        {"design": DESIGN.posted, "ncpus": 1, "mod_bits": 0, "neg": 1, "readers": 1},
        {"design": DESIGN.claim_fix},
    )
    ncpus = Param(2, domain=range(1, 4), explore=(2, 3), doc="adder CPUs")
    mod_bits = Param(0, domain=range(0, 9), explore=(0, 1),
                     doc="COUNTER_MOD_BITS (8 in the kernel; 0: every add runs the wrap check)")
    batch = Param(2, domain=range(1, 64), doc="the embedded percpu_counter's batch")
    ops = Param(lambda p: Max(2, -(-((2 << p.mod_bits) + 2) // p.ncpus)), domain=range(0, 64),
                doc="adds per CPU (default: enough for two CPUs to race to switch and one add after it)")
    neg = Param(0, domain=(0, 1), doc="1: amounts +1 and -1")
    readers = Param(lambda p: 1 if p.ncpus == 2 else 0, domain=(0, 1),
                    doc="a CPU doing one lazy_percpu_counter_read_positive (default at 2 CPUs)")
    preempt_rt = Param(0, domain=(0, 1), doc="CONFIG_PREEMPT_RT: spinlock_t sleeps")

    adders = Role("ncpus", symmetric=True, doc="CPUs calling lazy_percpu_counter_add")
    reader = Role("readers", doc="a CPU calling lazy_percpu_counter_read_positive (get_mm_counter)")

    word = Shared(0, type=WORD, doc="c->v in atomic mode; 0 once &c->fbc | 1 is published")
    published = Shared(0, type=Bool, doc="c->v holds &c->fbc | 1")
    c_v = OneWord("word", "published", doc="c->v: one atomic64_t, one location under tso/lkmm")
    last_wrap = Shared(0, type=Bool, doc="c->last_wrap != 0")
    switching = Shared(0, type=Bool, doc="claim_fix: the switch claim bit")
    count = Shared(0, type=Int, doc="c->fbc.count")
    fbc_lock = Lock(doc="c->fbc.lock (raw_spinlock_t)")
    counters = Shared(NOBODY, type=CpuId, doc="c->fbc.counters: whose allocation (NOBODY: NULL)")
    listed = Shared(0, doc="list_adds of c->fbc.list not yet undone by list_del")
    list_lock = Lock(raw=False, doc="percpu_counters_lock (spinlock_t)")
    local = PerCpu(0, type=Int, role="adders", doc="*per_cpu_ptr(c->fbc.counters, cpu)")
    alloc = PerCpu(MEM.unalloc, type=MEM, role="adders", doc="the per-CPU storage this CPU's init allocated")

    pc = PerCpu(ADD.idle, type=ADD, role="adders")
    ops_left = PerCpu(lambda p: p.ops, role="adders")
    amount = PerCpu(0, type=Int, role="adders", doc="i of the add in progress")
    v = PerCpu(0, type=WORD, role="adders", doc="the local v of the slow path / switch (atomic-mode word)")
    allocated = PerCpu(0, type=Bool, role="adders", doc="switch_to_pcpu's local `allocated`")
    irqs = PerCpu(0, type=IRQS_OFF, role="adders")
    preempt = PerCpu(0, type=PREEMPT_COUNT, role="adders")
    destroyed = Shared(0, type=Bool)
    exact = Ghost(0, doc="E")
    inits = Ghost(0, doc="successful percpu_counter_init calls on c->fbc")
    fbc_error = Ghost(ERR.none, type=ERR)

    read_pc = PerCpu(READ.idle, type=READ, role="reader")
    read_err = PerCpu(0, type=Int, role="reader", doc="ghost: what read_positive returned - max(E, 0)")
    read_ret_neg = PerCpu(0, type=Bool, role="reader", doc="ghost: read_positive returned a negative value")
    read_atomic = PerCpu(0, type=Bool, role="reader", doc="ghost: the read found the counter atomic")

    # -- lazy_percpu_counter_add() and its slow path (as in percpu_lazy) ----------------------------------
    @action(role="adders", choose={"i": _amounts}, access=READ_V)
    def add(s, cpu, i):
        """lazy_percpu_counter_add(c, i): v = atomic64_read(&c->v); pcpu? percpu_counter_add : slowpath."""
        return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0, s.destroyed == 0),
                    ops_left={cpu: s.ops_left[cpu] - 1}, amount={cpu: i},
                    pc={cpu: If(s.published == 1, ADD.pcpu_add, ADD.slow_read)})

    @action(role="adders", access=READ_V)
    def slowpath_read(s, cpu):
        """add_slowpath(): v = atomic64_read(&c->v); if pcpu: percpu_counter_add."""
        return when(s.pc[cpu] == ADD.slow_read, v={cpu: If(s.published == 1, 0, s.word)},
                    pc={cpu: If(s.published == 1, ADD.pcpu_add, ADD.cmpxchg)})

    @action(role="adders", access=CMPXCHG_V)
    def slowpath_cmpxchg(s, cpu):
        """v = atomic64_cmpxchg(&c->v, old, old + atomic_i); success: the linearisation point."""
        ok = And(s.published == 0, s.word == s.v[cpu])
        new = (s.v[cpu] + encode_add(s.amount[cpu])) % word_modulus(s.mod_bits)
        wrapped = mod_field(s.v[cpu]) == 0
        return when(s.pc[cpu] == ADD.cmpxchg, word=If(ok, new, s.word),
                    exact=If(ok, s.exact + s.amount[cpu], s.exact),
                    v={cpu: If(Or(ok, s.published == 1), 0, s.word)}, amount={cpu: If(ok, 0, s.amount[cpu])},
                    pc={cpu: If(ok, If(wrapped, ADD.wrap_check, ADD.idle),
                                If(s.published == 1, ADD.pcpu_add, ADD.cmpxchg))})

    @action(role="adders", choose={"recent": (0, 1)})
    def wrap_check(s, cpu, recent):
        """if (c->last_wrap && time_after(c->last_wrap + HZ, now)) switch_to_pcpu(c); else c->last_wrap = now;"""
        go = And(s.last_wrap == 1, recent == 1)
        return when(s.pc[cpu] == ADD.wrap_check, last_wrap=1, pc={cpu: If(go, ADD.sw_read, ADD.idle)})

    # -- percpu_counter_add(&c->fbc, i): percpu_counter_add_batch(), irqs off ------------------------------
    @action(role="adders", access=(Load("counters", "plain", dep=C_V), THIS_CPU))
    def percpu_counter_add(s, cpu):
        """local_irq_save(); count = __this_cpu_read(*fbc->counters) + amount; fast path if |count| < batch:
        this_cpu_add (the linearisation point); else the slow path."""
        c = s.local[cpu] + s.amount[cpu]
        fast = abs(c) < s.batch
        return when(s.pc[cpu] == ADD.pcpu_add, local={cpu: If(fast, c, s.local[cpu])},
                    exact=If(fast, s.exact + s.amount[cpu], s.exact), amount={cpu: If(fast, 0, s.amount[cpu])},
                    fbc_error=_fault(s, s.counters == NOBODY, ERR.add_to_null),
                    pc={cpu: If(fast, ADD.idle, ADD.fold)})

    @action(role="adders", access=(spin_lock("fbc_lock"), Load("count", "plain"), Store("count", "plain"), THIS_CPU,
                                   spin_unlock("fbc_lock")))
    def percpu_counter_fold(s, cpu):
        """raw_spin_lock(&fbc->lock); fbc->count += count; __this_cpu_sub(*fbc->counters, count - amount);
        raw_spin_unlock(&fbc->lock); local_irq_restore();"""
        return when(And(s.pc[cpu] == ADD.fold, s.fbc_lock == NOBODY),
                    count=s.count + s.local[cpu] + s.amount[cpu], local={cpu: 0},
                    exact=s.exact + s.amount[cpu], amount={cpu: 0}, pc={cpu: ADD.idle})

    # -- lazy_percpu_counter_switch_to_pcpu() ------------------------------------------------------------------
    @action(role="adders", access=READ_V)
    def switch_read(s, cpu):
        """local_irq_save(flags); preempt_disable(); v = atomic64_read(&c->v); allocated = false;
        loop: if (is_pcpu(v)) break; if (!allocated) percpu_counter_init(&c->fbc, ...) (claim_fix: claim the
        switch first)"""
        nxt = ADD.sw_claim if s.design == DESIGN.claim_fix else ADD.sw_init
        return when(s.pc[cpu] == ADD.sw_read, irqs={cpu: 1}, preempt={cpu: s.preempt[cpu] + 1},
                    v={cpu: If(s.published == 1, 0, s.word)}, allocated={cpu: 0},
                    pc={cpu: If(s.published == 1, ADD.sw_exit, nxt)})

    @action(role="adders", applies=lambda p: p.design == DESIGN.claim_fix, access=Rmw("switching", "mb"))
    def switch_claim(s, cpu):
        """claim_fix (ours): if (test_and_set_bit(0, &c->switching)) break;  -- another CPU is switching it."""
        return when(s.pc[cpu] == ADD.sw_claim, switching=1,
                    pc={cpu: If(s.switching == 1, ADD.sw_exit, ADD.sw_init)})

    # (the allocator's zeroing of every CPU's slot, fbc->count = 0, fbc->counters = counters: plain stores)
    @action(role="adders", choose={"ok": (1, 0)},
            access=(Store("local", "plain", slot="all"), Store("count", "plain"), Store("counters", "plain"),
                    Rmw("switching", "unordered")))  # (claim_fix: a failed allocation's clear_bit of the claim)
    def percpu_counter_init(s, cpu, ok):
        """if (!allocated) { if (percpu_counter_init(&c->fbc, 0, GFP_ATOMIC|__GFP_NOWARN)) break; ... }
        __percpu_counter_init_many(): counters = __alloc_percpu_gfp(); NULL: fbc->counters = NULL, -ENOMEM;
        else raw_spin_lock_init(&fbc->lock); INIT_LIST_HEAD(&fbc->list); fbc->count = 0;
        fbc->counters = counters (the per-CPU memory is zeroed)."""
        return when(s.pc[cpu] == ADD.sw_init, alloc={cpu: If(ok, MEM.live, s.alloc[cpu])},
                    counters=If(ok, cpu, NOBODY), count=If(ok, 0, s.count),
                    fbc_lock=If(ok, NOBODY, s.fbc_lock), local={c: If(ok, 0, s.local[c]) for c in s.adders},
                    inits=If(ok, s.inits + 1, s.inits), switching=If(ok, s.switching, 0),
                    pc={cpu: If(ok, ADD.sw_register, ADD.sw_exit)})

    @action(role="adders")
    def register_lock(s, cpu):
        """__percpu_counter_init_many(): spin_lock_irqsave(&percpu_counters_lock, flags);"""
        return when(And(s.pc[cpu] == ADD.sw_register, s.list_lock == NOBODY), list_lock=cpu)

    @action(role="adders")
    def register_unlock(s, cpu):
        """list_add(&fbc->list, &percpu_counters); spin_unlock_irqrestore(); allocated = true;"""
        return when(And(s.pc[cpu] == ADD.sw_register, s.list_lock == cpu), list_lock=NOBODY,
                    listed=s.listed + 1, fbc_error=_fault(s, s.listed > 0, ERR.list_add_twice),
                    allocated={cpu: 1}, pc={cpu: ADD.sw_set_lock})

    @action(role="adders")
    def set_lock(s, cpu):
        """old = v; new = &c->fbc | 1; percpu_counter_set(): raw_spin_lock_irqsave(&fbc->lock);"""
        return when(And(s.pc[cpu] == ADD.sw_set_lock, s.fbc_lock == NOBODY), fbc_lock=cpu, pc={cpu: ADD.sw_set})

    @action(role="adders", access=(Store("local", "plain", slot="all"), Store("count", "plain")))
    def set_unlock(s, cpu):
        """percpu_counter_set(&c->fbc, atomic_val(v)): every CPU's local = 0; fbc->count = amount;
        raw_spin_unlock_irqrestore(&fbc->lock);  (an unlock stores 'unlocked' whoever holds the lock)"""
        return when(s.pc[cpu] == ADD.sw_set, fbc_lock=NOBODY,
                    local={c: 0 for c in s.adders}, count=decode(s.v[cpu]), pc={cpu: ADD.sw_cmpxchg})

    @action(role="adders", access=CMPXCHG_V)
    def switch_cmpxchg(s, cpu):
        """v = atomic64_cmpxchg(&c->v, old, &c->fbc | 1); success publishes; failure loops with the word
        found: per-CPU: break; atomic: set again (allocated is true)."""
        ok = And(s.published == 0, s.word == s.v[cpu])
        lost = And(Not(ok), s.published == 1)
        return when(s.pc[cpu] == ADD.sw_cmpxchg, published=If(ok, 1, s.published), word=If(ok, 0, s.word),
                    v={cpu: If(Or(ok, lost), 0, s.word)},
                    pc={cpu: If(Or(ok, lost), ADD.sw_exit, ADD.sw_set_lock)})

    @action(role="adders")
    def switch_exit(s, cpu):
        """preempt_enable(); local_irq_restore(flags);"""
        return when(s.pc[cpu] == ADD.sw_exit, irqs={cpu: 0}, preempt={cpu: s.preempt[cpu] - 1},
                    v={cpu: 0}, allocated={cpu: 0}, pc={cpu: ADD.idle})

    # -- lazy_percpu_counter_read_positive() -------------------------------------------------------------
    @action(role="reader", access=(READ_V, Load("count", "plain", dep=C_V, race_ok=True)))
    def read_positive(s, r):
        """lazy_percpu_counter_read_positive(c), i.e. get_mm_counter(): pcpu: percpu_counter_read_positive;
        atomic: return lazy_percpu_counter_atomic_val(v) (claim_fix: clamped at 0)."""
        return read_positive_with(s, r, clamp=s.design == DESIGN.claim_fix)

    # -- lazy_percpu_counter_destroy_many(c, 1) ------------------------------------------------------------
    @action()
    def destroy(s):
        """if (is_pcpu(atomic64_read(&c->v))) percpu_counter_destroy(&c->fbc): list_del under
        percpu_counters_lock; free_percpu(fbc->counters); fbc->counters = NULL.  (No add in flight.)"""
        quiet = And(*[And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.adders],
                    *[s.read_pc[r] == READ.done for r in s.reader])
        pcpu = s.published == 1
        owner = s.counters
        bad = And(pcpu, Select(s.alloc, owner) != MEM.live)
        return when(And(quiet, s.destroyed == 0, s.list_lock == NOBODY), destroyed=1,
                    listed=If(pcpu, s.listed - 1, s.listed), counters=If(pcpu, NOBODY, s.counters),
                    alloc={c: If(And(pcpu, owner == c), MEM.freed, s.alloc[c]) for c in s.adders},
                    fbc_error=_fault(s, bad, ERR.free_unallocated))

    @terminal
    def all_done(s):
        return s.destroyed == 1

    # -- properties -------------------------------------------------------------------------------------------
    @invariant(applies=_unraced)
    def no_update_lost(s):
        """LZ-EXACT / LZ-SWITCH: in atomic mode the decoded word is E; in per-CPU mode, whenever fbc->lock is
        free, fbc->count plus the locals is E (what percpu_counter_sum returns at quiescence)."""
        return no_update_lost(s)

    @invariant(applies=_unraced)
    def fbc_initialised_once(s):
        """LZ-REG: c->fbc is initialised and registered at most once, and never used uninitialised."""
        return fbc_initialised_once(s)

    @invariant(expect="violated", applies=lambda p: not _unraced(p) and p.ops > 0)
    def posted_switch_initialises_fbc_twice(s):
        """K-LAZY-DOUBLEINIT, false on purpose for the posted code: two CPUs past the mode test both run
        percpu_counter_init(&c->fbc) (bugs/lazy_rfc_double_init.py has what else it breaks)."""
        return fbc_initialised_once(s)

    @invariant(applies=_unraced)
    def unregistered_at_destroy(s):
        """LZ-REG: after destroy_many, c->fbc is off percpu_counters (before the memory holding it is freed)."""
        return unregistered_at_destroy(s)

    @invariant(applies=_unraced)
    def nothing_leaks_at_destroy(s):
        """LZ-RES: after destroy_many no per-CPU storage is left allocated."""
        return nothing_leaks_at_destroy(s)

    @invariant(role="adders")
    def preempt_and_irqs_balanced_on_return(s, cpu):
        """Every return from lazy_percpu_counter_add has interrupts and preemption as it found them."""
        return Implies(s.pc[cpu] == ADD.idle, And(s.preempt[cpu] == 0, s.irqs[cpu] == 0))

    @invariant(applies=lambda p: p.readers > 0 and _clamped(p))
    def read_positive_never_negative(s):
        """LZ-POS: lazy_percpu_counter_read_positive (get_mm_counter) never returns a negative value."""
        return read_positive_never_negative(s)

    @invariant(expect="violated", applies=lambda p: p.readers > 0 and not _clamped(p))
    def posted_read_positive_goes_negative(s):
        """K-LAZY-POS, false on purpose for the posted code: in atomic mode read_positive returns
        atomic_val(v) unclamped (bugs/lazy_rfc_read_positive.py)."""
        return read_positive_never_negative(s)

    # (sc only: "within the bound of E at the read" is the SC order of steps; under lkmm the read's
    # atomic64_read() may return an older store of the word, a READ_ONCE. What get_mm_counter()'s callers rely on
    # under every model is read_positive_never_negative.)
    @invariant(applies=lambda p: p.readers > 0 and _unraced(p) and _clamped(p),
               sc_only="read_positive_never_negative")
    def read_positive_error_bounded(s):
        """read_positive is within 0 of max(E, 0) in atomic mode and within ncpus * (batch - 1) in per-CPU
        mode (the eager counter's PC-READ bound)."""
        return read_positive_error_bounded(s)

    # Under lkmm: the posted switch's double percpu_counter_init() (two CPUs past the mode test) is also a data
    # race, its plain stores to c->fbc against each other and the adds' loads; named where it is expected.
    @invariant(applies=lambda p: p.memory == MEMORY.lkmm and _unraced(p))
    def no_data_race(s):
        """No plain access races with a conflicting access of another CPU not ordered before it (LKMM's data
        race), where the switch is not raced (one CPU, or the claim fix)."""
        return getattr(s, "data_race", 0) == 0

    @invariant(expect="violated", applies=lambda p: p.memory == MEMORY.lkmm and not _unraced(p) and p.ops > 0)
    def posted_double_init_races(s):
        """K-LAZY-DOUBLEINIT under lkmm, false on purpose: the two percpu_counter_init()s' plain stores to c->fbc
        race with each other and with the adds' loads (LKMM's data race)."""
        return getattr(s, "data_race", 0) == 0

    @sometimes
    def a_switch_happens(s):
        """The counter goes per-CPU."""
        return s.published == 1

    @sometimes(applies=lambda p: p.ncpus >= 2)
    def two_cpus_try_to_switch(s):
        """Two CPUs are inside switch_to_pcpu with interrupts off at once."""
        return Sum(s.irqs) >= 2

    @sometimes(applies=lambda p: p.batch > 1)
    def a_per_cpu_add_folds(s):
        """An add in per-CPU mode takes percpu_counter_add_batch's slow path."""
        return And(s.published == 1, Or(*[s.pc[c] == ADD.fold for c in s.adders]))

    @sometimes(applies=lambda p: p.readers > 0 and p.batch > 1)
    def a_per_cpu_read_is_approximate(s):
        """read_positive in per-CPU mode differs from E."""
        r = s.reader[0]
        return And(s.read_pc[r] == READ.done, s.read_atomic[r] == 0, s.read_err[r] != 0)
