# SPDX-License-Identifier: GPL-2.0-only
"""mm/percpu.c as the counters see it: which lock each step of an allocation or a free holds.

``pcpu_alloc()`` (read from mm/percpu.c, v6.6 to v6.12): ``is_atomic = (gfp &
GFP_KERNEL) != GFP_KERNEL``. A GFP_KERNEL caller takes ``pcpu_alloc_mutex``
(``mutex_lock_killable``) first; then, nested inside it, ``pcpu_lock``
(``spin_lock_irqsave``) around ``pcpu_find_block_fit()`` and
``pcpu_alloc_area()``; after ``pcpu_lock`` is dropped and still under the
mutex, the walk of ``chunk->populated`` for the new area's pages
(``for_each_clear_bitrange_from``: nothing to populate in the steady state);
then ``mutex_unlock``; then, outside both locks, ``memset`` of the area on
every possible CPU. A GFP_ATOMIC caller (the lazy counters' switch) takes
``pcpu_lock`` only. ``free_percpu()``: ``pcpu_lock`` (irqsave) around
``pcpu_chunk_addr_search()`` and ``pcpu_free_area()``, no mutex.
``pcpu_balance_workfn()`` takes both, but only when the populated free pages
run low or a chunk becomes wholly free: never in a steady alloc/free cycle,
so it is not a step here.

So the mutex is held for the pcpu_lock section plus a bitmap walk: the two
locks are not two halves of one hold time (the 50/50 prior this replaces),
the mutex's hold *contains* the allocation's pcpu_lock section, and frees
compete for pcpu_lock alone. The cost record says so with ``nested``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import PCPU_ALLOC_MUTEX, PCPU_LOCK, Costs

#: Work units, priced by the throughput model: one area search + alloc or one free under pcpu_lock
#: (``h_pcpu``), one populated-bitmap walk under the mutex alone (prior ``t_populate_check``).
AREA_OP = 1
POPULATE_CHECK = 1


@dataclass
class PercpuAllocator:
    """Live per-cpu areas by handle; every area is ``size`` bytes on each of ``ncpus`` possible CPUs."""

    ncpus: int
    areas: dict[int, list[int]] = field(default_factory=dict)  # handle -> zeroed words, ncpus * nwords
    _next: int = 8  # handles are 8-aligned, like real per-cpu pointers (bit 0 free for the lazy word)

    def alloc(self, nwords: int, *, atomic: bool = False, ok: bool = True) -> tuple[int | None, Costs]:
        """__alloc_percpu_gfp(nwords * 4, ...): a zeroed area, or None when ``ok`` is False. ``atomic``:
        a gfp without GFP_KERNEL's __GFP_DIRECT_RECLAIM|__GFP_IO|__GFP_FS (GFP_ATOMIC, GFP_NOWAIT)."""
        c = Costs(pcpu_allocs=1, irq_saves=1)  # spin_lock_irqsave(&pcpu_lock, flags)
        if not atomic:
            c.lock(PCPU_ALLOC_MUTEX, work=POPULATE_CHECK)
            c.lock(PCPU_LOCK, work=AREA_OP, inside=PCPU_ALLOC_MUTEX)
        else:
            c.lock(PCPU_LOCK, work=AREA_OP)
        if not ok:
            return None, c
        handle = self._next
        self._next += 8 * max(1, nwords)
        self.areas[handle] = [0] * (nwords * self.ncpus)
        c.cpu_work += self.ncpus  # for_each_possible_cpu(cpu) memset(...): after both unlocks
        return handle, c

    def free(self, handle: int | None) -> Costs:
        """free_percpu(handle); free_percpu(NULL) is a no-op."""
        if handle is None:
            return Costs()
        if handle not in self.areas:
            raise ValueError(f"free_percpu({handle:#x}): not a live per-cpu area (double free?)")
        del self.areas[handle]
        return Costs(pcpu_frees=1, irq_saves=1).lock(PCPU_LOCK, work=AREA_OP)
