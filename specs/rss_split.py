# SPDX-License-Identifier: GPL-2.0-only
"""Split RSS counting: mm/memory.c and include/linux/mm.h before v6.2.

Models ``SPLIT_RSS_COUNTING`` (reference section 3.1), removed by
f1a7941243c1 ("mm: convert mm's rss stats into percpu_counter", v6.2):
each thread caches its RSS deltas in ``task->rss_stat`` (plain ints, no
atomics) and folds them into the mm's ``atomic_long_t`` counters with
``sync_mm_rss()`` at the start of every ``TASK_RSS_EVENTS_THRESH + 2``-th
page fault (``check_sync_rss_stat``) and on exit; ``get_mm_counter()`` reads
the atomic without locks and clamps a negative value to 0.

The fault path also decrements: ``wp_page_copy()`` on a COW of a file page
does ``dec_mm_counter_fast(mm, mm_counter_file(old_page))`` and
``inc_mm_counter_fast(mm, MM_ANONPAGES)``, and ``do_swap_page()`` does
``inc_mm_counter_fast(vma->vm_mm, MM_ANONPAGES)`` and
``dec_mm_counter_fast(vma->vm_mm, MM_SWAPENTS)``: one fault changes the
member by -1 (``cow=1``, the default) or by +1..U, so a cache ranges over
``-(T + 2) .. (T + 2) * U`` and may be negative.
"""
from checker import (AllOf, And, AnyOf, Between, Bool, Enum, Ghost, If, Implies, Load, Max, Or, Param, PerCpu, Rmw, Role,
                     S32, S64, Shared, Spec, Sum, action, invariant, sometimes, terminal, when, witness)

#: Under --memory tso|lkmm (issue 29): mm->rss_stat.count[member] is the only shared location. sync_mm_rss()'s
#: and zap's add_mm_counter() is atomic_long_add() (unordered); get_mm_counter()'s atomic_long_read() is a
#: READ_ONCE. task->rss_stat is private to its thread (plain accesses by its owner): not a weak location.
ADD_COUNT = Rmw("count", "unordered")

#: Where a thread is. A fault started from ``idle`` returns there; one
#: started while exiting (between do_exit's sync and exit_mm) returns to
#: ``exiting``.
THREAD = Enum("idle", "fault", "exiting", "exit_fault", "exited", name="thread_pc")
#: Whether a reader has done its get_mm_counter().
READ = Enum("idle", "done", name="read_pc")


#: A fault adds 1..U pages to the member.
_amounts = Between(1, lambda p: p.U)


def _full(p):
    """Enough faults for one thread to reach the per-thread bound: T+1 in its
    first window, then the syncing fault and T+1 more."""
    return p.faults >= 2 * p.T + 3


class RssSplit(Spec):
    """Per-thread cached RSS deltas (task->rss_stat) over mm->rss_stat, pre-6.2.

    Each thread of the role ``thread`` is a task of one mm running on its own
    CPU; its ``task_rss_stat`` is private to it, so every access to it is a
    plain load or store by its owner. A thread makes up to ``faults`` page
    faults. A fault is two steps: ``check_sync_rss_stat()`` at the start of
    ``handle_mm_fault()``, and later in the same fault the accounting
    ``add_mm_counter_fast()`` of ``amount`` pages (1..U: 1 for a single-page
    fault, up to 16 when ``do_fault_around`` maps 16 pages (the default
    fault_around_bytes of 64 KiB, tunable in debugfs) with one ``do_set_pte``
    each: those are file pages, counted in MM_FILEPAGES, while an anonymous
    fault adds 1 to MM_ANONPAGES). A thread may exit whenever it is not inside a fault:
    ``do_exit()`` syncs, a late fault may still happen (``mm_release`` ->
    ``put_user(clear_child_tid)``, robust futex list), and ``exit_mm()`` syncs
    again before ``current->mm = NULL``.

    The bound. ``events`` starts at 0 (``copy_process`` zeroes rss_stat) and
    ``check_sync_rss_stat`` tests ``events++ > T``: faults 1..T+1 only count,
    so the first window holds the deltas of T+1 faults; fault T+2 finds
    ``events == T+1``, syncs (cache and events to 0) and then accounts its own
    delta, so every later window holds the syncing fault plus T+1 more: T+2
    faults. Hence ``|cache| <= (T + 2) * U`` per thread and counter, exact
    (``per_thread_bound_is_tight`` and the false ``per_thread_bound_minus_one``),
    and ``get_mm_counter`` is off by at most ``threads * (T + 2) * U``.

    One counter. The spec models one member (MM_FILEPAGES when U > 1, since
    only fault-around adds several pages per fault). ``events`` counts
    calls of ``check_sync_rss_stat`` (faults), not counter updates, and
    ``sync_mm_rss`` flushes every member and resets ``events`` together, so a
    thread's sync points do not depend on which members its faults touch and
    the members never interact: one member whose every fault adds 1..U to it
    is the worst case for that member's bound. A fault adding nothing to it
    (it touched another member, or returned VM_FAULT_RETRY) only uses up an
    event and can only lower the cached sum. The four members sharing one
    ``events`` therefore does not loosen the per-member bound.

    Optional: ``unmaps`` zap_pte_range calls per thread (munmap of pages that
    may still sit in another thread's cache: ``count`` goes negative, which is
    why ``get_mm_counter`` clamps), and one reader doing ``get_mm_counter``.
    """

    kernel = ("v6.1 (the last release with SPLIT_RSS_COUNTING; removed by f1a7941243c1 in v6.2): "
              "mm/memory.c sync_mm_rss, add_mm_counter_fast, check_sync_rss_stat (TASK_RSS_EVENTS_THRESH 64, "
              "called at the start of handle_mm_fault), add_mm_rss_vec; include/linux/mm.h get_mm_counter, "
              "add_mm_counter; kernel/exit.c do_exit and exit_mm (both call sync_mm_rss)")
    assumptions = (
        "only fault-path updates reach the per-thread cache: vm_insert_page / vm_insert_pages "
        "(insert_page_into_pte_locked) also use inc_mm_counter_fast but do not go through "
        "check_sync_rss_stat, so they add to the cache without counting events; a thread mapping pages that "
        "way (a driver's mmap handler, before 6.2) can hold any number of deltas until its next sync, so "
        "the real kernel has no bound from the threshold alone; the bounds here are for fault-path updates",
        "one member (MM_FILEPAGES for U > 1: fault-around maps file pages; MM_ANONPAGES gets 1 per "
        "fault), which the fault path only increments; events counts faults, not "
        "updates, and sync_mm_rss flushes all members at once, so the other members do not change this "
        "member's sync points (see the class docstring)",
        "faults that add nothing to the member (other members, VM_FAULT_RETRY, errors) are not modelled: "
        "they only use up an event, which cannot raise the cached sum",
        "no remote faults (GUP on another mm, FAULT_FLAG_REMOTE): add_mm_counter_fast then adds to that mm "
        "atomically, and the faulting task's own events only advance, making its syncs come sooner",
        "no exec (exec_mmap syncs like exit_mm), no kthread_use_mm, no madvise_free_pte_range",
        "atomic (non-cached) updates from other paths (THP faults' add_mm_counter, try_to_unmap, ...) are "
        "left out, except zap_pte_range with unmaps > 0: they change count and the exact value together",
        "a zap's own sync_mm_rss and its add_mm_counter are one step: between them only count changes by "
        "the zapping thread's own cache, which keeps every property of the two-step version",
        "sync_mm_rss is one step: it touches the thread's private task->rss_stat and does one "
        "atomic_long_add on mm->rss_stat.count[member], the only shared access",
        "the exact value E is the sum of the amounts accounted, updated at add_mm_counter_fast (the "
        "linearisation point of the add), not the number of pages whose PTEs are set",
    )

    # The fault path's decrements (cow=1) multiply the states by up to 30 at 2 threads: the default run
    # takes them at 1 thread and at the smallest 2-thread point; cow=0 keeps the increment-only sweep.
    explore_sweeps = ({"cow": 0}, {"cow": 1, "threads": 1}, {"cow": 1, "threads": 2, "T": 1, "U": 1})

    threads = Param(2, domain=range(1, 1 << 20), explore=(1, 2), prove=range(1, 1 << 20), doc="threads of the mm, each on its own CPU")
    T = Param(64, domain=range(0, 1 << 16), explore=(1, 2), prove=range(0, 65), doc="TASK_RSS_EVENTS_THRESH (64 in the kernel)")
    U = Param(1, domain=range(1, 17), explore=(1, 2), prove=range(1, 17),
              doc="the largest amount one fault adds to the member: 1 for one page, up to 16 with fault-around")
    faults = Param(lambda p: 2 * p.T + 3, domain=range(0, 1 << 20), prove=("symbolic",),
                   doc="page faults per thread (default 2T+3: enough to reach the per-thread bound)")
    unmaps = Param(0, domain=range(0, 1 << 16), doc="zap_pte_range calls per thread (munmap)")
    cow = Param(1, domain=(0, 1), explore=(1,), prove=(0, 1),
                doc="1: a fault may instead decrement the member by one (wp_page_copy's COW of a file page, "
                    "do_swap_page's MM_SWAPENTS)")
    readers = Param(0, domain=(0, 1), doc="CPUs doing one get_mm_counter")

    thread = Role("threads", symmetric=True, doc="threads of the mm, faulting and exiting")
    reader = Role("readers", doc="a CPU calling get_mm_counter (e.g. /proc/pid/statm)")

    count = Shared(0, type=S64, doc="mm->rss_stat.count[member] (atomic_long_t)")
    cache = PerCpu(0, type=S32, role="thread", doc="task->rss_stat.count[member] (int)")
    events = PerCpu(0, type=S32, role="thread", doc="task->rss_stat.events (int)")
    pc = PerCpu(THREAD.idle, type=THREAD, role="thread", doc="where the thread is")
    faults_left = PerCpu(lambda p: p.faults, role="thread", doc="faults the thread may still make")
    unmaps_left = PerCpu(lambda p: p.unmaps, role="thread", doc="zap_pte_range calls the thread may still make")
    exact = Ghost(0, doc="E: the sum of every amount accounted")

    # The reader keeps only what its properties need, so that the values of
    # count and E at the read do not multiply the state space: the error of
    # what get_mm_counter returned against max(E, 0) at that moment, and
    # whether the atomic_long_read was negative (clamped to 0).
    read_pc = PerCpu(READ.idle, type=READ, role="reader")
    read_err = PerCpu(0, role="reader", doc="ghost: get_mm_counter's result - max(E, 0) at the read")
    read_neg = PerCpu(0, type=Bool, role="reader", doc="ghost: the atomic_long_read was < 0")

    # -- handle_mm_fault() ------------------------------------------------------------
    @action(role="thread", access=ADD_COUNT)
    def check_sync_rss_stat(s, t):
        """handle_mm_fault(): check_sync_rss_stat(current):
        if (task->rss_stat.events++ > TASK_RSS_EVENTS_THRESH) sync_mm_rss(task->mm).

        sync_mm_rss: add_mm_counter(mm, i, count[i]); count[i] = 0; events = 0."""
        # Post-increment and strict >: the old value is compared, then the
        # sync (if any) sets events back to 0 after the increment.
        sync = s.events[t] > s.T
        return when(And(Or(s.pc[t] == THREAD.idle, s.pc[t] == THREAD.exiting), s.faults_left[t] > 0),
                    count=If(sync, s.count + s.cache[t], s.count),
                    cache={t: If(sync, 0, s.cache[t])},
                    events={t: If(sync, 0, s.events[t] + 1)},
                    faults_left={t: s.faults_left[t] - 1},
                    pc={t: If(s.pc[t] == THREAD.idle, THREAD.fault, THREAD.exit_fault)})

    @action(role="thread", choose={"amount": _amounts})
    def add_mm_counter_fast(s, t, amount):
        """The fault's accounting, e.g. do_anonymous_page(): inc_mm_counter_fast(mm, MM_ANONPAGES), or
        do_set_pte() once per page of a fault-around: inc_mm_counter_fast(mm, mm_counter_file(page)),
        i.e. add_mm_counter_fast(): current->rss_stat.count[member] += val (current->mm == mm).
        The linearisation point of the add: E grows here."""
        return when(Or(s.pc[t] == THREAD.fault, s.pc[t] == THREAD.exit_fault),
                    cache={t: s.cache[t] + amount}, exact=s.exact + amount,
                    pc={t: If(s.pc[t] == THREAD.fault, THREAD.idle, THREAD.exiting)})

    @action(role="thread", applies=lambda p: p.cow == 1)
    def dec_mm_counter_fast(s, t):
        """The fault's accounting when it removes a page from the member: wp_page_copy() on a COW of a
        file page, if (!PageAnon(old_page)) { dec_mm_counter_fast(mm, mm_counter_file(old_page));
        inc_mm_counter_fast(mm, MM_ANONPAGES); } (v6.1), or do_swap_page()'s
        dec_mm_counter_fast(vma->vm_mm, MM_SWAPENTS): current->rss_stat.count[member] -= 1.

        Only a page already accounted can be COWed or swapped in (E >= 1); it may sit in another
        thread's cache, so this cache can go below 0."""
        return when(And(Or(s.pc[t] == THREAD.fault, s.pc[t] == THREAD.exit_fault), s.exact >= 1),
                    cache={t: s.cache[t] - 1}, exact=s.exact - 1,
                    pc={t: If(s.pc[t] == THREAD.fault, THREAD.idle, THREAD.exiting)})

    # -- munmap: zap_pte_range() -------------------------------------------------------
    @action(role="thread", choose={"amount": _amounts}, access=ADD_COUNT)
    def zap_pte_range(s, t, amount):
        """zap_pte_range(): rss[member] -= amount for the PTEs it clears, then
        add_mm_rss_vec(): if (current->mm == mm) sync_mm_rss(mm); add_mm_counter(mm, i, rss[i]).

        Only pages already accounted can be unmapped (E >= amount); they may
        still be in another thread's cache, so count can go negative."""
        return when(And(s.pc[t] == THREAD.idle, s.unmaps_left[t] > 0, s.exact >= amount),
                    count=s.count + s.cache[t] - amount, cache={t: 0}, events={t: 0},
                    exact=s.exact - amount, unmaps_left={t: s.unmaps_left[t] - 1})

    # -- thread exit -------------------------------------------------------------------
    @action(role="thread", access=ADD_COUNT)
    def do_exit_sync(s, t):
        """do_exit(): /* sync mm's RSS info before statistics gathering */
        if (tsk->mm) sync_mm_rss(tsk->mm)."""
        return when(s.pc[t] == THREAD.idle,
                    count=s.count + s.cache[t], cache={t: 0}, events={t: 0}, pc={t: THREAD.exiting})

    @action(role="thread", access=ADD_COUNT)
    def exit_mm(s, t):
        """exit_mm(): exit_mm_release(current, mm); sync_mm_rss(mm); ...; current->mm = NULL.
        The thread never touches the mm again (its budgets are dropped)."""
        return when(s.pc[t] == THREAD.exiting,
                    count=s.count + s.cache[t], cache={t: 0}, events={t: 0}, pc={t: THREAD.exited},
                    faults_left={t: 0}, unmaps_left={t: 0})

    # -- get_mm_counter() ------------------------------------------------------------------
    @action(role="reader", access=Load("count", "once"))
    def get_mm_counter(s, r):
        """get_mm_counter(): val = atomic_long_read(&mm->rss_stat.count[member]);
        if (val < 0) return 0 ("updated in asynchronous manner and may go to minus")."""
        val = If(s.count < 0, 0, s.count)
        return when(s.read_pc[r] == READ.idle, read_pc={r: READ.done}, read_neg={r: s.count < 0},
                    read_err={r: val - Max(s.exact, 0)})

    @terminal
    def all_exited(s):
        return AllOf([s.pc[t] == THREAD.exited for t in s.thread] + [s.read_pc[r] == READ.done for r in s.reader])

    # -- properties ---------------------------------------------------------------------------
    # The sum lemma's per-element bounds (each proved from the invariants below).
    sum_bounds = {"cache": lambda s: (-(s.T + 2), (s.T + 2) * s.U)}

    @invariant(inductive=True)
    def no_lost_update(s):
        """Conservation: count + the sum of the threads' caches == E in every state."""
        return s.count + Sum(s.cache) == s.exact

    @invariant
    def exact_after_exit(s):
        """Once every thread has exited, count == E.

        This is what check_mm() tests when the mm is freed ("BUG: Bad rss-counter state")."""
        return Implies(AllOf(s.pc[t] == THREAD.exited for t in s.thread), s.count == s.exact)

    @invariant(role="thread", lemma=True)
    def exited_thread_holds_nothing(s, t):
        """exit_mm synced: an exited thread's cache and events are 0 (with conservation,
        the per-thread form of exact_after_exit)."""
        return Implies(s.pc[t] == THREAD.exited, And(s.cache[t] == 0, s.events[t] == 0))

    @invariant(role="thread", lemma=True)
    def events_bound(s, t):
        """check_sync_rss_stat keeps 0 <= events <= T + 1 (it increments only while events <= T)."""
        return And(s.events[t] >= 0, s.events[t] <= s.T + 1)

    @invariant(role="thread", lemma=True)
    def cache_tracks_events(s, t):
        """-(events + 1) <= cache <= (events + 1) * U, or events (times U) inside a fault before its
        accounting.

        A cache holds the faults counted in events plus the one that synced, each
        +1..U or -1 (a COW or a swap-in): the inductive step behind the bound. (Before the
        fault path's decrements were modelled this read 0 <= cache, which is not a kernel invariant.)"""
        in_fault = Or(s.pc[t] == THREAD.fault, s.pc[t] == THREAD.exit_fault)
        k = s.events[t] + If(in_fault, 0, 1)
        return And(s.cache[t] >= -k, s.cache[t] <= k * s.U)

    @invariant(role="thread")
    def per_thread_bound(s, t):
        """Every thread's cached delta is within (T + 2) * U of 0."""
        return abs(s.cache[t]) <= (s.T + 2) * s.U

    @sometimes(applies=_full)
    def per_thread_bound_is_tight(s):
        """Some thread holds (T + 2) * U: the deltas of T + 2 faults of U pages each."""
        return AnyOf(s.cache[t] == (s.T + 2) * s.U for t in s.thread)

    @witness(reaches=("read_bound_is_tight", "per_thread_bound_is_tight"),
             violates=("per_thread_bound_minus_one",), at={"threads": (1, 16, 1024), "T": (64,), "U": (1,)})
    def every_thread_fills_its_cache(p):
        """Each thread in turn faults 2T + 3 times, one page each: T + 1 faults fill its first window,
        the next syncs them (T + 1 pages reach count) and adds one, T + 1 more fill the second window:
        every cache holds (T + 2) * U and count misses threads * (T + 2) * U."""
        for t in p.thread:
            fault = (("check_sync_rss_stat", t, {}), ("add_mm_counter_fast", t, {"amount": p.U}))
            yield fault, 2 * p.T + 3

    @invariant(expect="violated", applies=_full)
    def per_thread_bound_minus_one(s):
        """False on purpose: the per-thread bound one smaller. Violated, so (T + 2) * U is exact."""
        return Max(abs(s.cache[t]) for t in s.thread) <= (s.T + 2) * s.U - 1

    @invariant(role="thread", lemma=True)
    def first_window_bound(s, t):
        """A thread that has not synced yet holds at most (T + 1) * U: at most events * U,
        less one fault's worth inside a fault before its accounting.

        Not synced yet: events still equals the faults it started. The first
        window is one fault shorter than the later ones."""
        in_fault = Or(s.pc[t] == THREAD.fault, s.pc[t] == THREAD.exit_fault)
        started = s.faults - s.faults_left[t]
        return Implies(And(s.pc[t] != THREAD.exited, s.events[t] == started),
                       And(s.cache[t] <= (s.events[t] - If(in_fault, 1, 0)) * s.U,
                           s.cache[t] <= (s.T + 1) * s.U))

    @invariant(role="thread", lemma=True)
    def events_count_started_faults(s, t):
        """events never exceeds the faults started (it is reset, never raised, elsewhere)."""
        return And(s.faults_left[t] >= 0, s.faults_left[t] <= s.faults,
                   s.events[t] <= s.faults - s.faults_left[t])

    @sometimes(applies=lambda p: p.faults >= p.T + 1)
    def first_window_is_tight(s):
        """A thread that has not synced yet holds (T + 1) * U."""
        return AnyOf(And(s.pc[t] != THREAD.exited, s.events[t] == s.faults - s.faults_left[t],
                         s.cache[t] == (s.T + 1) * s.U) for t in s.thread)

    @sometimes(applies=lambda p: p.faults >= p.T + 2)
    def a_threshold_sync_happens(s):
        """check_sync_rss_stat syncs: some thread is inside a fault with events 0.

        Without a sync the check leaves events >= 1."""
        return AnyOf(And(Or(s.pc[t] == THREAD.fault, s.pc[t] == THREAD.exit_fault), s.events[t] == 0)
                     for t in s.thread)

    @invariant
    def read_bound(s):
        """|count - E| <= threads * (T + 2) * U: what get_mm_counter can miss."""
        return abs(s.count - s.exact) <= s.threads * (s.T + 2) * s.U

    @sometimes(applies=_full)
    def read_bound_is_tight(s):
        """Every thread holds (T + 2) * U at once: count is off by the whole bound."""
        return abs(s.count - s.exact) == s.threads * (s.T + 2) * s.U

    # SC-only (issue 29): "max(E, 0) at the read" is the SC order of steps; under lkmm atomic_long_read() may
    # return an older store of count (count_age=1) than E has moved past. read_bound, of every store of count
    # at the moment it is made, is the claim beside it that holds under every model.
    @invariant(applies=lambda p: p.readers > 0, sc_only="read_bound")
    def read_within_bound(s):
        """get_mm_counter's result is within threads * (T + 2) * U of max(E, 0) at the read."""
        r = s.reader[0]
        return Or(s.read_pc[r] == READ.idle, abs(s.read_err[r]) <= s.threads * (s.T + 2) * s.U)

    @sometimes(applies=lambda p: p.readers > 0 and p.faults > 0)
    def a_read_is_approximate(s):
        """get_mm_counter returns a value other than E."""
        r = s.reader[0]
        return And(s.read_pc[r] == READ.done, s.read_err[r] != 0)

    @invariant(role="thread")
    def per_thread_low_bound(s, t):
        """The bound the code gives below: a cache is never under -(T + 2) (T + 2 faults of -1 each)."""
        return s.cache[t] >= -(s.T + 2)

    @sometimes(applies=lambda p: p.cow == 1 and p.faults >= p.T + 3)
    def a_cache_goes_negative(s):
        """A fault's decrement leaves a thread's cache below 0 (a COW after a sync)."""
        return AnyOf(s.cache[t] < 0 for t in s.thread)

    @sometimes(applies=lambda p: p.unmaps > 0 and p.threads >= 2 and p.faults > 0)
    def count_goes_negative(s):
        """A page still cached by one thread is unmapped by another: mm->rss_stat goes below 0."""
        return s.count < 0

    @sometimes(applies=lambda p: p.readers > 0 and p.unmaps > 0 and p.threads >= 2 and p.faults > 0)
    def a_read_is_clamped(s):
        """get_mm_counter reads a negative count and returns 0."""
        r = s.reader[0]
        return And(s.read_pc[r] == READ.done, s.read_neg[r] == 1)
