# SPDX-License-Identifier: GPL-2.0-only
"""32-bit kernels: a plain 64-bit load or store is two 32-bit accesses (load/store tearing).

A spec opts in by declaring a ``Bits`` parameter (``CONFIG_64BIT``). At its
32-bit points every *plain* 64-bit shared variable (``S64``/``U64`` without
``atomic=True``: ``atomic64_t`` and ``local64_t`` stay whole) is accessed
in halves, and the engine, not the spec, writes the extra steps:

- an action that **stores** such a variable ``v`` becomes two steps: first
  one half of the new value is written (``<action>.store_lo`` or
  ``.store_hi``: both orders are explored, as the compiler may emit
  either), then ``<action>.finish`` writes the other half and makes every
  other update of the action (so a lock released by the action is released
  after both halves: a holder's exclusion is kept, a lockless reader sees
  the half-written word);
- an action that **loads** ``v`` without storing it becomes two steps:
  ``<action>.load_lo``/``.load_hi`` reads one half, ``<action>.finish``
  reads the other half as it is then and runs the action on the combined
  value (a torn value if a store came between); the first half runs
  wherever the step could start (its guard satisfiable, by Z3, for some
  value of ``v``, every other variable as it is), and where the action is
  not enabled on what it read, the finish only ends the access;
- a load of **another CPU's** slot of a per-CPU ``v`` (``*per_cpu_ptr(p,
  cpu)``, one slot per step) is split likewise, the slot kept in
  ``_tslot_v`` (a CPU id, which symmetry renames); a load of the CPU's
  own slot stays whole; an action that loads several other CPUs' slots in
  one step (``Sum(s.local)``, a loop over CPUs) is refused (a SpecError
  with its line): the kernel's readers load one CPU's slot at a time
  (``for_each_possible_cpu``: ``*per_cpu_ptr(p, cpu)``), each in halves,
  so a spec writes one action per slot read;
- between its two steps the CPU's task takes no other step (it is in the
  middle of one instruction sequence); other CPUs run freely, and so does an
  interrupt handler on that CPU (``@action(irq=True)``, while interrupts
  are on) except inside a per-CPU word's store (``this_cpu_*`` is irq-safe);
- a handler's own access in halves has slots of its own (``_itear_v``,
  ``_ihalf_v``), so it can come between the halves of the interrupted
  code's access to the same variable; while it is pending its CPU takes
  only its finish: the interrupted code waits and no handler nests;
- an action that accesses two such variables is refused (a SpecError with
  its line: write one action per C access), not split in one of them only;
- only the finish of the action that started an access continues it, with
  the choice arguments it started with (the access's number, one per action
  and choice among the accesses of its kind to that variable, is part of
  the slot's code).

The first step records, in two hidden per-CPU ghosts per variable
(``_tear_v``: which access and order, ``_half_v``: the old value for a
store, the half read for a load), what the finish needs. The finish
re-runs the action on the state with ``v`` as the access saw it; values
other CPUs changed in between are read as they are then (for state under
the lock the action holds, nobody can have). An action that both loads and
stores ``v`` (``fbc->count += amount`` under ``fbc->lock``) has its store
split and its load whole: its lock excludes the other writers. Each step
also builds itself as terms on a symbolic state (``*_terms`` below), so the
compiled explorer takes a 32-bit point; the Z3 backend and the Promela
export refuse one.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any

from checker.errors import NotLowerable, SpecError
from checker.kernel.tasks import CURR, TASK_CPU, task_roles
from checker.language.declare import DISABLED, ActionInfo, Ghost, Step
from checker.ordering.machine import recording, set_slots
from checker.types import LONG, NOBODY, ULONG, CpuId, Int, IntType

LO = (1 << 32) - 1
M64 = (1 << 64) - 1
HALVES = ("lo", "hi")


class _Pending(IntType):
    """A CPU's access in halves: 0 none; shown as which half went first."""

    def show(self, v: int) -> str:
        if v == 0:
            return "none"
        return f"{'store' if (v - 1) % 4 < 2 else 'load'} {HALVES[(v - 1) % 2]} half done"


PENDING = _Pending("tearing")


@dataclasses.dataclass(frozen=True)
class Half:
    """What an engine-made step of a 32-bit point is made of, kept on its function (``fn.half``)."""

    part: str  # "first" (an access's first half), "finish" (its second), or "blocked" (a step that waits)
    fn: Any  # the action's own function; "blocked": the step that waits
    v: str = ""
    kind: str = ""  # "store" or "load"
    order: int = 0  # which half goes first: 0 the low one
    tag: str = ""  # "i": an interrupt handler's access
    choices: tuple = ((),)
    first_id: int = 0
    guard_reads_v: tuple | None = None  # "first" of a load: its guard reads v (could_start), else None
    wait: tuple = ()  # "blocked": the per-CPU ghosts that must all be 0


def bits_param(si: Any) -> str | None:
    """The name of the spec's word-size parameter (``Bits``), if it has one."""
    from checker.kernel.config import Bits

    return next((n for n, p in si.params.items() if isinstance(p, Bits)), None)


def candidates(si: Any) -> list[str]:
    """Shared and per-CPU variables that a 32-bit kernel accesses in halves."""
    return [n for n, v in si.vars.items() if v.kind in ("shared", "percpu") and v.type.bits == 64
            and not v.atomic and v.type not in (LONG, ULONG) and not n.startswith("_")]


def add_ghosts(si: Any) -> None:
    """At class creation: the hidden per-CPU slots of each variable that may tear."""
    if bits_param(si) is None:
        return
    for n in candidates(si):
        ghosts = [(f"_tear_{n}", PENDING, f"this CPU's access to {n} in halves"),
                  (f"_half_{n}", Int, f"the old {n} (a store) or the half read (a load)"),
                  (f"_itear_{n}", PENDING, f"this CPU's interrupt handler's access to {n} in halves"),
                  (f"_ihalf_{n}", Int, "the same for the interrupt handler's access")]
        if si.vars[n].kind == "percpu":  # a load of another CPU's slot: which CPU's
            ghosts += [(f"_tslot_{n}", CpuId, f"the CPU whose {n} this CPU's load in halves reads"),
                       (f"_itslot_{n}", CpuId, "the same for the interrupt handler's load")]
        for g, t, doc in ghosts:
            if g not in si.vars:
                v = Ghost(NOBODY if t is CpuId else 0, type=t, doc=doc)
                v.kind = "percpu"
                v.name = g
                si.vars[g] = v


def resolve_types(si: Any, params: Any) -> dict[str, Any]:
    """The variables at a parameter point: ``LONG``/``ULONG`` are 32 bits wide on a 32-bit kernel."""
    name = bits_param(si)
    if name is None or getattr(params, name) == 64:
        return si.vars
    out = {}
    for n, v in si.vars.items():
        if v.type in (LONG, ULONG):
            v = copy.copy(v)
            v.type = IntType(v.type.name, 32, v.type.signed)
        out[n] = v
    return out


def _combine(v: int, hi_from: int, lo_from: int, t: IntType) -> int:
    u = ((int(hi_from) & ~LO) | (int(lo_from) & LO)) & M64
    return t.wrap(u)


def split(model: Any, compiled: tuple) -> tuple:
    """The actions at a 32-bit point: each that loads or stores a tearing variable in its steps."""
    from checker.language.lint import symbolic_state

    names = candidates(model.info)
    if not names:
        return compiled
    s = symbolic_state(model)
    out: list = []
    next_id: dict[tuple[str, str], int] = {}  # the next access's number, per variable and kind (store or load)
    for act in compiled:
        if not act.cpus or not act.choices:  # a role with no members at this point (readers=0): nothing to split
            out.append(act)
            continue
        reads: set[str] = set()
        rec = recording(model, reads)
        cpu = act.cpus[0]
        try:
            r = act.info.fn(rec(s), cpu, *act.choices[0]) if cpu is not None else act.info.fn(rec(s), *act.choices[0])
        except Exception:  # code that only runs on numbers: the load-time checks report it, with its line
            out.append(act)
            continue
        writes = set(r.updates) if isinstance(r, Step) else set()
        percpu = model.percpu
        # a per-CPU slot: its owner's store is split (this_cpu_write: whole to its own CPU, which takes no
        # step in between, but two stores to a remote reader); a load of one is split where it reads another
        # CPU's slot (*per_cpu_ptr(p, cpu), one slot per step), and whole where it reads only its own
        stored = [n for n in names if n in writes and (n not in percpu or _own_slot(r.updates[n], cpu))]
        loaded = [n for n in names if n in reads and n not in writes
                  and (n not in percpu or _reads_remote(model, act, s, n))]
        if cpu is None or not (stored or loaded):
            out.append(act)
            continue
        for n in loaded:
            if n in percpu:
                _refuse_several_remote(model, act, s, n)
        if len(stored) + len(loaded) > 1:
            # each split access is its own pair of steps; two in one action would need their four halves
            # interleaved, which is not modelled: refused, not one of them silently kept whole
            raise SpecError(f"{act.info.name} accesses {len(stored) + len(loaded)} plain 64-bit variables "
                            f"({', '.join(stored + loaded)}) at a 32-bit point; each is two 32-bit accesses, and "
                            f"only one per action is split into halves; write one action per C access to such a "
                            f"variable (each load or store its own step), or atomic=True on one the kernel declares "
                            f"atomic64_t", file=act.info.file, line=act.info.line)
        v, kind = (stored[0], "store") if stored else (loaded[0], "load")
        # an interrupt handler's access has slots of its own: it can come between the halves of the
        # interrupted code's access to the same variable, and handlers do not nest
        tag = "i" if act.info.irq else ""
        # the access's number (this action, this choice) is part of its code: only its own finish continues it
        # (a remote per-CPU load: one number for the action, the slot it reads kept in a CpuId ghost that CPU
        # symmetry renames, as a choice of CPU would not be)
        remote = kind == "load" and v in percpu
        first_id = next_id.get((v, kind), 0)
        next_id[(v, kind)] = first_id + (1 if remote else len(act.choices))
        for order in (0, 1):
            info = _step_info(act.info, f"{act.info.name}.{kind}_{HALVES[order]}",
                              _first(model, act.info.fn, v, kind, order, tag, act.choices, first_id,
                                     _guard_reads(act, s, v) if kind == "load" else None))
            out.append(dataclasses.replace(act, index=len(out), info=info))
        info = _step_info(act.info, f"{act.info.name}.finish", _finish(model, act.info.fn, v, kind, tag, act.choices, first_id))
        out.append(dataclasses.replace(act, index=len(out), info=info))
    # A CPU in the middle of an access takes only that access's finish; an interrupt handler on it may
    # still run between the two halves of a plain store (two instructions, interrupts on), but not inside
    # a this_cpu op on a per-CPU word (irq-safe on 32-bit: whole to its own CPU). While a handler's
    # access in halves is pending, its CPU takes only that access's finish (the handler runs to the end
    # of its step, the interrupted code waits, no other handler nests).
    # A handler's ghosts sit at its CPU; a task (task model) waits on those of the CPU it is on, not at its own
    # task number: the task that CPU runs resumes (or is migrated) only once the handler has returned. A task
    # queued there is not held: another CPU's load balancer may take it meanwhile.
    pending = [f"_tear_{n}" for n in names]
    own = [f"_tear_{n}" for n in names if n in model.percpu]
    in_irq = [f"_itear_{n}" for n in names]
    tasks = task_roles(model.info)
    final = []
    for a in out:
        if a.info.name.endswith(".finish"):
            wait = [] if a.info.irq else in_irq
        else:
            wait = own + in_irq if a.info.irq else pending + in_irq
        at_cpu = [w for w in wait if w in in_irq] if a.info.role in tasks else []
        wait = [w for w in wait if w not in at_cpu]
        fn = a.info.fn if a.cpus == (None,) or not (wait or at_cpu) else _blocked(a.info.fn, wait, at_cpu)
        final.append(dataclasses.replace(a, index=len(final), info=_step_info(a.info, a.info.name, fn)))
    return tuple(final)


def _step_info(info: ActionInfo, name: str, fn: Any) -> ActionInfo:
    return dataclasses.replace(info, name=name, fn=fn)


def _own_slot(update: Any, cpu: Any) -> bool:
    """An update of the acting CPU's slot alone. A slot named by a term (a task's ``task_cpu[t]``) is not: that
    store stays whole, and a remote reader's load in halves, both orders explored, still sees every torn value
    (it reads one half before the store and the other after), which is what ``this_cpu_*`` on a task's CPU can
    show (whole to its own CPU: interrupts off in the generic code)."""
    if not isinstance(update, dict) or len(update) != 1:
        return False
    key = next(iter(update))
    return isinstance(key, int) and key == cpu


class _Watched(tuple):
    """A per-CPU variable's slots that note which of them spec code reads."""

    log: list

    def __getitem__(self, i: Any) -> Any:
        self.log.append(i)
        return super().__getitem__(i)

    def __iter__(self) -> Any:
        self.log.extend(range(len(self)))
        return super().__iter__()


def _slots_read(model: Any, fn: Any, s: tuple, v: str, cpu: Any, args: tuple) -> set:
    """The slots of per-CPU ``v`` the action reads in state ``s`` (its code run once, the reads noted)."""
    row = list(s)
    pos = model.index[v]
    seen = _Watched(row[pos])
    seen.log = []
    row[pos] = seen
    fn(model.state_cls(row), cpu, *args) if cpu is not None else fn(model.state_cls(row), *args)
    return set(seen.log)


def _reads_remote(model: Any, act: Any, s: tuple, v: str) -> bool:
    """Whether the action reads a slot of per-CPU ``v`` other than its own CPU's, for some choice."""
    cpu = act.cpus[0]
    for args in act.choices:
        try:
            read = _slots_read(model, act.info.fn, s, v, cpu, args)
        except Exception:  # code that only runs on numbers, or a symbolic index: left whole
            return False
        if any(not isinstance(i, int) or i != cpu for i in read):
            return True
    return False


def _refuse_several_remote(model: Any, act: Any, s: tuple, v: str) -> None:
    """An action that loads two or more other CPUs' slots of per-CPU ``v`` in one step, for some CPU and choice,
    is refused: each slot is two 32-bit loads in the kernel, and one step cannot split several of them."""
    for cpu in act.cpus:
        for args in act.choices:
            try:
                read = _slots_read(model, act.info.fn, s, v, cpu, args)
            except Exception:  # noqa: BLE001, S112 - code that only runs on numbers: left as _reads_remote leaves it
                continue
            other = [i for i in read if not (isinstance(i, int) and i == cpu)]
            if len(other) < 2:
                continue
            bits = bits_param(model.info)
            raise SpecError(
                f"{act.info.name} loads {len(other)} other CPUs' slots of {v} in one step at a 32-bit point "
                f"({bits}=32); each slot of a plain 64-bit per-CPU variable is two 32-bit loads, which one step "
                f"cannot split for several slots (each would stay whole: no torn value). The kernel's readers "
                f"load one CPU's slot at a time (for_each_possible_cpu(cpu) ... *per_cpu_ptr(p, cpu)): write "
                f"one action per slot read, its CPU kept in a per-CPU cursor (percpu_lazy's read and read_slot), "
                f"or declare {v} atomic=True if the kernel's slots are atomic64_t or local64_t",
                file=act.info.file, line=act.info.line)


def _remote_slot(model: Any, fn: Any, s: tuple, v: str, cpu: int, args: tuple) -> int | None:
    """The one other CPU's slot of ``v`` the action reads here, or None (its own only, or several)."""
    other = _slots_read(model, fn, s, v, cpu, args) - {cpu}
    return next(iter(other)) if len(other) == 1 else None


def _get(s: tuple, v: str, cpu: int, percpu: bool) -> Any:
    x = getattr(s, v)
    return x[cpu] if percpu else x


def _new(r: Step, v: str, cpu: int, percpu: bool) -> int:
    x = r.updates[v]
    return int(x[cpu] if percpu else x)


def _put(v: str, value: int, cpu: int, percpu: bool) -> dict[str, Any]:
    return {v: {cpu: value} if percpu else value}


def _blocked(fn: Any, pending: list[str], at_cpu: list[str] = ()) -> Any:
    """``fn``, disabled while a ``pending`` ghost is set at the actor's index, or, for a task its CPU runs, an
    ``at_cpu`` ghost at that CPU."""
    def step(s: tuple, cpu: int, *args: Any) -> Any:
        if not isinstance(getattr(s, (pending or at_cpu)[0])[cpu], int):  # the compiled engine's symbolic state
            return _blocked_terms(fn, pending, at_cpu, s, cpu, args)
        if any(getattr(s, p)[cpu] for p in pending):
            return DISABLED
        if at_cpu:
            on = getattr(s, TASK_CPU)[cpu]
            if getattr(s, CURR)[on] == cpu and any(getattr(s, p)[on] for p in at_cpu):
                return DISABLED
        return fn(s, cpu, *args)
    step.half = Half("blocked", fn, wait=tuple(pending) + tuple(at_cpu))
    return step


def _first(model: Any, fn: Any, v: str, kind: str, order: int, tag: str = "", choices: tuple = ((),),
           first_id: int = 0, guard_reads_v: tuple | None = None) -> Any:
    t = model.vars[v].type
    # 1, 2: a store, low or high half first; 3, 4: a load; plus 4 * the access's number (the action and its
    # choice), so that only that action's finish, with the arguments it started with, continues it
    base = 1 + order + (0 if kind == "store" else 2)

    per = v in model.percpu
    # a guard that never reads v is decided on the word as it is (the Z3 question only where it reads v)
    could_start = _could_start(model, fn, v, guard_reads_v) if guard_reads_v is not None else None

    def first(s: tuple, cpu: int, *args: Any) -> Any:
        if not isinstance(getattr(s, f"_{tag}tear_{v}")[cpu], int):
            return _first_terms(model, first.half, s, cpu, args)
        r = fn(s, cpu, *args)
        code = base + 4 * (first_id + (0 if per and kind == "load" else choices.index(tuple(args))))
        if kind == "load":  # the half read now; the other half is read by the finish
            slot = _remote_slot(model, fn, s, v, cpu, args) if per else None
            if per and slot is None:  # here it reads its own slot only (or several): one whole load
                return r if order == 0 else DISABLED
            slots = {f"_{tag}tear_{v}": {cpu: code}, f"_{tag}half_{v}": {cpu: int(_get(s, v, slot, per))}}
            if per:
                slots[f"_{tag}tslot_{v}"] = {cpu: slot}
            # the load runs wherever the step could start: its guard decides on the value the two halves
            # assemble (the finish), not on the word as it is now
            if isinstance(r, Step) and r.guard:
                return Step(True, slots)
            return Step(True, slots) if could_start and could_start(s, cpu, args, slot) else DISABLED
        old = _get(s, v, cpu, per)
        slots = {f"_{tag}tear_{v}": {cpu: code}, f"_{tag}half_{v}": {cpu: int(old)}}
        if r is DISABLED or not isinstance(r, Step):
            return r
        new = _new(r, v, cpu, per)
        half = _combine(0, old, new, t) if order == 0 else _combine(0, new, old, t)
        return Step(r.guard, {**_put(v, half, cpu, per), **slots})
    first.half = Half("first", fn, v, kind, order, tag, choices, first_id, guard_reads_v)
    return first


def _guard_reads(act: Any, s: tuple, v: str) -> tuple | None:
    """The slots (``name`` or ``name[cpu]``) the action's guard reads on the symbolic state ``s``, over its
    CPUs and choices, where one of them is ``v``'s; None where it never reads ``v``, or cannot be run so."""
    from z3.z3util import get_vars

    from checker.symbolic.term import to_z3_bool

    names: set[str] = set()
    for cpu in act.cpus:
        for args in act.choices:
            try:
                r = act.info.fn(s, cpu, *args)
            except Exception:  # code that only runs on numbers: the load-time checks report it
                return None
            if isinstance(r, Step):
                names |= {str(x) for x in get_vars(to_z3_bool(r.guard))}
    if not any(x == v or x.startswith(v + "[") for x in names):
        return None
    return tuple(sorted(x for x in names if x != v))  # v's own slots stay: the one read in halves is left out


def _could_start(model: Any, fn: Any, v: str, others: tuple) -> Any:
    """Whether the action's guard holds for some value of ``v`` (every other variable as it is now)."""
    import z3

    known: dict[str, bool] = {}  # a guard's residue over v (sexpr) -> satisfiable in v's range
    asked: dict[tuple, bool] = {}  # (cpu, choice, slot, the other slots the guard reads) -> the answer
    where = [(n.split("[")[0], int(n[:-1].split("[")[1]) if "[" in n else None) for n in others]

    def could(s: tuple, cpu: int, args: tuple, slot: int | None) -> bool:
        key = (cpu, args, slot, tuple(getattr(s, n) if c is None else None if n == v and c == slot
                                      else getattr(s, n)[c] for n, c in where))
        if key not in asked:
            asked[key] = ask(s, cpu, args, slot)
        return asked[key]

    def ask(s: tuple, cpu: int, args: tuple, slot: int | None) -> bool:
        got = _guard_over_v(model, fn, v, s, cpu, args, slot)
        if got is None:
            return False
        g = got[1]
        key = g.sexpr()
        if key not in known:
            solver = z3.Solver()
            solver.add(g)
            known[key] = solver.check() == z3.sat
        return known[key]
    return could


def _guard_over_v(model: Any, fn: Any, v: str, s: tuple, cpu: Any, args: tuple, slot: int | None) -> Any:
    """(``v`` as a Z3 variable, the action's guard with ``v`` (its ``slot``) that variable, in its type's range)
    on the state ``s``; None where the action does not run on it, or its code branches on ``v`` (then it is
    decided on the whole value only). What ``_could_start`` asks Z3, and ``_could_start_terms`` eliminates."""
    import z3

    from checker.symbolic.term import Sym, SymbolicBranch, SymbolicIndex, to_z3_bool

    t = model.vars[v].type
    x = z3.Int(f"_torn_{v}")
    lo, hi = (-(1 << 63), (1 << 63) - 1) if t.signed else (0, (1 << 64) - 1)
    try:
        r = fn(set_slots(model, s, _put(v, Sym(x, t), slot, v in model.percpu)), cpu, *args)
    except (SymbolicBranch, SymbolicIndex):
        return None
    if r is DISABLED or not isinstance(r, Step):
        return None
    return x, z3.And(x >= lo, x <= hi, to_z3_bool(r.guard))


def _finish(model: Any, fn: Any, v: str, kind: str, tag: str = "", choices: tuple = ((),),
            first_id: int = 0) -> Any:
    t = model.vars[v].type
    codes = (1, 2) if kind == "store" else (3, 4)

    per = v in model.percpu

    def finish(s: tuple, cpu: int, *args: Any) -> Any:
        code = getattr(s, f"_{tag}tear_{v}")[cpu]
        if not isinstance(code, int):
            return _finish_terms(model, finish.half, s, cpu, args)
        remote = per and kind == "load"
        if code == 0 or (code - 1) // 4 != first_id + (0 if remote else choices.index(tuple(args))) \
                or (code - 1) % 4 + 1 not in codes:
            return DISABLED
        order = (code - 1) % 2
        saved = int(getattr(s, f"_{tag}half_{v}")[cpu])
        clear = {f"_{tag}tear_{v}": {cpu: 0}, f"_{tag}half_{v}": {cpu: 0}}
        if kind == "load":
            slot = None
            if remote:  # the slot the first half was read from; only the choice that reads it continues
                slot = getattr(s, f"_{tag}tslot_{v}")[cpu]
                if _remote_slot(model, fn, s, v, cpu, args) != slot:
                    return DISABLED
                clear[f"_{tag}tslot_{v}"] = {cpu: NOBODY}
            now = _get(s, v, slot, per)
            # the first half from the first load, the other half as it is now
            seen = _combine(0, now, saved, t) if order == 0 else _combine(0, saved, now, t)
            r = fn(set_slots(model, s, _put(v, seen, slot, per)), cpu, *args)
            if r is DISABLED or not isinstance(r, Step) or not r.guard:
                return Step(True, clear)
            return Step(True, {**r.updates, **clear})
        r = fn(set_slots(model, s, _put(v, saved, cpu, per)), cpu, *args)  # the values the store was computed from
        if r is DISABLED or not isinstance(r, Step):
            return Step(True, clear)
        new = _new(r, v, cpu, per)
        now = _get(s, v, cpu, per)
        # the second half into the word as it is now (a racing store's first half stays, as in memory)
        whole = _combine(0, new, now, t) if order == 0 else _combine(0, now, new, t)
        return Step(True, {**r.updates, **_put(v, whole, cpu, per), **clear})
    finish.half = Half("finish", fn, v, kind, 0, tag, choices, first_id)
    return finish


# -- the same steps as terms, on the symbolic state of the compiled engine's lowering (checker/compiled/lower.py):
# each follows its concrete twin above line for line; what has no term raises NotLowerable (the point stays on the
# interpreter). Both engines are compared state for state on every 32-bit point (tests/test_compiled.py). Z3 and
# the symbolic terms are imported here only, when a symbolic state comes (importing checker loads no solver).

def _blocked_terms(fn: Any, pending: list[str], at_cpu: list[str], s: tuple, cpu: Any, args: tuple) -> Any:
    from checker.expr import And, Implies, Select

    r = fn(s, cpu, *args)
    if r is DISABLED or not isinstance(r, Step):
        return r
    held = []
    if at_cpu:
        on = Select(getattr(s, TASK_CPU), cpu)
        held = [Implies(Select(getattr(s, CURR), on) == cpu, And(*[Select(getattr(s, p), on) == 0 for p in at_cpu]))]
    return Step(And(*[getattr(s, p)[cpu] == 0 for p in pending], *held, r.guard), r.updates)


def _combine_terms(hi: Any, lo: Any, t: Any) -> Any:
    """_combine as a term: the high half of ``hi`` and the low half of ``lo``, wrapped to the type."""
    import z3

    from checker.symbolic.term import Sym, to_z3_num

    hz, lz = to_z3_num(hi), to_z3_num(lo)
    u = hz % (1 << 64) - hz % (1 << 32) + lz % (1 << 32)
    return Sym(z3.If(u > t.hi, u - (1 << 64), u) if t.signed else u, t)


def _remote_terms(model: Any, fn: Any, s: tuple, v: str, cpu: Any, args: tuple) -> int | None:
    slot = _remote_slot(model, fn, s, v, cpu, args)
    if slot is not None and not isinstance(slot, int):
        raise NotLowerable(f"a 32-bit load in halves of another CPU's {v} at a slot the state chooses")
    return slot


def _first_terms(model: Any, h: Half, s: tuple, cpu: Any, args: tuple) -> Any:
    from checker.expr import Or

    v, kind, order, tag, per = h.v, h.kind, h.order, h.tag, h.v in model.percpu
    t = model.vars[v].type
    r = h.fn(s, cpu, *args)
    base = 1 + order + (0 if kind == "store" else 2)
    code = base + 4 * (h.first_id + (0 if per and kind == "load" else h.choices.index(args)))
    if kind == "load":
        slot = _remote_terms(model, h.fn, s, v, cpu, args) if per else None
        if per and slot is None:
            return r if order == 0 else DISABLED
        slots = {f"_{tag}tear_{v}": {cpu: code}, f"_{tag}half_{v}": {cpu: _get(s, v, slot, per)}}
        if per:
            slots[f"_{tag}tslot_{v}"] = {cpu: slot}
        now = r.guard if isinstance(r, Step) else False
        later = _could_start_terms(model, h, s, cpu, args, slot) if h.guard_reads_v is not None else False
        return Step(Or(now, later), slots)
    old = _get(s, v, cpu, per)
    slots = {f"_{tag}tear_{v}": {cpu: code}, f"_{tag}half_{v}": {cpu: old}}
    if r is DISABLED or not isinstance(r, Step):
        return r
    new = r.updates[v][cpu] if per else r.updates[v]
    half = _combine_terms(old, new, t) if order == 0 else _combine_terms(new, old, t)
    return Step(r.guard, {**_put(v, half, cpu, per), **slots})


def _could_start_terms(model: Any, h: Half, s: tuple, cpu: Any, args: tuple, slot: int | None) -> Any:
    """_could_start as a term: the guard holds for some value of ``v`` in its type's range."""
    import z3

    from checker.symbolic.term import Sym

    got = _guard_over_v(model, h.fn, h.v, s, cpu, args, slot)
    if got is None:
        return False
    x, g = got
    out = z3.Tactic("qe")(z3.Exists([x], g))
    if len(out) != 1:
        raise NotLowerable(f"whether a 32-bit load of {h.v} in halves can start (quantifier elimination)")
    f = out[0].as_expr()
    if z3.is_quantifier(f) or _bound(f, x):
        raise NotLowerable(f"whether a 32-bit load of {h.v} in halves can start (left quantified)")
    return Sym(f)


def _bound(f: Any, x: Any) -> bool:
    """Whether ``x`` or a quantifier is left in ``f`` (Z3 terms)."""
    import z3

    todo, seen = [f], set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_quantifier(e) or e.eq(x):
            return True
        todo.extend(e.children())
    return False


def _finish_terms(model: Any, h: Half, s: tuple, cpu: Any, args: tuple) -> Any:
    from checker.expr import And, If, Or

    v, kind, tag, per = h.v, h.kind, h.tag, h.v in model.percpu
    t = model.vars[v].type
    remote = per and kind == "load"
    k = h.first_id + (0 if remote else h.choices.index(args))
    first, second = (1, 2) if kind == "store" else (3, 4)
    code = getattr(s, f"_{tag}tear_{v}")[cpu]
    low_first = code == first + 4 * k  # (code - 1) % 2 == 0
    enabled = Or(low_first, code == second + 4 * k)
    saved = getattr(s, f"_{tag}half_{v}")[cpu]
    clear: dict[str, Any] = {f"_{tag}tear_{v}": {cpu: 0}, f"_{tag}half_{v}": {cpu: 0}}
    if kind == "load":
        slot = None
        if remote:  # only the choice that reads the slot the first half was read from continues
            slot = _remote_terms(model, h.fn, s, v, cpu, args)
            if slot is None:
                return DISABLED
            enabled = And(enabled, getattr(s, f"_{tag}tslot_{v}")[cpu] == slot)
            clear[f"_{tag}tslot_{v}"] = {cpu: NOBODY}
        now = _get(s, v, slot, per)
        seen = If(low_first, _combine_terms(now, saved, t), _combine_terms(saved, now, t))
        r = h.fn(set_slots(model, s, _put(v, seen, slot, per)), cpu, *args)
        if r is DISABLED or not isinstance(r, Step):
            return Step(enabled, clear)
        return Step(enabled, {**_when(model, s, r.guard, r.updates), **clear})
    r = h.fn(set_slots(model, s, _put(v, saved, cpu, per)), cpu, *args)
    if r is DISABLED or not isinstance(r, Step):
        return Step(enabled, clear)
    new = r.updates[v][cpu] if per else r.updates[v]
    now = _get(s, v, cpu, per)
    whole = If(low_first, _combine_terms(new, now, t), _combine_terms(now, new, t))
    return Step(enabled, {**_when(model, s, r.guard, {**r.updates, **_put(v, whole, cpu, per)}), **clear})


def _when(model: Any, s: tuple, guard: Any, updates: dict) -> dict:
    """``updates`` made only where ``guard`` holds: a finish runs the action where it is enabled on the
    value it re-reads, and elsewhere only ends the access (on a concrete state ``when`` and a process
    function's step are DISABLED exactly where their guard is false, and the finish then only clears)."""
    from checker.expr import If

    out: dict[str, Any] = {}
    for name, val in updates.items():
        old = getattr(s, name)
        if name in model.tupled:
            if not isinstance(val, dict) or not all(isinstance(c, int) for c in val):
                raise NotLowerable(f"an access in halves whose action writes a slot of {name} the state chooses")
            out[name] = {c: If(guard, x, old[c]) for c, x in val.items()}
        else:
            out[name] = If(guard, val, old)
    return out
