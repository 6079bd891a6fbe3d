# SPDX-License-Identifier: GPL-2.0-only
"""An atomic-mode percpu_counter: ZhangPeng's RFC v2 (reference section 4.7), on concrete values.

``counters == NULL`` means atomic mode: an add is ``atomic64_add`` on ``fbc->count`` (a LOCK-prefixed
RMW), a read or a sum is one load. ``mm_init`` allocates nothing; when the mm's second thread is
created, ``percpu_counter_switch_to_pcpu_many`` allocates every counter's per-CPU storage at once
(GFP_ATOMIC|__GFP_ZERO under local_irq_save: ``pcpu_lock`` only) and keeps the count, after which an
add is the eager counter's (variant B). ``destroy_many`` frees the storage if it was allocated. No
spec of this design exists in specs/ (its lost-update question is open, reference 4.7); its pieces
are the eager counter and the allocator, each checked against their specs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import Costs
from .eager import EagerCounter
from .percpu_alloc import PercpuAllocator


@dataclass
class AtomicModeGroup:
    """``n`` counters of one mm (mm->rss_stat), atomic until switched."""

    alloc: PercpuAllocator
    n: int
    batch: int
    counts: list[int] = field(default_factory=list)
    pcpu: list[EagerCounter] | None = None
    handle: int | None = None

    def __post_init__(self) -> None:
        self.counts = self.counts or [0] * self.n

    def add(self, k: int, cpu: int, amount: int) -> Costs:
        if self.pcpu is not None:
            return Costs(local_ops=1) + self.pcpu[k].add(cpu, amount)  # the counters != NULL test
        self.counts[k] += amount
        return Costs(local_ops=1, shared_rmw=1)  # atomic64_add(amount, &fbc->count_atomic)

    def switch_to_pcpu(self) -> Costs:
        """percpu_counter_switch_to_pcpu_many(fbc, n): one zeroed GFP_ATOMIC allocation for all n."""
        if self.pcpu is not None:
            return Costs(local_ops=1)
        cost = Costs(irq_saves=1)
        self.handle, c = self.alloc.alloc(self.n, atomic=True)
        cost += c
        self.pcpu = [EagerCounter(self.alloc.ncpus, self.batch, "B", count=v) for v in self.counts]
        return cost

    def sum(self, k: int) -> tuple[int, Costs]:
        if self.pcpu is None:
            return self.counts[k], Costs(local_ops=1)
        return self.pcpu[k].sum()

    def destroy(self) -> Costs:
        if self.pcpu is None:
            return Costs(local_ops=1)
        cost = self.alloc.free(self.handle)
        self.pcpu, self.handle = None, None
        return cost
