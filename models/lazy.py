# SPDX-License-Identifier: GPL-2.0-only
"""The lazy percpu counter, L-K (seed 001's RFC 1/3; reference section 4.3), on concrete values.

A 64-bit word: bit 0 the mode, bits 1..55 a 55-bit two's-complement value,
bits 56..63 a modification count that every add bumps. In atomic mode each
add is an atomic64_cmpxchg on the shared word; when the add that wraps the
modification count comes less than HZ after the previous wrap, the counter
allocates u64 per-cpu slots (GFP_ATOMIC: pcpu_lock, no pcpu_alloc_mutex),
copies the value into this CPU's slot and publishes the pointer with bit 0
set. After that an add is one this_cpu_add.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import Costs
from .percpu_alloc import PercpuAllocator

MOD_BITS = 8
MOD_MASK = ~(~0 % (1 << 64) >> MOD_BITS) % (1 << 64)   # 0xFF00000000000000
MOD_START = 64 - MOD_BITS
IS_PCPU = 1
HZ = 1000
_U64 = (1 << 64) - 1


def decode(v: int) -> int:
    """lazy_percpu_counter_atomic_val(): (s64)(v << 8) >> 9, arithmetic."""
    x = (v << MOD_BITS) & _U64
    if x >> 63:
        x -= 1 << 64
    return x >> (MOD_BITS + IS_PCPU)


def encode_add(i: int) -> int:
    """atomic_i = ((u64)(i << 1) & ~MOD_MASK) | 1 << 56."""
    return (((i << 1) & _U64) & ~MOD_MASK & _U64) | (1 << MOD_START)


@dataclass
class LazyCounter:
    alloc: PercpuAllocator
    mod_bits: int = MOD_BITS   # COUNTER_MOD_BITS; the spec explores narrower fields (the word is then
    #                            56 + mod_bits bits wide, and wraps come every 2^mod_bits adds)
    v: int = 0                 # c->v (all-zero: atomic mode, value 0)
    last_wrap: int = 0
    slots: list[int] = field(default_factory=list)  # the published per-cpu u64s, once switched

    @property
    def is_pcpu(self) -> bool:
        return bool(self.v & IS_PCPU)

    def recent_wrap(self, now: int) -> bool:
        """c->last_wrap && time_after(c->last_wrap + HZ, now)."""
        return bool(self.last_wrap) and now < self.last_wrap + HZ

    def add(self, cpu: int, i: int, now: int = 1, alloc_ok: bool = True) -> Costs:
        """lazy_percpu_counter_add(c, i) on ``cpu`` at jiffies ``now`` (>= 1); ``alloc_ok`` False makes
        a switch's GFP_ATOMIC allocation fail."""
        if self.is_pcpu:
            self.slots[cpu] = (self.slots[cpu] + i) & _U64
            return Costs(local_ops=1)
        old = self.v
        self.v = (old + encode_add(i)) % (1 << (MOD_START + self.mod_bits))
        cost = Costs(shared_rmw=1)
        if old >> MOD_START == 0:  # the pre-add modification count was 0: a wrap
            if self.recent_wrap(now):
                cost += self.switch_to_pcpu(cpu, alloc_ok)
            else:
                self.last_wrap = now
        return cost

    def switch_to_pcpu(self, cpu: int, ok: bool = True) -> Costs:
        """Allocate, copy the decoded value into this CPU's slot, publish with cmpxchg."""
        handle, cost = self.alloc.alloc(2, atomic=True, ok=ok)  # one u64 = two s32 words per CPU
        if handle is None:
            return cost
        self.slots = [0] * self.alloc.ncpus
        self.slots[cpu] = decode(self.v) & _U64
        self.v = handle | IS_PCPU
        cost.shared_rmw += 1
        return cost

    def read(self) -> tuple[int, Costs]:
        """lazy_percpu_counter_read(): decode, or sum every possible CPU's slot (mod 2^64, as s64)."""
        if not self.is_pcpu:
            return decode(self.v), Costs()
        total = sum(self.slots) & _U64
        return (total - (1 << 64) if total >> 63 else total), Costs(cpu_work=len(self.slots))

    def exit(self) -> Costs:
        """lazy_percpu_counter_exit(): free_percpu of the published slots, if any."""
        if not self.is_pcpu:
            return Costs()
        cost = self.alloc.free(self.v ^ IS_PCPU)
        self.v, self.slots = 0, []
        return cost
