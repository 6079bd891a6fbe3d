# SPDX-License-Identifier: GPL-2.0-only
"""Split RSS counting before v6.2 (mm/memory.c SPLIT_RSS_COUNTING) on concrete values.

Each thread caches its deltas in task->rss_stat (plain ints) and folds them
into the mm's atomic_long_t with sync_mm_rss() at the start of every fault
whose post-incremented event count passes TASK_RSS_EVENTS_THRESH, and on
exit. One member, as in specs/rss_split.py. The only shared-line RMW is the
atomic_long_add of a non-zero cached delta.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .costs import Costs

TASK_RSS_EVENTS_THRESH = 64


@dataclass
class SplitRss:
    threads: int
    T: int = TASK_RSS_EVENTS_THRESH
    count: int = 0                                   # mm->rss_stat.count[member]
    cache: list[int] = field(default_factory=list)   # task->rss_stat.count[member]
    events: list[int] = field(default_factory=list)  # task->rss_stat.events

    def __post_init__(self) -> None:
        self.cache = self.cache or [0] * self.threads
        self.events = self.events or [0] * self.threads

    def _sync(self, t: int) -> Costs:
        """sync_mm_rss(): add_mm_counter for a non-zero member; events = 0."""
        cost = Costs(local_ops=1)
        if self.cache[t]:
            self.count += self.cache[t]
            cost.shared_rmw += 1
        self.cache[t] = 0
        self.events[t] = 0
        return cost

    def fault(self, t: int, amount: int) -> Costs:
        """handle_mm_fault(): check_sync_rss_stat (events++ > T: sync), then add_mm_counter_fast."""
        cost = Costs(local_ops=1)
        if self.events[t] > self.T:
            cost += self._sync(t)
        else:
            self.events[t] += 1
        self.cache[t] += amount
        cost.local_ops += 1
        return cost

    def zap(self, t: int, amount: int) -> Costs:
        """zap_pte_range(): add_mm_rss_vec: sync_mm_rss (current->mm == mm), then add_mm_counter(-amount)."""
        cost = self._sync(t)
        self.count -= amount
        cost.shared_rmw += 1
        return cost

    def exit(self, t: int) -> Costs:
        """do_exit()'s sync_mm_rss, then exit_mm()'s (with nothing left to add)."""
        return self._sync(t) + self._sync(t)

    def read(self) -> int:
        """get_mm_counter(): the atomic, clamped at 0."""
        return max(self.count, 0)
