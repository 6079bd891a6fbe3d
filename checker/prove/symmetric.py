# SPDX-License-Identifier: GPL-2.0-only
"""The CPU symmetry of a point's encoding, proved by Z3, and what a proof may then skip.

The explorer's symmetry is checked on a sample (``checker.explore.symmetry``); a proof may rest only on what
is proved. ``prove_symmetry`` asks, for each generator of the symmetric role's permutations (swapping its
first two CPUs, and turning them round once) and each step, whether the renamed step is a step of the
encoding: its guard the same and its result the renamed result, for every state of the types (one Z3
validity question per step and generator). If every answer is yes, the transition relation is invariant
under every renaming of the role's CPUs.

Then, for a set of candidate invariants closed under the renamings (each candidate's orbit added), a
candidate fails after some step iff some candidate fails after a step of the role's first CPU (renaming
that step's CPU to the first carries the failing candidate to another member of the set). So Houdini asks
only the first CPU's steps, and one candidate failing drops its whole orbit: what survives is closed and
inductive, and it is the largest such subset, as without the symmetry.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import z3

from checker.interrupts import check as check_interrupt
from checker.prove.encoding import PerN, Transition
from checker.prove.horn import flat, slot_names
from checker.prove.slotsets import SlotReader
from checker.prove.solver import seeded

#: The largest group whose elements are listed (a candidate that renames only by If-chains gets one copy per
#: element): 5! renamings.
MAX_GROUP = 120


@dataclass(frozen=True)
class Renaming:
    """One permutation of the role's CPUs, as it moves the flat slots and renames CPU ids."""

    cpus: tuple[tuple[int, int], ...]  # (cpu, its image), for the role's CPUs
    slots: tuple[int, ...]  # slot i of a state goes to slots[i] of the renamed state

    def cpu(self, c: Any) -> Any:
        return dict(self.cpus).get(c, c)


class CpuSymmetry:
    """The renamings of ``role``'s CPUs at ``enc``'s point (not yet proved: see ``prove_symmetry``)."""

    def __init__(self, enc: PerN, role: str):
        m = enc.model
        self.enc = enc
        self.role = role
        self.cpus = tuple(m.roles[role])
        self.names = slot_names(enc)
        self.index = {n: i for i, n in enumerate(self.names)}
        cpu_vars = m.cpu_valued()
        self.cpu_slots = frozenset(i for i, n in enumerate(self.names) if n.partition("[")[0] in cpu_vars)
        self.percpu = frozenset(m.percpu)

    def renaming(self, perm: dict[int, int]) -> Renaming:
        out = []
        for n in self.names:
            base, _, rest = n.partition("[")
            if rest and base in self.percpu:
                out.append(self.index[f"{base}[{perm.get(int(rest[:-1]), int(rest[:-1]))}]"])
            else:
                out.append(self.index[n])
        return Renaming(tuple(sorted(perm.items())), tuple(out))

    def generators(self) -> list[Renaming]:
        c = self.cpus
        swap = {c[0]: c[1], c[1]: c[0]}
        turn = {c[i]: c[(i + 1) % len(c)] for i in range(len(c))}
        return [self.renaming(swap)] + ([self.renaming(turn)] if len(c) > 2 else [])

    def group(self) -> list[Renaming]:
        return [self.renaming(dict(zip(self.cpus, p))) for p in itertools.permutations(self.cpus)]

    def ren_value(self, x: z3.ArithRef, cpus: tuple[tuple[int, int], ...]) -> z3.ArithRef:
        """A CPU id renamed by ``cpus`` ((cpu, image) pairs; NOBODY and CPUs outside the role kept)."""
        out = x
        for c, d in cpus:
            if c != d:
                out = z3.If(x == c, z3.IntVal(d), out)
        return out

    def state(self, vals: list[z3.ArithRef], r: Renaming) -> list[z3.ArithRef]:
        """The renamed state's flat slots."""
        out: list[Any] = [None] * len(vals)
        for i, v in enumerate(vals):
            out[r.slots[i]] = self.ren_value(v, r.cpus) if i in self.cpu_slots else v
        return out

    def image(self, e: z3.ExprRef, r: Renaming) -> z3.ExprRef:
        """``e`` (over ``Var(i)``) read at the state renamed by ``r``'s inverse: holds at ``r``'s renamed state
        iff ``e`` holds at the original. Plain slot moves and CPU-id constants where that is exact, else
        If-chains over the CPU-id slots."""
        clean = _moved(e, r, self.cpu_slots)
        if clean is not None:
            return clean
        back = tuple((d, c) for c, d in r.cpus)
        args: list[Any] = [None] * len(r.slots)
        for i, j in enumerate(r.slots):
            v = z3.Var(j, z3.IntSort())
            args[i] = self.ren_value(v, back) if i in self.cpu_slots else v
        return z3.substitute_vars(e, *args)

    def first_steps(self, transitions: list[Transition]) -> list[int]:
        """The steps asked under the symmetry: every step of a CPU outside the role, and the role's first
        CPU's."""
        return [k for k, tr in enumerate(transitions) if tr.cpu not in self.cpus or tr.cpu == self.cpus[0]]


def prove_symmetry(enc: PerN, role: str, timeout: float | None) -> CpuSymmetry | str:
    """The role's renamings, once Z3 has shown the steps invariant under them; else why not."""
    m = enc.model
    if m.scheduler is not None or m.info.structure is not None or m.arrays:
        return "the point has tasks, a declared tree or Arrays, which this renaming does not move"
    sym = CpuSymmetry(enc, role)
    if len(sym.cpus) < 2:
        return "one CPU: nothing to rename"
    s0 = m.initial_states()[0]
    if any(len(s0[m.index[n]]) != m.ncpus_total for n in m.percpu):
        return "a per-CPU row is not one slot a CPU"
    s = enc.fresh("")
    vals = flat(enc, s)
    if not all(z3.is_const(v) for v in vals) or len({v.get_id() for v in vals}) != len(vals):
        return "a slot of the fresh state is not a variable of its own"
    trs = enc.transitions()
    fired = [enc.fire(tr, s) for tr in trs]
    posts = [flat(enc, t) for _, t in fired]
    q = seeded(timeout)
    q.add(enc.types(s))
    for r in sym.generators():
        check_interrupt()
        moved = sym.state(vals, r)
        pairs = list(zip(vals, moved))
        if not _valid(q, z3.substitute(enc.types(s), *pairs) == enc.types(s)):
            return f"the types are not invariant under {_shown(r)}"
        for k, tr in enumerate(trs):
            target = r.cpu(tr.cpu)
            guard, post = fired[k][0], sym.state(posts[k], r)
            for j, other in enumerate(trs):
                if other.action.name != tr.action.name or other.cpu != target:
                    continue
                g2 = z3.substitute(fired[j][0], *pairs)
                same = z3.And(guard == g2,
                              z3.Implies(guard, z3.And([a == z3.substitute(b, *pairs) for a, b in zip(post, posts[j])])))
                if _valid(q, same):
                    break
            else:
                return f"step {tr.name} on cpu{tr.cpu} renamed by {_shown(r)} is no step of the point"
    return sym


def close(sym: CpuSymmetry, cands: list[z3.ExprRef]) -> tuple[list[z3.ExprRef], list[int]]:
    """``cands`` with every renaming of each, and each one's orbit number (orbits that share a term are one)."""
    out: list[z3.ExprRef] = []
    where: dict[int, int] = {}
    parent: list[int] = []

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def add(e: z3.ExprRef, orbit: int | None) -> tuple[int, bool]:
        """Add ``e`` to ``orbit`` (None: an orbit of its own); False if it was there (its orbits merged)."""
        k = e.get_id()
        if k in where:
            if orbit is not None:
                a, b = find(where[k]), find(orbit)
                if a != b:
                    parent[b] = a
            return where[k], False
        where[k] = len(out)
        out.append(e)
        parent.append(len(parent) if orbit is None else find(orbit))
        return len(out) - 1, True

    gens = sym.generators()
    moves = [[z3.Var(j, z3.IntSort()) for j in g.slots] for g in gens]
    reader = SlotReader()
    everything: list[Renaming] | None = None
    for c in cands:
        check_interrupt()
        i, new = add(c, None)
        if not new:
            continue
        if not reader(c) & sym.cpu_slots:
            todo = [c]  # no CPU id read: a renaming only moves slots, and moves compose exactly
            while todo:
                e = todo.pop()
                for m in moves:
                    x = z3.substitute_vars(e, *m)
                    _, fresh = add(x, i)
                    if fresh:
                        todo.append(x)
        elif all(_moved(c, g, sym.cpu_slots) is not None for g in gens):
            todo = [c]  # plain moves compose exactly: the generators' closure is the orbit
            while todo:
                e = todo.pop()
                for g in gens:
                    x = _moved(e, g, sym.cpu_slots)
                    if x is None:  # (a CPU-id constant left the role's CPUs: cannot happen for a moved term)
                        raise AssertionError("a renamed term no longer renames")
                    _, fresh = add(x, i)
                    if fresh:
                        todo.append(x)
        elif math.factorial(len(sym.cpus)) <= MAX_GROUP:
            if everything is None:
                everything = sym.group()
            for g in everything:
                add(sym.image(c, g), i)
        else:  # too many copies by cases: left out, which only makes the answer smaller (never wrong)
            out.pop()
            parent.pop()
            del where[c.get_id()]
    return out, [find(i) for i in range(len(out))]


def _valid(q: z3.Solver, f: z3.BoolRef) -> bool:
    q.push()
    q.add(z3.Not(f))
    r = q.check()
    q.pop()
    return r == z3.unsat


def _shown(r: Renaming) -> str:
    return "(" + " ".join(f"cpu{c}->cpu{d}" for c, d in r.cpus if c != d) + ")"


def _moved(e: z3.ExprRef, r: Renaming, cpu_slots: frozenset[int]) -> z3.ExprRef | None:
    """``CpuSymmetry.image`` where it is a plain rewrite: slots moved, and a CPU-id slot only compared for
    (in)equality with another CPU-id slot or a number, or against NOBODY (``< 0``, ``>= 0``, ``== -1``); None
    where the term uses a CPU id any other way."""
    memo: dict[int, z3.ExprRef | None] = {}
    slot_of = {i: z3.Var(j, z3.IntSort()) for i, j in enumerate(r.slots)}
    fwd = dict(r.cpus)

    def go(t: z3.ExprRef) -> z3.ExprRef | None:
        key = t.get_id()
        if key in memo:
            return memo[key]
        out = _go(t)
        memo[key] = out
        return out

    def _go(t: z3.ExprRef) -> z3.ExprRef | None:
        if z3.is_var(t):
            i = z3.get_var_index(t)
            return None if i in cpu_slots else slot_of[i]
        if not z3.is_app(t) or t.num_args() == 0:
            return t
        k = t.decl().kind()
        ch = t.children()
        if len(ch) == 2 and any(_is_cpu_var(a, cpu_slots) for a in ch):
            a, b = ch
            if _is_cpu_var(a, cpu_slots) and _is_cpu_var(b, cpu_slots) and k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
                return t.decl()(slot_of[z3.get_var_index(a)], slot_of[z3.get_var_index(b)])
            var, num, flipped = (a, b, False) if _is_cpu_var(a, cpu_slots) else (b, a, True)
            if not z3.is_int_value(num):
                return None
            v = num.as_long()
            x = slot_of[z3.get_var_index(var)]
            if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
                # the slot's value c at the original is fwd[c] at the renamed state
                w = z3.IntVal(fwd.get(v, v))
                return (x == w) if k == z3.Z3_OP_EQ else (x != w)
            if (k, v, flipped) in _NOBODY_TESTS:
                return t.decl()(num, x) if flipped else t.decl()(x, num)
            return None
        args = []
        for c in ch:
            g = go(c)
            if g is None:
                return None
            args.append(g)
        return t.decl()(*args)

    return go(e)


#: (comparison, number, number on the left) that ask only whether a CPU id is NOBODY: any renaming keeps them.
_NOBODY_TESTS = frozenset({(z3.Z3_OP_LT, 0, False), (z3.Z3_OP_GE, 0, False), (z3.Z3_OP_LE, -1, False),
                           (z3.Z3_OP_GT, -1, False), (z3.Z3_OP_GT, 0, True), (z3.Z3_OP_LE, 0, True),
                           (z3.Z3_OP_GE, -1, True), (z3.Z3_OP_LT, -1, True)})


def _is_cpu_var(t: z3.ExprRef, cpu_slots: frozenset[int]) -> bool:
    return z3.is_var(t) and z3.get_var_index(t) in cpu_slots
