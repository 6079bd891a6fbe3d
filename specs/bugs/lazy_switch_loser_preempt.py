# SPDX-License-Identifier: GPL-2.0-only
"""lazy_percpu_counter_switch_to_pcpu() as posted: the race loser returns with preemption off.

Kent Overstreet's code (koverstreet/bcachefs lib/lazy-percpu-counter.c, and
ZhangPeng's RFC 1/3) frees the loser's allocation and returns from inside
the ``preempt_disable()`` region::

    preempt_disable();
    v = atomic64_read(&c->v);
    do {
            if (lazy_percpu_counter_is_pcpu(v)) {
                    free_percpu(pcpu_v);
                    return;                 /* preempt_enable() skipped */
            }
            ...
    } while ((v = atomic64_cmpxchg(&c->v, old, new)) != old);
    preempt_enable();

The reference infers it (K-LAZY-PREEMPT); the checker confirms it: with two
CPUs whose adds both see a zero modification field within a second, the one
whose publishing cmpxchg finds the word already per-CPU returns from
``lazy_percpu_counter_add`` with ``preempt_count() == 1`` ("scheduling while
atomic" at its next sleep). Nothing is lost or leaked: the value and the
memory properties hold. RFC 2/3 replaced the ``return`` with ``break``;
``specs/percpu_lazy.py`` has the fix, and this spec takes it out
(``loser_enables_preemption = False``: the loser's step frees and returns).
Shortest trace (24 steps): both tasks' adds wrap the one-bit modification
field, both allocate; task 2 publishes, task 3's ``preempt_disable()`` and
``atomic64_read`` find the word per-CPU, and its ``free_percpu(pcpu_v)``
step returns with ``pcount[3] == 1``.
"""
from checker import Param
from checker.specs.percpu_lazy import PercpuLazy


class LazySwitchLoserPreempt(PercpuLazy, expect_violated=("preempt_balanced_on_return", "context_restored")):
    """L-K as posted: the switch loser's free_percpu(pcpu_v); return; inside preempt_disable()."""

    kernel = ("koverstreet/bcachefs lib/lazy-percpu-counter.c (79ded5acf1ac) = ZhangPeng RFC 1/3, as posted: "
              "lazy_percpu_counter_add, _add_slowpath, switch_to_pcpu, _read, _exit")

    lemmas = None  # (the word lemmas are percpu_lazy's; this bug is not in the word)
    explore_sweeps = ({},)  # (the liveness point is percpu_lazy's)
    mod_bits = Param(1, domain=range(0, 9), explore=(1,), doc="COUNTER_MOD_BITS (8 in the kernel)")
    neg = Param(0, domain=(0, 1), doc="1: amounts +1 and -1")
    readers = Param(0, domain=(0, 1), doc="a CPU doing one lazy_percpu_counter_read")
    loser_enables_preemption = False  # (the bug) free_percpu(pcpu_v); return;  (preempt_enable() skipped)
