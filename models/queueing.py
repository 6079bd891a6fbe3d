# SPDX-License-Identifier: GPL-2.0-only
"""Closed queueing networks of lock stations: exact MVA, a nested lock, and two classes.

P workers (one per core by default) cycle forever: think for Z (everything
outside the global locks) then visit each global lock k, holding it for a
total of D_k per iteration. Exact mean-value analysis (Reiser and
Lavenberg, 1980) on the population n = 1..P:

    R_k(n) = D_k * (1 + Q_k(n - 1))      residence at lock k
    X(n)   = n / (Z + sum_k R_k(n))      throughput
    Q_k(n) = X(n) * R_k(n)               mean waiters + holder at lock k

Why this fits locks that are not FCFS queues: for one class of customers with
exponential service, a single-server station's queue-length process, and
hence X(n), is the same under any work-conserving, non-preemptive order of
service. qspinlock (MCS queue, with a pending bit and lock stealing),
mutexes with optimistic spinning and rwsems with handoff change who waits
and the variance of the wait, not the mean throughput. See docs/throughput.md.

A nested lock (pcpu_lock taken inside pcpu_alloc_mutex) is not product
form: the outer lock is held while waiting for the inner. ``nested`` handles
it by surrogate delays (after Jacobson and Lazowska, 1982): the outer
station's service is its own hold plus the nested section and the wait for
the inner lock that the arrival theorem predicts (the customers queued on
the inner lock's own path, each holding it for one section); the inner
lock's own-path demand is inflated by the nested use of the other customers
(a shadow server, 1 / (1 - U)). Iterated to a fixed point; exact when the
inner lock has no other users or there is one worker.

Two classes (one serial parent, N children) use Schweitzer-Bard approximate
MVA, which takes real-valued populations; ``mva_exact_multiclass`` is the
exact recursion it is tested against, and that is tested against the
product-form normalising constant.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from math import factorial, prod

Nested = dict  # (outer, inner) -> time per iteration spent in inner's sections while holding outer


@dataclass(frozen=True)
class Solution:
    throughput: float              # iterations per time unit
    residence: dict[str, float]    # per lock: hold + wait per iteration
    utilisation: dict[str, float]  # per lock: fraction of time held
    queue: dict[str, float] = field(default_factory=dict, compare=False)  # mean customers per lock

    @property
    def bottleneck(self) -> str | None:
        if not self.utilisation:
            return None
        return max(self.utilisation, key=self.utilisation.__getitem__)


def _check(think: float, demands: dict[str, float]) -> None:
    if think < 0 or any(d < 0 for d in demands.values()):
        raise ValueError(f"negative time: think={think}, demands={demands}")


def _mva(workers: int, think: float, demands: dict[str, float]) -> tuple[float, dict, dict, dict]:
    """Exact MVA: (X, R, Q at n, Q at n - 1, what an arriving customer sees)."""
    keys, ds = list(demands), list(demands.values())
    q = [0.0] * len(ds)
    x, r, prev = 0.0, list(q), list(q)
    for n in range(1, workers + 1):
        prev = q
        r = [d * (1 + qk) for d, qk in zip(ds, q)]
        x = n / (think + sum(r))
        q = [x * rk for rk in r]
    return x, dict(zip(keys, r)), dict(zip(keys, q)), dict(zip(keys, prev))


def mva(workers: int, think: float, demands: dict[str, float], nested: Nested | None = None) -> Solution:
    """Throughput of ``workers`` customers with think time ``think`` and per-lock ``demands`` (each lock's
    own sections); ``nested``: sections of an inner lock taken while holding an outer one."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    _check(think, demands)
    nested = {k: v for k, v in (nested or {}).items() if v > 0}
    if not nested:
        x, r, q, _ = _mva(workers, think, demands)
        return Solution(x, r, {k: x * d for k, d in demands.items()}, q)
    inners = {inner for _, inner in nested}
    others = (workers - 1) / workers

    def at(x: float):
        """The network's solution when the throughput is taken to be ``x`` (both corrections depend on it
        alone): an allocator reaching the inner lock finds it held on its own path with that path's
        utilisation by the other customers and waits the holder's residual section (exponential: one
        section); the own path sees the others' nested use as a shadow load."""
        eff = dict(demands)
        for (outer, inner), d in nested.items():
            eff[outer] = eff.get(outer, 0.0) + d * (1 + min(0.999, x * demands.get(inner, 0.0) * others))
        for inner in inners:
            if inner in demands:
                u = min(0.999, x * sum(d for (_, i), d in nested.items() if i == inner) * others)
                eff[inner] = demands[inner] / (1 - u)
        eff = {k: v for k, v in eff.items() if v > 0}
        return eff, _mva(workers, think, eff)

    # x = F(x), F decreasing in x: the secant method on F(x) - x, kept inside [0, F(0)].
    a, fa = 0.0, at(0.0)[1][0]
    b = fa
    fb = at(b)[1][0]
    x = fb
    for _ in range(100):
        ga, gb = fa - a, fb - b
        if abs(gb) <= 1e-14 * max(b, 1e-300):
            x = b
            break
        x = b - gb * (b - a) / (gb - ga) if gb != ga else (a + b) / 2
        if not 0 <= x <= fa + b:
            x = (a + b) / 2
        a, fa, b, fb = b, fb, x, at(x)[1][0]
    eff, (x, r, q, _) = at(x)
    # The shadow load is clamped below 1, so near saturation the surrogate can overshoot an inner lock's
    # capacity a little; that bound is exact (the lock is held own + nested per iteration), so keep it.
    for inner in inners:
        cap = demands.get(inner, 0.0) + sum(d for (_, i), d in nested.items() if i == inner)
        x = min(x, 1 / cap)
    util = {k: x * eff[k] for k in eff}
    for (_outer, inner), d in nested.items():  # the inner lock is held for its nested sections too
        util[inner] = x * (demands.get(inner, 0.0) + d)
    return Solution(x, r, util, q)


# -- several classes ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MultiSolution:
    throughput: dict[str, float]               # per class
    residence: dict[str, dict[str, float]]     # class -> lock -> residence per iteration
    utilisation: dict[str, float]              # per lock, all classes
    queue: dict[str, dict[str, float]]         # class -> lock -> mean customers

    @property
    def bottleneck(self) -> str | None:
        if not self.utilisation:
            return None
        return max(self.utilisation, key=self.utilisation.__getitem__)


def mva_exact_multiclass(pops: dict[str, int], think: dict[str, float],
                         demands: dict[str, dict[str, float]]) -> MultiSolution:
    """Exact multi-class MVA over every population vector up to ``pops`` (small populations only)."""
    classes = list(pops)
    locks = sorted({k for c in classes for k in demands[c]})
    qs: dict[tuple, dict[str, float]] = {tuple(0 for _ in classes): {k: 0.0 for k in locks}}
    last = None
    for vec in product(*(range(pops[c] + 1) for c in classes)):
        if not any(vec):
            continue
        r, x = {}, {}
        for i, c in enumerate(classes):
            if vec[i] == 0:
                r[c], x[c] = {k: 0.0 for k in locks}, 0.0
                continue
            minus = tuple(v - (j == i) for j, v in enumerate(vec))
            r[c] = {k: demands[c].get(k, 0.0) * (1 + qs[minus][k]) for k in locks}
            x[c] = vec[i] / (think[c] + sum(r[c].values()))
        qs[vec] = {k: sum(x[c] * r[c][k] for c in classes) for k in locks}
        last = (x, r)
    x, r = last
    return MultiSolution(x, r, {k: sum(x[c] * demands[c].get(k, 0.0) for c in classes) for k in locks},
                         {c: {k: x[c] * r[c][k] for k in locks} for c in classes})


def schweitzer_bard(pops: dict[str, float], think: dict[str, float], demands: dict[str, dict[str, float]],
                    nested: dict[str, Nested] | None = None, iters: int = 5000) -> MultiSolution:
    """Schweitzer-Bard approximate MVA: an arriving class-c customer sees the others' mean queue and
    (N_c - 1) / N_c of its own class's, so populations may be real. ``nested`` per class as in mva()."""
    classes = [c for c in pops if pops[c] > 0]
    nested = nested or {}
    locks = sorted({k for c in classes for k in demands[c]} | {k for c in classes for ok in nested.get(c, {})
                                                                for k in ok})
    q = {c: {k: pops[c] / (len(locks) + 1) for k in locks} for c in classes}
    x = {c: 0.0 for c in classes}
    for _ in range(iters):
        seen = {c: {k: sum(q[d][k] for d in classes) - q[c][k] / pops[c] for k in locks} for c in classes}
        u_nested = {k: 0.0 for k in locks}
        for c in classes:
            for (_, inner), d in nested.get(c, {}).items():
                u_nested[inner] += x[c] * d
        eff = {}
        for c in classes:
            e = {k: demands[c].get(k, 0.0) for k in locks}
            for (outer, inner), d in nested.get(c, {}).items():
                e[outer] += d * (1 + seen[c][inner])
            for k in locks:
                own = sum(x[c] * d for (_, i), d in nested.get(c, {}).items() if i == k)
                if e[k] and u_nested[k] - own > 0:
                    e[k] /= 1 - min(0.999, u_nested[k] - own)
            eff[c] = e
        r = {c: {k: eff[c][k] * (1 + seen[c][k]) for k in locks} for c in classes}
        new_x = {c: pops[c] / (think[c] + sum(r[c].values())) for c in classes}
        new_q = {c: {k: new_x[c] * r[c][k] for k in locks} for c in classes}
        delta = max(abs(new_q[c][k] - q[c][k]) for c in classes for k in locks) if locks else 0.0
        q = {c: {k: 0.5 * q[c][k] + 0.5 * new_q[c][k] for k in locks} for c in classes}
        x = new_x
        if delta < 1e-11:
            break
    util = {k: sum(x[c] * eff[c][k] for c in classes) for k in locks}
    for c in classes:
        for (_outer, inner), d in nested.get(c, {}).items():
            util[inner] += x[c] * d
    return MultiSolution(x, r, util, q)


def product_form_throughput(pops: dict[str, int], think: dict[str, float],
                            demands: dict[str, dict[str, float]]) -> dict[str, float]:
    """The closed form: per-class throughput G(N - e_c) / G(N), the normalising constant G summed over
    every placement of the customers (BCMP: single-server stations with class-independent service order,
    as processor sharing, and an infinite-server think station). For testing the MVA recursions."""
    classes = list(pops)
    locks = sorted({k for c in classes for k in demands[c]})

    def g(vec: tuple[int, ...]) -> float:
        total = 0.0
        # every split of each class's customers over the think station and the locks
        per_class = []
        for i in range(len(classes)):
            splits = [s for s in product(range(vec[i] + 1), repeat=len(locks) + 1) if sum(s) == vec[i]]
            per_class.append(splits)
        for choice in product(*per_class):
            term = 1.0
            for i, c in enumerate(classes):
                z_n = choice[i][0]
                term *= think[c] ** z_n / factorial(z_n)
            for j, k in enumerate(locks):
                ns = [choice[i][j + 1] for i in range(len(classes))]
                n = sum(ns)
                term *= factorial(n) * prod(demands[c].get(k, 0.0) ** ns[i] / factorial(ns[i])
                                            for i, c in enumerate(classes))
            total += term
        return total
    full = tuple(pops[c] for c in classes)
    gn = g(full)
    return {c: g(tuple(v - (j == i) for j, v in enumerate(full))) / gn if pops[c] else 0.0
            for i, c in enumerate(classes)}


def launch_throughput(workers: int, parent: tuple[float, dict, Nested], child: tuple[float, dict, Nested]
                      ) -> tuple[float, MultiSolution, float]:
    """One serial parent forking children, at most ``workers`` alive: (launches per time unit, the
    two-class solution, the mean number of children alive).

    The children's rate must equal the parent's. If ``workers`` children would finish faster than the
    parent forks them, fewer are alive: the real population n with X_child(n) = X_parent(n) (Little's
    law), found by bisection on Schweitzer-Bard's continuous populations. Otherwise the parent waits for
    a free slot: the wait w with X_parent(w) = X_child(w)."""
    zp, dp, np_ = parent
    zc, dc, nc = child

    def solve(n: float, wait: float) -> MultiSolution:
        return schweitzer_bard({"parent": 1.0, "child": n}, {"parent": zp + wait, "child": zc},
                               {"parent": dp, "child": dc}, {"parent": np_, "child": nc})

    full = solve(float(workers), 0.0)
    if full.throughput["child"] >= full.throughput["parent"]:
        lo, hi = 1e-9, float(workers)
        for _ in range(60):
            mid = (lo + hi) / 2
            s = solve(mid, 0.0)
            if s.throughput["child"] < s.throughput["parent"]:
                lo = mid
            else:
                hi = mid
        s = solve(hi, 0.0)
        return s.throughput["parent"], s, hi
    lo, hi = 0.0, 1.0
    while solve(float(workers), hi).throughput["parent"] > solve(float(workers), hi).throughput["child"]:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        s = solve(float(workers), mid)
        if s.throughput["parent"] > s.throughput["child"]:
            lo = mid
        else:
            hi = mid
    s = solve(float(workers), hi)
    return s.throughput["child"], s, float(workers)
