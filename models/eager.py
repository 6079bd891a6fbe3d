# SPDX-License-Identifier: GPL-2.0-only
"""The eager percpu_counter (lib/percpu_counter.c) on concrete values.

One object per ``struct percpu_counter``: ``count`` (fbc->count) and one
local per possible CPU. Each method is one whole call made by one CPU
without interleaving, and returns the costs it incurred; the spec
(specs/percpu_eager.py) splits the same call into its atomic steps, and
tests/test_models.py checks that both end in the same state with the same
lock acquisitions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import FBC_LOCK, PERCPU_COUNTERS_LOCK, Costs
from .percpu_alloc import PercpuAllocator

VARIANTS = ("A", "B", "C")


def default_batch(ncpus: int) -> int:
    """percpu_counter_batch = max(32, 2 * num_online_cpus())."""
    return max(32, 2 * ncpus)


@dataclass
class EagerCounter:
    ncpus: int
    batch: int
    variant: str = "B"
    count: int = 0
    local: list[int] = field(default_factory=list)
    lock_name: str = FBC_LOCK   # a global counter's (nr_files) lock is a global lock

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r}: one of {', '.join(VARIANTS)}")
        if not self.local:
            self.local = [0] * self.ncpus

    def add(self, cpu: int, amount: int, retries: int = 0) -> Costs:
        """percpu_counter_add_batch(fbc, amount, batch) on ``cpu``: a local add while
        |local + amount| < batch, else fold local + amount into count under fbc->lock.

        What each variant pays (reference section 1.2): A: preempt_disable/enable around a plain read and
        an irq-safe this_cpu_add, or raw_spin_lock_irqsave for the fold; B: local_irq_save/restore around
        the whole add; C: this_cpu_read, then this_cpu_try_cmpxchg (no LOCK prefix) that fails when an
        interrupt or a migration changed the local since the read: ``retries`` such failures (C only: the
        interrupting add is a call of its own, made before this one)."""
        if retries and self.variant != "C":
            raise ValueError(f"variant {self.variant}: only C's cmpxchg loop retries")
        c = self.local[cpu] + amount
        if self.variant == "A":
            cost = Costs(local_ops=3)       # preempt_disable, __this_cpu_read, preempt_enable
        elif self.variant == "B":
            cost = Costs(local_ops=1, irq_saves=1)  # local_irq_save; __this_cpu_read; ... local_irq_restore
        else:
            cost = Costs(local_ops=1)       # this_cpu_read
        if abs(c) < self.batch:
            self.local[cpu] = c
            if self.variant == "C":
                cost.local_cmpxchg += 1 + retries
            else:
                cost.local_ops += 1          # this_cpu_add
            return cost
        if self.variant != "B":
            cost.irq_saves += 1              # raw_spin_lock_irqsave (B's interrupts are already off)
        cost.local_ops += 1 + (self.variant == "C")  # __this_cpu_sub (C re-reads the local first)
        cost.lock(self.lock_name)
        self.count += c
        self.local[cpu] = 0
        return cost

    def read(self) -> int:
        """percpu_counter_read(): one load of fbc->count."""
        return self.count

    def sum(self) -> tuple[int, Costs]:
        """__percpu_counter_sum(): count plus every CPU's local, under fbc->lock."""
        cost = Costs(cpu_work=self.ncpus, irq_saves=1).lock(self.lock_name, work=self.ncpus)  # raw_spin_lock_irqsave
        return self.count + sum(self.local), cost

    def exact(self) -> int:
        return self.count + sum(self.local)


def init_many(alloc: PercpuAllocator, n: int, batch: int, *, hotplug: bool = True,
              ok: bool = True) -> tuple[list[EagerCounter] | None, int | None, Costs]:
    """__percpu_counter_init_many(fbc, 0, GFP_KERNEL, n): one allocation of n s32 per CPU, then
    (CONFIG_HOTPLUG_CPU) one percpu_counters_lock section listing all n. All or nothing."""
    handle, cost = alloc.alloc(n, ok=ok)
    if handle is None:
        return None, None, cost
    if hotplug:
        cost.lock(PERCPU_COUNTERS_LOCK, work=n)
    return [EagerCounter(alloc.ncpus, batch) for _ in range(n)], handle, cost


def destroy_many(alloc: PercpuAllocator, handle: int | None, n: int, *, hotplug: bool = True) -> Costs:
    """percpu_counter_destroy_many(fbc, n): nothing if fbc[0].counters is NULL; else unlist all n in
    one percpu_counters_lock section, then one free_percpu of the base."""
    if handle is None:
        return Costs()
    cost = Costs()
    if hotplug:
        cost.lock(PERCPU_COUNTERS_LOCK, work=n)
    return cost + alloc.free(handle)
