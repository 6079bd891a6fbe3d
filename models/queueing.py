"""Exact mean-value analysis of a closed queueing network (Reiser and Lavenberg, 1980).

P workers (one per core) cycle forever: think for Z (everything outside
the global locks) then visit each global lock k, holding it for a total of
D_k per iteration. MVA's recursion on the population n = 1..P:

    R_k(n) = D_k * (1 + Q_k(n - 1))      residence at lock k
    X(n)   = n / (Z + sum_k R_k(n))      throughput
    Q_k(n) = X(n) * R_k(n)               mean waiters + holder at lock k

Why this fits locks that are not FCFS queues: for one class of customers with
exponential service, a single-server station's queue-length process, and
hence X(n), is the same under any work-conserving, non-preemptive order of
service. qspinlock (MCS queue, with a pending bit and lock stealing),
mutexes with optimistic spinning and rwsems with handoff change who waits
and the variance of the wait, not the mean throughput. See docs/throughput.md.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Solution:
    throughput: float              # iterations per time unit
    residence: dict[str, float]    # per lock: hold + wait per iteration
    utilisation: dict[str, float]  # per lock: fraction of time held

    @property
    def bottleneck(self) -> str | None:
        if not self.utilisation:
            return None
        return max(self.utilisation, key=self.utilisation.__getitem__)


def mva(workers: int, think: float, demands: dict[str, float]) -> Solution:
    """Throughput of ``workers`` customers with think time ``think`` and per-lock ``demands``."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if think < 0 or any(d < 0 for d in demands.values()):
        raise ValueError(f"negative time: think={think}, demands={demands}")
    q = {k: 0.0 for k in demands}
    x, r = 0.0, dict(q)
    for n in range(1, workers + 1):
        r = {k: d * (1 + q[k]) for k, d in demands.items()}
        x = n / (think + sum(r.values()))
        q = {k: x * rk for k, rk in r.items()}
    return Solution(x, r, {k: x * d for k, d in demands.items()})
