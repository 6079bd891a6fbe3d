# SPDX-License-Identifier: GPL-2.0-only
"""A model at one parameter point as terms: what the generated C computes.

The spec's own actions and properties are run on a symbolic per-N state
(``checker.prove.encoding.PerN``, as the Z3 backend and the Promela export
run them), so the C program is printed from the spec's code, never from a
second encoding. Beyond PerN's guard and new state, each step here also
records what the interpreter checks while applying it (``Model.apply``):
which slots it assigns (an Enum/Bool/CpuId value outside its type is an
error there), and where a slot is chosen by the state, that the index is in
range. The context rules' static facts (locks, interrupt and preemption
slots, sleeping and interrupt actions) are collected here too.

Anything without a C form raises ``NotLowerable`` naming the construct: the
point then runs on the interpreter.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

import checker.cint as cint
from checker.errors import NotLowerable  # raised by the memory models too: defined below them
from checker.prove.encoding import PerN, Transition, undefined_shift
from checker.language.compile import Model
from checker.language.declare import DISABLED, Fill, Step, Uninit
from checker.language.lint import symbolic_state
from checker.symbolic.term import Sym, to_z3_bool, to_z3_num
from checker.types import BoolType, CpuIdType, Enum, NOBODY


@dataclass
class LStep:
    """One step (action, CPU, choice): its guard, assignments and checks, as terms."""

    index: int
    label: tuple  # the interpreter's (action index, cpu, choice index)
    action: int
    cpu: int | None
    guard: z3.BoolRef
    #: (slot, new value) for every slot whose value may change
    updates: list[tuple[int, z3.ExprRef]]
    #: conditions that must hold when the step is enabled, else the interpreter raises (domain, index)
    checks: list[tuple[z3.BoolRef, str]]
    what: str


@dataclass
class Lowered:
    """A model lowered for C generation: its state as a flat slot vector, each step and property as Z3 terms."""
    model: Model
    slot_names: list[str]  # Z3 symbol names, in vector order
    steps: list[LStep]
    #: model.properties in order: (name, kind, term)
    props: list[tuple[str, str, z3.BoolRef]]
    terminal: z3.BoolRef
    #: per slot: the declared domain (lo, hi) of an Enum, Bool or CpuId slot, None for any other
    domains: list[tuple[int, int] | None]
    #: context-rule facts (slot indices); empty when the rules are inactive
    rules: dict[str, Any] = field(default_factory=dict)


def slot_layout(model: Model) -> tuple[list[str], dict[str, int]]:
    """Vector order: model.var_names, each tupled variable expanded by index."""
    names: list[str] = []
    for n in model.var_names:
        if n in model.tupled:
            names += [f"{n}[{c}]" for c in range(model.arrays.get(n, model.ncpus_total))]
        else:
            names.append(n)
    return names, {n: i for i, n in enumerate(names)}


def flatten(model: Model, s: tuple) -> list[int]:
    """A state tuple as the flat vector of integers the generated C stores (arrays laid out in place)."""
    out: list[int] = []
    for n, v in zip(model.var_names, s):
        if n in model.tupled:
            out += [int(x) for x in v]
        else:
            out.append(int(v))
    return out


def unflatten(model: Model, vec: list[int]) -> tuple:
    """The state tuple of a flat vector (the inverse of ``flatten``)."""
    vals: list[Any] = []
    i = 0
    for n in model.var_names:
        if n in model.tupled:
            k = model.arrays.get(n, model.ncpus_total)
            vals.append(tuple(vec[i:i + k]))
            i += k
        else:
            vals.append(vec[i])
            i += 1
    return model.state_cls(vals)


def _domain(model: Model, name: str) -> tuple[int, int] | None:
    v = model.vars[name]
    t = v.type
    if isinstance(v, Uninit):
        return None
    if isinstance(t, CpuIdType):
        return (NOBODY, model.ncpus_total - 1)
    if isinstance(t, BoolType):
        return (0, 1)
    if isinstance(t, Enum):
        return (0, len(t.names) - 1)
    return None  # a wrapping word's range is its type's, but packing it whole would take 32 or 64 bits


class _Recording(PerN):
    """PerN's apply, also recording what the interpreter checks while applying."""

    takes_halves = True

    def __init__(self, model: Model, index: dict[str, int]):
        super().__init__(model)
        self.slot = index
        self.checks: list[tuple[z3.BoolRef, str]] = []
        ab = model.abstraction
        self.frozen = frozenset(ab.freeze) if ab is not None else frozenset()
        self.modulo = {n: f(model.params) for n, f in ab.modulo.items()} if ab is not None else {}

    def _dom_check(self, name: str, z: z3.ExprRef, guard: z3.BoolRef | None = None) -> None:
        m = self.model
        if name in self._wrap or name not in m._domains:
            return
        lo, hi = _domain(m, name)  # type: ignore[misc]
        ok = z3.And(z >= lo, z <= hi)
        self.checks.append((ok if guard is None else z3.Implies(guard, ok),
                            f"a value of {name} outside its type"))

    def apply(self, s: tuple, updates: dict[str, Any]) -> tuple:
        m = self.model
        new = list(s)
        for name, val in updates.items():
            if name not in m.index:
                raise NotLowerable(f"an update of {name!r}, not a variable")
            if name in self.frozen:
                continue
            pos = m.index[name]
            t = m.vars[name].type
            if name in m.tupled and isinstance(val, Fill):
                z = self._value(name, t, val.value)
                self._dom_check(name, z.z)
                new[pos] = tuple(z for _ in new[pos])
            elif name in m.tupled:
                if not isinstance(val, dict):
                    raise NotLowerable(f"the per-CPU update {name}={val!r} (not a mapping)")
                row = list(new[pos])
                for c, v in val.items():
                    z = self._value(name, t, v)
                    if c.__class__ is int:
                        if not 0 <= c < len(row):
                            raise NotLowerable(f"the update {name}[{c}] (outside the variable)")
                        self._dom_check(name, z.z)
                        row[c] = z
                    elif isinstance(c, Sym):
                        cz = to_z3_num(c)
                        self.checks.append((z3.And(cz >= 0, cz < len(row)), f"an index of {name} out of range"))
                        self._dom_check(name, z.z, z3.And(cz >= 0, cz < len(row)))
                        row = [Sym(z3.If(cz == k, z.z, to_z3_num(x)), t) for k, x in enumerate(row)]
                    else:
                        raise NotLowerable(f"the update {name}[{c!r}] (an index that is not an int)")
                new[pos] = tuple(row)
            else:
                z = self._value(name, t, val)
                self._dom_check(name, z.z)
                new[pos] = z
        for name, mod in self.modulo.items():
            pos = m.index[name]
            t = m.vars[name].type
            if name in m.tupled:
                new[pos] = tuple(Sym(to_z3_num(x) % mod, t) for x in new[pos])
            else:
                new[pos] = Sym(to_z3_num(new[pos]) % mod, t)
        return m.state_cls(new)


def lower(model: Model) -> Lowered:
    """Every step, property and the terminal predicate as Z3 terms over the slot vector."""
    m = model
    if m.uninit_report:
        raise NotLowerable(f"reads of the uninitialised {', '.join(m.uninit_report)} in the reporting mode")
    names, index = slot_layout(m)
    rec = _Recording(m, index)
    s = symbolic_state(m)
    flat_syms = []
    for n, v in zip(m.var_names, s):
        flat_syms += [to_z3_num(x) for x in (v if n in m.tupled else (v,))]
    steps: list[LStep] = []
    trs: list[Transition] = rec.transitions()
    k = 0
    for act in m.actions:
        for cpu in act.cpus:
            for ci, args in enumerate(act.choices):
                tr = trs[k]
                what = f"{act.info.name}" + (f" on cpu{cpu}" if cpu is not None else "")
                rec.checks = []
                del cint.UB_LOG[:]
                # (a 32-bit point's steps in halves build their terms themselves: checker.kernel.tearing)
                r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
                if r is DISABLED:
                    guard, new = z3.BoolVal(False), s
                elif not isinstance(r, Step):
                    raise NotLowerable(f"{what} returning {r!r}")
                else:
                    guard, new = to_z3_bool(r.guard), rec.apply(s, r.updates)
                    if m._ub is not None:  # the explorer's rule (Model._fire_words), as the Z3 backend has it
                        guard = z3.And(guard, to_z3_num(s[m._ub]) == 0)
                        new = undefined_shift(s, new, m._ub, m.tupled, m.var_names)
                del cint.UB_LOG[:]
                updates = []
                i = 0
                for n, val in zip(m.var_names, new):
                    for x in (val if n in m.tupled else (val,)):
                        z = to_z3_num(x)
                        if not z.eq(flat_syms[i]):
                            updates.append((i, z))
                        i += 1
                steps.append(LStep(k, (act.index, cpu, ci), act.index, cpu, guard, updates, list(rec.checks), what))
                assert tr.cpu == cpu and tr.args == args
                k += 1
    props = [(p.name, p.kind, to_z3_bool(p.fn(s))) for p in m.properties]
    terminal = rec.terminal(s)  # a run stopped at an undefined shift is terminal too
    domains = []
    for n in m.var_names:
        d = _domain(m, n)
        domains += [d] * (m.arrays.get(n, m.ncpus_total) if n in m.tupled else 1)
    out = Lowered(m, names, steps, props, terminal, domains)
    if m.rules.active:
        out.rules = _rule_facts(m, index)
        # the CPU each Role(cpu=) member runs on: whose code an interrupt handler on a CPU interrupts
        out.rules["on"] = [(x, to_z3_num(fn(s, x))) for x, fn in m.rules.members]
    return out


def _rule_facts(m: Model, index: dict[str, int]) -> dict[str, Any]:
    r = m.rules
    n = m.ncpus_total

    def row(pos: int) -> list[int]:
        name = m.var_names[pos]
        return [index[f"{name}[{c}]"] for c in range(n)]

    return {
        "locks": [(name, index[name]) for name, _pos in r.locks],
        "irqs": [row(p) for p in r.irqs],
        "preempt": [row(p) for p in r.preempt],
        "sleepers": set(r.sleepers),
        "irq_actions": set(r.irq_actions),
        # the CPU's current task (a holder of the CPU's locks too, for no_irq_deadlock), with tasks
        "curr": [index[f"curr[{c}]"] for c in range(n)] if m.scheduler is not None else None,
        "rt": r.rt,
        "rt_locks": {index[m.var_names[p]] for p in r.rt_locks},
    }
