# SPDX-License-Identifier: GPL-2.0-only
"""switch_to_pcpu() publishing the per-CPU pointer with ``atomic64_cmpxchg_relaxed()``.

lib/lazy-percpu-counter.c (koverstreet/bcachefs, = ZhangPeng RFC 1/3)::

    *this_cpu_ptr(pcpu_v) = lazy_percpu_counter_atomic_val(v);
    } while ((v = atomic64_cmpxchg(&c->v, old, new)) != old);

The value-returning ``atomic64_cmpxchg()`` is fully ordered: the copy's
plain store is visible to every CPU before the pointer is. The tempting
"it is only a pointer swap" edit to ``atomic64_cmpxchg_relaxed()`` drops
that: under LKMM the copy may propagate after the pointer, and a
``lazy_percpu_counter_read()`` on another CPU that reads the pointer
(``atomic64_read``) and then, through the address dependency, the
publisher's slot, finds the zeroed storage: the read misses every add made
before the switch. Not under ``sc`` (every step is seen at once) and not
under ``tso``: on x86 a relaxed cmpxchg is still ``LOCK CMPXCHG``, which
drains the store buffer. Found under ``lkmm`` with the trace that shows the
copy's store unpropagated when the reader loads the slot. (Under ``tso`` the
engine reports it today for the correct code as well: it buffers a store
listed before a LOCKed Rmw of the same step after that Rmw; see
docs/weak-memory.md, "The seeds under weak memory".)
"""
from checker import NOBODY, And, If, Rmw, Store, action, invariant
from checker.ordering.declare import MEMORY
from checker.specs.percpu_lazy import C_V, decode, switch_cmpxchg_with
from checker.specs.percpu_lazy_publish import PercpuLazyPublish, _with


class LazyPublishRelaxed(PercpuLazyPublish, expect_violated=("relaxed_publish_misorders_the_copy",)):
    """L-K with the publishing cmpxchg made atomic64_cmpxchg_relaxed()."""

    # The bug shows under lkmm only: there the expected violation is named; under sc and tso (x86's LOCK CMPXCHG)
    # read_sees_the_published_copy is claimed and holds (issue 29: --memory tso exits 0).
    @invariant(applies=lambda p: p.readers > 0 and p.memory != MEMORY.lkmm)
    def read_sees_the_published_copy(s):
        """A per-CPU read reads at least the copy in the publisher's slot (sc, tso)."""
        return s.read_stale == 0

    @invariant(applies=lambda p: p.readers > 0 and p.memory == MEMORY.lkmm)
    def relaxed_publish_misorders_the_copy(s):
        """read_sees_the_published_copy under lkmm, false on purpose: the reader finds the new pointer and the
        publisher's slot one store old."""
        return s.read_stale == 0

    kernel = PercpuLazyPublish.kernel + "; the publishing atomic64_cmpxchg made atomic64_cmpxchg_relaxed"
    explore_sweeps = ({"ncpus": 2, "mod_bits": 0, "neg": 0, "readers": 1, "memory": MEMORY.lkmm},)
    lemmas = None  # the word arithmetic is the correct spec's (proved there); the bug is in the ordering

    @action(role="adders", access=(Store("slot", "plain"), Rmw(C_V, "relaxed")))
    def switch_cmpxchg(s, cpu):
        """(the bug) v = atomic64_cmpxchg_relaxed(&c->v, old, pcpu_v | 1): the copy's store is not ordered
        before the pointer's."""
        ok = And(s.published == NOBODY, s.word == s.v[cpu])
        return _with(switch_cmpxchg_with(s, cpu, decode), pub_copy=If(ok, s.copy[cpu], s.pub_copy))
