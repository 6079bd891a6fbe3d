# SPDX-License-Identifier: GPL-2.0-only
"""From an invariant proved at a few CPUs to candidate invariants for every CPU count.

IC3/PDR (``checker.prove.fixed``) proves a spec's claims at one concrete
point and hands back an inductive invariant over that point's slots
(``local[0]``, ``pc[1]``, ``lock``, numbers). Each of its conjuncts is read
here as a candidate about an arbitrary CPU ``c`` of the symmetric role, in the
manner of IC3PO and DuoAI (invariants of parameterised protocols from finite
instances):

- a conjunct about one CPU's slots is ``forall c. P(c)``: ``local[0]``
  becomes ``s.local[c]``, a CPU id compared with that CPU (``lock == 0``)
  becomes ``s.lock == c``;
- a per-CPU variable may be read as its sum over all CPUs instead
  (``count + local[0] == exact`` at one CPU is conservation,
  ``count + Sum(local) == exact``); at two CPUs, when every CPU's slot of a
  variable occurs, the sum is what the conjunct is about;
- a number may be a parameter (``31`` is ``batch - 1`` at ``batch=32``): each
  parameter term of that value is an alternative, the number itself another.

Most candidates are wrong for some CPU count. ``checker.prove.infer`` keeps
only the ones the any-N induction proves inductive together (Houdini), and
proves them again with the spec's claims before anything is reported.
A conjunct relating two CPUs is read as ``forall c != d. Q(c, d)``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import z3

from checker.language.compile import Model
from checker.prove.encoding import PerN
from checker.prove.horn import slot_names
from checker.prove.houdini import _forms, role_variables
from checker.prove.slotsets import SlotReader
from checker.prove.solver import fresh_context
from checker.prove.vocabulary import Vocabulary
from checker.symbolic.term import Sym, to_z3_num
from checker.types import BoolType, CpuIdType, Enum, NOBODY

#: At most this many alternatives for one number of a conjunct (the number itself among them).
MAX_ALTERNATIVES = 5
#: At most this many candidates from one conjunct.
MAX_PER_CONJUNCT = 24
#: The CPUs of a generalised conjunct, by the placeholder names they print as.
CPU_NAMES = ("c", "d")


@dataclass(frozen=True)
class Candidate:
    """``formula`` over placeholder constants: ``s.x`` (a shared variable), ``s.v[c]`` / ``s.v[d]`` (a
    per-CPU one at CPU c or d), ``Sum(s.v)``, ``s.p`` (a parameter), ``c`` and ``d`` (the CPUs)."""

    formula: z3.BoolRef
    cpus: int  # 0: about the shared state; 1: forall c; 2: forall c != d
    source: str  # the conjunct it came from, as printed at its point

    @property
    def key(self) -> str:
        return self.formula.sexpr()


def _holders(model: Model) -> list[str]:
    """The shared CPU-id variables (a lock's holder)."""
    return [n for n, v in model.vars.items() if n not in model.tupled and isinstance(v.type, CpuIdType)]


def _numeric(t: Any) -> bool:
    return not isinstance(t, (Enum, CpuIdType, BoolType))


def generalise(model: Model, inv: z3.ExprRef, role: str) -> list[Candidate]:
    """Candidates for every CPU count from ``inv`` (over ``Var(i)``, the slots of ``model``'s point)."""
    names = slot_names(PerN(model))
    vocab = Vocabulary(names, [model.vars[n.split("[", 1)[0]].type for n in names], model.cls)
    role_vars = set(role_variables(model, role))
    ncpus = len(model.roles[role])
    slots: list[tuple[str, int | None]] = []
    for n in names:
        base, _, rest = n.partition("[")
        slots.append((base, int(rest[:-1]) if rest else None))
    cpu_slots = {i for i, (b, _) in enumerate(slots) if isinstance(model.vars[b].type, CpuIdType)}
    params = _param_terms(model, role)
    exact = {f"s.{n}{at}" for n, v in model.vars.items() if not _numeric(v.type) for at in ("", "[c]", "[d]")}
    out: dict[str, Candidate] = {}
    conj = inv.children() if z3.is_and(inv) else [inv]
    reader = SlotReader()
    index = {n: i for i, n in enumerate(names)}
    shapes: dict[int, z3.ExprRef] = {}  # conjuncts seen, their CPUs renumbered 0, 1 in order (kept alive)
    var = [z3.Var(i, z3.IntSort()) for i in range(len(slots))]  # (made once: thousands of conjuncts use them)
    # Simplified in a context of this call's own: Z3 orders a sum's terms by their ids, which in the shared
    # context depend on what the process built before, and the candidates' shapes (hence which numbers are
    # read as parameters, up to MAX_PER_CONJUNCT) must depend on the invariant alone.
    ctx = fresh_context()
    for c in conj:
        used = reader(c)
        if any(slots[i][1] is not None and slots[i][0] not in role_vars for i in used):
            continue  # a slot of an array or of another role: nothing to generalise it to
        literals = _cpu_literals(c, cpu_slots, ncpus)
        if ncpus > 1 and not literals:
            # The placements of one conjunct at other CPUs in the same order generalise to the same
            # candidates (its CPUs become c and d in order): the first of them is enough.
            rank = {k: r for r, k in enumerate(sorted({slots[i][1] for i in used if slots[i][1] is not None}))}
            moved = list(var)
            for i in used:
                b, k = slots[i]
                if k in rank:
                    moved[i] = var[index[f"{b}[{rank[k]}]"]]
            shape = z3.substitute_vars(c, *moved)
            if shape.get_id() in shapes:
                continue
            shapes[shape.get_id()] = shape
        source: str | None = None  # printed when it is first a new candidate's source
        # One CPU: "a CPU id is that CPU" and "it is some CPU" say the same; for any N they differ, both asked.
        forms = _forms(c, cpu_slots, [0]) + [_some_cpu(c, cpu_slots)] if ncpus == 1 else [c]
        for form in forms:
            cpus = sorted({slots[i][1] for i in reader(form) if slots[i][1] is not None}
                          | (_cpu_literals(form, cpu_slots, ncpus) if form is not c else literals))
            if len(cpus) > 2:
                continue
            present = {b for i in used for b in [slots[i][0]] if b in role_vars}
            summable = [v for v in sorted(present) if _numeric(model.vars[v].type)
                        and (ncpus == 1 or {slots[i][1] for i in used if slots[i][0] == v} == set(range(ncpus)))]
            made = 0
            for k in range(0, min(len(summable), 3) + 1):
                for summed in itertools.combinations(summable, k):
                    g = _rename(form, slots, cpu_slots, summed, cpus, role_vars, ctx)
                    if g is None:
                        continue
                    left = sorted({n for n in _placeholders(g) if n in CPU_NAMES or n.endswith("[c]")
                                   or n.endswith("[d]")})
                    arity = 2 if any(n == "d" or n.endswith("[d]") for n in left) else (1 if left else 0)
                    for alt in _constants(g, params, exact):
                        if made >= MAX_PER_CONJUNCT:
                            break
                        key = alt.sexpr()  # (Candidate.key)
                        if key not in out:
                            if source is None:
                                source = vocab.text(c)
                            out[key] = Candidate(alt, arity, source)
                            made += 1
    return list(out.values())


def held_law_candidates(model: Model, laws: list[z3.ExprRef], role: str) -> list[Candidate]:
    """The conservation laws found at one CPU of ``role`` (``checker.prove.laws``, over ``Var(i)``: ``exact ==
    count + local[0] + If(pc[0] == L29, amount[0], 0) - If(pc[0] == L29, count[0], 0)``) read for every CPU
    count: a per-CPU variable as its sum over the CPUs, and a term of one CPU's registers (an add's amount in
    flight between two of its steps) as that term at the CPU a shared CPU id names (the lock's holder), 0
    when it names none. That says only the holder can be at that place, which Houdini must show from the
    other candidates (``template: lock is the CPU at ...``) before it keeps the law."""
    if len(model.roles[role]) != 1 or not laws:
        return []
    names = slot_names(PerN(model))
    slots: list[tuple[str, bool]] = [(n.partition("[")[0], "[" in n) for n in names]
    role_vars = role_variables(model, role)
    reader = SlotReader()
    ctx = fresh_context()  # (why: generalise's)
    return [Candidate(_simplified(_held(law, slots, reader, x, False), ctx), 0,
                      f"conservation law at one CPU, held by {x}")
            for law in laws
            # (a law with a slot of an array or of another role has no sum over the CPUs to read it as)
            if not any(slots[i][1] and slots[i][0] not in role_vars for i in reader(law))
            for x in _holders(model)]


def _held(e: z3.ExprRef, slots: list[tuple[str, bool]], reader: SlotReader, x: str, at_holder: bool) -> z3.ExprRef:
    """``e`` over placeholders: a shared slot as itself, a per-CPU one as its sum, or, inside a term of
    per-CPU slots only (``If(pc[0] == L, amount[0], 0)``), at the CPU ``x`` names (0 when it names none)."""
    if z3.is_var(e):
        base, per = slots[z3.get_var_index(e)]
        if not per:
            return z3.Int(f"s.{base}")
        return z3.Int(f"s.{base}[s.{x}]") if at_holder else z3.Int(f"Sum(s.{base})")
    if not z3.is_app(e) or not e.children():
        return e
    if z3.is_app_of(e, z3.Z3_OP_ITE) and not at_holder and all(slots[i][1] for i in reader(e)):
        return z3.If(z3.Int(f"s.{x}") == NOBODY, 0, _held(e, slots, reader, x, True))
    return e.decl()(*[_held(c, slots, reader, x, at_holder) for c in e.children()])


def _some_cpu(e: z3.ExprRef, cpu_slots: set[int]) -> z3.ExprRef:
    """``e`` with ``x == 0`` (x a CPU-id slot, one CPU) read as ``x != NOBODY``."""
    if not z3.is_app(e) or not e.children():
        return e
    ch = e.children()
    k = e.decl().kind()
    if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(ch) == 2:
        for a, b in (ch, ch[::-1]):
            if z3.is_var(a) and z3.get_var_index(a) in cpu_slots and z3.is_int_value(b) and b.as_long() == 0:
                return (a >= 0) if k == z3.Z3_OP_EQ else (a < 0)
    if k in (z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_NOT, z3.Z3_OP_IMPLIES):
        return e.decl()(*[_some_cpu(x, cpu_slots) for x in ch])
    return e


def _cpu_literals(e: z3.ExprRef, cpu_slots: set[int], ncpus: int) -> set[int]:
    """CPUs named by a number compared for equality with a CPU-id slot (``lock == 1``)."""
    out: set[int] = set()
    todo = [e]
    seen: set[int] = set()  # (each shared subterm once)
    while todo:
        x = todo.pop()
        if x.get_id() in seen or not z3.is_app(x):
            continue
        seen.add(x.get_id())
        ch = x.children()
        if x.decl().kind() in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(ch) == 2:
            for a, b in (ch, ch[::-1]):
                if z3.is_var(a) and z3.get_var_index(a) in cpu_slots and z3.is_int_value(b) \
                        and 0 <= b.as_long() < ncpus:
                    out.add(b.as_long())
        todo.extend(ch)
    return out


def _placeholders(e: z3.ExprRef) -> set[str]:
    return {x.decl().name() for x in placeholder_terms(e)}


def _rename(e: z3.ExprRef, slots: list[tuple[str, int | None]], cpu_slots: set[int], summed: tuple,
            cpus: list[int], role_vars: set[str], ctx: z3.Context) -> z3.ExprRef | None:
    """``e`` over placeholders: the point's CPUs ``cpus`` as c (and d), ``summed`` variables as their sums
    (the first CPU's slot the sum, the others' 0); None where a CPU id is ordered against a CPU."""
    which = {k: CPU_NAMES[i] for i, k in enumerate(cpus)}

    def slot(i: int) -> z3.ArithRef:
        base, cpu = slots[i]
        if cpu is None:
            return z3.Int(f"s.{base}")
        if base in summed:
            return z3.Int(f"Sum(s.{base})") if cpu == min(c for b, c in slots if b == base) else z3.IntVal(0)
        return z3.Int(f"s.{base}[{which[cpu]}]")

    done: dict[int, z3.ExprRef | None] = {}  # by subterm id: a shared subterm is renamed once

    def go(x: z3.ExprRef) -> z3.ExprRef | None:
        key = x.get_id()
        if key not in done:
            done[key] = _go(x)
        return done[key]

    def _go(x: z3.ExprRef) -> z3.ExprRef | None:
        if z3.is_var(x):
            return slot(z3.get_var_index(x))
        if not z3.is_app(x) or not x.children():
            return x
        k = x.decl().kind()
        ch = x.children()
        if len(ch) == 2:
            for var, num in ((ch[0], ch[1]), (ch[1], ch[0])):
                if z3.is_var(var) and z3.get_var_index(var) in cpu_slots and z3.is_int_value(num):
                    v = num.as_long()
                    target = slot(z3.get_var_index(var))
                    if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and v in which:
                        cpu = z3.Int(which[v])
                        return (target == cpu) if k == z3.Z3_OP_EQ else (target != cpu)
                    if v in (NOBODY, 0) and k not in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) or v == NOBODY:
                        # a test for no CPU (x < 0, x >= 0, x == -1): about no CPU in particular
                        return x.decl()(*[target if a.eq(var) else a for a in ch])
                    return None
        args = []
        for c in ch:
            r = go(c)
            if r is None:
                return None
            args.append(r)
        return x.decl()(*args)

    g = go(e)
    return None if g is None else _simplified(g, ctx)


def _simplified(g: z3.ExprRef, ctx: z3.Context) -> z3.ExprRef:
    """``z3.simplify(g)`` as in ``ctx`` (a context of the caller's own), back in the shared one."""
    return z3.simplify(g.translate(ctx)).translate(z3.main_ctx())


def _param_terms(model: Model, role: str) -> dict[int, list[z3.ArithRef]]:
    """Parameter terms by their value at ``model``'s point: ``p``, ``p - 1``, ``-(p - 1)``, ``N * (p - 1)``."""
    out: dict[int, list[z3.ArithRef]] = {}
    count = model.info.roles[role].count
    values = {n: getattr(model.params, n) for n in model.info.params}
    n_cpus = len(model.roles[role])

    def add(v: int, t: z3.ArithRef) -> None:
        lst = out.setdefault(v, [])
        if not any(t.eq(x) for x in lst):
            lst.append(t)

    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or model.info.params[name].names is not None \
                or name == count and n_cpus == 1:
            continue  # an enum's value is no bound; one CPU's count is the number 1
        p = z3.Int(f"s.{name}")
        for d in (-2, -1, 0, 1, 2):
            add(v + d, p + d if d else p)
            add(-(v + d), -(p + d) if d else -p)
        if isinstance(count, str) and name != count:
            ncpu = z3.Int(f"s.{count}")
            for d in (-1, 0):
                add(n_cpus * (v + d), ncpu * (p + d) if d else ncpu * p)
    return out


def _name(x: z3.ExprRef) -> str | None:
    return x.decl().name() if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED else None


def _constants(g: z3.ExprRef, params: dict[int, list[z3.ArithRef]], exact: set[str]) -> list[z3.ExprRef]:
    """``g``, and ``g`` with its numbers read as parameter terms of the same value (a bounded number);
    ``exact``: names of the placeholders whose values are names (enums, CPU ids, flags), never compared with
    a parameter."""
    # Only a number that is a whole side of a comparison (``x <= 2``, ``x + y == 3``): a coefficient
    # (``-1 * x``) is the same term, but reading it as a parameter would make the candidate nonlinear.
    comparisons = (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT)
    spots: list[tuple[z3.ExprRef, int]] = []  # (comparison, which side)

    def walk(x: z3.ExprRef) -> None:
        if not z3.is_app(x):
            return
        ch = x.children()
        if x.decl().kind() in comparisons and len(ch) == 2:
            if any(_is_cpu_placeholder(c) or _name(c) in exact for c in ch):
                return  # a CPU id or an enum compared with a value: not a number to read as a parameter
            for side, c in enumerate(ch):
                if z3.is_int_value(c) and c.as_long() != 0 and c.as_long() in params:
                    spots.append((x, side))
            return
        for c in ch:
            walk(c)

    walk(g)
    options = [[None] + params[cmp.children()[side].as_long()][:MAX_ALTERNATIVES - 1] for cmp, side in spots]
    out = []
    for combo in itertools.product(*options):
        pairs = []
        for (cmp, side), t in zip(spots, combo):
            if t is not None:
                ch = list(cmp.children())
                ch[side] = t
                pairs.append((cmp, cmp.decl()(*ch)))
        out.append(z3.substitute(g, *pairs) if pairs else g)
        if len(out) >= MAX_PER_CONJUNCT:
            break
    return out


def _is_cpu_placeholder(x: z3.ExprRef) -> bool:
    return z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED and x.decl().name() in CPU_NAMES


class _Placeholders:
    """A state whose every variable and parameter is its placeholder (``s.batch``), for a spec's bounds."""

    def __getattr__(self, name: str) -> Sym:
        if name.startswith("_"):
            raise AttributeError(name)
        return Sym(z3.Int(f"s.{name}"))


class CandidateText:
    """A candidate printed in the spec's words, as the body of an ``@invariant``."""

    def __init__(self, model: Model):
        self.types = {n: v.type for n, v in model.vars.items()}
        self.module = model.cls

    def text(self, cand: Candidate) -> str:
        names = sorted(_placeholders(cand.formula))
        types = []
        for n in names:
            base = n[2:].split("[", 1)[0] if n.startswith("s.") else None
            types.append(self.types[base] if base in self.types and not n.startswith("Sum") else None)
        v = _Verbatim(names, types, self.module)
        consts = [z3.Int(n) for n in names]
        f = z3.substitute(cand.formula, *[(x, z3.Var(i, z3.IntSort())) for i, x in enumerate(consts)])
        return v.text(f)


class _Verbatim(Vocabulary):
    def slot(self, i: int) -> str:
        return self.names[i]


def templates(model: Model, role: str) -> list[Candidate]:
    """Candidates from the spec's vocabulary alone: for each per-CPU enum (a CPU's place in its code) and
    each of its values, each numeric per-CPU variable of the role is 0 there (``Implies(s.pc[c] == ADD.idle,
    s.seen[c] == 0)``): what a step in flight keeps and clears, which IC3/PDR at one CPU rarely says alone;
    for each shared CPU id (a lock's holder), that only the CPU it names holds a nonzero value; each shared
    number as the sum of a per-CPU one; the per-CPU bounds the spec declares for its sums, and at each place
    in the code one inside them."""
    role_vars = role_variables(model, role)
    enums = [(n, v.type) for n, v in role_vars.items() if isinstance(v.type, Enum)]
    numeric = [n for n, v in role_vars.items() if _numeric(v.type) or isinstance(v.type, BoolType)]
    holders = _holders(model)
    out = []
    # Only the CPU a shared CPU id names (a lock's holder) may hold a nonzero value: with no holder the sum
    # is 0, with one it is the holder's. Stated per CPU, so the any-N induction can carry it through a step.
    for x in holders:
        for n in numeric:
            total, mine = z3.Int(f"Sum(s.{n})"), z3.Int(f"s.{n}[c]")
            out.append(Candidate(z3.Or(z3.Int(f"s.{x}") != NOBODY, total == 0), 0,
                                 f"template: no {n} without a {x}"))
            out.append(Candidate(z3.Or(z3.Int(f"s.{x}") != z3.Int("c"), total == mine), 1,
                                 f"template: the {x}'s {n} is all of it"))
    # A shared count of what the CPUs hold (``inside == Sum(mine)``): conservation, as a candidate.
    shared = [n for n, v in model.vars.items() if n not in model.tupled and _numeric(v.type)
              and getattr(v, "kind", None) != "array"]
    for x in shared:
        for n in numeric:
            if _numeric(model.vars[n].type):
                out.append(Candidate(z3.Int(f"s.{x}") == z3.Int(f"Sum(s.{n})"), 0, f"template: {x} counts {n}"))
    # The per-CPU bounds the spec declares for its sums (``sum_bounds``), each an obligation of the any-N
    # induction: each is a candidate for every CPU. After them, one inside each bound at each place in the
    # code: between a check and the add it guards (limited_add's ``abs(count + 1) <= batch``, then its
    # this_cpu_add).
    inside = []
    for n, bounds in model.info.sum_bounds.items():
        lo, hi = (to_z3_num(b) for b in bounds(_Placeholders()))
        v = z3.Int(f"s.{n}[c]")
        out += [Candidate(lo <= v, 1, f"template: sum_bounds of {n}"), Candidate(v <= hi, 1, f"template: sum_bounds of {n}")]
        for e, t in enums:
            for k, label in enumerate(t.names):
                inside += [Candidate(z3.Or(z3.Int(f"s.{e}[c]") != k, v + 1 <= hi), 1, f"template: {n} below its bound at {e} {label}"),
                           Candidate(z3.Or(z3.Int(f"s.{e}[c]") != k, lo <= v - 1), 1, f"template: {n} above its bound at {e} {label}")]
    out += inside
    out += _product_bounds(model, role, [n for n in numeric if _numeric(role_vars[n].type)], enums)
    for e, t in enums:
        for k, label in enumerate(t.names):
            for x in holders:  # at this place in its code, CPU c is the one x names (it holds the lock)
                out.append(Candidate(z3.Or(z3.Int(f"s.{e}[c]") != k, z3.Int(f"s.{x}") == z3.Int("c")), 1,
                                     f"template: {x} is the CPU at {e} {label}"))
            for n in numeric:
                f = z3.Or(z3.Int(f"s.{e}[c]") != k, z3.Int(f"s.{n}[c]") == 0)
                out.append(Candidate(f, 1, f"template: {n} is 0 at {e} {label}"))
    return out


def in_flight_templates(model: Model, role: str) -> list[Candidate]:
    """At each place in the code, each flag of ``role`` set there (interrupts off inside a section) and each
    two numbers of it equal there (between the fold and the sub the local still holds what was folded:
    percpu_eager's ``zero_subtracts_what_was_folded``), which Spacer's invariant at one CPU may state in a
    shape ``generalise`` does not read. Candidates for every CPU count, not Spacer's seed: in the seed
    (``checker.prove.fixed``) they changed the one-CPU invariant so that what was read from it no longer
    proved percpu_eager B limited=1 (measured)."""
    role_vars = role_variables(model, role)
    flags = [n for n, v in role_vars.items() if isinstance(v.type, BoolType)]
    numbers = [n for n, v in role_vars.items() if _numeric(v.type)]
    out = []
    for e, t in ((n, v.type) for n, v in role_vars.items() if isinstance(v.type, Enum)):
        for k, label in enumerate(t.names):
            at = z3.Int(f"s.{e}[c]") != k
            out += [Candidate(z3.Or(at, z3.Int(f"s.{n}[c]") == 1), 1, f"template: {n} is 1 at {e} {label}")
                    for n in flags]
            out += [Candidate(z3.Or(at, z3.Int(f"s.{a}[c]") == z3.Int(f"s.{b}[c]")), 1,
                              f"template: {a} equals {b} at {e} {label}")
                    for a, b in itertools.combinations(numbers, 2)]
    return out


def _product_bounds(model: Model, role: str, numeric: list[str], enums: list) -> list[Candidate]:
    """For a per-CPU number whose sum the spec bounds (``sum_bounds``): bounded by another per-CPU number
    (plus 0 or 1) times a parameter above, and by its negation below, anywhere or at one place in the
    code (a cache of ``events`` faults of up to ``U`` pages: ``cache <= (events + 1) * U``). A product of a
    variable and a parameter: no number IC3/PDR finds at one point reads as one."""
    count = model.info.roles[role].count
    factors = [n for n, p in model.info.params.items() if n != count and p.names is None and not p.derived
               and isinstance(getattr(model.params, n, None), int) and not isinstance(getattr(model.params, n), bool)
               and p.valid(2)]
    places = [None] + [(e, k) for e, t in enums for k in range(len(t.names))]
    out = []
    for x in (n for n in model.info.sum_bounds if n in numeric):
        mine = z3.Int(f"s.{x}[c]")
        for y in (n for n in numeric if n != x):
            for d in (0, 1):
                k = z3.Int(f"s.{y}[c]") + d if d else z3.Int(f"s.{y}[c]")
                bounds = [(mine >= -k, f"-({y} + {d})")] + [(mine <= k * z3.Int(f"s.{p}"), f"({y} + {d}) * {p}")
                                                            for p in factors]
                for f, what in bounds:
                    for place in places:
                        if place is None:
                            out.append(Candidate(f, 1, f"template: {x} within {what}"))
                        else:
                            e, v = place
                            out.append(Candidate(z3.Or(z3.Int(f"s.{e}[c]") != v, f), 1,
                                                 f"template: {x} within {what} at {e} {v}"))
    return out


def at_point(model: Model, cands: list[Candidate], held: bool = False) -> list[z3.ExprRef]:
    """``cands`` at ``model``'s concrete point, over ``Var(i)`` (its slots): a per-CPU candidate once for
    each CPU of the role; a candidate naming a variable or parameter the point does not have is left out, and
    so is one naming a slot at the CPU a shared CPU id names (``s.pc[s.lock]``, a held law) unless ``held``
    (then it is each CPU's slot in turn: not in IC3/PDR's seeds, whose invariants were measured without)."""
    names = slot_names(PerN(model))
    index = {n: i for i, n in enumerate(names)}
    role = next((r for r in model.info.roles if model.info.roles[r].symmetric), None)
    cpus = list(model.roles[role]) if role is not None else []
    out: list[z3.ExprRef] = []
    for cand in cands:
        consts = {x.decl().name(): x for x in placeholder_terms(cand.formula)}
        for c in (cpus if cand.cpus == 1 else [None]):
            pairs = []
            for name, x in consts.items():
                t = _slot_term(model, index, name, c, held)
                if t is None:
                    break
                pairs.append((x, t))
            else:
                out.append(z3.substitute(cand.formula, *pairs))
    return out


def _slot_term(model: Model, index: dict[str, int], name: str, c: int | None, held: bool) -> z3.ArithRef | None:
    if name == "c":
        return None if c is None else z3.IntVal(c)
    if name.startswith("Sum(s."):
        base = name[6:-1]
        slots = [i for n, i in index.items() if n.startswith(base + "[")]
        return z3.Sum([z3.Var(i, z3.IntSort()) for i in slots]) if slots else None
    base, _, rest = name[2:].partition("[")
    if rest.startswith("s."):  # at the CPU a shared CPU id names (``s.pc[s.lock]``): each CPU's slot in turn
        if not held:
            return None
        holder = rest[2:-1]
        slots = [(int(n[len(base) + 1:-1]), i) for n, i in index.items() if n.startswith(base + "[")]
        if holder not in index or not slots:
            return None
        term: z3.ArithRef = z3.IntVal(0)  # (no CPU named: a held law guards that case itself)
        for k, i in reversed(slots):
            term = z3.If(z3.Var(index[holder], z3.IntSort()) == k, z3.Var(i, z3.IntSort()), term)
        return term
    if rest:
        return None if c is None or f"{base}[{c}]" not in index else z3.Var(index[f"{base}[{c}]"], z3.IntSort())
    if base in index:
        return z3.Var(index[base], z3.IntSort())
    v = getattr(model.params, base, None)
    return z3.IntVal(v) if isinstance(v, int) else None


def placeholder_terms(e: z3.ExprRef) -> list[z3.ExprRef]:
    """The uninterpreted constants (placeholders) of ``e``, each shared subterm visited once."""
    out: dict[str, z3.ExprRef] = {}
    todo = [e]
    seen: set[int] = set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out[x.decl().name()] = x
        elif z3.is_app(x):
            todo.extend(x.children())
    return list(out.values())
