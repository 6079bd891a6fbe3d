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
copy's store unpropagated when the reader loads the slot, 13 steps: a task
publishes on CPU 1 (``atomic64_cmpxchg_relaxed``), the reader's
``atomic64_read`` finds the new pointer, and its load of slot 1 (through the
pointer) the store before the copy. 17,664 states under ``lkmm``, 2,634
under ``sc``, 6,911 under ``tso``, as the hand-written pc machine had.

On ``percpu_lazy_publish`` the bug is the add redefined
(``lazy_percpu_counter_add``) with that one call changed; its switch's loop
drops the ``preempt_off=0`` variant (``preempt_off`` is 1 here).
"""
from checker import Param, invariant
from checker.kernel.memory import MEM
from checker.language.process import process
from checker.ordering.declare import MEMORY
from checker.specs.percpu_lazy import (PCPU, _added, _amounts, _freed, _into_published, _no_irq_inside, _reading,
                                               decode, encode_add, is_pcpu, mod_field, word_modulus)
from checker.specs.percpu_lazy_publish import PercpuLazyPublish


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
    preempt_off = Param(1, domain=(1,), doc="switch_to_pcpu with its preempt_disable()")

    # The port's add with one call changed; its lines up to the switch's loop head are the port's, so that the
    # control points the properties name (SLOW_LOOP, SWITCH_READ, SWITCH_LOOP) lie where they do there.
    @process(role="adders", calls="ops_left", args={"i": _amounts}, runs=_no_irq_inside)
    def lazy_percpu_counter_add(k, s, t, i):
        """percpu_lazy's add with its publishing cmpxchg made atomic64_cmpxchg_relaxed()."""
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
                    k.preempt_enable()                                  # the fix; return;
                return
            old = v
            with k.atomic():                                            # *this_cpu_ptr(pcpu_v) = atomic_val(v);
                k.update(s.spec.publishing(s, t, old, decode(old)))
                k.raw_cpu_write(s.slot, _into_published(s, s.task_cpu[t], old, decode(old)))
                v = k.atomic64_cmpxchg_relaxed(s.c_v, old, PCPU)        # (the bug) } while (v != old)
                s.publishes += 1 if v == old else 0
                s.retried = 1 if v != old and not is_pcpu(v) else s.retried
                if v == old:
                    k.preempt_enable()
            if v == old:
                return
