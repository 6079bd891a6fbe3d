# SPDX-License-Identifier: GPL-2.0-only
"""__percpu_counter_limited_add() can go past its limit.

The v6.6 code (beb986862844, shmem's only caller) promises in its comment to
"add amount if total is less than or equal to limit". Its lockless fast path
checks ``fbc->count + batch * num_online_cpus() <= limit`` and its slow path
sums every CPU's local under ``fbc->lock``; but that sum is no snapshot. A
fast-path add on another CPU that passed its check before the sum read its
local lands after it, uncounted, and the slow path adds on top: the total
ends above the limit. With 2 CPUs and batch 2 (limit 4) the shortest trace
ends at 5. By how much it can go over is bounded in ``percpu_eager``
(``limit_exceeded_by_at_most_racing_adds``: ncpus - 1, for adds of 1) and,
for shmem's larger amounts, in ``percpu_eager_calls``
(``limit_overshoot_bounded``: (ncpus - 1) * min(amount, 2 * batch - 1),
reached). The code has been
called buggy on the list (Mateusz Guzik, and the KCSAN report K-LIMITED-RACE
on the same fast path); shmem tolerates a few blocks over its limit.
"""
from checker import Param, invariant
from checker.specs.percpu_eager import PercpuEager


class EagerLimitedOvershoot(PercpuEager, expect_violated=("limit_respected",)):
    """__percpu_counter_limited_add() as in v6.6, against the limit its comment promises."""

    kernel = "lib/percpu_counter.c __percpu_counter_limited_add (v6.6, beb986862844)"
    explore_sweeps = ({},)
    limited = Param(1, domain=(1,), doc="positive adds are __percpu_counter_limited_add(fbc, limit, 1, batch)")
    ncpus = Param(2, domain=range(2, 8193), explore=(2, 3), doc="CPUs (the race needs two)")
    batch = Param(2, domain=range(1, 1 << 31), doc="the batch")
    ops = Param(lambda p: p.batch + 1, domain=range(0, 1 << 16), doc="adds per task: enough to reach the limit")
    readers = Param(0, domain=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(0, domain=(0, 1), doc="CPUs doing one __percpu_counter_sum")

    @invariant(applies=lambda p: p.limited and not p.irq)
    def limit_respected(s):
        """limited_add's comment: the total never goes beyond the limit (the only positive adds are
        limited ones)."""
        return s.exact <= s.limit
