# SPDX-License-Identifier: GPL-2.0-only
"""How big will it get: the state counts of the points already explored, fitted along each parameter.

State spaces of these specs grow about geometrically in a size parameter (each CPU, task or op
multiplies the interleavings), so the fit is log-linear: least squares of ``ln(states)`` against
the parameter's value, over the explored points that differ in that parameter alone. The fit
gives a factor per unit step and the likely size (and time, at the largest point's rate) of the
next point. With two points it is the ratio of the two; it is an estimate, never a bound: a
point can grow faster than the points before it (a new interleaving appears only at 3 CPUs), and
the report says how many points the fit rests on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from checker.result import Check

#: Reasons of an exploration stopped by a limit (the first word of an inconclusive check's reason).
LIMITS = ("max_states", "timeout", "memory")
LIMIT_FLAG = {"max_states": "--max-states", "timeout": "--timeout", "memory": "--max-memory"}


@dataclass(frozen=True)
class Point:
    """One exploration: its parameters as shown, the distinct states and seconds, and the limit it hit."""

    spec: str
    params: tuple[tuple[str, object], ...]
    computed: frozenset[str]
    states: int
    seconds: float
    limit: str | None = None


@dataclass(frozen=True)
class Series:
    """A spec's explored points that differ in one integer parameter alone, and their fit."""

    spec: str
    param: str
    fixed: tuple[tuple[str, object], ...]  # the other parameters' values (derived ones left out)
    values: tuple[int, ...]
    states: tuple[int, ...]
    seconds_per_state: float
    factor: float  # fitted growth per unit step of ``param``
    intercept: float  # ln(states) at param = 0, from the fit

    def predict(self, value: int) -> int:
        return max(1, round(math.exp(self.intercept + math.log(self.factor) * value)))


def points(checks: Iterable[Check]) -> list[Point]:
    """The explorations of a report, one per run (reduced state counts, not the unreduced graph's)."""
    runs: dict[tuple[str, int], list[Check]] = {}
    for c in checks:
        if c.backend == "explore" and c.kind not in ("coverage", "build"):
            runs.setdefault((c.spec, c.run), []).append(c)
    out = []
    for (spec, _run), cs in runs.items():
        counted = [c for c in cs if c.states is not None and c.extra.get("graph") != "unreduced"]
        if not counted:
            continue
        reasons = {(c.reason or "").split(":")[0].split(" ")[0] for c in cs if c.verdict == "inconclusive"}
        limit = next((r for r in LIMITS if r in reasons), None)
        out.append(Point(spec, tuple(cs[0].params.items()), frozenset(cs[0].computed),
                         max(c.states for c in counted), max(c.seconds for c in cs), limit))
    return out


def fit(xs: list[int], ys: list[int]) -> tuple[float, float]:
    """Least squares of ln(y) = a + b x: (e^b, a)."""
    ly = [math.log(max(y, 1)) for y in ys]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ly) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ly)) / sxx
    return math.exp(b), my - b * mx


def series(pts: list[Point]) -> list[Series]:
    """Along each integer parameter of each spec, the longest run of decided points varying in it alone."""
    # the decided points by (spec, parameter, the other parameters' values): one pass, not one per point
    groups: dict[tuple, dict[int, Point]] = {}
    for q in pts:
        if q.limit is None:
            for name, value in q.params:
                if isinstance(value, int):
                    fixed = tuple((k, v) for k, v in q.params if k != name and k not in q.computed)
                    groups.setdefault((q.spec, name, fixed), {})[value] = q
    best: dict[tuple[str, str], Series] = {}
    for p in pts:
        if p.limit is not None:
            continue
        for name, value in p.params:
            if not isinstance(value, int) or name in p.computed:
                continue
            fixed = tuple((k, v) for k, v in p.params if k != name and k not in p.computed)
            same = groups[p.spec, name, fixed]
            if len(same) < 2:
                continue
            xs = sorted(same)
            ys = [same[x].states for x in xs]
            factor, intercept = fit(xs, ys)
            top = same[xs[-1]]
            s = Series(p.spec, name, fixed, tuple(xs), tuple(ys), top.seconds / max(top.states, 1), factor, intercept)
            key = (p.spec, name)
            old = best.get(key)
            if old is None or (len(s.values), s.values[-1], s.states[-1]) > (len(old.values), old.values[-1],
                                                                            old.states[-1]):
                best[key] = s
    return list(best.values())


def rounded(x: float) -> str:
    """Two significant figures: ~5,900 rather than a false 5,873."""
    if x < 100:
        return f"{x:,.0f}"
    digits = int(math.floor(math.log10(x))) - 1
    return f"{round(x, -digits):,.0f}"


def _time(seconds: float) -> str:
    if seconds < 60:
        return f"~{seconds:.1f}s" if seconds >= 0.1 else "under 0.1s"
    if seconds < 3600:
        return f"~{seconds / 60:.0f} min"
    return f"~{seconds / 3600:,.1f} h"


def describe(s: Series, varying: set[str] | frozenset[str] = frozenset()) -> str:
    """One fit in a line; ``varying``: the parameters worth naming (those the spec's points differ in)."""
    counts = ", ".join(f"{v:,}" for v in s.states)
    rest = " ".join(f"{k}={v}" for k, v in s.fixed if k in varying)
    nxt = s.values[-1] + 1
    states = s.predict(nxt)
    return (f"growth: {s.spec}: states x{s.factor:.1f} per {s.param} ({s.param}={','.join(map(str, s.values))}: "
            f"{counts}{f' at {rest}' if rest else ''}); {s.param}={nxt} likely ~{rounded(states)} states, "
            f"{_time(states * s.seconds_per_state)}")


def varying(pts: list[Point], spec: str) -> set[str]:
    """The parameters of ``spec`` that take more than one value among the decided points."""
    seen: dict[str, set] = {}
    for p in pts:
        if p.spec == spec:
            for k, v in p.params:
                seen.setdefault(k, set()).add(v)
    return {k for k, vs in seen.items() if len(vs) > 1}


def at_limit(p: Point, fits: list[Series]) -> str | None:
    """For a point stopped by a limit: what a fit of the decided points says it would take."""
    params = dict(p.params)
    for s in fits:
        if s.spec != p.spec or s.param not in params or not isinstance(params[s.param], int):
            continue
        if tuple((k, v) for k, v in p.params if k != s.param and k not in p.computed) != s.fixed:
            continue
        value = params[s.param]
        if value <= s.values[-1]:
            continue
        states = s.predict(value)
        return (f"growth: {p.spec} at {s.param}={value} stopped at {p.limit} after {p.states:,} states; from "
                f"{s.param}={','.join(map(str, s.values))} ({', '.join(f'{v:,}' for v in s.states)} states, "
                f"x{s.factor:.1f} per {s.param}) it likely has ~{rounded(states)} states "
                f"({_time(states * s.seconds_per_state)}): raise {LIMIT_FLAG.get(p.limit, 'the limit')} past "
                f"that, or lower --set {s.param}")
    return None


def likely_states(checks: Iterable[Check], spec: str, params: dict, computed: Iterable[str] = ()) -> int | None:
    """The states a point about to be explored likely has, from the fits of the spec's decided points
    along one of its parameters (the point past their largest value), else None."""
    pts = points(c for c in checks if c.spec == spec)  # (filtered first: a report has thousands of checks)
    if len(pts) < 2:
        return None
    skip = set(computed)
    for s in series(pts):
        value = params.get(s.param)
        if not isinstance(value, int) or value <= s.values[-1]:
            continue
        if tuple((k, v) for k, v in params.items() if k != s.param and k not in skip) == s.fixed:
            return s.predict(value)
    return None


def report_lines(checks: Iterable[Check], *, everything: bool = False) -> list[str]:
    """The growth lines of a report: every fit with ``everything`` (-v), and one per point a limit stopped."""
    pts = points(checks)
    if not pts:
        return []
    fits = series(pts)
    out = [describe(s, varying(pts, s.spec)) for s in fits] if everything else []
    for p in pts:
        if p.limit is not None:
            line = at_limit(p, fits)
            if line is not None:
                out.append(line)
    return out
