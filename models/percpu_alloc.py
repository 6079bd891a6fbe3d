"""mm/percpu.c as the counters see it: what one allocation or free costs.

``pcpu_alloc()``: a GFP_KERNEL caller takes ``pcpu_alloc_mutex`` for the whole
allocation; inside it, ``pcpu_lock`` (a spinlock, irqsave) around the chunk
and area search; after both are dropped, ``memset`` of the new area on every
possible CPU. A GFP_ATOMIC caller (the lazy counter's switch) skips the
mutex. ``free_percpu()``: ``pcpu_lock`` around ``pcpu_free_area()``, no
mutex. The area search does not scale with the CPU count (the map is per
unit), so only the memset does, and it runs outside both locks: more CPUs
make an allocation slower, not the lock held longer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import PCPU_ALLOC_MUTEX, PCPU_LOCK, Costs


@dataclass
class PercpuAllocator:
    """Live per-cpu areas by handle; every area is ``size`` bytes on each of ``ncpus`` possible CPUs."""

    ncpus: int
    areas: dict[int, list[int]] = field(default_factory=dict)  # handle -> zeroed words, ncpus * nwords
    _next: int = 8  # handles are 8-aligned, like real per-cpu pointers (bit 0 free for the lazy word)

    def alloc(self, nwords: int, *, atomic: bool = False, ok: bool = True) -> tuple[int | None, Costs]:
        """__alloc_percpu_gfp(nwords * 4, ...): a zeroed area, or None when ``ok`` is False."""
        c = Costs(pcpu_allocs=1)
        if not atomic:
            c.lock(PCPU_ALLOC_MUTEX)
        c.lock(PCPU_LOCK)
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
        return Costs(pcpu_frees=1).lock(PCPU_LOCK)
