# SPDX-License-Identifier: GPL-2.0-only
"""mm_init() / __mmdrop()'s rss counters: grouped (14ef95be6f55) or one by one (f1a7941243c1).

Follows specs/percpu_grouped.py's ladder: allocate_mm, mm_alloc_pgd,
init_new_context, mm_alloc_cid (a per-cpu allocation; absent from
f1a7941243c1's ladder, present in 6.6's), then the rss counters as one
group or NR_MM_COUNTERS separate allocations, each listed on
percpu_counters under percpu_counters_lock. The unwind labels undo exactly
what was set up. ``fail_at`` (1-based, counting allocation attempts as the
spec does) makes that attempt fail.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import Costs
from .eager import EagerCounter, default_batch, destroy_many, init_many
from .percpu_alloc import PercpuAllocator

NR_MM_COUNTERS = 4


@dataclass
class Mm:
    """The parts of an mm_struct whose allocation mm_init does: the names of what is live."""

    live: set[str] = field(default_factory=set)
    rss: list[EagerCounter] = field(default_factory=list)
    handles: list[int | None] = field(default_factory=list)  # per-cpu bases: one (grouped) or one per counter
    cid: int | None = None


@dataclass
class MmInit:
    """One configuration of mm_init/__mmdrop over a shared per-cpu allocator."""

    alloc: PercpuAllocator
    grouped: bool = True
    with_cid: bool = True          # mm_alloc_cid: 6.6's ladder has it, f1a7941243c1's does not
    hotplug: bool = True           # CONFIG_HOTPLUG_CPU: counters are listed on percpu_counters
    counters: int = NR_MM_COUNTERS  # 0: the rss counters need no per-cpu storage (split, lazy)
    ctor: bool = False             # Harry Yoo's RFC: cid and counters allocated by the slab constructor
    slab_objects: int = 16         # mm_structs per new slab (each constructed when the slab is made)
    _free: list = field(default_factory=list)  # constructed mm_structs in the slab, not in use

    def _construct(self) -> Costs:
        """A new slab: the constructor allocates each object's pcpu_cid and rss counters (GFP_KERNEL)."""
        cost = Costs()
        for _ in range(self.slab_objects):
            obj = Mm()
            obj.cid, c = self.alloc.alloc(1)
            cost += c
            if self.counters:
                counters, handle, c = init_many(self.alloc, self.counters, default_batch(self.alloc.ncpus),
                                                hotplug=self.hotplug)
                cost += c
                obj.rss, obj.handles = counters, [handle]
            self._free.append(obj)
        return cost

    def _mm_init_ctor(self) -> tuple[Mm, Costs]:
        cost = self._construct() if not self._free else Costs()
        mm = self._free.pop()
        mm.live |= {"mm", "pgd", "context", "cid"}
        cost.cpu_work += self.alloc.ncpus  # mm_init_cid(): for_each_possible_cpu, cid = MM_CID_UNSET
        return mm, cost

    def mm_init(self, fail_at: int = 0) -> tuple[Mm | None, Costs]:
        """dup_mm()/mm_alloc() then mm_init(): the mm, or None after the unwind."""
        attempt = 0

        def ok() -> bool:
            nonlocal attempt
            attempt += 1
            return attempt != fail_at

        if self.ctor:
            if fail_at:
                raise ValueError("the constructor variant's unwind is not modelled")
            return self._mm_init_ctor()
        mm, cost = Mm(), Costs()
        for obj in ("mm", "pgd", "context"):  # slab / page allocations: no global lock of ours
            if not ok():
                return self._unwind(mm, cost)
            mm.live.add(obj)
        if self.with_cid:
            mm.cid, c = self.alloc.alloc(1, ok=ok())
            cost += c
            if mm.cid is None:
                return self._unwind(mm, cost)
            mm.live.add("cid")
            cost.cpu_work += self.alloc.ncpus  # mm_init_cid(): for_each_possible_cpu, cid = MM_CID_UNSET
        batch = default_batch(self.alloc.ncpus)
        if self.counters == 0:  # split rss or lazy counters: mm_init allocates no rss storage
            return mm, cost
        if self.grouped:
            counters, handle, c = init_many(self.alloc, self.counters, batch, hotplug=self.hotplug, ok=ok())
            cost += c
            if counters is None:
                return self._unwind(mm, cost)
            mm.rss, mm.handles = counters, [handle]
        else:
            for _ in range(self.counters):
                counters, handle, c = init_many(self.alloc, 1, batch, hotplug=self.hotplug, ok=ok())
                cost += c
                if counters is None:
                    return self._unwind(mm, cost)
                mm.rss += counters
                mm.handles.append(handle)
        return mm, cost

    def _unwind(self, mm: Mm, cost: Costs) -> tuple[None, Costs]:
        """fail_pcpu (per-counter form: destroy rss_stat[i-1..0]), fail_cid, fail_nocontext, fail_nopgd."""
        for handle in reversed(mm.handles):
            cost += destroy_many(self.alloc, handle, 1, hotplug=self.hotplug)
        mm.handles.clear()
        if "cid" in mm.live:
            cost += self.alloc.free(mm.cid)
        mm.live.clear()
        return None, cost

    def mmdrop(self, mm: Mm) -> Costs:
        """__mmdrop(): ..., check_mm (sum every counter), mm_destroy_cid, destroy the counters, free_mm."""
        cost = Costs()
        for ctr in mm.rss:
            value, c = ctr.sum()
            cost += c
            if value:
                raise AssertionError(f"BUG: Bad rss-counter state val:{value}")
        if self.ctor:  # free_mm(): back to the slab, its per-cpu memory kept (zero, as check_mm proved)
            mm.live.clear()
            self._free.append(mm)
            return cost
        if mm.cid is not None:
            cost += self.alloc.free(mm.cid)
        n = self.counters if self.grouped else 1
        for handle in mm.handles:
            cost += destroy_many(self.alloc, handle, n, hotplug=self.hotplug)
        mm.live.clear()
        mm.handles.clear()
        return cost
