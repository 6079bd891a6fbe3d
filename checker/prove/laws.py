# SPDX-License-Identifier: GPL-2.0-only
"""Candidate invariants at one point read off the transitions themselves: modular facts and conservation laws.

IC3/PDR and the generalisation of its invariants (``checker.prove.fixed``,
``checker.prove.generalise``) find per-CPU facts, but not the facts a carry
walk rests on: that a counter only ever holds whole multiples of the carry
bit below it, and that what every counter keeps below its carry bit, the
carries in flight and the top add up to everything added. The counter tree
(``percpu_counter_tree``) needed three hand-written lemmas for them. Here
they are found from the point's ``PerN`` terms alone:

- the moduli: every constant ``m`` the steps divide by (``x // m``,
  ``x % m``: the carry bits);
- modular candidates, for each numeric slot ``x`` and modulus ``m``:
  ``x % m == 0``; and for two slots of the same row of a role (a task's
  ``at`` and ``carry``) and each value ``k`` the steps compare the first
  with: ``x == k => y % m == 0``, ``x == k => y == 0``, ``x == k => y != 0``;
- bounds: each number within the values a step compares it with, plus or
  minus one (``events > T`` gives ``events <= T + 1``), and 0;
- the spec's vocabulary templates (``checker.prove.generalise.templates``:
  a lock's holder, a number that is 0 at a place in the code, the declared
  per-CPU bounds and products of them) where the spec has a symmetric role;
- conservation laws ``sum_k a_k * F_k == constant`` over the features
  ``F``: each numeric slot, each slot modulo each modulus, and a process
  function's register at each place of its code, summed over the rows
  (``Sum_t If(pc[t] == place, count[t], 0)``: an add's amount in flight
  between the fold and the sub), coefficients
  in -1..1, found by counterexample-guided search (a law that some step
  breaks from some state of the facts kept so far gives that state, and the
  next coefficients must fit it too), one law for each shared scalar whose
  coefficient is fixed at 1 (the ghost ``E`` of everything added).

Nothing here is a verdict. Houdini keeps the modular candidates that are
inductive together, and a law is one every step keeps from a state of
them; the facts, then the laws, then the claims are proved by the ordinary
induction (``checker.prove.inductive``), each assuming only what it proved
before: only that induction's answer is reported. A point's grouped laws
(``Laws.portable``) are tried first at the next point of a sweep.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Sequence

import z3

from checker.interrupts import check as check_interrupt
from checker.language.compile import Model
from checker.prove.cases import fixes, split, walk
from checker.prove.encoding import PerN
from checker.prove.horn import flat, slot_invariant, slot_names
from checker.prove.inductive import Proof, prove_invariants
from checker.prove.solver import Solver, canonical_model, fresh_context, seeded, seeded_optimize
from checker.result import HOLDS
from checker.types import BoolType, CpuIdType, Enum

#: Rounds of the counterexample-guided search for one law before it gives up.
MAX_ROUNDS = 400
#: Laws asked for each shared scalar fixed at coefficient 1.
LAWS_PER_ANCHOR = 2
#: Candidates from which a point's row facts are found at each role's first row and copied (``_by_rows``).
BY_ROWS_FROM = 1000
#: Values of a slot a conditional candidate is split on (``x == k``): at most this many.
MAX_CASES = 12
#: Laws of one search set aside because Z3 could not tell whether some step keeps them: past this many the
#: search gives up (each costs up to the solver's whole budget).
MAX_UNDECIDED = 4


#: A grouped conservation law by its features' signatures (``_signature``) and coefficients: a law found at one
#: point in a form another point of the spec can try (``conservation_laws``' hints).
Portable = dict[tuple, int]


@dataclass
class Laws:
    """The candidates found at one point (over ``Var(i)``, the point's slots) and what the search did."""

    modular: list[z3.ExprRef] = field(default_factory=list)
    conservation: list[z3.ExprRef] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # the conservation laws kept, solved for their ghost
    moduli: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the grouped conservation laws by feature signature (``_signature``): hints for another point's search
    portable: list[Portable] = field(default_factory=list)


def moduli(steps: list[tuple[z3.BoolRef, list[z3.ArithRef]]]) -> list[int]:
    """Every constant > 1 the steps divide by or take a remainder by, ascending."""
    found: set[int] = set()
    seen: set[int] = set()
    for guard, post in steps:
        for root in [guard, *post]:
            for x in walk(root, seen):
                if z3.is_app(x) and x.decl().kind() in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_REM) \
                        and z3.is_int_value(x.arg(1)) and x.arg(1).as_long() > 1:
                    found.add(x.arg(1).as_long())
    return sorted(found)


def _compared(steps: list[tuple[z3.BoolRef, list[z3.ArithRef]]], slot: z3.ArithRef,
              kinds: tuple[int, ...] = (z3.Z3_OP_EQ,)) -> set[int]:
    """The numbers a step compares ``slot`` with (for equality by default: a task's place in its walk,
    ``at == 2``; with ``kinds``, by those comparisons, in the guard or in the effect's ``If``)."""
    out: set[int] = set()
    seen: set[int] = set()
    for guard, post in steps:
        for x in [y for root in ([guard] if kinds == (z3.Z3_OP_EQ,) else [guard, *post]) for y in walk(root, seen)]:
            if z3.is_app(x) and x.decl().kind() in kinds and len(x.children()) == 2:
                a, b = x.children()
                for u, v in ((a, b), (b, a)):
                    if u.eq(slot) and z3.is_int_value(v):
                        out.add(v.as_long())
    return out


class _Point:
    """The point's slots, their kinds, and its steps from one symbolic state."""

    def __init__(self, model: Model):
        self.model = model
        self.enc = PerN(model)
        self.names = slot_names(self.enc)
        self.s = self.enc.fresh("")
        self.slots = flat(self.enc, self.s)
        self.init = flat(self.enc, self.enc.initial())
        self.steps = []
        for tr in self.enc.transitions():
            guard, t = self.enc.fire(tr, self.s)
            if not z3.is_false(guard):
                self.steps.append((guard, flat(self.enc, t)))
        self.base = [v.split("[", 1)[0] for v in self.names]
        types = [model.vars[b].type for b in self.base]
        # Slots some step writes: the rest keep their initial value (a role's rows at another role's
        # CPUs), and a law or a fact about them says nothing.
        moving = {i for _, post in self.steps for i, x in enumerate(post) if not x.eq(self.slots[i])}
        # Numbers: not flags, CPU ids or enum places, which no modulus or sum speaks of.
        self.numeric = [i for i, t in enumerate(types) if i in moving
                        and not isinstance(t, (BoolType, CpuIdType, Enum))]
        self.moving = moving
        self.types = self.enc.types(self.s)
        self._index = {x.get_id(): i for i, x in enumerate(self.slots)}

    def fixes(self, c: z3.ExprRef) -> tuple[int, int] | None:
        """``(i, k)`` when ``c`` tests ``slot i == k`` (a task's level: ``level == 2``), else None."""
        return fixes(self._index, c)

    def row(self, i: int) -> tuple[str | None, int | None]:
        """(role, index) of a per-CPU slot of a role; (None, None) for a shared one or an array's."""
        b = self.base[i]
        v = self.model.vars[b]
        role = getattr(v, "role", None)
        if b not in self.model.tupled or getattr(v, "kind", None) == "array" or role is None:
            return None, None
        return role, int(self.names[i].split("[", 1)[1][:-1])

    def rows(self) -> dict[tuple[str, int], list[int]]:
        """The slots of each row of a role (a CPU's or a task's), by (role, index)."""
        out: dict[tuple[str, int], list[int]] = {}
        for i in range(len(self.slots)):
            role, k = self.row(i)
            if role is not None:
                out.setdefault((role, k), []).append(i)
        return out


class _At(NamedTuple):
    """A feature term's condition: the row's program counter (a slot) at one place of its function."""
    pc: int
    place: int


def modular_candidates(pt: _Point, mods: list[int], only: set[int] | None = None) -> list[z3.ExprRef]:
    """``x % m == 0`` for each numeric slot, and the conditional facts of two slots of one row
    (``only``: of these slots and their rows alone)."""
    out: list[z3.ExprRef] = []
    var = [z3.Var(i, z3.IntSort()) for i in range(len(pt.slots))]
    numeric = [i for i in pt.numeric if only is None or i in only]
    for i in numeric:
        out += [var[i] % m == 0 for m in mods]
    # Bounds: each number within the values its steps compare it with (``events > T``: ``events <= T + 1``).
    order = (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT, z3.Z3_OP_EQ)
    for i in numeric:
        for v in sorted(_compared(pt.steps, pt.slots[i], order) | {0})[:MAX_CASES]:
            out += [var[i] <= v + d for d in (-1, 0, 1)] + [var[i] >= v + d for d in (-1, 0, 1)]
    for members in pt.rows().values():
        members = [i for i in members if i in pt.moving and (only is None or i in only)]
        for x, y in itertools.permutations(members, 2):
            if y not in pt.numeric:
                continue
            cases = sorted(_compared(pt.steps, pt.slots[x]))[:MAX_CASES]
            for k in cases:
                when = var[x] == k
                out += [z3.Implies(when, var[y] == 0), z3.Implies(when, var[y] != 0)]
                out += [z3.Implies(when, var[y] % m == 0) for m in mods]
    return out


def houdini_split(pt: _Point, cands: list[z3.ExprRef], known: list[z3.ExprRef], timeout: float | None
                  ) -> list[z3.ExprRef]:
    """The largest subset of ``cands`` that holds initially and is inductive together with ``known`` (facts
    already proved inductive at the point). A step is asked in its cases (``_cases``), and whole where Z3
    cannot tell; a step still undecided is asked of each candidate alone, and what is still undecided is
    dropped (never kept on trust)."""
    slots, init = pt.slots, pt.init

    def solver() -> z3.Solver:
        return seeded(timeout)

    def by_cases(pre: list, goal: z3.BoolRef, guard: z3.BoolRef, post: list
                 ) -> tuple[z3.CheckSatResult, z3.ModelRef | None]:
        """Whether ``goal`` can hold after ``pre``: in the step's cases first when it has several, then whole
        if Z3 cannot tell (the counter tree's carry at 5 CPUs: the whole question undecided after 25 minutes
        of one core, unsat in its cases in 29 s)."""
        cases = _cases(pt, guard, post)
        for asked in ([cases] if len(cases) > 1 else []) + [[z3.BoolVal(True)]]:
            q = solver()
            q.add(*pre)
            r, m = _ask(q, goal, asked, timeout, canonical=False)
            if r != z3.unknown:
                return r, m
        return z3.unknown, None

    alive = []
    for c in cands:
        q = solver()
        q.add(z3.Not(z3.substitute_vars(c, *init)))
        if q.check() == z3.unsat:
            alive.append(c)
    hyp_known = [z3.substitute_vars(c, *slots) for c in known]
    changed = True
    while changed and alive:
        changed = False
        for guard, post in pt.steps:
            while alive:
                check_interrupt()
                pre = [pt.types, guard, *hyp_known, *[z3.substitute_vars(c, *slots) for c in alive]]
                after = [z3.substitute_vars(c, *post) for c in alive]
                r, m = by_cases(pre, z3.Not(z3.And(after)), guard, post)
                if r == z3.unsat:
                    break
                if r == z3.sat:
                    broken = {i for i, f in enumerate(after) if z3.is_false(m.eval(f, model_completion=True))}
                else:
                    broken = {i for i, f in enumerate(after) if by_cases(pre, z3.Not(f), guard, post)[0] != z3.unsat}
                    if not broken:
                        break
                alive = [c for i, c in enumerate(alive) if i not in broken]
                changed = True
    return alive


def _law_text(pt: _Point, feats: list, law: list[int], anchor: int, c0: z3.ExprRef) -> str:
    """``s.exact == s.approx + s.carry[2] + s.level0[0] % 2 ...``: the law solved for its anchor."""
    terms = []
    for a, f in zip(law, feats):
        for i, m in f:
            if not a or (i == anchor and m is None):
                continue
            if isinstance(m, _At):
                place = pt.model.vars[pt.base[m.pc]].type.show(m.place)
                name = f"If(s.{pt.names[m.pc]} == {place}, s.{pt.names[i]}, 0)"
            else:
                name = f"s.{pt.names[i]}" + ("" if m is None else f" % {m}")
            terms.append(("- " if a > 0 else "+ ") + name)  # moved to the other side
    const = c0.as_long() if z3.is_int_value(c0) else 0
    right = " ".join(terms).lstrip("+ ") if terms else "0"
    if right.startswith("- "):
        right = "-" + right[2:]
    return f"s.{pt.names[anchor]} == {right}" + (f" + {const}" if const else "")


def conservation_laws(pt: _Point, mods: list[int], known: list[z3.ExprRef], timeout: float | None,
                      notes: list[str], texts: dict[int, str] | None = None, hints: Sequence[Portable] = (),
                      portable: list[Portable] | None = None) -> list[z3.ExprRef]:
    """Linear laws ``sum a_k F_k == c`` every step keeps from a state of ``known`` (see the module text).

    A feature is a sum of slot terms (``x`` or ``x % m``). The search is first over grouped features, one
    coefficient for all the slots alike (``_groups``), which is small at any size; only an anchor with no
    grouped law is searched again one slot at a time (a coefficient a slot, a hundred and more at 8 CPUs).
    ``hints``: grouped laws found at another point of the spec (``portable``, which gets this point's), each
    tried here before the search, and taken only if every step keeps it here too."""
    single: list[tuple] = [((i, None),) for i in pt.numeric] + \
        [((i, m),) for i in pt.numeric for m in mods if pt.row(i)[0] is not None or pt.base[i] in pt.model.tupled]
    shared = [i for i in pt.numeric if pt.base[i] not in pt.model.tupled]
    single += [((i, m),) for i in shared for m in mods]

    def value(slots: list[z3.ArithRef], f: tuple) -> z3.ArithRef:
        return z3.Sum([_term(slots, i, m) for i, m in f])

    hyp_known = [z3.substitute_vars(c, *pt.slots) for c in known]
    out: list[z3.ExprRef] = []
    texts = {} if texts is None else texts
    checkers = _checkers(pt, hyp_known, timeout)
    # A law through a shared variable is one through a ghost of it (``count + Sum(local) == E``) when the
    # spec keeps one: ghosts first, and only them when there are any.
    ghosts = [i for i in shared if getattr(pt.model.vars[pt.base[i]], "kind", None) == "ghost"]
    own = _own_moduli(pt)
    grouped = _groups(pt, own)
    signs = [_signature(pt, own, f) for f in grouped]
    for anchor in ghosts or shared:
        found: list[list[int]] = []
        for feats in (grouped, single):
            if ((anchor, None),) not in feats:
                continue
            a_index = feats.index(((anchor, None),))
            for _ in range(LAWS_PER_ANCHOR):
                law = _hinted(pt, feats, signs, a_index, found, hints, checkers, value, timeout) \
                    if feats is grouped else None
                if law is None:
                    law = _search(pt, feats, a_index, found, checkers, value, timeout, why := [])
                if law is None:
                    notes += [f"the search for a law through {pt.names[anchor]} ended: {w}" for w in why]
                    break
                found.append(law)
                if feats is grouped and portable is not None:
                    portable.append({g: a for g, a in zip(signs, law) if a})
                var = [z3.Var(i, z3.IntSort()) for i in range(len(pt.slots))]
                lhs = z3.Sum([a * value(var, f) for a, f in zip(law, feats) if a])
                c0 = z3.simplify(z3.Sum([a * value(pt.init, f) for a, f in zip(law, feats) if a]))
                out.append(lhs == c0)
                texts[out[-1].get_id()] = _law_text(pt, feats, law, anchor, c0)
            if found:
                break
        if not found:
            notes.append(f"no conservation law through {pt.names[anchor]}")
    return out


def _signature(pt: _Point, own: dict[int, set[int]], f: tuple) -> tuple:
    """A grouped feature by what it is at any size: its variable, the moduli the steps divide it by, and its
    term (the slot, a modulus, a place in the code), so that a law found at one point can be tried at another."""
    i, m = f[0]
    return pt.base[i], tuple(sorted(own[i])), ("at", m.place) if isinstance(m, _At) else m


def _hinted(pt: _Point, feats: list, signs: list[tuple], anchor: int, found: list[list[int]],
            hints: Sequence[Portable], checkers: list, value, timeout: float | None) -> list[int] | None:
    """The first of ``hints`` (laws found at another point) that is a law here: its features all here, its
    anchor's coefficient 1, no law found already inside it (as ``_search`` asks), and kept by every step."""
    for hint in hints:
        if not set(hint) <= set(signs):
            continue
        law = [hint.get(g, 0) for g in signs]
        if law[anchor] != 1 or any(all(law[k] for k, v in enumerate(old) if v) for old in found):
            continue
        bad, undecided = _broken(pt, feats, law, checkers, value, timeout)
        if bad is None and not undecided:
            return law
    return None


def _term(slots: list, i: int, m: int | _At | None) -> z3.ArithRef:
    """A feature's term for slot ``i``: the slot, the slot modulo ``m``, or, for an ``_At``, the slot where its
    row's program counter is at that place and 0 elsewhere."""
    if m is None:
        return slots[i]
    if isinstance(m, _At):
        return z3.If(slots[m.pc] == m.place, slots[i], 0)
    return slots[i] % m


def _at_places(pt: _Point) -> list[tuple]:
    """Grouped features for the registers of a process function (``adders_count``): per register and per
    place its row's program counter is compared with, the register's values at that place summed over the
    rows (``Sum_t If(pc[t] == place, count[t], 0)``): what an add holds in flight between two of its steps,
    which a conservation law through the ghost of everything added must count."""
    by_base: dict[tuple[str, int], list[tuple[int, int]]] = {}  # (register, place) -> [(slot, its row's pc)]
    places: dict[str, list[int]] = {}
    for (role, _k), slots in pt.rows().items():
        members = {pt.base[i]: i for i in slots}
        pc = members.get(f"{role}_pc")
        if pc is None:
            continue
        if role not in places:
            places[role] = sorted(_compared(pt.steps, pt.slots[pc]))[:MAX_CASES]
        for base, i in members.items():
            if i in pt.numeric and base.startswith(f"{role}_"):
                for v in places[role]:
                    by_base.setdefault((base, v), []).append((i, pc))
    return [tuple((i, _At(pc, v)) for i, pc in members) for (_base, v), members in by_base.items()]


#: Z3's budget for whether an index test can hold where a step picks a slot (``_own_moduli``): a test it cannot
#: decide counts as one that can (the slot keeps the modulus).
PICK_SECONDS = 10.0


def _own_moduli(pt: _Point) -> dict[int, set[int]]:
    """For each numeric slot, the constants a step divides the slot itself by (``x // m``, ``x % m``, also of
    ``x + d``, ``-x`` or ``res - inc`` with ``res = x + inc``: a counter's carry bit, read where its new value
    is tested), not what it divides a value computed from it by. A slot a step picks by an index (a process
    function's ``item[item_of(level, cpu)]``: ``If(idx == 1, item[1], item[0])``) counts as each slot it can
    pick there: inside ``If(level == 2, ...)`` the index is read with ``level`` 2, and a slot whose index
    test cannot hold then (Z3 asked: ``4 + cpu % 2 == 1``) is not picked (the tree's items take the carry
    bit of their own level only)."""
    out: dict[int, set[int]] = {i: set() for i in pt.numeric}
    index = {pt.slots[i].get_id(): i for i in pt.numeric}
    memo: dict[int, set[int]] = {}
    possible: dict[int, bool] = {}
    held: list[z3.ExprRef] = []  # the terms made here, alive while their ids are remembered

    def can_hold(c: z3.BoolRef) -> bool:
        if c.get_id() not in possible:
            held.append(c)
            q = seeded(PICK_SECONDS)
            q.add(pt.types, c)
            possible[c.get_id()] = q.check() != z3.unsat
        return possible[c.get_id()]

    def direct(a: z3.ExprRef) -> set[int]:
        if a.get_id() in index:
            return {index[a.get_id()]}
        if a.get_id() not in memo:
            got: set[int] = set()
            if z3.is_app(a) and a.decl().kind() in (z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_UMINUS, z3.Z3_OP_MUL):
                for c in a.children():
                    got |= direct(c)
            elif z3.is_app_of(a, z3.Z3_OP_ITE):
                cond = a.arg(0)
                got = (direct(a.arg(1)) if can_hold(cond) else set()) \
                    | (direct(a.arg(2)) if can_hold(z3.Not(cond)) else set())
            memo[a.get_id()] = got
        return memo[a.get_id()]

    seen: set[tuple[int, tuple]] = set()
    todo: list[tuple[z3.ExprRef, tuple]] = [(root, ()) for guard, post in pt.steps for root in [guard, *post]]
    while todo:
        x, env = todo.pop()
        if (x.get_id(), env) in seen or not z3.is_app(x):
            continue
        seen.add((x.get_id(), env))
        ch = x.children()
        if z3.is_app_of(x, z3.Z3_OP_ITE) and (test := pt.fixes(ch[0])) is not None:
            todo += [(ch[0], env), (ch[1], tuple(sorted(env + (test,)))), (ch[2], env)]
            continue
        if x.decl().kind() in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_REM) \
                and z3.is_int_value(x.arg(1)) and x.arg(1).as_long() > 1:
            arg = z3.simplify(z3.substitute(x.arg(0), *[(pt.slots[i], z3.IntVal(k)) for i, k in env])) \
                if env else x.arg(0)
            held.append(arg)
            for i in direct(arg):
                out[i].add(x.arg(1).as_long())
        todo += [(c, env) for c in ch]
    return out


def _groups(pt: _Point, own: dict[int, set[int]] | None = None) -> list[tuple]:
    """Grouped features: the slots of one variable with the same own moduli (all CPUs' counters; a tree
    level's items, whose carry bit is their level's) summed, plain and modulo each own modulus."""
    own = _own_moduli(pt) if own is None else own
    keys: dict[tuple, list[int]] = {}
    for i in pt.numeric:
        keys.setdefault((pt.base[i], tuple(sorted(own[i]))), []).append(i)
    feats: list[tuple] = []
    for (_, ms), members in keys.items():
        if len(members) == 1:  # a lone slot keeps its own feature, which the anchor is looked up by
            feats.append(((members[0], None),))
        else:
            feats.append(tuple((i, None) for i in members))
        feats += [tuple((i, m) for i in members) for m in ms]
    return feats + _at_places(pt)


def _checkers(pt: _Point, hyp_known: list[z3.BoolRef], timeout: float | None) -> list[tuple[z3.Solver, list, list]]:
    """One solver per step holding its guard and the facts, asked again for each candidate law, with the step's
    cases (``_cases``)."""
    out = []
    for guard, post in pt.steps:
        q = seeded(timeout)
        q.add(pt.types, guard, *hyp_known)
        out.append((q, post, _cases(pt, guard, post)))
    return out


def _cases(pt: _Point, guard: z3.BoolRef, post: list) -> list[z3.BoolRef]:
    """The step's question split by the values of the slots its ``If``s test against numbers
    (``checker.prove.cases``)."""
    return split(pt.slots, [guard, *post])


def _ask(q: z3.Solver, goal: z3.BoolRef, cases: list[z3.BoolRef],
         timeout: float | None, canonical: bool = True) -> tuple[z3.CheckSatResult, z3.ModelRef | None]:
    """Whether ``goal`` can hold in ``q``, case by case: sat with the first case's model (its canonical one,
    ``canonical_model``, unless told otherwise), unsat when no case can, unknown when Z3 cannot tell for some
    case."""
    for case in cases:
        q.push()
        q.add(goal, case)
        r = q.check()
        m = (canonical_model(q, timeout) if canonical else q.model()) if r == z3.sat else None
        q.pop()
        if r != z3.unsat:
            return r, m
    return z3.unsat, None


def _broken(pt: _Point, feats: list, law: list[int], checkers: list, value, timeout: float | None
            ) -> tuple[tuple | None, bool]:
    """A step's counterexample to ``law`` (its model and the step's post-state), or None and whether Z3 could
    not tell for some step. In the steps' order, each with the whole budget (the checkers are incremental
    solvers whose answers depend on what they were asked before: a cheaper first pass and a reordering lost
    the tree's carries' law at 6 CPUs, benchmarks/lemma_free_laws.txt)."""
    undecided = False
    for q, post, cases in checkers:
        delta = z3.Sum([a * (value(post, f) - value(pt.slots, f)) for a, f in zip(law, feats) if a])
        r, cex = _ask(q, delta != 0, cases, timeout)
        if r == z3.sat:
            return (cex, post), False
        undecided = undecided or r == z3.unknown
    return None, undecided


def _search(pt: _Point, feats: list, anchor: int, found: list[list[int]], checkers: list, value,
            timeout: float | None, why: list[str]) -> list[int] | None:
    """Coefficients in -1..1 (``anchor``'s 1, not one of ``found``) that every step keeps, or None (and, when
    a limit ended the search rather than the coefficients running out, which one in ``why``)."""
    # In a context of the search's own, and each step's counterexample a canonical one: among laws as short as
    # each other the optimiser's choice follows term ids, which in the shared context depend on what the
    # process built before (the same point found other laws after another spec's proofs).
    ctx = fresh_context()
    coef = [z3.Int(f"%a{k}", ctx) for k in range(len(feats))]
    # The fewest features: a law plus a sum of features that are constant anyway is a law too, and
    # unreadable.
    synth = seeded_optimize(timeout, ctx)
    synth.minimize(z3.Sum([z3.If(a == 0, 0, 1) for a in coef]))
    synth.add(*[z3.And(a >= -1, a <= 1) for a in coef], coef[anchor] == 1)
    for law in found:  # not a law found already, nor one with a law found already inside it
        synth.add(z3.Or([a == 0 for a, v in zip(coef, law) if v]))
    set_aside = 0
    for _ in range(MAX_ROUNDS):
        check_interrupt()
        r = synth.check()
        if r != z3.sat:
            if r == z3.unknown:
                why.append("Z3 could not choose the next coefficients within its limit")
            elif set_aside:
                why.append(f"no law left but the {set_aside} set aside, Z3 undecided whether a step keeps them")
            return None
        m = synth.model()
        law = [m.eval(a, model_completion=True).as_long() for a in coef]
        bad, undecided = _broken(pt, feats, law, checkers, value, timeout)
        if bad is None and not undecided:
            return law
        if bad is None:
            # Z3 could not tell whether some step keeps this law, and found no step that breaks it: this law is
            # not taken, and the search goes on without it (a hard question about one wrong law used to end
            # the search for every law)
            set_aside += 1
            if set_aside > MAX_UNDECIDED:
                why.append(f"{set_aside} laws set aside, Z3 undecided whether a step keeps them")
                return None
            synth.add(z3.Or([a != v for a, v in zip(coef, law)]))
            continue
        zm, post = bad
        pre_v = [zm.eval(x, model_completion=True) for x in pt.slots]
        post_v = [zm.eval(x, model_completion=True) for x in post]
        # The next coefficients must keep this step from this state too.
        diff = [z3.simplify(value(post_v, f) - value(pre_v, f)) for f in feats]  # numbers: the state's values
        synth.add(z3.Sum([a * d.as_long() for a, d in zip(coef, diff)]) == 0)
    why.append(f"no law after {MAX_ROUNDS} rounds")
    return None


def _vocabulary_candidates(model: Model) -> list[z3.ExprRef]:
    """The spec's vocabulary templates (``checker.prove.generalise.templates``: a lock's holder, a place
    in the code where a number is 0, the declared per-CPU bounds) at this point, when it has a symmetric
    role: the per-CPU facts a lock-based spec's lemmas state."""
    from checker.prove.generalise import at_point, templates
    from checker.prove.houdini import symmetric_role

    role = symmetric_role(model)
    return at_point(model, templates(model, role)) if role is not None else []


def _by_rows(pt: _Point, mods: list[int], timeout: float | None, notes: list[str]) -> list[z3.ExprRef]:
    """The candidates of a large point, fewer: the facts of each role's first row (a task's ``at`` and
    ``carry``, a CPU's counter) are found there alone, then copied to every row of the role, beside the
    candidates of the slots no role owns (the tree's items, the sums). The rows of a role run the same code,
    so what holds of the first holds of each; Houdini proves the copies again with the rest."""
    first: dict[str, int] = {}
    rows: dict[tuple[str, int], dict[str, int]] = {}
    for i in range(len(pt.slots)):
        role, k = pt.row(i)
        # a per-CPU variable of a role has a slot at every CPU id; only the role's own ids are its rows
        if role is not None and k in pt.model.roles[role]:
            first[role] = min(first.get(role, k), k)
            rows.setdefault((role, k), {})[pt.base[i]] = i
    in_first = {i for (role, k), members in rows.items() if first[role] == k for i in members.values()}
    in_rows = {i for members in rows.values() for i in members.values()}
    found = houdini_split(pt, modular_candidates(pt, mods, in_first), [], timeout)
    out: list[z3.ExprRef] = []
    n = len(pt.slots)
    seen: set[int] = set()
    for (role, _), members in rows.items():
        base_of = rows[(role, first[role])]
        mine = [c for c in found if _slots_of(c) <= set(base_of.values())]
        # slot i of the first row -> the same variable's slot in this row; every other slot stays
        to = [z3.Var(members.get(pt.base[i], i) if i in base_of.values() else i, z3.IntSort()) for i in range(n)]
        for c in mine:
            g = z3.substitute_vars(c, *to)
            if g.get_id() not in seen:
                seen.add(g.get_id())
                out.append(g)
    out += modular_candidates(pt, mods, set(range(n)) - in_rows)
    notes.append(f"{len(found)} facts of the first row of each role copied to every row")
    return out


def _slots_of(e: z3.ExprRef) -> set[int]:
    out: set[int] = set()
    for x in walk(e, set()):
        if z3.is_var(x):
            out.add(z3.get_var_index(x))
    return out


def find_laws(model: Model, timeout: float | None, hints: Sequence[Portable] = ()
              ) -> tuple[list[z3.ExprRef], Laws]:
    """The modular facts and conservation laws inductive together at ``model``'s point (over ``Var(i)``);
    ``hints``: laws found at another point, tried first (``conservation_laws``)."""
    t0 = time.perf_counter()
    pt = _Point(model)
    mods = moduli(pt.steps)
    res = Laws(moduli=mods)
    if not mods:
        res.notes.append("the steps divide by no constant: no modular candidates")
    t1 = time.perf_counter()
    cands = modular_candidates(pt, mods)
    if len(cands) > BY_ROWS_FROM:
        cands = _by_rows(pt, mods, timeout, res.notes)
    facts = houdini_split(pt, cands + _vocabulary_candidates(model), [], timeout)
    res.modular = facts
    res.notes.append(f"modular facts {time.perf_counter() - t1:.1f}s")
    t1 = time.perf_counter()
    texts: dict[int, str] = {}
    res.conservation = conservation_laws(pt, mods, facts, timeout, res.notes, texts, hints, res.portable)
    res.notes.append(f"laws {time.perf_counter() - t1:.1f}s")
    # No Houdini for the laws: each holds initially (its constant is the initial state's) and every step keeps
    # it from any state of the facts (the search asked each), which are inductive alone; so the facts and
    # laws are inductive together (and the induction proves them again before they are used).
    res.text = [texts[x.get_id()] for x in res.conservation]
    kept = facts + res.conservation
    res.seconds = time.perf_counter() - t0
    return kept, res


def laws_alone(model: Model, timeout: float | None, known: list[z3.ExprRef] | None = None) -> list[z3.ExprRef]:
    """The conservation laws every step keeps from any state (from a state of ``known``, facts over
    ``Var(i)`` proved inductive here, if given), over ``Var(i)``: cheap candidates for a seed (an add's
    in-flight amount counted where its program counter is), each to be kept only where Houdini proves it."""
    pt = _Point(model)
    return conservation_laws(pt, moduli(pt.steps), known or [], timeout, [])


@dataclass
class LemmaFree:
    """The claims of one point proved with the facts found here in place of the spec's lemmas."""

    proofs: dict[str, Proof]
    kept: list[str]  # the conservation laws found, printed in the spec's words
    facts: int  # modular facts kept
    laws: Laws


#: The names the found facts and laws carry in the induction's obligations.
FACTS, FOUND = "found_facts", "found_laws"


def prove_lemma_free(model: Model, solver: Solver, tag: str,
                     progress: Callable[[int, int], None] | None = None, hints: Sequence[Portable] = ()
                     ) -> LemmaFree:
    """Every claim of ``model``'s point (lemmas left out) proved by the ordinary induction, strengthened by
    the modular facts and conservation laws found here. Each is proved again by the ordinary induction
    first, in the order they were found (the facts alone, then the laws with the facts assumed), and only then
    assumed in the claims' induction: one induction of them all asked the joint question of every claim,
    fact and law at each step (the counter tree's add at 5 CPUs: undecided in 20 minutes, and in 6 minutes
    for the facts and laws together). ``hints``: laws found at another point of the spec (``Laws.portable``),
    tried here first."""
    _, laws = find_laws(model, solver.timeout, hints)
    enc = PerN(model)
    claims = [p for p in model.properties if not getattr(p, "lemma", False)]
    proved: tuple = ()
    refused = None
    for name, found, doc in ((FACTS, laws.modular, "modular facts found at the point"),
                             (FOUND, laws.conservation, "conservation laws found at the point")):
        if found:
            prop = slot_invariant(enc, z3.And(found), name, doc)
            again = prove_invariants(enc, [prop], solver, f"{tag}.{name}", never_enabled=False, proved=proved)
            refused = next((pr for pr in again.values() if pr.verdict != HOLDS), None)
            if refused is not None:
                break  # the laws were found from states of the facts
            proved += (prop,)
    proofs = prove_invariants(enc, claims, solver, f"{tag}.laws", progress, proved=proved)
    if refused is not None:
        for pr in proofs.values():
            pr.notes.append(f"the found {'laws' if proved else 'facts'} were not proved again by induction "
                            f"({refused.name}: {refused.reason}); the claims were asked without them")
    return LemmaFree(proofs, list(laws.text), len(laws.modular), laws)


__all__ = ["FACTS", "FOUND", "LemmaFree", "Laws", "conservation_laws", "find_laws", "houdini_split", "laws_alone",
           "moduli", "modular_candidates", "prove_lemma_free"]
