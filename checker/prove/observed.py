# SPDX-License-Identifier: GPL-2.0-only
"""Candidate invariants observed in the reachable states of a small point (in the manner of Daikon and DuoAI).

At each place in a CPU's code (each value of a per-CPU enum of the symmetric
role), the numbers of that CPU satisfy some linear equalities in every state
reached: between percpu_eager B's read of its local and its sub, the local is
what the add read (``count - amount``), a fact IC3/PDR at one CPU states only as
the inequality the claims needed there. The states' values at each place span
an affine space (computed exactly, by rational elimination); the equalities
asked are the simple ones it satisfies (coefficients 1 and -1, up to three
terms), not a basis of them, which a few states make arbitrary. Beside them,
each number's least and greatest value seen (``events <= T + 1``).

The states are the first of a breadth-first search of the point, capped.
Each fact is a candidate for every CPU count; the any-N induction keeps only
those it proves (a sample too small gives more candidates, never fewer, and
the wrong ones are dropped there).
"""
from __future__ import annotations

import itertools
from collections import deque
from fractions import Fraction
from typing import Iterable

import z3

from checker.interrupts import check as check_interrupt
from checker.language.compile import Model
from checker.prove.generalise import Candidate, _constants, _numeric, _param_terms
from checker.prove.houdini import role_variables
from checker.types import Enum

#: At most this many states of the point are visited (the first in breadth-first order).
MAX_STATES = 50_000


def reachable(model: Model, limit: int = MAX_STATES) -> list[tuple]:
    """The first ``limit`` states of ``model`` in breadth-first order (deterministic: the successors' order)."""
    seen = dict.fromkeys(model.initial_states())
    queue = deque(seen)
    popped = 0
    while queue and len(seen) < limit:
        popped += 1
        if popped % 4096 == 0:
            check_interrupt()
        for _label, t in model.successors(queue.popleft()):
            if t not in seen:
                seen[t] = None
                queue.append(t)
                if len(seen) >= limit:
                    break
    return list(seen)


def _differences(pts: list[tuple[int, ...]]) -> list[list[Fraction]]:
    """A basis of the span of the points' differences from the first (reduced row echelon form)."""
    p0 = pts[0]
    rows: list[list[Fraction]] = []
    pivots: list[int] = []
    for p in pts[1:]:
        v = [Fraction(x - y) for x, y in zip(p, p0)]
        for row, col in zip(rows, pivots):
            if v[col]:
                f = v[col]
                v = [a - f * b for a, b in zip(v, row)]
        lead = next((i for i, x in enumerate(v) if x), None)
        if lead is None:
            continue
        v = [x / v[lead] for x in v]
        rows = [[a - r[lead] * b for a, b in zip(r, v)] if r[lead] else r for r in rows]
        rows.append(v)
        pivots.append(lead)
        if len(rows) == len(p0):
            break  # the points span the space: no equality
    return rows


def small_equalities(points: Iterable[tuple[int, ...]], max_terms: int = 3) -> list[tuple[tuple[int, ...], int]]:
    """The equalities ``a . p == b`` that every point satisfies with ``a``'s coefficients in {-1, 0, 1}, at
    most ``max_terms`` of them nonzero, the first positive, and ``b`` 0 where ``a`` has two terms or more: the
    shapes a program's registers keep (``local == count - amount``). Few points satisfy many equalities; the
    simplest are the ones worth asking, not a basis (``32 * local == 31 * count`` at one CPU). A number fixed
    at the place is asked alone (``x == b``) and left out of the sums."""
    pts = sorted(set(points))
    if not pts:
        return []
    p0, k = pts[0], len(pts[0])
    rows = _differences(pts)
    if len(rows) == k:
        return []
    fixed = [j for j in range(k) if all(r[j] == 0 for r in rows)]
    out = [(tuple(int(i == j) for i in range(k)), p0[j]) for j in fixed]
    free = [j for j in range(k) if j not in fixed]
    for n in range(2, max_terms + 1):
        for support in itertools.combinations(free, n):
            for signs in itertools.product((1, -1), repeat=n - 1):
                a = [0] * k
                for j, m in zip(support, (1, *signs)):
                    a[j] = m
                if sum(x * y for x, y in zip(a, p0)) == 0 and all(sum(x * y for x, y in zip(a, r)) == 0 for r in rows):
                    out.append((tuple(a), 0))
    return out


def _seen_at_places(model: Model, role: str, limit: int) -> tuple[list[str], dict[tuple[str, int], set[tuple]]]:
    """The numbers of ``role``'s CPUs, and the tuples of their values seen at each place ``(enum, value)``."""
    role_vars = role_variables(model, role)
    enums = [n for n, v in role_vars.items() if isinstance(v.type, Enum)]
    numbers = [n for n, v in role_vars.items() if _numeric(v.type)]
    if not enums or not numbers:
        return numbers, {}
    index = {n: model.var_names.index(n) for n in (*enums, *numbers)}
    at: dict[tuple[str, int], set[tuple[int, ...]]] = {}
    for s in reachable(model, limit):
        for c in model.roles[role]:
            values = tuple(s[index[n]][c] for n in numbers)
            for e in enums:
                at.setdefault((e, s[index[e]][c]), set()).add(values)
    return numbers, at


def observed(model: Model, role: str, limit: int = MAX_STATES) -> list[Candidate]:
    """Candidates about an arbitrary CPU ``c`` of ``role`` from the first ``limit`` states of ``model`` (breadth
    first): at each place in its code, the simple equalities among its numbers (``small_equalities``) that
    hold in every state seen there; and each number's least and greatest value seen, anywhere and where a
    place narrows them (``events[c] <= T + 1``). A constant may be a parameter of that value (``_constants``)."""
    numbers, at = _seen_at_places(model, role, limit)
    params = _param_terms(model, role)
    terms = [z3.Int(f"s.{n}[c]") for n in numbers]
    out = []

    def add(f: z3.BoolRef, place: tuple[str, int] | None, what: str) -> None:
        for alt in _constants(f, params, set()):
            if place is not None:
                alt = z3.Or(z3.Int(f"s.{place[0]}[c]") != place[1], alt)
            out.append(Candidate(alt, 1, f"observed: {what}"))

    everywhere = [(min(vs), max(vs)) for vs in zip(*(p for points in at.values() for p in points))]
    for j, (lo, hi) in enumerate(everywhere):
        add(terms[j] >= lo, None, f"the least {numbers[j]}")
        add(terms[j] <= hi, None, f"the greatest {numbers[j]}")
        if lo == hi:  # after its bounds: of candidates as long, ``infer.minimal`` drops the first it finds implied
            add(terms[j] == lo, None, f"the only {numbers[j]}")
    for (e, k), points in sorted(at.items()):
        label = model.vars[e].type.names[k]
        for a, b in small_equalities(points):
            used = [x if m == 1 else m * x for m, x in zip(a, terms) if m]
            add((z3.Sum(used) if len(used) > 1 else used[0]) == b, (e, k), f"an equality at {e} {label}")
        for j, vs in enumerate(zip(*points)):
            if min(vs) != max(vs):  # (a fixed number is an equality above)
                if min(vs) > everywhere[j][0]:
                    add(terms[j] >= min(vs), (e, k), f"the least {numbers[j]} at {e} {label}")
                if max(vs) < everywhere[j][1]:
                    add(terms[j] <= max(vs), (e, k), f"the greatest {numbers[j]} at {e} {label}")
    return out


__all__ = ["observed", "reachable", "small_equalities"]
