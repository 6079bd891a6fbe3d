# SPDX-License-Identifier: GPL-2.0-only
"""What one model operation costs: the events the throughput model prices.

A cost record counts events, not nanoseconds: acquisitions of each lock, the
work done while holding each global lock (in units that scale with the
possible CPUs or with the items handled), per-cpu allocations and frees, the
per-possible-CPU work done outside any global lock, and read-modify-writes
on cache lines other CPUs also write. Pricing is the throughput model's job
(models/throughput.py), so the same record serves every machine.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields

# Global locks the seeds name (reference sections 1.6, 6, 7).
PCPU_ALLOC_MUTEX = "pcpu_alloc_mutex"          # mm/percpu.c, GFP_KERNEL allocations only
PCPU_LOCK = "pcpu_lock"                        # mm/percpu.c spinlock: area map, alloc and free
PERCPU_COUNTERS_LOCK = "percpu_counters_lock"  # lib/percpu_counter.c, CONFIG_HOTPLUG_CPU list
I_MMAP_RWSEM = "i_mmap_rwsem"                  # the shared file's mapping (ld.so in doexec-shared)
VMAP_AREA_LOCK = "vmap_area_lock"              # mm/vmalloc.c
LRUVEC_LOCK = "lruvec_lock"                    # folio_lruvec_lock_irqsave in release_pages
GLOBAL_LOCKS = (PCPU_ALLOC_MUTEX, PCPU_LOCK, PERCPU_COUNTERS_LOCK, I_MMAP_RWSEM, VMAP_AREA_LOCK, LRUVEC_LOCK)
# A per-object lock: counted, but it contends only between users of one counter.
FBC_LOCK = "fbc->lock"


@dataclass
class Costs:
    """Events of one or more operations; ``+`` adds records, ``*`` repeats one."""

    locks: Counter = field(default_factory=Counter)      # lock name -> acquisitions
    held: Counter = field(default_factory=Counter)       # lock name -> work units done holding it (and no inner lock)
    pcpu_allocs: int = 0
    pcpu_frees: int = 0
    cpu_work: int = 0       # per-possible-CPU steps outside every global lock (memset, sum loops)
    shared_rmw: int = 0     # atomic RMWs on cache lines other CPUs write (LOCK-prefixed ops)
    local_ops: int = 0      # this_cpu_* ops and plain private stores
    irq_saves: int = 0      # local_irq_save/restore pairs (pushf; cli ... popf)
    local_cmpxchg: int = 0  # non-LOCKed this_cpu_cmpxchg attempts, failed ones included
    nested: Counter = field(default_factory=Counter)     # (outer, inner) -> sections of inner taken inside outer
    line_rmw: Counter = field(default_factory=Counter)   # a global variable's line -> RMWs on it by every CPU

    def __add__(self, other: Costs) -> Costs:
        return Costs(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __mul__(self, n: int) -> Costs:
        def rep(v):
            return Counter({k: x * n for k, x in v.items()}) if isinstance(v, Counter) else v * n
        return Costs(**{f.name: rep(getattr(self, f.name)) for f in fields(self)})

    def lock(self, name: str, work: int = 1, inside: str | None = None) -> Costs:
        """Record one acquisition of ``name`` (itself an RMW on the lock's shared line) and ``work``
        units done under it; ``inside``: the lock already held around it (a nested section)."""
        self.locks[name] += 1
        self.held[name] += work
        self.shared_rmw += 1
        if inside is not None:
            self.nested[(inside, name)] += 1
        return self


def total(records: list[Costs]) -> Costs:
    out = Costs()
    for r in records:
        out = out + r
    return out
