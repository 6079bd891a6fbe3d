# SPDX-License-Identifier: GPL-2.0-only
"""The per-CPU cache of vmapped thread stacks (kernel/fork.c, CONFIG_VMAP_STACK; seed 003).

NR_CACHED_STACKS slots per CPU. alloc_thread_stack_node() takes a cached
stack with this_cpu_xchg, else vmallocs one: alloc_vmap_area() inserts it
under vmap_area_lock and, before Khlebnikov's __vmalloc_area() change,
find_vm_area() looked it up again under the same lock. free_thread_stack()
puts the stack back into a free slot, else vfree()s it (one vmap_area_lock
acquisition when the lazily freed area is purged, counted per stack). From
5.18 on (``rcu_retry``) a free that finds no slot goes through call_rcu:
thread_stack_free_rcu() tries the slots once more before vfree, so a miss
costs 2 * NR_CACHED_STACKS cmpxchgs (specs/stack_cache.py); before, it was
vfree_atomic() at once (specs/stack_cache_2019.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import VMAP_AREA_LOCK, Costs

NR_CACHED_STACKS = 2


@dataclass
class StackCache:
    ncpus: int
    find_vm_area: bool = True   # True: before the __vmalloc_area change
    rcu_retry: bool = False     # True: 5.18+, a missed free retries the slots in thread_stack_free_rcu
    nr: int = NR_CACHED_STACKS  # slots per CPU
    slots: list[list[int]] = field(default_factory=list)
    _next: int = 1

    def __post_init__(self) -> None:
        self.slots = self.slots or [[0] * self.nr for _ in range(self.ncpus)]

    def alloc(self, cpu: int) -> tuple[int, Costs]:
        for i, s in enumerate(self.slots[cpu]):
            if s:
                self.slots[cpu][i] = 0  # this_cpu_xchg(cached_stacks[i], NULL)
                return s, Costs(local_ops=i + 1)
        stack, self._next = self._next, self._next + 1
        cost = Costs(local_ops=self.nr).lock(VMAP_AREA_LOCK)
        if self.find_vm_area:
            cost.lock(VMAP_AREA_LOCK)
        return stack, cost

    def free(self, cpu: int, stack: int) -> Costs:
        for i, s in enumerate(self.slots[cpu]):
            if not s:
                self.slots[cpu][i] = stack  # this_cpu_cmpxchg(cached_stacks[i], NULL, vm)
                return Costs(local_ops=i + 1)
        tries = self.nr * (2 if self.rcu_retry else 1)
        return Costs(local_ops=tries).lock(VMAP_AREA_LOCK)


def clone_burst(cache: StackCache, cpu: int, live: int) -> Costs:
    """One worker's cycle: ``live`` clones whose children stay alive, then all of them reaped on the
    same CPU. Only NR_CACHED_STACKS of the frees find a slot, so most allocations vmalloc."""
    cost = Costs()
    stacks = []
    for _ in range(live):
        s, c = cache.alloc(cpu)
        stacks.append(s)
        cost += c
    for s in stacks:
        cost += cache.free(cpu, s)
    return cost
