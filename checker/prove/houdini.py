# SPDX-License-Identifier: GPL-2.0-only
"""Candidate invariants at a point, kept only if inductive together (Houdini), and where candidates come from.

Candidates come from an invariant proved at a smaller CPU count of the
symmetric role: each conjunct is copied for every way of placing the small
point's CPUs among the large point's (per-CPU slots renamed, CPU ids compared
for equality renamed with them). Houdini then drops every candidate that is
false initially or that some step from a state satisfying all of them
breaks, until the rest is inductive: what survives holds in every reachable
state. IC3/PDR takes it as known (``HornSystem.solve(known=...)``), which
spares Spacer rediscovering per-CPU facts at each size; the final invariant
is still proved again by induction before anything is reported.
"""
from __future__ import annotations

import itertools

import z3

from checker.interrupts import check as check_interrupt
from checker.language.compile import Model
from checker.prove.encoding import PerN
from checker.prove.horn import flat, slot_names
from checker.prove.solver import seeded
from checker.types import CpuIdType

#: At most this many placements of the small point's CPUs (k CPUs among N: N!/(N-k)!).
MAX_PLACEMENTS = 24


def candidates(small: Model, inv: z3.ExprRef, large: Model, role: str) -> list[z3.ExprRef]:
    """``inv`` (over ``Var(i)``, slots of ``small``) copied to ``large``'s slots for each placement of
    ``role``'s CPUs; a conjunct that cannot be renamed (a CPU id ordered against a CPU) is left out."""
    s_names = slot_names(PerN(small))
    l_index = {n: i for i, n in enumerate(slot_names(PerN(large)))}
    cpu_slots = {i for i, n in enumerate(s_names) if isinstance(small.vars[n.split("[", 1)[0]].type, CpuIdType)}
    role_vars = {n for n, v in small.vars.items() if getattr(v, "role", None) in (role, _default_role(small)) and n in small.tupled}
    s_cpus = list(small.roles[role])
    l_cpus = list(large.roles[role])
    if len(s_cpus) > len(l_cpus):
        return []
    conj = inv.children() if z3.is_and(inv) else [inv]
    out: list[z3.ExprRef] = []
    seen: set[int] = set()
    placements = itertools.islice(itertools.permutations(l_cpus, len(s_cpus)), MAX_PLACEMENTS)
    def total(base: str) -> z3.ArithRef:
        return z3.Sum([z3.Int(f"%l{l_index[f'{base}[{c}]']}") for c in l_cpus])

    # From one CPU, a fact about its slot may be one about the sum over all of them (conservation:
    # count + local[0] == E becomes count + local[0] + local[1] == E): each subset of the conjunct's
    # per-CPU variables summed, the rest placed; Houdini keeps what is true.
    summable = sorted(v for v in role_vars if not isinstance(small.vars[v].type, CpuIdType)) \
        if len(s_cpus) == 1 else []
    for place in placements:
        cpu_map = dict(zip(s_cpus, place))
        slot_map: list[z3.ExprRef | None] = []
        for n in s_names:
            base, _, rest = n.partition("[")
            if rest and base in role_vars:
                c = int(rest[:-1])
                target = f"{base}[{cpu_map.get(c, c)}]"
            else:
                target = n
            slot_map.append(z3.Int(f"%l{l_index[target]}") if target in l_index else None)
        for c in conj:
            used = sorted({s_names[i].partition("[")[0] for i in _vars(c)} & set(summable))
            for k in range(0, min(len(used), 3) + 1):
                for summed in itertools.combinations(used, k):
                    m = list(slot_map)
                    for i, n in enumerate(s_names):
                        if n.partition("[")[0] in summed:
                            m[i] = total(n.partition("[")[0])
                    for form in _forms(c, cpu_slots, s_cpus) if len(s_cpus) == 1 else (c,):
                        g = _rename(form, m, cpu_slots, cpu_map)
                        if g is not None and g.get_id() not in seen:
                            seen.add(g.get_id())
                            out.append(g)
                    if len(s_cpus) != 1 or not z3.is_or(c):
                        continue
                    # "some CPU": a literal about the one CPU's slots read as a disjunction over all CPUs
                    lits = []
                    for lit in c.children():
                        idx = _vars(lit)
                        if idx and all(s_names[i].partition("[")[0] in role_vars for i in idx):
                            alts = [_rename(lit, _placed(s_names, role_vars, l_index, d), cpu_slots,
                                            {s_cpus[0]: d}) for d in l_cpus]
                            lits += [a for a in alts if a is not None]
                        else:
                            lits.append(_rename(lit, m, cpu_slots, cpu_map))
                    if all(x is not None for x in lits):
                        g = z3.Or(lits)
                        if g.get_id() not in seen:
                            seen.add(g.get_id())
                            out.append(g)
    n = len(l_index)
    back = [(z3.Int(f"%l{i}"), z3.Var(i, z3.IntSort())) for i in range(n)]
    return [z3.substitute(g, *back) for g in out]


def _placed(names: list[str], role_vars: set[str], l_index: dict[str, int], cpu: int) -> list:
    """Slot map putting the one small CPU at ``cpu``."""
    out: list[z3.ExprRef | None] = []
    for n in names:
        base, _, rest = n.partition("[")
        target = f"{base}[{cpu}]" if rest and base in role_vars else n
        out.append(z3.Int(f"%l{l_index[target]}") if target in l_index else None)
    return out


def _forms(c: z3.ExprRef, cpu_slots: set[int], cpus: list[int]) -> list[z3.ExprRef]:
    """``c``, and with one CPU: ``c`` with "a CPU-id slot is not NOBODY" read as "it is that CPU"."""
    out = [c]
    g = _not_nobody_is(c, cpu_slots, cpus[0])
    if g is not None and not g.eq(c):
        out.append(g)
    return out


def _not_nobody_is(e: z3.ExprRef, cpu_slots: set[int], cpu: int) -> z3.ExprRef | None:
    if not z3.is_app(e) or not e.children():
        return e
    ch = e.children()
    k = e.decl().kind()
    if len(ch) == 2 and z3.is_var(ch[0]) and z3.get_var_index(ch[0]) in cpu_slots and z3.is_int_value(ch[1]):
        v = ch[1].as_long()
        if (k, v) in ((z3.Z3_OP_GT, -1), (z3.Z3_OP_GE, 0), (z3.Z3_OP_DISTINCT, -1)):
            return ch[0] == cpu
        return e
    if k == z3.Z3_OP_NOT and z3.is_app(ch[0]) and len(ch[0].children()) == 2:
        a, b = ch[0].children()
        if z3.is_var(a) and z3.get_var_index(a) in cpu_slots and z3.is_int_value(b):
            if (ch[0].decl().kind(), b.as_long()) in ((z3.Z3_OP_LE, -1), (z3.Z3_OP_LT, 0), (z3.Z3_OP_EQ, -1)):
                return a == cpu
            return e
    if e.decl().kind() in (z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_NOT, z3.Z3_OP_IMPLIES):
        args = [_not_nobody_is(x, cpu_slots, cpu) for x in ch]
        return e.decl()(*args)
    return e


def _vars(e: z3.ExprRef) -> set[int]:
    if z3.is_var(e):
        return {z3.get_var_index(e)}
    return set().union(*(_vars(c) for c in e.children())) if z3.is_app(e) else set()


def _rename(e: z3.ExprRef, slots: list, cpu_slots: set[int], cpu_map: dict[int, int]) -> z3.ExprRef | None:
    """``e`` with slot i as ``slots[i]`` and CPU ids compared with a CPU-id slot mapped; None if impossible."""
    if z3.is_var(e):
        return slots[z3.get_var_index(e)]
    if not z3.is_app(e) or not e.children():
        return e
    k = e.decl().kind()
    ch = e.children()
    if len(ch) == 2 and (z3.is_var(ch[0]) and z3.get_var_index(ch[0]) in cpu_slots and z3.is_int_value(ch[1])
                         or z3.is_var(ch[1]) and z3.get_var_index(ch[1]) in cpu_slots and z3.is_int_value(ch[0])):
        var, num = (ch[0], ch[1]) if z3.is_var(ch[0]) else (ch[1], ch[0])
        v = num.as_long()
        slot = slots[z3.get_var_index(var)]
        if slot is None:
            return None
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and v in cpu_map:
            mapped = z3.IntVal(cpu_map[v])
            return (slot == mapped) if k == z3.Z3_OP_EQ else (slot != mapped)
        if v in (-1, 0):  # NOBODY tests (x < 0, x >= 0, x == -1, ...) are about no CPU: kept as they are
            args = [slot if a.eq(var) else a for a in ch]
            return e.decl()(*args)
        return None
    args = []
    for c in ch:
        r = _rename(c, slots, cpu_slots, cpu_map)
        if r is None:
            return None
        args.append(r)
    return e.decl()(*args)


def houdini(enc: PerN, cands: list[z3.ExprRef], timeout: float | None) -> list[z3.ExprRef]:
    """The largest subset of ``cands`` (over ``Var(i)``) that holds initially and is inductive together."""
    s = enc.fresh("")
    slots = flat(enc, s)
    s0 = enc.initial()
    init = flat(enc, s0)
    alive = list(cands)

    def solver() -> z3.Solver:
        return seeded(timeout)

    q = solver()
    q.add(*enc.constraints())  # (an uninitialised local starts from one of its declared values)
    at0 = [z3.substitute_vars(c, *init) for c in alive]
    keep = []
    for c, f in zip(alive, at0):
        q.push()
        q.add(z3.Not(f))
        if q.check() == z3.unsat:
            keep.append(c)
        q.pop()
    alive = keep
    steps = [enc.fire(tr, s) for tr in enc.transitions()]
    changed = True
    while changed and alive:
        changed = False
        for guard, t in steps:
            check_interrupt()
            post = flat(enc, t)
            while alive:
                q = solver()
                q.add(enc.types(s), guard, *[z3.substitute_vars(c, *slots) for c in alive])
                after = [z3.substitute_vars(c, *post) for c in alive]
                q.add(z3.Not(z3.And(after)))
                r = q.check()
                if r == z3.unsat:
                    break
                if r == z3.unknown:  # cannot tell: keep only what is known safe, i.e. give up on all
                    return []
                m = q.model()
                broken = {i for i, f in enumerate(after) if z3.is_false(m.eval(f, model_completion=True))}
                alive = [c for i, c in enumerate(alive) if i not in broken]
                changed = True
    return alive


def _default_role(model: Model) -> str | None:
    """The ``role`` of a per-CPU variable of the role being generalised when it is declared without ``role=``:
    None when the spec has one role (its slots are that role's CPUs), otherwise a name no variable has."""
    return None if len(model.info.roles) == 1 else "%no role"


def symmetric_role(model: Model) -> str | None:
    """The first symmetric role with a count parameter: the one whose size the ladder grows."""
    for name, r in model.info.roles.items():
        if r.symmetric and isinstance(r.count, str):
            return name
    return None
