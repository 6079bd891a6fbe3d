# SPDX-License-Identifier: GPL-2.0-only
"""switch_to_pcpu() publishing the per-CPU pointer with a plain store.

lib/lazy-percpu-counter.c publishes with the cmpxchg loop::

    *this_cpu_ptr(pcpu_v) = lazy_percpu_counter_atomic_val(v);
    } while ((v = atomic64_cmpxchg(&c->v, old, new)) != old);

Written as "the counter is switching anyway, just set it"::

    *this_cpu_ptr(pcpu_v) = lazy_percpu_counter_atomic_val(v);
    c->v.counter = (unsigned long)pcpu_v | 1;        /* a plain store */

it is wrong before any memory model is involved: an atomic-mode add whose
cmpxchg lands between the switch's ``atomic64_read`` and the store is
overwritten (``no_update_lost``, under ``sc``), two racing switches both
publish and one's storage leaks (``mode_changes_once``,
``losers_free_their_storage``, ``nothing_leaks_at_exit``), nothing retries
(``a_publish_retries`` is never reached); and under ``lkmm`` the copy's
store is not ordered before the pointer's either (a plain store orders
nothing), so a reader finds the zeroed slot through the new pointer.

Under ``lkmm`` the claim that a per-CPU read sees the published copy is
violated too, and is named for it (``plain_publish_misorders_the_copy``;
under ``sc`` and ``tso`` it holds and keeps its name,
``read_sees_the_published_copy``): the message passing the plain store does
not order, 13 steps as the relaxed cmpxchg's (a task publishes on CPU 1, the
reader's ``atomic64_read`` finds the new pointer and its load of slot 1 the
store before the copy). And under ``lkmm`` the plain store of ``c->v`` races
with every ``atomic64_read()`` (``no_data_race``). Under ``tso`` x86 keeps
the copy's store before the pointer's, and a reader that finds a pointer
finds its publisher's copy. (The hand-written pc machine this spec replaces
reported the claim violated under ``tso`` too, after 21 steps: both CPUs
publish and the reader compared the first publisher's slot, whose pointer it
read, with the second publisher's copy; the port records the CPU the copy
went to, ``pub_cpu``, and compares that slot only.)

On ``percpu_lazy_publish`` the bug is the add redefined
(``lazy_percpu_counter_add``): the port's code up to the switch's loop head,
then a single publish, ``s.c_v = PCPU``, a plain store of the word (the
switch's loop head is kept as the control point the properties name; the
mutated code never goes round it). Shortest traces, the same lengths as the
pc machine's: ``no_update_lost`` after 14 steps (sc, tso; 11 under lkmm),
``mode_changes_once`` and ``losers_free_their_storage`` 18,
``nothing_leaks_at_exit`` 22 (25 under tso). States: 3,147 (sc), 12,033
(tso; the pc machine 11,735), 30,290 (lkmm; 30,988).
"""
from checker import Or, Param, invariant
from checker.kernel.memory import MEM
from checker.language.process import process
from checker.ordering.declare import MEMORY
from checker.specs.percpu_lazy import (PCPU, _added, _amounts, _freed, _no_irq_inside, _reading,
                                               decode, encode_add, is_pcpu, mod_field, word_modulus)
from checker.specs.percpu_lazy_publish import PercpuLazyPublish


class LazyPublishPlainStore(PercpuLazyPublish, expect_violated=(
        "no_update_lost", "mode_changes_once", "losers_free_their_storage", "nothing_leaks_at_exit",
        "read_exact_at_quiescence", "a_publish_retries", "plain_publish_misorders_the_copy", "no_data_race")):
    """L-K with the publishing cmpxchg replaced by a plain store of pcpu_v | 1."""

    kernel = PercpuLazyPublish.kernel + "; the publishing atomic64_cmpxchg replaced by a plain store"
    lemmas = None  # the word arithmetic is the correct spec's (proved there); the bug is the publish
    preempt_off = Param(1, domain=(1,), doc="switch_to_pcpu with its preempt_disable()")

    # Checked under every model (percpu_lazy declares it SC-only): the bug's trace is an SC run, which tso and
    # lkmm contain as well, so the bug is looked for there too, not passed as not_applicable.
    @invariant(applies=lambda p: p.readers > 0)
    def read_exact_at_quiescence(s):
        """A lazy_percpu_counter_read that no add overlapped returns E (no batching: it is exact)."""
        return Or(s.reader_pc[s.reader[0]] != 1, s.read_ok[s.reader[0]] == 1)

    @invariant(applies=lambda p: p.readers > 0 and p.memory != MEMORY.lkmm)
    def read_sees_the_published_copy(s):
        """A per-CPU read reads at least the copy in the publisher's slot (sc, and tso, which keeps the copy's
        store before the pointer's: holds, the bug is elsewhere)."""
        return s.read_stale == 0

    @invariant(applies=lambda p: p.readers > 0 and p.memory == MEMORY.lkmm)
    def plain_publish_misorders_the_copy(s):
        """read_sees_the_published_copy under lkmm, false on purpose: a reader finds the pointer and, through it,
        the publisher's slot older than its copy."""
        return s.read_stale == 0

    # The port's add with the switch's loop replaced; its lines up to the loop's head are the port's, so that the
    # control points the properties name (SLOW_LOOP, SWITCH_READ, SWITCH_LOOP) lie where they do there.
    @process(role="adders", calls="ops_left", args={"i": _amounts}, runs=_no_irq_inside)
    def lazy_percpu_counter_add(k, s, t, i):
        """percpu_lazy's add with its publishing cmpxchg loop made a plain store."""
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
        while True:                                                     # (the bug: no loop; its head kept)
            if is_pcpu(v):
                with k.atomic():                                        # free_percpu(pcpu_v);
                    k.update(_freed(s, "alloc", t))
                    k.preempt_enable()                                  # preempt_enable(); return;
                return
            with k.atomic():                                            # *this_cpu_ptr(pcpu_v) = atomic_val(v);
                k.raw_cpu_write(s.slot, decode(v))
                s.c_v = PCPU                                            # (the bug) c->v.counter = pcpu_v | 1;
                s.publishes += 1
                s.pub_copy = decode(v)
                s.pub_cpu = s.task_cpu[t]
                k.preempt_enable()                                      # preempt_enable();
            return
