# SPDX-License-Identifier: GPL-2.0-only
"""L-Z: ZhangPeng's lazy counter with an embedded percpu_counter (RFC 2/3, the one seed 001's patch uses).

specs/percpu_lazy_rfc.py is its spec; tests/test_models_conformance.py checks this model against it.
Atomic mode is L-K's word (models/lazy.py: the same encoding and the same wrap test); in per-CPU mode
an add is ``percpu_counter_add(&c->fbc, i)``, the eager counter (variant B: the spec's irqs-off
form) with its batch. ``switch_to_pcpu`` runs with interrupts and preemption off: the switch claim
(the spec's fix, a ``test_and_set_bit``), ``percpu_counter_init(&c->fbc, 0, GFP_ATOMIC)`` (a per-cpu
allocation under ``pcpu_lock`` only, then ``list_add`` under ``percpu_counters_lock``),
``percpu_counter_set`` (``fbc->lock``, every possible CPU's local zeroed), and the publishing cmpxchg.
The sum (``check_mm``) is ``percpu_counter_sum`` once switched; ``destroy`` unlists and frees.
"""
from __future__ import annotations

from dataclasses import dataclass

from .costs import FBC_LOCK, PERCPU_COUNTERS_LOCK, Costs
from .eager import EagerCounter
from .lazy import HZ, MOD_BITS, MOD_START, decode, encode_add
from .percpu_alloc import PercpuAllocator


@dataclass
class LazyRfcCounter:
    alloc: PercpuAllocator
    batch: int
    mod_bits: int = MOD_BITS
    v: int = 0                          # c->v in atomic mode
    last_wrap: int = 0
    fbc: EagerCounter | None = None     # c->fbc once initialised
    handle: int | None = None           # fbc->counters
    published: bool = False             # c->v holds &c->fbc | 1
    switching: bool = False             # the claim bit

    def recent_wrap(self, now: int) -> bool:
        return bool(self.last_wrap) and now < self.last_wrap + HZ

    def add(self, cpu: int, i: int, now: int = 1, alloc_ok: bool = True) -> Costs:
        """lazy_percpu_counter_add(c, i) on ``cpu`` at jiffies ``now``."""
        if self.published:
            return Costs(local_ops=1) + self.fbc.add(cpu, i)  # atomic64_read(&c->v), then percpu_counter_add
        old = self.v
        self.v = (old + encode_add(i)) % (1 << (MOD_START + self.mod_bits))
        cost = Costs(local_ops=1, shared_rmw=1)  # the read of c->v, the cmpxchg
        if old >> MOD_START == 0:
            if self.recent_wrap(now):
                cost += self.switch_to_pcpu(cpu, alloc_ok)
            else:
                self.last_wrap = now
        return cost

    def switch_to_pcpu(self, cpu: int, ok: bool = True) -> Costs:
        cost = Costs(irq_saves=1)       # local_irq_save + preempt_disable ... restore
        if self.switching:              # another CPU claimed it (never, one call at a time)
            return cost
        cost.shared_rmw += 1            # test_and_set_bit(0, &c->switching)
        self.switching = True
        handle, c = self.alloc.alloc(1, atomic=True, ok=ok)  # one s32 per possible CPU, GFP_ATOMIC
        cost += c
        if handle is None:
            self.switching = False
            return cost
        self.handle, self.fbc = handle, EagerCounter(self.alloc.ncpus, self.batch, "B")
        cost.lock(PERCPU_COUNTERS_LOCK)  # list_add(&fbc->list, &percpu_counters)
        cost.lock(FBC_LOCK, work=self.alloc.ncpus)  # percpu_counter_set: every possible CPU's local = 0
        cost.cpu_work += self.alloc.ncpus
        self.fbc.count = decode(self.v)
        cost.shared_rmw += 1            # the publishing cmpxchg
        self.published, self.v = True, 0
        return cost

    def sum(self) -> tuple[int, Costs]:
        """lazy_percpu_counter_sum(): percpu_counter_sum once switched, else the decoded word."""
        if not self.published:
            return decode(self.v), Costs(local_ops=1)
        value, cost = self.fbc.sum()
        return value, cost + Costs(local_ops=1)

    def destroy(self) -> Costs:
        """lazy_percpu_counter_destroy_many(c, 1): percpu_counter_destroy(&c->fbc) if switched."""
        if not self.published:
            return Costs(local_ops=1)
        cost = Costs(local_ops=1).lock(PERCPU_COUNTERS_LOCK) + self.alloc.free(self.handle)
        self.fbc, self.handle, self.published, self.switching = None, None, False, False
        return cost
