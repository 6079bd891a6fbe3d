# SPDX-License-Identifier: GPL-2.0-only
"""Initial-state predicate and transition relation, from the spec's own code.

``PerN`` encodes one concrete parameter point (every slot a Z3 integer);
``AnyN`` encodes every CPU count of a range at once (per-CPU variables as
arrays with sum ghosts, one symbolic acting CPU). Both evaluate the spec's
actions and properties on ``Sym`` values: no spec carries a second encoding.
"""
from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass
from typing import Any

import z3

import checker.cint as cint
from checker.errors import SpecError
from checker.language.compile import Model, state_class
from checker.language.declare import DISABLED, Between, Fill, Step, Uninit
from checker.language.lint import symbolic_state
from checker.language.model import info
from checker.prove.symstate import NotParametric, SymArray, SymParams, SymRole
from checker.symbolic.term import Sym, to_z3_bool, to_z3_num
from checker.types import BoolType, CpuIdType, Enum, IntType, NOBODY


@dataclass(frozen=True)
class Transition:
    """One action with one choice of arguments (and, per-N, one CPU)."""

    action: Any  # ActionInfo
    cpu: Any  # int, a Z3 term (any-N), or None
    args: tuple
    arg_names: tuple
    index: int
    ranges: tuple = ()  # constraints on symbolic choices (a Between with a symbolic bound)

    @property
    def name(self) -> str:
        return self.action.name

    def choices(self) -> dict[str, Any]:
        return dict(zip(self.arg_names, self.args))


def _type_fact(t: IntType, x: z3.ArithRef, ncpus: Any) -> z3.BoolRef | None:
    if isinstance(t, Enum):
        return z3.And(x >= 0, x < len(t.names))
    if isinstance(t, BoolType):
        return z3.And(x >= 0, x <= 1)
    if isinstance(t, CpuIdType):
        return z3.Or(x == NOBODY, z3.And(x >= 0, x < ncpus))
    return None


def _wrap(t: IntType, x: z3.ArithRef) -> z3.ArithRef:
    m = 1 << t.bits
    return (x - t.lo) % m + t.lo


def _call(fn: Any, s: Any, cpu: Any, args: tuple) -> Any:
    return fn(s, cpu, *args) if cpu is not None else fn(s, *args)


def _prop_value(v: Any) -> z3.BoolRef:
    return to_z3_bool(v)


def _uninit(name: str) -> z3.ArithRef:
    """The initial value of an uninitialised local, one constant per point."""
    return z3.Int(f"{name}@uninit")


class PerN:
    """A concrete parameter point: the symbolic twin of the explorer's model."""

    kind = "per-n"
    #: Whether a 32-bit point's accesses in halves are taken (the compiled engine's lowering: each step builds its
    #: terms, checker.kernel.tearing's *_terms); the Z3 backend's obligations and BMC do not model them.
    takes_halves = False

    def __init__(self, model: Model):
        if model.tearing and not self.takes_halves:
            raise SpecError(f"{model.name} at {model.params}: a 32-bit kernel's accesses in halves "
                            f"(checker.kernel.tearing) are explorer-only; check this point with --mode explore",
                            file=model.info.file, line=model.info.line)
        self.model = model
        self.cls = model.cls
        self.ncpus_total = model.ncpus_total
        self._wrap = {n: v.type for n, v in model.vars.items() if v.overflow == "wrap" and v.type.bits is not None}

    def constraints(self) -> list[z3.BoolRef]:
        """What every question about the point assumes: an uninitialised local of ``initial()`` takes one of its
        declared values, as in the explorer's initial states (unconstrained, Spacer and BMC found runs from
        values no run has)."""
        m = self.model
        return [z3.Or([_uninit(n) == d for d in m.vars[n].domain]) for n in m.uninit_any]

    def fresh(self, tag: str) -> tuple:
        return symbolic_state(self.model, tag)

    def initial(self) -> tuple:
        m = self.model
        if m.uninit_report:
            raise SpecError(f"{self.cls.__name__}: reporting reads of uninitialised {', '.join(m.uninit_report)} "
                            f"is explorer-only; set its mode parameter to 1 (any value) for the Z3 backend",
                            file=m.info.file, line=m.info.line)
        s0 = m.initial_states()[0]
        vals = []
        for n, v in zip(m.var_names, s0):
            t = m.vars[n].type
            if n in m.uninit_any:  # any of its declared values (constraints())
                vals.append(Sym(_uninit(n), t))
            elif n in m.tupled:
                vals.append(tuple(Sym(z3.IntVal(x), t) for x in v))
            else:
                vals.append(Sym(z3.IntVal(v), t))
        return m.state_cls(vals)

    def equal(self, s: tuple, t: tuple) -> z3.BoolRef:
        out = []
        for n, a, b in zip(self.model.var_names, s, t):
            if n in self.model.tupled:
                out += [to_z3_num(x) == to_z3_num(y) for x, y in zip(a, b)]
            else:
                out.append(to_z3_num(a) == to_z3_num(b))
        return z3.And(out)

    def transitions(self) -> list[Transition]:
        out = []
        for act in self.model.actions:
            for cpu in act.cpus:
                for args in act.choices:
                    out.append(Transition(act.info, cpu, args, act.arg_names, len(out)))
        return out

    def fire(self, tr: Transition, s: tuple) -> tuple[z3.BoolRef, tuple]:
        del cint.UB_LOG[:]
        r = _call(tr.action.fn, s, tr.cpu, tr.args)
        if r is DISABLED:
            return z3.BoolVal(False), s
        if not isinstance(r, Step):
            raise SpecError(f"{self.cls.__name__}.{tr.name} does not return when(...)", file=tr.action.file,
                            line=tr.action.line)
        guard, t = _prop_value(r.guard), self.apply(s, r.updates)
        ub = self.model._ub
        if ub is None:
            return guard, t
        return z3.And(guard, to_z3_num(s[ub]) == 0), undefined_shift(s, t, ub, self.model.tupled,
                                                                         self.model.var_names)

    def apply(self, s: tuple, updates: dict[str, Any]) -> tuple:
        m = self.model
        new = list(s)
        for name, val in updates.items():
            pos = m.index[name]
            t = m.vars[name].type
            if name in m.tupled and isinstance(val, Fill):
                new[pos] = tuple(self._value(name, t, val.value) for _ in new[pos])
            elif name in m.tupled:
                row = list(new[pos])
                for c, v in val.items():
                    z = self._value(name, t, v)
                    if isinstance(c, int):
                        row[c] = z
                    else:  # a slot chosen by the state (``{s.on[t]: v}``): every slot may be the one
                        cz = to_z3_num(c)
                        row = [Sym(z3.If(cz == k, z.z, to_z3_num(x)), t) for k, x in enumerate(row)]
                new[pos] = tuple(row)
            else:
                new[pos] = self._value(name, t, val)
        return m.state_cls(new)

    def _value(self, name: str, t: IntType, v: Any) -> Sym:
        z = to_z3_num(v)
        if name in self._wrap:
            z = _wrap(t, z)
        return Sym(z, t)

    def types(self, s: tuple) -> z3.BoolRef:
        m = self.model
        facts = []
        for n, v in zip(m.var_names, s):
            t = m.vars[n].type
            for x in (v if n in m.tupled else (v,)):
                f = _type_fact(t, to_z3_num(x), self.ncpus_total)
                if f is not None:
                    facts.append(f)
        return z3.And(facts) if facts else z3.BoolVal(True)

    def holds(self, p: Any, s: tuple) -> z3.BoolRef:
        return _prop_value(p.fn(s))

    def terminal(self, s: tuple) -> z3.BoolRef:
        done = _prop_value(self.model.terminal(s))
        ub = self.model._ub
        return done if ub is None else z3.Or(done, to_z3_num(s[ub]) != 0)  # a run stopped at an undefined shift

    def describe(self, zm: z3.ModelRef, s: tuple) -> dict[str, Any]:
        """Slot values of ``s`` in a Z3 model, as the explorer prints a state."""
        m = self.model
        out: dict[str, Any] = {}
        for n, v in zip(m.var_names, s):
            if n in m.tupled:
                out[n] = [_eval(zm, x) for x in v]
            else:
                out[n] = _eval(zm, v)
        return out


def undefined_shift(s: tuple, t: tuple, ub: int, tupled: frozenset, names: tuple) -> tuple:
    """The explorer's rule for a step that shifts out of range (checker.language.compile.Model._fire_words):
    the state stays as it was, with the first such shift's line in ``ub``. No shift: ``t`` itself."""
    log = list(cint.UB_LOG)
    del cint.UB_LOG[:]
    if not log:
        return t
    bad = z3.Or([c for c, _ in log])
    line: z3.ArithRef = z3.IntVal(0)
    for c, ln in reversed(log):  # the first shift that is out of range names the line
        line = z3.If(c, z3.IntVal(ln), line)
    out = []
    for i, (a, b) in enumerate(zip(s, t)):
        if i == ub:
            out.append(Sym(z3.If(bad, line, to_z3_num(b)), getattr(b, "type", None)))
        elif names[i] in tupled:
            out.append(tuple(y if x is y else Sym(z3.If(bad, to_z3_num(x), to_z3_num(y)), getattr(y, "type", None))
                             for x, y in zip(a, b)))
        else:
            out.append(b if a is b else Sym(z3.If(bad, to_z3_num(a), to_z3_num(b)), getattr(b, "type", None)))
    return type(t)(out)


def _eval(zm: z3.ModelRef, x: Any) -> int:
    v = zm.eval(to_z3_num(x), model_completion=True)
    return v.as_long() if z3.is_int_value(v) else int(str(v))


class AnyN:
    """Every CPU count of a range at once.

    One role (the spec's CPUs of interest) has a symbolic size N; every other
    role must be empty at this point. Per-CPU variables are arrays with a
    sum ghost; an action is encoded for one symbolic acting CPU ``i``; a
    per-CPU property is proved for one arbitrary CPU ``j`` (hence for all).
    """

    kind = "parametric"

    def __init__(self, cls: type, values: dict[str, Any], shown: dict[str, Any], role: str,
                 size: z3.ArithRef, constraints: list[z3.BoolRef]):
        si = info(cls)
        self.cls = cls
        self.si = si
        self.role = role
        self.N = size
        self._constraints = constraints
        from checker.kernel.tasks import has_tasks

        if has_tasks(si):
            raise NotParametric("has tasks: the task model (checker.kernel.tasks) is encoded per parameter point "
                                "only")
        roles: dict[str, Any] = {}
        for rname, r in si.roles.items():
            if rname == role:
                roles[rname] = SymRole(rname, size)
            else:
                cnt = values[r.count] if isinstance(r.count, str) else r.count
                if not isinstance(cnt, int) or cnt != 0:
                    raise NotParametric(f"role {rname!r} is not empty ({r.count}={cnt}); the any-N encoding "
                                        f"needs one role of CPUs")
                roles[rname] = range(0)
        if next(iter(si.roles)) != role:
            raise NotParametric(f"the symbolic role {role!r} must be the first role declared")
        self.params = SymParams(values, roles, shown)
        self.var_names = tuple(si.vars)
        self.vars = si.vars
        self.index = {n: i for i, n in enumerate(self.var_names)}
        self.percpu = frozenset(n for n, v in si.vars.items() if v.kind == "percpu")
        if any(v.kind == "array" or isinstance(v, Uninit) for v in si.vars.values()):
            raise NotParametric("has Array or Uninit variables (the any-N encoding handles scalars and "
                                "per-CPU variables only)")
        self.state_cls = state_class(cls, self.var_names, {}, values, roles, self.params, size)
        self._wrap = {n: v.type for n, v in si.vars.items() if v.overflow == "wrap" and v.type.bits is not None}
        self.i = Sym(z3.Int("%cpu_i"))
        self.j = Sym(z3.Int("%cpu_j"))
        # A second arbitrary CPU, for invariants about two CPUs (``pair``): mentioned only when one is asked.
        self.k = Sym(z3.Int("%cpu_k"))
        self.pairwise = False
        # A property left to the explorer is only named in a note: no need to decide where it applies.
        self.properties = [p for p in si.properties.values()
                           if p.kind == "invariant" and p.expect == "holds" and (not p.proof or self._applies(p))]

    def _applies(self, p: Any) -> bool:
        if p.applies is None:
            return True
        from checker.symbolic.term import SymbolicBranch

        try:
            return bool(p.applies(self.params))
        except SymbolicBranch:
            raise NotParametric(f"cannot decide whether {p.name} applies with symbolic parameters "
                                f"(its `applies` compares them)") from None

    def _action_applies(self, a: Any) -> bool:
        """Whether the step exists; one that depends on a symbolic parameter is kept (its guard decides)."""
        from checker.symbolic.term import SymbolicBranch

        try:
            return bool(a.applies(self.params))
        except SymbolicBranch:
            return True

    def constraints(self) -> list[z3.BoolRef]:
        return list(self._constraints) + [self.in_range(self.i), self.in_range(self.j)] \
            + ([self.in_range(self.k), to_z3_num(self.k) != to_z3_num(self.j)] if self.pairwise else [])

    def in_range(self, c: Any) -> z3.BoolRef:
        c = to_z3_num(c)
        return z3.And(c >= 0, c < self.N)

    def fresh(self, tag: str) -> tuple:
        vals = []
        for n in self.var_names:
            t = self.vars[n].type
            if n in self.percpu:
                vals.append(SymArray(z3.Array(f"{n}{tag}", z3.IntSort(), z3.IntSort()),
                                     z3.Int(f"sum({n}){tag}"), t, n))
            else:
                vals.append(Sym(z3.Int(f"{n}{tag}"), t))
        return self.state_cls(vals)

    def initial(self) -> tuple:
        vals = []
        p = self.params
        for n in self.var_names:
            v = self.vars[n]
            init = v.init(p) if callable(v.init) else v.init
            if isinstance(init, (list, tuple)):
                raise NotParametric(f"{n} has a per-CPU list as its initial value")
            z = to_z3_num(init)
            if n in self.percpu:
                vals.append(SymArray(z3.K(z3.IntSort(), z), self.N * z, v.type, n))
            else:
                vals.append(Sym(z, v.type))
        return self.state_cls(vals)

    def transitions(self) -> list[Transition]:
        out = []
        for a in self.si.actions.values():
            if a.role is not None and a.role != self.role:
                continue  # an empty role
            if a.applies is not None and not self._action_applies(a):
                continue
            params = list(inspect.signature(a.fn).parameters)[(2 if a.role else 1):]
            choose = dict(a.choose)
            domains = []
            ranges: list[z3.BoolRef] = []
            for n in choose:
                dom = choose[n]
                if isinstance(dom, Between):
                    lo, hi = dom.bounds(self.params)
                    if isinstance(lo, Sym) or isinstance(hi, Sym):
                        x = z3.Int(f"{a.name}.{n}")
                        ranges += [x >= to_z3_num(lo), x <= to_z3_num(hi)]
                        domains.append((Sym(x),))
                        continue
                    dom = dom.values(self.params)
                elif callable(dom):
                    dom = dom(self.params)
                domains.append(tuple(dom))
            names = tuple(choose)
            for combo in itertools.product(*domains):
                kw = dict(zip(names, combo))
                out.append(Transition(a, self.i if a.role else None, tuple(kw[q] for q in params), tuple(params),
                                      len(out), tuple(ranges)))
        return out

    def fire(self, tr: Transition, s: tuple) -> tuple[z3.BoolRef, tuple]:
        del cint.UB_LOG[:]
        r = _call(tr.action.fn, s, tr.cpu, tr.args)
        if r is DISABLED:
            return z3.BoolVal(False), s
        if cint.UB_LOG:
            raise NotParametric("shifts words (the undefined-shift check is encoded per CPU count)")
        return z3.And(_prop_value(r.guard), *tr.ranges), self.apply(s, r.updates)

    def apply(self, s: tuple, updates: dict[str, Any]) -> tuple:
        new = list(s)
        for name, val in updates.items():
            pos = self.index[name]
            t = self.vars[name].type
            if name in self.percpu and isinstance(val, Fill):
                z = self._value(name, t, val.value)
                new[pos] = SymArray(z3.K(z3.IntSort(), z), self.N * z, t, name)
            elif name in self.percpu:
                arr: SymArray = new[pos]
                keys = list(val)
                if len(keys) > 1 and not all(isinstance(k, int) for k in keys):
                    raise NotParametric(f"updates {name} at several symbolic CPUs in one step")
                a, total = arr.arr, arr.sum
                for k, v in val.items():
                    kz = to_z3_num(k)
                    z = self._value(name, t, v)
                    total = total + z - z3.Select(a, kz)
                    a = z3.Store(a, kz, z)
                new[pos] = SymArray(a, total, t, name)
            else:
                new[pos] = Sym(self._value(name, t, val), t)
        return self.state_cls(new)

    def _value(self, name: str, t: IntType, v: Any) -> z3.ArithRef:
        z = to_z3_num(v)
        return _wrap(t, z) if name in self._wrap else z

    def cpu_terms(self, s: tuple) -> list[Any]:
        """The CPUs a step's reasoning can mention: the actor, an arbitrary
        CPU, and every CPU a shared CPU-id variable points at."""
        out = [self.i, self.j] + ([self.k] if self.pairwise else [])
        for n, v in zip(self.var_names, s):
            if n not in self.percpu and isinstance(self.vars[n].type, CpuIdType):
                out.append(v)
        return out

    def types_at(self, s: tuple, cpus: list[Any]) -> z3.BoolRef:
        facts = []
        for n, v in zip(self.var_names, s):
            t = self.vars[n].type
            if n in self.percpu:
                for c in cpus:
                    f = _type_fact(t, to_z3_num(v[c]), self.N)
                    if f is not None:
                        facts.append(z3.Implies(self.in_range(c), f))
            else:
                f = _type_fact(t, to_z3_num(v), self.N)
                if f is not None:
                    facts.append(f)
        return z3.And(facts) if facts else z3.BoolVal(True)

    def per_cpu_at(self, p: Any, s: tuple, c: Any) -> z3.BoolRef:
        return z3.Implies(self.in_range(c), _prop_value(p.fn(s, c)))

    def pair_instances(self, p: Any, s: tuple) -> list[z3.BoolRef]:
        """An invariant about two CPUs (its ``pair(s, c, d)``) as a hypothesis: at every two distinct CPUs a
        step's reasoning can mention (``cpu_terms``), quantifier-free. Each instance follows from the
        quantified ``fn``; a step reads and writes no other CPU, so these are the instances its goals use,
        and the query stays in the decidable quantifier-free fragment (not left to Z3's instantiation)."""
        cs = self.cpu_terms(s)
        return [z3.Implies(z3.And(self.in_range(a), self.in_range(b), to_z3_num(a) != to_z3_num(b)),
                           _prop_value(p.pair(s, a, b)))
                for x, a in enumerate(cs) for y, b in enumerate(cs) if x != y]

    def holds(self, p: Any, s: tuple) -> z3.BoolRef:
        if p.role is not None:
            return self.per_cpu_at(p, s, self.j)
        return _prop_value(p.fn(s))

    def goal(self, p: Any, s: tuple) -> z3.BoolRef:
        """``p`` as an obligation's goal: an invariant about two CPUs (its ``pair(s, c, d)``) at the two
        arbitrary distinct CPUs j and k, where the per-CPU invariants are assumed too (its ``fn``, a formula
        quantified over pairs, is what the hypotheses assume); any other as ``holds``."""
        pair = getattr(p, "pair", None)
        if pair is None:
            return self.holds(p, s)
        return _prop_value(pair(s, self.j, self.k))

    def sum_lemma(self, s: tuple, cpus: list[Any]) -> z3.BoolRef:
        """Instances of: N values each within [lo, hi] sum to within [N*lo, N*hi]
        (and likewise with one or two known CPUs left out)."""
        facts = []
        N = self.N
        for n, bounds in self.si.sum_bounds.items():
            lo, hi = (to_z3_num(x) for x in bounds(s))
            arr: SymArray = s[self.index[n]]
            total = arr.sum
            facts += [N * lo <= total, total <= N * hi]
            for a_i, a in enumerate(cpus):
                rest = total - z3.Select(arr.arr, to_z3_num(a))
                facts.append(z3.Implies(self.in_range(a), z3.And((N - 1) * lo <= rest, rest <= (N - 1) * hi)))
                for b in cpus[a_i + 1:]:
                    rest2 = rest - z3.Select(arr.arr, to_z3_num(b))
                    facts.append(z3.Implies(z3.And(self.in_range(a), self.in_range(b),
                                                   to_z3_num(a) != to_z3_num(b)),
                                            z3.And((N - 2) * lo <= rest2, rest2 <= (N - 2) * hi)))
        return z3.And(facts) if facts else z3.BoolVal(True)

    def element_bounds(self, s: tuple, c: Any) -> list[tuple[str, z3.BoolRef]]:
        out = []
        for n, bounds in self.si.sum_bounds.items():
            lo, hi = (to_z3_num(x) for x in bounds(s))
            x = z3.Select(s[self.index[n]].arr, to_z3_num(c))
            out.append((n, z3.Implies(self.in_range(c), z3.And(lo <= x, x <= hi))))
        return out

    def describe(self, zm: z3.ModelRef, s: tuple, cpus: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        ids = sorted({_eval(zm, c) for c in cpus if _eval(zm, c) >= 0})
        for n, v in zip(self.var_names, s):
            if n in self.percpu:
                if self.vars[n].role not in (None, self.role):
                    continue  # a variable of an empty role
                for c in ids:
                    out[f"{n}[{c}]"] = _eval(zm, z3.Select(v.arr, c))
            else:
                out[n] = _eval(zm, v)
        for k, v in self.params._values.items():
            if isinstance(v, Sym):
                out[k] = _eval(zm, v.z)
        return out
