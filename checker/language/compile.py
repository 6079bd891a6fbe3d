# SPDX-License-Identifier: GPL-2.0-only
"""A spec bound to parameter values, in the form the engines use.

The explorer sees a ``Model`` through four calls (Stateright's seam):
``initial_states()``, ``successors(state)`` (labelled), property evaluation
(``invariants`` / ``sometimes`` / ``is_terminal``) and ``canonical(state)``.
States are tuples: one slot per variable, a per-CPU variable holding a
tuple indexed by CPU id. The tuple subclass built here gives spec code
``s.count``, ``s.local[cpu]`` and the parameters as ``s.batch``.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from checker.errors import SpecError
from checker.expr import AllOf, And
from checker.language.declare import (UNINIT, DISABLED, ActionInfo, Between, Fill, PropertyInfo, StateMutated, Step, Uninit,
                                  UninitRead)
from checker.language.model import Params, Spec, all_assumptions, decl_line, environment, info
from checker.types import NOBODY, BoolType, CpuIdType, Enum

Label = tuple  # (action index, cpu or None, choice index)
#: Property kinds checked on the state graph rather than state by state.
LIVENESS = ("eventually", "leads_to")

#: What to write instead of a list, set or dict in the state.
_COLLECTIONS = ("Write a collection as one int per element instead: PerCpu(0) for one per CPU, "
                "Array(length, 0) for a fixed-length table, or a bitmask int (mask | (1 << cpu)) for a set "
                "of CPUs.")


@dataclass(frozen=True)
class CompiledAction:
    """One action ready to fire: which CPUs may take it and its argument choices, in declared order."""
    index: int
    info: ActionInfo
    cpus: tuple  # CPU ids that may take it, or (None,)
    arg_names: tuple[str, ...]
    choices: tuple[tuple, ...]  # positional argument tuples, in declared order


class Model:
    """One spec at one parameter point."""

    def __init__(self, spec: Spec | type, params: Params | None = None):
        cls = spec if isinstance(spec, type) else type(spec)
        if params is None:
            params = spec.params if not isinstance(spec, type) else cls().params
        self.cls = cls
        self.name = cls.spec_name
        self.params = params
        si = info(cls)
        self.info = si
        self.roles = params.roles()
        self.ncpus_total = params.ncpus_total
        self.assumptions = all_assumptions(cls)
        self.spec_files = _spec_files(cls)

        self.var_names = tuple(si.vars)
        self.index = {n: i for i, n in enumerate(self.var_names)}
        self.percpu = frozenset(n for n, v in si.vars.items() if v.kind == "percpu")
        self.arrays = {n: (params.as_dict()[v.length] if isinstance(v.length, str) else v.length)
                       for n, v in si.vars.items() if v.kind == "array"}
        #: Variables stored as tuples: per-CPU ones and arrays.
        self.tupled = self.percpu | frozenset(self.arrays)
        #: ``vars`` at this point and ``weak``, its memory model (checker.kernel.passes: LONG is 32 bits on a
        #: 32-bit kernel; under tso and lkmm the hidden variables join the state).
        self.vars: dict[str, Any] = {}
        self.weak: Any = None
        environment().variables(self)
        self._wrap = {n: v.type for n, v in self.vars.items() if v.overflow == "wrap" and v.type.bits is not None}
        self._bools = frozenset(n for n, v in si.vars.items() if isinstance(v.type, BoolType))
        #: Variables whose type names its values (Enum, Bool, CpuId): a value outside is a step
        #: that ran where it should not, almost always a missing condition in its guard.
        self._domains = {n: self._values_of(v.type) for n, v in si.vars.items()
                         if isinstance(v.type, (Enum, BoolType, CpuIdType)) and not isinstance(v, Uninit)}
        uninit = {n: v for n, v in si.vars.items() if isinstance(v, Uninit)}
        #: Uninitialised locals whose read is reported, and those that take any value of their domain.
        self.uninit_report = [n for n, v in uninit.items() if not params.as_dict()[v.mode]]
        self.uninit_any = [n for n, v in uninit.items() if params.as_dict()[v.mode]]
        self.state_cls = self._make_state_class()

        live = [a for a in si.actions.values() if a.applies is None or a.applies(params)]
        self.actions = tuple(self._compile_action(i, a) for i, a in enumerate(live))
        #: The spec's own steps (the load-time checks run these; the engines run ``actions``).
        self.spec_actions = self.actions
        #: Whether this is a 32-bit point whose plain 64-bit accesses are steps in halves (checker.kernel.tearing).
        self.tearing = False
        environment().steps(self)
        weak = getattr(params, "memory", 0) != 0  # a tso or lkmm point (MEMORY.sc is 0)
        #: SC-only properties at a weak-memory point: not checked here, reported not_applicable by the engines.
        self.not_applicable = tuple(p for p in si.properties.values()
                                    if weak and p.sc_only and (p.applies is None or p.applies(params)))
        props = [self._compile_property(p) for p in si.properties.values()
                 if (p.applies is None or p.applies(params)) and p not in self.not_applicable]
        self.overflow_property = self._overflow_property()
        if self.overflow_property is not None:
            props.append(self.overflow_property)
        #: Liveness properties: checked on the unreduced state graph (checker.explore.liveness).
        self.liveness = tuple(p for p in props if p.kind in LIVENESS)
        props = [p for p in props if p.kind not in LIVENESS]
        self.properties = tuple(props)
        self.invariants = tuple(p for p in props if p.kind == "invariant")
        self.sometimes = tuple(p for p in props if p.kind == "sometimes")
        self.terminal = si.terminal
        self._reads: dict[str, tuple[int, ...] | None] | None = None
        #: The spec's Abstraction where it applies at these parameters (unbounded runs, liveness only).
        self.abstraction = si.abstraction_at(params)
        if self.abstraction is not None:
            refused = self.abstraction.refusal(params)
            if refused is not None:
                from checker.errors import UsageError
                raise UsageError(f"{self.name} at {params}: {refused}")
            self._frozen = frozenset(self.abstraction.freeze)
            self._modulo = [(self.index[n], f(params), n in self.tupled) for n, f in self.abstraction.modulo.items()]
            self.apply = self._abstract_apply  # type: ignore[method-assign]

        self._ub: int | None = None
        if "ub" in self.index and self.info.shift_lines:
            self._ub = self.index["ub"]
            self.fire = self._fire_words  # type: ignore[method-assign]
        #: The scheduler of a spec with tasks (checker.kernel.tasks), else None; ``symmetry`` (the canonical
        #: form) and ``rules`` (the context rules): set by the environment's last pass (checker.kernel.passes).
        self.scheduler: Any = None
        environment().finish(self)

    # -- state -------------------------------------------------------------
    def _make_state_class(self) -> type:
        from checker.cint import fixed

        words = {n: v.type for n, v in self.vars.items() if fixed(v.type)} if self.info.c_words else {}
        return state_class(self.cls, self.var_names, {n: v.doc for n, v in self.vars.items()},
                           self.params.as_dict(), self.roles, self.params, self.ncpus_total,
                           frozenset(self.uninit_report), words, self.tupled)

    def initial_states(self) -> list[tuple]:
        vals = []
        p = self.params
        for n in self.var_names:
            v = self.vars[n]
            init = v.init(p) if callable(v.init) else v.init
            if v.kind == "array":
                init = tuple(init) if isinstance(init, (list, tuple)) else (init,) * self.arrays[n]
                if len(init) != self.arrays[n]:
                    raise SpecError(f"{self.cls.__name__}.{n}: initial value has {len(init)} entries for "
                                    f"length {self.arrays[n]}", file=self.info.file, line=decl_line(self.cls, n))
                for x in init:
                    self._check_value(n, x)
            elif v.kind == "percpu":
                owners = self.roles[v.role] if v.role else range(self.ncpus_total)
                if isinstance(init, (list, tuple)):
                    if len(init) != len(owners):
                        raise SpecError(f"{self.cls.__name__}.{n}: initial value has {len(init)} entries "
                                        f"for {len(owners)} CPUs", file=self.info.file,
                                        line=decl_line(self.cls, n))
                    per = dict(zip(owners, init))
                else:
                    per = {c: init for c in owners}
                # A slot outside the role holds no value: 0, or no CPU for a CPU-id variable.
                other = (NOBODY if isinstance(v.type, CpuIdType) else 0) if v.role else init
                init = tuple(per.get(c, other) for c in range(self.ncpus_total))
                for x in init:
                    self._check_value(n, x)
            else:
                self._check_value(n, init)
            # bools stored as ints, as ``apply`` stores them: equal states are then equal in every
            # encoding (False == 0 as tuples, but not as bytes: fingerprints, checkpoints, Promela)
            vals.append(tuple(int(x) for x in init) if isinstance(init, tuple) else int(init))
        if not self.uninit_any:
            return [self.state_cls(vals)]
        # Any value: one initial state per combination of the uninitialised locals' domains.
        positions = [self.index[n] for n in self.uninit_any]
        out = []
        for combo in itertools.product(*(self.vars[n].domain for n in self.uninit_any)):
            row = list(vals)
            for pos, x in zip(positions, combo):
                row[pos] = x
            out.append(self.state_cls(row))
        return out

    def _check_value(self, name: str, x: Any) -> None:
        if x.__class__ is not int and x.__class__ is not bool:
            raise SpecError(f"{self.cls.__name__}: variable {name!r} is given {x!r} ({type(x).__name__}); "
                            f"state values must be ints or bools (hashable, and the same on every backend).\n"
                            + _COLLECTIONS, file=self.info.file, line=decl_line(self.cls, name))

    # -- actions -------------------------------------------------------------
    def _compile_action(self, idx: int, a: ActionInfo) -> CompiledAction:
        cpus: tuple = tuple(self.roles[a.role]) if a.role else (None,)
        params = list(inspect.signature(a.fn).parameters)[(2 if a.role else 1):]
        choose = dict(a.choose)
        if set(params) != set(choose):
            raise SpecError(f"{self.cls.__name__}.{a.name}: its arguments {params} do not match its "
                            f"choices {list(choose)}", file=a.file, line=a.line)
        domains = []
        for n in choose:  # declared order
            dom = choose[n]
            if isinstance(dom, Between):
                dom = dom.values(self.params)
            elif callable(dom):
                dom = dom(self.params)
            dom = tuple(dom)
            if not dom:
                raise SpecError(f"{self.cls.__name__}.{a.name}: choice {n!r} has no values at {self.params}",
                                file=a.file, line=a.line)
            domains.append(dom)
        names = tuple(choose)
        combos = []
        for combo in itertools.product(*domains):
            kw = dict(zip(names, combo))
            combos.append(tuple(kw[p] for p in params))
        return CompiledAction(idx, a, cpus, tuple(params), tuple(combos))

    def successors(self, s: tuple) -> list[tuple[Label, tuple]]:
        """Every enabled step from ``s``, in the fixed order: action
        declaration order, then CPU ascending, then choices as declared."""
        out = []
        fire = self.fire
        for act in self.actions:
            ai = act.index
            for cpu in act.cpus:
                for ci, args in enumerate(act.choices):
                    t = fire(s, act, cpu, args)
                    if t is not None:
                        out.append(((ai, cpu, ci), t))
        return out

    def fire(self, s: tuple, act: CompiledAction, cpu: int | None, args: tuple) -> tuple | None:
        """The state after one step (``act`` on ``cpu`` with the choice ``args``), or None when
        it is not enabled in ``s``. The simulator picks single steps through this too."""
        fn = act.info.fn
        try:
            r = fn(s, cpu, *args) if cpu is not None else fn(s, *args)
        except UninitRead as e:
            # Python evaluates effects even when the guard is false: the read
            # counts only if the step can run, with some value in the variable.
            if s.uninit_read == 0 and self._enabled_with_any_value(fn, s, cpu, args, e.name):
                flag = self.vars["uninit_read"].type
                return self.apply(s, {"uninit_read": getattr(flag, e.name)})
            return None
        if r is DISABLED:
            return None
        if r.__class__ is not Step:
            raise self._bad_return(act, r)
        g = r.guard
        if g is not True:
            if g.__class__ is not bool and g.__class__ is not int and not isinstance(g, int):
                raise SpecError(f"{self.cls.__name__}.{act.info.name}: its guard is {g!r}, "
                                f"not a truth value", file=act.info.file, line=act.info.line)
            if not g:
                return None
        return self.apply(s, r.updates, act)

    def _fire_words(self, s: tuple, act: CompiledAction, cpu: int | None, args: tuple) -> tuple | None:
        """``fire`` for a spec that shifts words: an enabled step that shifts by a count out of range
        stops its run there, with the line in ``ub`` (what UBSAN reports); a stopped run takes no step."""
        from checker.cint import UB_LOG

        if s[self._ub]:
            return None
        del UB_LOG[:]
        t = Model.fire(self, s, act, cpu, args)
        if not UB_LOG:
            return t
        line = UB_LOG[0][1]
        del UB_LOG[:]
        return None if t is None else self.apply(s, {"ub": line})

    def _enabled_with_any_value(self, fn: Any, s: tuple, cpu: Any, args: tuple, name: str) -> bool:
        pos = self.index[name]
        for value in (0, *self.vars[name].domain):
            t = list(s)
            t[pos] = value
            try:
                r = fn(self.state_cls(t), cpu, *args) if cpu is not None else fn(self.state_cls(t), *args)
            except UninitRead:
                continue  # another uninitialised variable: its own read is found the same way
            if r is not DISABLED and r.guard:
                return True
        return False

    def _bad_return(self, act: CompiledAction, r: Any) -> SpecError:
        return SpecError(f"{self.cls.__name__}.{act.info.name} returned {r!r}; an action returns "
                         f"when(guard, var=value, ...), e.g.\n    return when(s.pc[cpu] == PC.idle, pc={{cpu: PC.acquire}})",
                         file=act.info.file, line=act.info.line)

    def apply(self, s: tuple, updates: dict[str, Any], act: CompiledAction | None = None) -> tuple:
        new = list(s)
        self._write(new, updates, act, True)
        return self.state_cls(new)

    def apply_in_place(self, vals: list, updates: dict[str, Any], act: CompiledAction | None = None) -> None:
        """``apply`` on a state under construction: ``vals`` holds the slots, each per-CPU row a ``Row``
        that is changed where it stands. A replay of 100 K steps at 1,024 CPUs then costs its updates,
        not a copy of each row it touches (``checker.prove.construct``); same checks and errors as ``apply``."""
        self._write(vals, updates, act, False)

    def _write(self, vals: list, updates: dict[str, Any], act: CompiledAction | None, new_rows: bool) -> None:
        """The updates written into ``vals``: a per-CPU row as a new tuple (``new_rows``) or where it stands."""
        index = self.index
        for name, val in updates.items():
            try:
                pos = index[name]
            except KeyError:
                raise self._unknown_var(name, act) from None
            if name not in self.tupled:
                vals[pos] = self._value(name, val, act)
            elif new_rows:
                row = list(vals[pos])
                self._write_row(row, name, val, act)
                vals[pos] = tuple(row)
            else:
                self._write_row(vals[pos], name, val, act)

    def _write_row(self, row: list, name: str, val: Any, act: CompiledAction | None) -> None:
        """A per-CPU variable's update (``{cpu: value}`` or ``Fill``) written into its row."""
        if val.__class__ is Fill:
            row[:] = (self._value(name, val.value, act),) * len(row)
            return
        if val.__class__ is not dict:
            raise self._percpu_not_dict(name, val, act)
        n = len(row)
        for c, v in val.items():
            if c.__class__ is not int or not 0 <= c < n:
                raise self._bad_cpu(name, c, act)
            row[c] = self._value(name, v, act)

    def _abstract_apply(self, s: tuple, updates: dict[str, Any], act: CompiledAction | None = None) -> tuple:
        """``apply`` under the spec's Abstraction: frozen variables keep their value, reduced ones wrap."""
        t = Model.apply(self, s, {k: v for k, v in updates.items() if k not in self._frozen}, act)
        if not self._modulo:
            return t
        row = list(t)
        for pos, m, tupled in self._modulo:
            row[pos] = tuple(x % m for x in row[pos]) if tupled else row[pos] % m
        return self.state_cls(row)

    def _value(self, name: str, v: Any, act: CompiledAction | None) -> int:
        if v.__class__ is int:
            t = self._wrap.get(name)
            if t is not None:
                return t.wrap(v)
            d = self._domains.get(name)
            if d is not None and v not in d:  # a set lookup: this runs for every update the explorer makes
                raise self._out_of_domain(name, self.vars[name].type, v, act)
            return v
        if v.__class__ is bool:
            return int(v)
        if isinstance(v, int):  # a Word (checker.cint): stored as its plain value
            return self._value(name, int(v), act)
        where = f"{self.cls.__name__}.{act.info.name}" if act else self.cls.__name__
        raise SpecError(f"{where} sets {name!r} to {v!r} ({type(v).__name__}); state values must be ints "
                        f"or bools (hashable, and the same on every backend).\n" + _COLLECTIONS,
                        file=act.info.file if act else None, line=act.info.line if act else None)

    def _values_of(self, t: Any) -> frozenset[int]:
        """Every value of an Enum, Bool or CpuId type at this parameter point."""
        if isinstance(t, CpuIdType):
            return frozenset((NOBODY, *range(self.ncpus_total)))
        if isinstance(t, BoolType):
            return frozenset((0, 1))
        return frozenset(range(len(t.names)))

    def _out_of_domain(self, name: str, t: Any, v: int, act: CompiledAction | None) -> SpecError:
        values = (f"NOBODY or a CPU id 0..{self.ncpus_total - 1}" if isinstance(t, CpuIdType)
                  else "0 or 1" if isinstance(t, BoolType)
                  else ", ".join(f"{n}={i}" for i, n in enumerate(t.names)))
        where = f"{self.cls.__name__}.{act.info.name}" if act else self.cls.__name__
        ref = f"s.{name}[cpu]" if name in self.tupled else f"s.{name}"
        if isinstance(t, Enum) and len(t.names) > 1:
            a, b = t.names[0], t.names[1]
            new = f"{{cpu: E.{b}}}" if name in self.tupled else f"E.{b}"
            example = f"when({ref} == E.{a}, {name}={new})  # E: {name}'s Enum"
        else:
            example = f"when(And(<the guard>, {ref} == <the value this step starts from>), {name}=...)"
        return SpecError(f"{where} sets {name} to {v}, which is not a value of its type ({values}): the step ran "
                         f"in a state where it should not, so its guard is missing a condition.\n"
                         f"Add the condition to when(...), e.g.\n    return {example}",
                         file=act.info.file if act else None, line=act.info.line if act else None)

    def _unknown_var(self, name: str, act: CompiledAction | None) -> SpecError:
        return SpecError(f"{self.cls.__name__}.{act.info.name if act else '?'} sets {name!r}, which is not a "
                         f"variable; the variables are: {', '.join(self.var_names)}",
                         file=act.info.file if act else None, line=act.info.line if act else None)

    def _percpu_not_dict(self, name: str, val: Any, act: CompiledAction | None) -> SpecError:
        return SpecError(f"{self.cls.__name__}.{act.info.name if act else '?'} sets the per-CPU variable "
                         f"{name!r} to {val!r}; update one CPU's slot with a mapping, e.g. {name}={{cpu: value}}",
                         file=act.info.file if act else None, line=act.info.line if act else None)

    def _bad_cpu(self, name: str, c: Any, act: CompiledAction | None) -> SpecError:
        what = "indexes" if name in self.arrays else "CPU ids"
        top = self.arrays.get(name, self.ncpus_total) - 1
        return SpecError(f"{self.cls.__name__}.{act.info.name if act else '?'} sets {name}[{c!r}], but {what} "
                         f"at {self.params} are 0..{top}; key the update by a CPU of the role, e.g. "
                         f"{name}={{cpu: value}} with the action's `cpu`",
                         file=act.info.file if act else None, line=act.info.line if act else None)

    # -- properties --------------------------------------------------------------
    def _compile_property(self, p: PropertyInfo) -> PropertyInfo:
        """A per-CPU property becomes a state predicate: it holds for every CPU of its role."""
        if p.role is None:
            return p
        cpus = tuple(self.roles[p.role])
        fn = p.fn

        def every_cpu(s: tuple) -> Any:
            return AllOf([fn(s, c) for c in cpus])

        return dataclasses.replace(p, fn=every_cpu, cpu_fn=fn)

    def property_reads(self) -> dict[str, tuple[int, ...] | None]:
        """For each property, the positions of the state variables it reads
        (``None``: unknown, always evaluate). A property's code cannot branch
        on a state value (the load-time run on symbols rejects ``if``/``and``
        on one), so one run on an initial state reads every variable any run
        reads. The explorer uses this to skip a property in a state that
        differs from its parent only in variables the property never reads."""
        if self._reads is None:
            seen: set[int] = set()

            def recorder(i: int) -> property:
                def read(s: tuple) -> Any:
                    seen.add(i)
                    return tuple.__getitem__(s, i)
                return property(read)

            every = range(len(self.var_names))

            def getitem(s: tuple, i: Any) -> Any:  # engine-written properties index the tuple
                seen.update(every[i] if isinstance(i, slice) else (every[i],))
                return tuple.__getitem__(s, i)

            def iterate(s: tuple) -> Any:
                seen.update(every)
                return tuple.__iter__(s)

            ns: dict[str, Any] = {n: recorder(i) for i, n in enumerate(self.var_names)}
            ns.update(__getitem__=getitem, __iter__=iterate)
            rec = type("Recording", (self.state_cls,), ns)
            self._reads = {}
            for p in self.properties:
                seen.clear()
                try:
                    for s0 in self.initial_states():
                        p.fn(rec(s0))
                    self._reads[p.name] = tuple(sorted(seen))
                except Exception:  # an uninitialised read, say: evaluate it everywhere
                    self._reads[p.name] = None
        return self._reads

    def is_terminal(self, s: tuple) -> bool:
        if self.uninit_report and s[self.index["uninit_read"]]:
            return True  # the run stopped at the reported read
        if self._ub is not None and s[self._ub]:
            return True  # the run stopped at an undefined shift
        return bool(self.terminal(s))

    def _overflow_property(self) -> PropertyInfo | None:
        checked = [(self.index[n], n, v.type, n in self.tupled) for n, v in self.vars.items()
                   if v.overflow == "error" and v.type.bits is not None]
        if not checked:
            return None

        def no_overflow(s: tuple) -> Any:
            pos0, _, _, per0 = checked[0]
            first = s[pos0][0] if per0 and s[pos0] else s[pos0]
            if first.__class__ is not int:  # symbolic values: the same claim as a term
                return AllOf([And(t.lo <= x, x <= t.hi) for pos, _n, t, per in checked
                              for x in (s[pos] if per else (s[pos],))])
            for pos, _n, t, per in checked:
                vals = s[pos] if per else (s[pos],)
                for x in vals:
                    if not (t.lo <= x <= t.hi):
                        return False
            return True

        names = ", ".join(f"{n} ({t.name})" for _p, n, t, _ in checked)
        return PropertyInfo("no_overflow", no_overflow, "invariant", self.info.builtin_expect.get("no_overflow", "holds"), None,
                            f"every typed variable stays in its range: {names}", self.info.file, self.info.line)

    # -- describing steps ----------------------------------------------------------
    def label_parts(self, label: Label) -> tuple[str, int | None, dict[str, Any]]:
        ai, cpu, ci = label
        act = self.actions[ai]
        return act.info.name, cpu, dict(zip(act.arg_names, act.choices[ci]))

    def role_of(self, cpu: int | None) -> str | None:
        if cpu is None:
            return None
        for name, r in self.roles.items():
            if cpu in r:
                return name
        return None

    def changes(self, s: tuple, t: tuple) -> dict[str, Any]:
        """The variables that differ, per-CPU ones as ``local[2]`` (a memory model's hidden state as it
        shows it: ``checker.ordering.lkmm``'s flat ghosts as histories and views)."""
        out: dict[str, Any] = {}
        hidden = getattr(self.weak, "hidden", ())
        for i, n in enumerate(self.var_names):
            a, b = s[i], t[i]
            if a == b or n in hidden:
                continue
            if n in self.tupled:
                for c, (x, y) in enumerate(zip(a, b)):
                    if x != y:
                        out[f"{n}[{c}]"] = y
            else:
                out[n] = b
        if hidden:
            was, now = self.weak.shown(s), self.weak.shown(t)
            out.update((k, v) for k, v in now.items() if was[k] != v)
        return out

    def written(self, s: tuple, label: Label) -> tuple[str, ...]:
        """The slots a step stores to (``count``, ``local[2]``), from its action's effect dict: a store of
        the value already there is one of them although ``changes`` cannot see it (the lost update's
        store). Empty where the action cannot be run again here (an uninitialised read's flag step)."""
        ai, cpu, ci = label
        act = self.actions[ai]
        args = act.choices[ci]
        if s.__class__ is not self.state_cls:
            s = self.state_cls(s)
        try:
            r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
        except Exception:  # noqa: BLE001  (the step ran; only its description is lost)
            return ()
        if r is DISABLED or r.__class__ is not Step:
            return ()
        hidden = (*getattr(self.weak, "hidden", ()), *getattr(self, "_frozen", ()))
        out: list[str] = []
        for name, val in r.updates.items():
            if name in hidden or name not in self.index:
                continue
            if name not in self.tupled:
                out.append(name)
            elif val.__class__ is Fill:
                out += [f"{name}[{c}]" for c in range(len(s[self.index[name]]))]
            elif isinstance(val, dict):
                out += [f"{name}[{c}]" for c in val]
        return tuple(out)

    def show_value(self, key: str, v: Any) -> str:
        return show_value(self.vars, key, v)

    def state_dict(self, s: tuple) -> dict[str, Any]:
        hidden = getattr(self.weak, "hidden", ())
        out = {n: (list(v) if n in self.tupled else v) for n, v in zip(self.var_names, s) if n not in hidden}
        if hidden:
            out.update(self.weak.shown(s))
        return out

    def cpu_valued(self) -> dict[str, bool]:
        """Variables holding CPU ids (name -> is per-CPU)."""
        for n in self.arrays:
            if isinstance(self.vars[n].type, CpuIdType) and (any(r.symmetric for r in self.info.roles.values())
                                                             or self.info.structure is not None):
                raise SpecError(f"{self.cls.__name__}.{n}: an Array of CPU ids in a spec with a symmetric role "
                                f"is not supported; use a per-CPU variable", file=self.info.file,
                                line=decl_line(self.cls, n))
        return {n: n in self.percpu for n, v in self.vars.items()
                if isinstance(v.type, CpuIdType) and n not in self.arrays}


def show_value(variables: dict[str, Any], key: str, v: Any) -> str:
    """A value as the trace shows it: an enum's name, ``cpu0``, ``-`` for nobody, ``uninit``. ``key`` is a
    variable's name or a per-CPU element's (``local[1]``)."""
    if v == UNINIT:
        return "uninit"
    var = variables.get(key.split("[", 1)[0])
    return var.type.show(v) if var is not None else repr(v)


def _checked_read(i: int, name: str) -> Any:
    def read(s: tuple) -> Any:
        v = s[i]
        if v.__class__ is int and v == UNINIT:
            raise UninitRead(name)
        return v

    return read


def _word_read(i: int, t: Any, row: bool) -> Any:
    """A typed variable read as C words (checker.cint.Word); symbolic slots pass through."""
    from checker.cint import word_class

    cls = word_class(t)
    if row:
        def read_row(s: tuple) -> Any:
            r = tuple.__getitem__(s, i)
            return tuple(map(cls, r)) if r and r[0].__class__ is int else r
        return read_row

    def read(s: tuple) -> Any:
        v = tuple.__getitem__(s, i)
        return cls(v) if v.__class__ is int else v
    return read


class Row(list):
    """A per-CPU row of a state under construction (``Model.apply_in_place``): read like the tuple it
    becomes, and equal to it, so a spec's action computes the same updates from it."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return list.__eq__(self, list(other)) if isinstance(other, tuple) else list.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]


def state_class(spec: type, var_names: tuple[str, ...], docs: dict[str, str], param_values: dict[str, Any],
                roles: dict[str, Any], params: Any, ncpus_total: Any, uninit: frozenset = frozenset(),
                words: dict[str, Any] | None = None, tupled: frozenset = frozenset()) -> type:
    """A tuple subclass: ``s.count`` reads a slot, ``s.batch`` a parameter,
    ``s.adders`` a role's CPU ids, ``s.spec`` the spec class (so that a helper
    a bug spec overrides is called as ``s.spec.helper(s, ...)``). Parameters
    may be ints or symbolic terms."""
    ns: dict[str, Any] = {"__slots__": ()}
    for i, n in enumerate(var_names):
        if words and n in words:
            ns[n] = property(_word_read(i, words[n], n in tupled), doc=docs.get(n, ""))
            continue
        ns[n] = property(_checked_read(i, n) if n in uninit else itemgetter(i), doc=docs.get(n, ""))
    for k, v in param_values.items():
        if k not in ns:
            ns[k] = v
    for k, r in roles.items():
        ns[k] = r
    ns["params"] = params
    ns["ncpus_total"] = ncpus_total
    ns["spec"] = spec

    def __repr__(s: tuple) -> str:
        return "{" + ", ".join(f"{n}={v!r}" for n, v in zip(var_names, s)) + "}"

    ns["__repr__"] = __repr__

    def __setattr__(s: tuple, name: str, value: Any) -> None:
        raise StateMutated(name)  # lint turns this into "return the new value from when(...)"

    ns["__setattr__"] = __setattr__
    return type(f"{spec.__name__}State", (tuple,), ns)


def _spec_files(cls: type) -> set[str]:
    files = set()
    for base in cls.__mro__:
        if isinstance(base, type) and issubclass(base, Spec) and base is not Spec:
            try:
                files.add(inspect.getsourcefile(base) or "")
            except TypeError:
                pass
    files.discard("")
    return files
