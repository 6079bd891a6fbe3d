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

Under ``tso`` and ``lkmm`` the claim that a per-CPU read sees the published
copy is violated too, and is named for it
(``plain_publish_misorders_the_copy``; under ``sc`` it holds and keeps its
name, ``read_sees_the_published_copy``). Under ``lkmm`` it is the message
passing the plain store does not order (13 steps, as the relaxed cmpxchg's).
Under ``tso`` (x86 keeps stores in order) it needs the bug's second publish:
both CPUs publish, the reader finds the first pointer in memory while the
second waits in CPU 0's store buffer, and reads slots the second publisher
has already rewritten (the spec keeps one set of slots for "the published
storage": two published storages exist only because of the bug). And under
``lkmm`` the plain store of ``c->v`` races with every ``atomic64_read()``
(``no_data_race``).
"""
from checker import Or, Store, action, invariant, when
from checker.ordering.declare import MEMORY
from checker.specs.percpu_lazy import ADD, C_V, READ
from checker.specs.percpu_lazy_publish import PercpuLazyPublish


class LazyPublishPlainStore(PercpuLazyPublish, expect_violated=(
        "no_update_lost", "mode_changes_once", "losers_free_their_storage", "nothing_leaks_at_exit",
        "read_exact_at_quiescence", "a_publish_retries", "plain_publish_misorders_the_copy", "no_data_race")):
    """L-K with the publishing cmpxchg replaced by a plain store of pcpu_v | 1."""

    kernel = PercpuLazyPublish.kernel + "; the publishing atomic64_cmpxchg replaced by a plain store"
    lemmas = None  # the word arithmetic is the correct spec's (proved there); the bug is the publish

    # Checked under every model (percpu_lazy declares it SC-only): the bug's trace is an SC run, which tso and
    # lkmm contain as well, so the bug is looked for there too, not passed as not_applicable.
    @invariant(applies=lambda p: p.readers > 0 and p.bits == 64)
    def read_exact_at_quiescence(s):
        """A lazy_percpu_counter_read that no add overlapped returns E (no batching: it is exact)."""
        return Or(s.read_pc[s.reader[0]] != READ.done, s.read_ok[s.reader[0]] == 1)

    @invariant(applies=lambda p: p.readers > 0 and p.memory == MEMORY.sc)
    def read_sees_the_published_copy(s):
        """A per-CPU read reads at least the copy in the publisher's slot (sc: holds, the bug is elsewhere)."""
        return s.read_stale == 0

    @invariant(applies=lambda p: p.readers > 0 and p.memory != MEMORY.sc)
    def plain_publish_misorders_the_copy(s):
        """read_sees_the_published_copy under tso and lkmm, false on purpose: a reader finds a pointer and, through
        it, a slot older than that publisher's copy."""
        return s.read_stale == 0

    @action(role="adders", access=(Store("slot", "plain"), Store(C_V, "plain")))
    def switch_cmpxchg(s, cpu):
        """(the bug) c->v = pcpu_v | 1: publishes whatever the word holds now; the copy is the value read."""
        return when(s.pc[cpu] == ADD.sw_cmpxchg, published=cpu, word=0, publishes=s.publishes + 1,
                    slot={cpu: s.copy[cpu]}, pub_copy=s.copy[cpu], copy={cpu: 0}, v={cpu: 0},
                    preempt={cpu: s.preempt[cpu] - 1}, pc={cpu: ADD.idle})
