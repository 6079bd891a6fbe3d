# SPDX-License-Identifier: GPL-2.0-only
"""Promises for ``--memory lkmm``: load buffering, and stores that join coherence order out of program order.

The promising semantics (Kang, Hur, Lahav, Vafeiadis, Dreyer, POPL 2017)
lets a CPU *promise* a store before its program order reaches it: the
store becomes a message in memory at once, other CPUs may read it, and the
promising CPU must later run a store that *fulfils* it (same location,
same value). That is what gives ``LB+poonceonces`` (each CPU's store is read
before its own earlier load runs) and ``S+poonceonces`` (P0's second store
is in memory before its first, so P1's store lands between them).

What keeps it finite and the same for both engines (every piece is an
expression over flat integer ghosts, as the rest of ``lkmm``):

- a promise is a builtin step ``promise(loc, value)`` of a CPU, for a
  (location, value) pair one of the CPU's ``"once"`` stores can write: the
  stored value is a constant of the spec's code, or any value of the
  location's finite type (Bool, Enum, CpuId); at most ``lkmm_promises``
  outstanding per CPU, one per location;
- its message is ``lk_who = -(cpu + 1)`` until fulfilled (then ``cpu + 1``);
- certification (the paper's "the thread alone can fulfil it") is replaced
  by what LKMM orders between a load and a later store, checked when the
  store runs: while a CPU has an outstanding promise it runs no step that
  LKMM orders before later stores (a fence other than ``smp_rmb()``, an
  acquire load, a release store, an ordered read-modify-write, taking or
  releasing a lock, a fully ordered step), and a store fulfils a promise only
  if neither its value nor its guard depends on a load made since the
  promise (data, address and control dependencies: a register written from
  such a load is *tainted*, ``lk_taint``, and the taint follows the spec's
  own expressions, found once per step by running it on symbols). A store
  that cannot fulfil its CPU's promise on that location is not run: the
  promise could then never be fulfilled (coherence);
- a state with an outstanding promise is not an observation of the program
  (it holds a store the program has not made yet): every property is checked
  only at states without one (an invariant holds there, a ``sometimes`` is
  not met there), and such a state is no deadlock. Promises are optional, so
  every promise-free run of the model without them is still a run.

``docs/weak-memory.md`` ("Promises") says why this is neither weaker nor
stronger than LKMM on the kernel's tests, and what it costs.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from checker.expr import And, AnyOf, If, Not, Or
from checker.language.declare import DISABLED, Fill, Step, when
from checker.types import BoolType, CpuIdType, Enum, NOBODY

#: Orders after which no later store of the CPU may already be in memory.
BLOCKING_LOADS = ("acquire",)
BLOCKING_STORES = ("release",)
BLOCKING_RMWS = ("mb", "acquire", "release")
SMALL_DOMAIN = 16  # a location's type with more values is promised only the constants its stores write


def _plain(x: Any) -> bool:
    return x.__class__ is int or x.__class__ is bool


def _names(x: Any) -> set[str]:
    """The state symbols a value (a Sym, a plain number, a tuple or dict of them) reads."""
    import z3

    if _plain(x) or x is None:
        return set()
    if isinstance(x, dict):
        out: set[str] = set()
        for k, v in x.items():
            out |= _names(k) | _names(v)
        return out
    if isinstance(x, (tuple, list)):
        return set().union(*(_names(v) for v in x)) if x else set()
    if x.__class__ is Fill:
        return _names(x.value)
    z = getattr(x, "z", x)
    if not isinstance(z, z3.ExprRef):
        return set()
    out, seen, todo = set(), set(), [z]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        kids = t.children()
        if not kids and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(t.decl().name())
        todo.extend(kids)
    return out


def _constant(x: Any) -> int | None:
    import z3

    if _plain(x):
        return int(x)
    z = getattr(x, "z", None)
    if z is None:
        return None
    z = z3.simplify(z)
    if z3.is_int_value(z):
        return z.as_long()
    if z3.is_true(z) or z3.is_false(z):
        return int(z3.is_true(z))
    return None


@dataclasses.dataclass(frozen=True)
class Deps:
    """What one step (action, CPU, choice) reads, by slot name: its guard, each slot it writes, each weak
    location it stores."""
    guard: frozenset
    writes: dict  # slot name -> the slot names its new value reads
    stores: dict  # location index -> the slot names the stored value reads


class Promises:
    """The promise machinery of one lkmm model (``Lkmm.pr``; None where ``lkmm_promises`` is 0)."""

    def __init__(self, lk: Any, bound: int):
        self.lk = lk
        self.bound = bound
        self._deps: dict[tuple, Deps | None] = {}
        m = lk.model
        # registers: every slot of an ordinary variable (not weak, not a Lock), by the name symbols give it
        regs: list[str] = []
        for n in m.var_names:
            if n in lk.weak or n in lk.locks:
                continue
            regs += [f"{n}[{k}]" for k in range(m.arrays.get(n, m.ncpus_total))] if n in m.tupled else [n]
        self.regs = regs
        self.reg_of = {n: k for k, n in enumerate(regs)}

    # -- static facts, once per model ---------------------------------------------------------------------
    def analyse(self, actions: tuple) -> None:
        """Registers (the ordinary slots CPU steps write), and the (location, value) pairs each CPU may
        promise. ``actions``: the spec's own, before lkmm wraps them."""
        from checker.language.lint import symbolic_state

        lk, m = self.lk, self.lk.model
        self.originals = {a.index: a for a in actions}
        self.sym = symbolic_state(m)
        cands: dict[int, set] = {}
        self.makers: dict[tuple, list] = {}
        for act in actions:
            if act.cpus == (None,) or act.info.builtin:
                continue
            for member in act.cpus:
                for args in act.choices:
                    cpu = lk.ro.me(act, member, args)
                    if not _plain(cpu) or cpu not in lk.cpus:
                        continue
                    for a in act.info.access:
                        if a.kind != "store" or a.order != "once":
                            continue
                        for li in lk._slots(a, self.sym, member, cpu, lk.ro.spec_args(act, args)):
                            vals = self._values(act, member, args, li)
                            cands.setdefault(cpu, set()).update((li, v) for v in vals)
                            if vals:
                                self.makers.setdefault((cpu, li), []).append((act, member, args))
        self.cands = {c: sorted(v) for c, v in cands.items()}
        self.locs_of = {c: frozenset(li for li, _ in v) for c, v in self.cands.items()}

    def _values(self, act: Any, member: Any, args: tuple, li: int) -> list[int]:
        """The values a promise of this store may take: its constant, else the location's finite type."""
        m = self.lk.model
        r = self._run(act, member, args)
        if r is None:
            return []
        var, sl = self.lk.locs.var_of[li]
        upd = r.updates.get(var)
        if upd is None:
            return []
        x = upd if sl is None else (upd.value if upd.__class__ is Fill else upd.get(sl) if isinstance(upd, dict)
                                    else None)
        c = _constant(x) if x is not None else None
        if c is not None:
            return [c]
        t = m.vars[var].type
        if isinstance(t, BoolType):
            return [0, 1]
        if isinstance(t, Enum) and len(t.names) <= SMALL_DOMAIN:
            return list(range(len(t.names)))
        if isinstance(t, CpuIdType) and m.ncpus_total < SMALL_DOMAIN:
            return [NOBODY, *range(m.ncpus_total)]
        return []

    def _run(self, act: Any, member: Any, args: tuple) -> Step | None:
        fn = self.originals[act.index].info.fn if act.index in self.originals else act.info.fn
        try:
            r = fn(self.sym, member, *args) if member is not None else fn(self.sym, *args)
        except Exception:  # code that runs on numbers only: no promise of it, and every write depends
            return None
        return r if r.__class__ is Step else None

    def deps(self, act: Any, member: Any, args: tuple) -> Deps | None:
        """The step's reads by slot name (None: it does not run on symbols, so everything depends)."""
        key = (act.index, member, args)
        if key in self._deps:
            return self._deps[key]
        r = self._run(act, member, args)
        out = None
        if r is not None:
            m, lk = self.lk.model, self.lk
            writes, stores = {}, {}
            for name, val in r.updates.items():
                reads = _names(val)
                if name in m.tupled:
                    size = m.arrays.get(name, m.ncpus_total)
                    if val.__class__ is Fill:
                        pairs = [(k, val.value) for k in range(size)]
                    elif isinstance(val, dict):
                        pairs = [(k, v) if _plain(k) else (None, v) for k, v in val.items()]
                    else:
                        pairs = list(enumerate(val)) if isinstance(val, tuple) else [(None, val)]
                    for k, v in pairs:
                        ks = range(size) if k is None else [k]
                        for kk in ks:
                            slot = f"{name}[{kk}]"
                            writes[slot] = _names(v) | (reads if k is None else set())
                else:
                    writes[name] = reads
            for n, rd in writes.items():
                base, _, rest = n.partition("[")
                loc = (base, int(rest[:-1]) if rest else None)
                if loc in lk.locs.of:
                    stores[lk.locs.of[loc]] = rd
            out = Deps(frozenset(_names(r.guard)), writes, stores)
        self._deps[key] = out
        return out

    # -- the state ----------------------------------------------------------------------------------------
    def ghost_sizes(self) -> dict[str, int]:
        return {"lk_taint": max(1, self.lk.model.ncpus_total * len(self.regs))}

    def mine(self, whos: list, cpu: Any) -> Any:
        """Whether some message in ``whos`` (WHO fields) is ``cpu``'s outstanding promise."""
        return AnyOf([w == -(cpu + 1) for w in whos])

    def outstanding(self, w: Any, cpu: Any) -> Any:
        """``cpu`` has an outstanding promise in the working state ``w``."""
        if cpu not in self.locs_of:
            return False
        return AnyOf([self.mine([msg[1] for msg in w.msgs[li]], cpu) for li in self.locs_of[cpu]])

    def outstanding_in(self, s: Any, cpu: Any) -> Any:
        """``cpu`` has an outstanding promise in state ``s``."""
        H = self.lk.bound
        if cpu not in self.locs_of:
            return False
        return AnyOf([s.lk_who[li * H + a] == -(cpu + 1) for li in self.locs_of[cpu] for a in range(H)])

    def any_outstanding(self, s: Any) -> Any:
        return AnyOf([w < 0 for w in s.lk_who])

    def blocks(self, act: Any, normal: dict) -> bool:
        """Whether the step orders the CPU's later stores after it (static): not run with a promise out."""
        for a in act.info.access:
            if a.kind in ("lock", "unlock"):  # spin_lock()/spin_unlock() inside the step: a critical section in one step
                return True
            if a.kind == "fence" and a.order != "rmb":
                return True
            if a.kind == "load" and a.order in BLOCKING_LOADS or a.kind == "store" and a.order in BLOCKING_STORES:
                return True
            if a.kind == "rmw" and a.order in BLOCKING_RMWS:
                return True
        return any(lk in normal for lk in self.lk.locks)

    def tainted(self, s: Any, cpu: Any, names: Any, loaded: set[str]) -> Any:
        """Whether a value reading slots ``names`` depends on a load since ``cpu``'s promise: it reads a
        location this step loads, or a tainted register."""
        if names & loaded:
            return True
        R = len(self.regs)
        return AnyOf([s.lk_taint[cpu * R + self.reg_of[n]] != 0 for n in sorted(names) if n in self.reg_of])

    def dependent_store(self, s: Any, act: Any, member: Any, args: tuple, cpu: Any, li: int,
                        loaded: set[str]) -> Any:
        d = self.deps(act, member, args)
        if d is None:
            return True
        return Or(self.tainted(s, cpu, d.guard, loaded), self.tainted(s, cpu, d.stores.get(li, frozenset()), loaded))

    def taint_updates(self, s: Any, act: Any, member: Any, args: tuple, cpu: Any, loaded: set[str],
                      still: Any, upd: dict) -> None:
        """``lk_taint``'s new entries for ``cpu`` after its step: a register the step writes is tainted where
        its value or the step's guard depends on a load since the promise; every entry is 0 once the CPU has
        no outstanding promise (one form per state)."""
        if not self.regs or cpu not in self.locs_of:
            return
        R = len(self.regs)
        d = self.deps(act, member, args)
        g = self.tainted(s, cpu, d.guard, loaded) if d is not None else True
        out = {}
        for n, k in self.reg_of.items():
            old = s.lk_taint[cpu * R + k]
            if d is not None and n not in d.writes:
                new = If(still, old, 0) if not (_plain(still) and still) else old
            else:
                dep = True if d is None else Or(g, self.tainted(s, cpu, d.writes[n], loaded))
                new = If(And(still, dep), 1, 0)
            if not (new is old or (_plain(new) and _plain(old) and new == old)):
                out[cpu * R + k] = new
        if out:
            upd["lk_taint"] = {**upd.get("lk_taint", {}), **out}

    # -- the promise step ---------------------------------------------------------------------------------
    def promise_actions(self, first_index: int) -> list:
        """One builtin ``promise`` action per CPU that may promise, its choices the (location, value) pairs."""
        from checker.language.compile import CompiledAction
        from checker.language.declare import ActionInfo

        m, out = self.lk.model, []
        for role, members in m.roles.items():
            for c in members:
                if c not in self.cands:
                    continue
                info = ActionInfo("promise", self._promise, role, ("loc", "value"),
                                  "lkmm: the CPU promises a store its program will make (promising semantics)",
                                  None, None, builtin=True)
                out.append(CompiledAction(first_index + len(out), info, (c,), ("loc", "value"),
                                          tuple(self.cands[c])))
        return out

    def _promise(self, s: Any, cpu: Any, li: int, value: int) -> Any:
        lk = self.lk
        H = lk.bound
        mine = [s.lk_who[li * H + a] == -(cpu + 1) for a in range(H)]
        count = sum(If(s.lk_who[j * H + a] == -(cpu + 1), 1, 0) for j in self.locs_of[cpu] for a in range(H))
        guard = And(Not(AnyOf(mine)), count < self.bound, Not(self._enabled(s, cpu, li, value)))
        if _plain(guard) and not guard:
            return DISABLED
        w = lk._load(s)
        lk._append(w, li, value, w.views[cpu][lk.WF], -cpu - 2, 0)  # carries wf; lk_who = -(cpu + 1), marked
        conds: list = []
        lk._finish(s, w, conds)
        upd: dict = {}
        lk._store(s, w, upd)
        return when(And(guard, *conds), **upd)

    def _enabled(self, s: Any, cpu: int, li: int, value: int) -> Any:
        """Whether a step of ``cpu`` could make this store now: then it makes it rather than promising it (a
        promise of the next store adds interleavings, not outcomes: nothing of the CPU runs before it)."""
        var, sl = self.lk.locs.var_of[li]
        out = []
        for act, member, args in self.makers.get((cpu, li), ()):
            fn = self.originals[act.index].info.fn
            r = fn(s, member, *args) if member is not None else fn(s, *args)
            if r is DISABLED or r.__class__ is not Step:
                continue
            upd = r.updates.get(var)
            x = upd if sl is None else (upd.value if upd.__class__ is Fill else upd.get(sl) if isinstance(upd, dict)
                                        else None)
            if x is not None:
                out.append(And(r.guard, x == value))
        return AnyOf(out)

    # -- properties -----------------------------------------------------------------------------------------
    def wrap_properties(self, model: Any) -> None:
        """Properties are judged at states without an outstanding promise; such a state is no deadlock."""
        out = []
        for p in model.properties:
            fn = p.fn

            if p.kind == "invariant":
                def f(s: Any, fn: Any = fn) -> Any:
                    return Or(self.any_outstanding(s), fn(s))
            else:
                def f(s: Any, fn: Any = fn) -> Any:
                    return And(Not(self.any_outstanding(s)), fn(s))
            f.__doc__ = fn.__doc__
            if getattr(fn, "__countercheck_engine__", False):
                f.__countercheck_engine__ = True  # type: ignore[attr-defined]
            out.append(dataclasses.replace(p, fn=f))
        model.properties = tuple(out)
        model.invariants = tuple(p for p in out if p.kind == "invariant")
        model.sometimes = tuple(p for p in out if p.kind == "sometimes")
        term = model.terminal if model.terminal is not None else (lambda s: False)

        def terminal(s: Any) -> Any:
            return Or(self.any_outstanding(s), term(s))

        model.terminal = terminal
