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
from typing import Any

import z3

from checker.interrupts import check as check_interrupt
from checker.language.compile import Model
from checker.prove.encoding import PerN
from checker.prove.horn import flat, slot_names
from checker.prove.slotsets import SlotReader
from checker.prove.solver import seeded
from checker.prove.symmetric import CpuSymmetry, close
from checker.types import CpuIdType

#: At most this many placements of the small point's CPUs (k CPUs among N: N!/(N-k)!).
MAX_PLACEMENTS = 24


def candidates(small: Model, inv: z3.ExprRef, large: Model, role: str) -> list[z3.ExprRef]:
    """``inv`` (over ``Var(i)``, slots of ``small``) copied to ``large``'s slots for each placement of
    ``role``'s CPUs; a conjunct that cannot be renamed (a CPU id ordered against a CPU) is left out."""
    s_names = slot_names(PerN(small))
    l_index = {n: i for i, n in enumerate(slot_names(PerN(large)))}
    cpu_slots = {i for i, n in enumerate(s_names) if isinstance(small.vars[n.split("[", 1)[0]].type, CpuIdType)}
    role_vars = set(role_variables(small, role))
    s_cpus = list(small.roles[role])
    l_cpus = list(large.roles[role])
    if len(s_cpus) > len(l_cpus):
        return []
    conj = inv.children() if z3.is_and(inv) else [inv]
    out: list[z3.ExprRef] = []
    seen: set[int] = set()
    placements = itertools.islice(itertools.permutations(l_cpus, len(s_cpus)), MAX_PLACEMENTS)
    def total(base: str) -> z3.ArithRef:
        return z3.Sum([_slot(l_index[f'{base}[{c}]']) for c in l_cpus])

    # From one CPU, a fact about its slot may be one about the sum over all of them (conservation:
    # count + local[0] == E becomes count + local[0] + local[1] == E): each subset of the conjunct's
    # per-CPU variables summed, the rest placed; Houdini keeps what is true.
    summable = sorted(v for v in role_vars if not isinstance(small.vars[v].type, CpuIdType)) \
        if len(s_cpus) == 1 else []
    plain: dict[int, tuple[bool, set[int], z3.ExprRef]] = {}  # per term: ``_shape``'s answer, kept
    placed = {d: _placed(s_names, role_vars, l_index, d) for d in l_cpus} if len(s_cpus) == 1 else {}
    base_of = [n.partition("[")[0] for n in s_names]
    totals: dict[str, z3.ArithRef] = {}
    # per conjunct, once: its summable variables and its forms (the same for every placement)
    per_conj = [(c, sorted({base_of[i] for i in _shape(c, cpu_slots, plain)[1]} & set(summable)),
                 _forms(c, cpu_slots, s_cpus) if len(s_cpus) == 1 else (c,)) for c in conj]
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
            slot_map.append(_slot(l_index[target]) if target in l_index else None)
        for c, used, forms in per_conj:
            for k in range(0, min(len(used), 3) + 1):
                for summed in itertools.combinations(used, k):
                    m = list(slot_map)
                    if summed:
                        for i, b in enumerate(base_of):
                            if b in summed:
                                m[i] = totals[b] if b in totals else totals.setdefault(b, total(b))
                    for form in forms:
                        g = _renamed(form, m, cpu_slots, cpu_map, plain)
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
                            alts = [_rename(lit, placed[d], cpu_slots, {s_cpus[0]: d}) for d in l_cpus]
                            lits += [a for a in alts if a is not None]
                        else:
                            lits.append(_rename(lit, m, cpu_slots, cpu_map))
                    if all(x is not None for x in lits):
                        g = z3.Or(lits)
                        if g.get_id() not in seen:
                            seen.add(g.get_id())
                            out.append(g)
    return out


def _slot(i: int) -> z3.ArithRef:
    """The large point's slot ``i`` (``Var(i)``; a renaming substitutes every slot at once, so a slot of the
    small point is never renamed twice)."""
    return z3.Var(i, z3.IntSort())


def _renamed(e: z3.ExprRef, slots: list, cpu_slots: set[int], cpu_map: dict[int, int],
             plain: dict[int, tuple[bool, set[int], z3.ExprRef]]) -> z3.ExprRef | None:
    """``_rename``; a term that compares no CPU-id slot with a number is renamed by Z3 in one call."""
    simple, used = _shape(e, cpu_slots, plain)
    if not simple:
        return _rename(e, slots, cpu_slots, cpu_map)
    if any(slots[i] is None for i in used):
        return None
    filler = z3.IntVal(0)
    return z3.substitute_vars(e, *[filler if x is None else x for x in slots])


def _shape(e: z3.ExprRef, cpu_slots: set[int],
           plain: dict[int, tuple[bool, set[int], z3.ExprRef]]) -> tuple[bool, set[int]]:
    """(``e`` compares no CPU-id slot with a number, the slots it reads), once per term: kept by AST id with
    the term itself, so that the id is not given to another term (a ``_forms`` variant) while ``plain`` lives."""
    key = e.get_id()
    got = plain.get(key)
    if got is None:
        got = plain[key] = (not _compares_cpu_ids(e, cpu_slots), _vars(e), e)
    return got[0], got[1]


def _compares_cpu_ids(e: z3.ExprRef, cpu_slots: set[int]) -> bool:
    """Whether ``e`` has a CPU-id slot beside a number (what ``_rename`` maps or refuses)."""
    if not z3.is_app(e):
        return False
    ch = e.children()
    if len(ch) == 2 and any(z3.is_var(a) and z3.get_var_index(a) in cpu_slots and z3.is_int_value(b)
                            for a, b in ((ch[0], ch[1]), (ch[1], ch[0]))):
        return True
    return any(_compares_cpu_ids(c, cpu_slots) for c in ch)


def _placed(names: list[str], role_vars: set[str], l_index: dict[str, int], cpu: int) -> list:
    """Slot map putting the one small CPU at ``cpu``."""
    out: list[z3.ExprRef | None] = []
    for n in names:
        base, _, rest = n.partition("[")
        target = f"{base}[{cpu}]" if rest and base in role_vars else n
        out.append(_slot(l_index[target]) if target in l_index else None)
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


def _vars(e: z3.ExprRef) -> frozenset[int]:
    """The slots ``e`` reads (``SlotReader``, for one term)."""
    return SlotReader()(e)


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


def houdini(enc: PerN, cands: list[z3.ExprRef], timeout: float | None,
            symmetry: CpuSymmetry | None = None) -> list[z3.ExprRef]:
    """The largest subset of ``cands`` (over ``Var(i)``) that holds initially and is inductive together.
    That subset is unique, so which counterexample a query returns changes the work, not the answer. Each
    query asks whether some live candidate fails (initially, or after a step from a state where all live
    ones hold), and its model drops every candidate it breaks. One solver serves every step, under the live
    candidates (asserted again only when some are dropped), so what it learns carries from step to step;
    within a step, those just dropped are still assumed, which only drops fewer: the rounds go on until one
    drops nothing, and that one asked every step under exactly the survivors. A step is asked only about the
    candidates that read a slot it changes: the others are the same after it.

    With ``symmetry`` (proved: ``checker.prove.symmetric``), the candidates are closed under its renamings
    first, only the role's first CPU's steps are asked, and a failing candidate drops its whole orbit."""
    orbit: list[int] | None = None
    if symmetry is not None:
        cands, orbit = close(symmetry, cands)
    s = enc.fresh("")
    slots = flat(enc, s)
    init = flat(enc, enc.initial())
    q = seeded(timeout)
    q.add(*enc.constraints())  # (an uninitialised local starts from one of its declared values)
    at_init = _substitution(init)
    false_at_init = [_not(at_init(c)) for c in cands]
    dropped = _failing(q, false_at_init, list(range(len(cands))))
    if dropped is None:  # cannot tell of them all at once: each alone, keeping those that surely hold
        dropped = {i for i, f in enumerate(false_at_init) if _can_hold(q, f)}
    if orbit is not None:
        gone = {orbit[i] for i in dropped}
        dropped = {i for i in range(len(cands)) if orbit[i] in gone}
        orbit = [o for i, o in enumerate(orbit) if i not in dropped]
    alive = [c for i, c in enumerate(cands) if i not in dropped]
    if not alive:
        return []
    reader = SlotReader()
    reads = [reader(c) for c in alive]
    q = seeded(timeout)
    q.add(enc.types(s))
    now = _substitution(slots)
    live = list(range(len(alive)))
    q.push()
    q.add(now(_and_of([alive[i] for i in live])))  # (one term, substituted once: they share most subterms)
    transitions = enc.transitions()
    asked_steps = symmetry.first_steps(transitions) if symmetry is not None else range(len(transitions))
    steps = [enc.fire(transitions[k], s) for k in asked_steps]
    fails: dict[int, dict[int, z3.ExprRef]] = {}  # per step, "candidate i fails after it", made when first asked
    changed = True
    while changed and live:
        changed = False
        for k, (guard, t) in enumerate(steps):
            check_interrupt()
            if k not in fails:
                post = flat(enc, t)
                moved = {j for j, (a, b) in enumerate(zip(slots, post)) if not a.eq(b)}
                after = _substitution(post)
                fails[k] = {i: _not(after(c)) for i, c in enumerate(alive) if reads[i] & moved}
            asked = [i for i in live if i in fails[k]]
            if not asked:
                continue
            q.push()
            q.add(guard)
            out = _failing(q, fails[k], asked)
            q.pop()
            if out is None:  # cannot tell: keep only what is known safe, i.e. give up on all
                return []
            if out:
                if orbit is not None:
                    gone = {orbit[i] for i in out}
                    out = {i for i in live if orbit[i] in gone}
                live = [i for i in live if i not in out]
                changed = True
                q.pop()  # (the live candidates' scope, made again with the survivors)
                q.push()
                if live:
                    q.add(now(_and_of([alive[i] for i in live])))
    return [alive[i] for i in live]


def _failing(q: z3.Solver, fails: Any, asked: list[int]) -> set[int] | None:
    """The indices ``i`` of ``asked`` for which ``fails[i]`` can hold in ``q``: ask for any failure, drop
    every one its model shows, until none can. None when Z3 cannot tell (or its model does not say which)."""
    ctx = q.ctx
    out: set[int] = set()
    while asked:
        q.push()
        q.add(_or_of([fails[i] for i in asked]))
        r = q.check()
        if r != z3.sat:
            q.pop()
            return out if r == z3.unsat else None
        m = q.model()
        now = {i for i in asked if _true_in(m, fails[i], ctx)}
        q.pop()
        if not now:  # the model does not settle which one fails (a quantified term): cannot tell
            return None
        out |= now
        asked = [i for i in asked if i not in now]
    return out


def _can_hold(q: z3.Solver, f: z3.ExprRef) -> bool:
    """Whether ``f`` may hold in ``q`` (sat or unknown)."""
    q.push()
    q.add(f)
    r = q.check()
    q.pop()
    return r != z3.unsat


def _substitution(values: list[z3.ExprRef]) -> Any:
    """``lambda e: z3.substitute_vars(e, *values)``, with the argument array made once rather than at every
    call (tens of thousands of candidates a step, a hundred and more slots each)."""
    ctx = values[0].ctx
    n = len(values)
    arr = (z3.Ast * n)(*[v.as_ast() for v in values])

    def apply(e: z3.ExprRef, _keep: list = values) -> z3.ExprRef:  # (_keep: the values outlive the array)
        return z3.z3._to_expr_ref(z3.Z3_substitute_vars(ctx.ref(), e.as_ast(), n, arr), ctx)
    return apply


def _not(e: z3.ExprRef) -> z3.BoolRef:
    """``z3.Not(e)`` of a Boolean term, without the Python API's checks."""
    return z3.BoolRef(z3.Z3_mk_not(e.ctx.ref(), e.as_ast()), e.ctx)


def _and_of(xs: list[z3.ExprRef]) -> z3.BoolRef:
    """``z3.And(xs)`` without the Python API's per-argument checks."""
    ctx = xs[0].ctx
    args = (z3.Ast * len(xs))(*[x.as_ast() for x in xs])
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(xs), args), ctx)


def _or_of(xs: list[z3.ExprRef]) -> z3.BoolRef:
    """``z3.Or(xs)`` without the Python API's per-argument checks (thousands of candidates a query)."""
    ctx = xs[0].ctx
    args = (z3.Ast * len(xs))(*[x.as_ast() for x in xs])
    return z3.BoolRef(z3.Z3_mk_or(ctx.ref(), len(xs), args), ctx)


def _true_in(m: z3.ModelRef, e: z3.ExprRef, ctx: z3.Context) -> bool:
    """Whether ``e`` is true in ``m`` (completed): ``m.eval`` without its wrappers."""
    r = (z3.Ast * 1)()
    if not z3.Z3_model_eval(ctx.ref(), m.model, e.as_ast(), True, r):
        raise z3.Z3Exception("failed to evaluate a candidate in the model")
    out = r[0]
    z3.Z3_inc_ref(ctx.ref(), out)  # (held while it is read: a fresh term of the context may be collected)
    try:
        return z3.Z3_get_bool_value(ctx.ref(), out) == z3.Z3_L_TRUE
    finally:
        z3.Z3_dec_ref(ctx.ref(), out)


def _default_role(model: Model) -> str | None:
    """The ``role`` of a per-CPU variable of the role being generalised when it is declared without ``role=``:
    None when the spec has one role (its slots are that role's CPUs), otherwise a name no variable has."""
    return None if len(model.info.roles) == 1 else "%no role"


def role_variables(model: Model, role: str) -> dict[str, Any]:
    """The per-CPU variables of ``role`` (and those declared without ``role=``, see ``_default_role``), by name."""
    return {n: v for n, v in model.vars.items()
            if getattr(v, "role", None) in (role, _default_role(model)) and n in model.tupled}


def symmetric_role(model: Model) -> str | None:
    """The first symmetric role with a count parameter: the one whose size the ladder grows."""
    for name, r in model.info.roles.items():
        if r.symmetric and isinstance(r.count, str):
            return name
    return None
