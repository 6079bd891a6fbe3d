# SPDX-License-Identifier: GPL-2.0-only
"""What both weak-memory models share: locations, the hidden variables, and which steps touch memory.

A *location* is one slot of a weak variable (``x``, ``local[1]``,
``slots[2]``), numbered in declaration order. The models keep their ghost
state in hidden variables added at the point, flat ints written by
expressions so that the compiled explorer lowers them: tso's ``sb_n``,
``sb_loc<k>``, ``sb_val<k>``, ``tso_memory``; lkmm's ``lk_*`` arrays (which
traces show as histories and views) and ``data_race``; the display types
below show them in traces.

Each compiled action is classified once: ``annotated`` (it has
``access=``, or its only weak effect is on a Lock: acquire and release),
``ordered`` (no ``access=``, but it reads or writes a weak variable: fully
ordered, as if ``smp_mb()`` came before and after) or ``plain`` (neither:
it runs as under sc).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from checker.errors import SpecError, UsageError
from checker.expr import And
from checker.language.declare import DISABLED, Fill, Ghost, Lock, Step, when
from checker.types import NOBODY, IntType

from checker.ordering.declare import MEMORY, weak_vars

ANNOTATED, ORDERED, PLAIN = "annotated", "ordered", "plain"


def memory_of(si: Any, params: Any) -> str:
    """The memory model at a point: sc for a spec without annotations."""
    if "memory" not in si.params or not getattr(si.params["memory"], "_countercheck_memory", False):
        return "sc"
    return MEMORY.names[params.memory]


@dataclass(frozen=True)
class Locations:
    """The weak variables' slots at one point."""

    names: tuple[str, ...]  # "x", "local[1]"
    of: dict  # (var, slot or None) -> index
    var_of: tuple  # index -> (var, slot or None)

    def __len__(self) -> int:
        return len(self.names)


def locations(model: Any) -> Locations:
    """The model's weak locations: each (variable, slot) a weak memory model tracks, numbered."""
    from checker.ordering.words import packings

    names, of, var_of = [], {}, []
    words = packings(model)
    field_of = {f: w for w in words.values() for f in w.fields}
    for v in weak_vars(model.info):
        if v in field_of:  # one kernel word held as several variables: one location, at its first field
            w = field_of[v]
            if (w.name, None) not in of:
                of[(w.name, None)] = len(names)
                var_of.append((w.name, None))
                names.append(w.name)
            continue
        if v in model.tupled:
            size = model.arrays.get(v, model.ncpus_total)
            slots: list = list(range(size))
        else:
            slots = [None]
        for sl in slots:
            of[(v, sl)] = len(names)
            var_of.append((v, sl))
            names.append(v if sl is None else f"{v}[{sl}]")
    return Locations(tuple(names), of, tuple(var_of))


class _Shown(IntType):
    """A hidden variable whose value is a nested tuple: shown by ``render``."""

    def __init__(self, name: str, render: Any):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "bits", None)
        object.__setattr__(self, "signed", True)
        object.__setattr__(self, "render", render)

    def show(self, v: Any) -> str:
        return self.render(v)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def ghost(name: str, kind: str, render: Any, doc: str) -> Ghost:
    """A ghost variable a memory model adds to the state, shown with ``render`` in traces."""
    g = Ghost(0, type=_Shown(name, render), doc=doc)
    g.kind = kind
    g.name = name
    return g


def add_vars(var_names: tuple, vars: dict, ghosts: list[Ghost]) -> tuple[tuple, dict]:
    """The model's variable names and declarations with the ghosts added."""
    out = dict(vars)
    for g in ghosts:
        out[g.name] = g
    return var_names + tuple(g.name for g in ghosts), out


def value_at(s: tuple, model: Any, loc: tuple) -> int:
    """The value of location ``loc`` (variable and slot) in state ``s`` (a word: its fields packed)."""
    v, sl = loc
    w = model.words.get(v)
    if w is not None:
        return w.pack([s[model.index[f]] for f in w.fields])
    x = s[model.index[v]]
    return x if sl is None else x[sl]


def put_location(model: Any, upd: dict, loc: tuple, value: Any) -> None:
    """Into the updates ``upd``: location ``loc`` set to ``value`` (a word: each field its part)."""
    v, sl = loc
    w = model.words.get(v)
    if w is not None:
        for f, x in zip(w.fields, w.unpack(value)):
            upd[f] = x
    elif sl is None:
        upd[v] = value
    else:
        upd.setdefault(v, {})[sl] = value


def slots_of(update: Any, size: int) -> list[tuple[Any, Any]]:
    """(slot, value) pairs of one variable's update (a dict, a Fill, or a shared value)."""
    if update.__class__ is Fill:
        return [(c, update.value) for c in range(size)]
    if isinstance(update, dict):
        return list(update.items())
    return [(None, update)]


def with_values(model: Any, s: tuple, values: dict[tuple, int]) -> tuple:
    """``s`` with the weak locations in ``values`` ((var, slot) -> value) replaced: what a step reads."""
    if not values:
        return s
    row = list(s)
    for (v, sl), x in values.items():
        w = model.words.get(v)
        if w is not None:  # a word: each field its part of the value read
            for f, y in zip(w.fields, w.unpack(x)):
                row[model.index[f]] = y
            continue
        pos = model.index[v]
        if sl is None:
            row[pos] = x
        else:
            r = list(row[pos])
            r[sl] = x
            row[pos] = tuple(r)
    return model.state_cls(row)


def set_slots(model: Any, t: tuple, ghosts: dict[str, Any]) -> tuple:
    """``t`` with hidden variables replaced: a value, or for a per-CPU one a mapping cpu -> value."""
    row = list(t)
    for name, val in ghosts.items():
        pos = model.index[name]
        if isinstance(val, dict):
            r = list(row[pos])
            for c, x in val.items():
                r[c] = x
            row[pos] = tuple(r)
        else:
            row[pos] = val
    return model.state_cls(row)


def lock_vars(model: Any) -> tuple[str, ...]:
    """The names of the spec's ``Lock`` variables."""
    return tuple(n for n, v in model.info.vars.items() if isinstance(v, Lock))


def lock_events(model: Any, s: tuple, updates: dict, locks: tuple[str, ...]) -> tuple[list, list]:
    """(locks taken, locks released) by a step's updates."""
    taken, released = [], []
    for lk in locks:
        if lk in updates:
            old, new = s[model.index[lk]], updates[lk]
            if old == NOBODY and new != NOBODY:
                taken.append(lk)
            elif old != NOBODY and new == NOBODY:
                released.append(lk)
    return taken, released


def classify(model: Any, actions: tuple) -> dict[int, str]:
    """Each action's kind (``ANNOTATED``, ``ORDERED``, ``PLAIN``), by running it once on symbols and
    recording what it reads and writes (as ``checker.kernel.tearing`` does)."""
    from checker.language.lint import symbolic_state

    weak, locks = set(weak_vars(model.info)), set(lock_vars(model))
    s = symbolic_state(model)
    out = {}
    for act in actions:
        if act.info.access:
            out[act.index] = ANNOTATED
            continue
        if not act.cpus:  # a role of no CPUs at this point: the step never runs
            out[act.index] = PLAIN
            continue
        reads: set[str] = set()
        writes = _effects(act, recording(model, reads)(s))
        if writes is None:  # code that runs on numbers only: assume it touches memory (fully ordered: stronger)
            reads, writes = weak | locks, set()
        touched = reads | writes
        # A step whose only weak effect is a Lock (spin_lock() as a step of its own) is annotated with no
        # accesses: an acquire on taking, a release on releasing, not a full barrier.
        out[act.index] = ORDERED if touched & weak else ANNOTATED if touched & locks else PLAIN
    return out


def recording(model: Any, reads: set[str]) -> Any:
    """A state class whose variable reads are recorded in ``reads`` (what a step loads)."""
    ns: dict[str, Any] = {}
    for i, n in enumerate(model.var_names):
        def read(st: tuple, i: int = i, n: str = n) -> Any:
            reads.add(n)
            return tuple.__getitem__(st, i)
        ns[n] = property(read)
    return type("Recording", (model.state_cls,), ns)


def weak_cpus(model: Any, kinds: dict[int, str], actions: tuple, ro: RunsOn) -> tuple[int, ...]:
    """The CPUs that take weak steps: those of the roles of annotated or ordered actions (for a role with
    ``cpu=``, the CPUs its members run on)."""
    cpus: set[int] = set()
    for act in actions:
        if kinds.get(act.index, PLAIN) != PLAIN and act.cpus != (None,):
            cpus.update(ro.cpus if act.index in ro.acts else act.cpus)
    return tuple(sorted(cpus))


def switches(model: Any, actions: tuple) -> frozenset:
    """The scheduler's steps (a context switch, a migration): each a full barrier on the CPUs involved."""
    if model.scheduler is None:
        return frozenset()
    return frozenset(a.index for a in actions if a.info.builtin)


@dataclass(frozen=True)
class RunsOn:
    """The roles whose members run on a CPU the state names (``Role(cpu=...)``), at one point.

    Their steps use that CPU's store buffer and views: each such action gets a hidden last choice, the CPU
    (``on_cpu``), guarded by ``cpu(s, member) == on_cpu``, so the models see a concrete CPU (and the compiled
    explorer a constant). A step whose updates may change some member's CPU (a migration, a CPU going down)
    is the scheduler's full barrier on the old and the new CPU."""

    fn: dict  # role -> the function (s, member) -> CPU
    members: dict  # role -> its instances at the point
    cpus: tuple[int, ...]  # the CPUs they may run on: every instance of a role without cpu=
    acts: frozenset  # the indices of the actions that got the choice
    moving: frozenset  # the indices of the actions that may move a member
    reads: frozenset  # the variables the functions read

    def me(self, act: Any, cpu: Any, args: tuple) -> Any:
        """The CPU whose buffer and views the step uses: its hidden choice, else the acting role instance."""
        return args[-1] if act.index in self.acts else cpu

    def spec_args(self, act: Any, args: tuple) -> tuple:
        """The spec's own choices (for ``slot=`` functions): without the hidden CPU."""
        return args[:-1] if act.index in self.acts else args

    def moved(self, model: Any, s: tuple, updates: dict) -> list[tuple[Any, Any]]:
        """(old CPU, new CPU) of each member whose CPU the step's updates may change (values or terms)."""
        touched = {n: updates[n] for n in self.reads if n in updates}
        if not touched:
            return []
        for n, v in touched.items():
            if v.__class__ is Fill:
                touched[n] = {c: v.value for c in range(len(s[model.index[n]]))}
        return self.pairs(s, set_slots(model, s, touched))

    def pairs(self, s: tuple, post: tuple) -> list[tuple[Any, Any]]:
        """(CPU in ``s``, CPU in ``post``) of each member that may be on another CPU in ``post``."""
        out = []
        for role, fn in self.fn.items():
            for x in self.members[role]:
                a, b = fn(s, x), fn(post, x)
                if a is b or (a.__class__ is int and b.__class__ is int and a == b):
                    continue
                out.append((a, b))
        return out


#: No role with cpu=: every step uses its own role instance's buffer and views.
NOWHERE = RunsOn({}, {}, (), frozenset(), frozenset(), frozenset())


def runs_on(model: Any, actions: tuple) -> tuple[RunsOn, tuple]:
    """The point's ``RunsOn`` (empty where no role has ``cpu=``) and the actions with the hidden CPU choice."""
    from checker.kernel.tasks import task_roles
    from checker.language.lint import symbolic_state

    declared = {name: r.cpu for name, r in model.info.roles.items() if getattr(r, "cpu", None) is not None}
    # A task runs on the CPU task_cpu names: its accesses use that CPU's store buffer and views (they are the
    # CPU's, not the task's: an interrupt on that CPU sees them, and a task switched in finds them there).
    declared.update({name: _task_cpu for name in task_roles(model.info)})
    reads: set[str] = set()
    sym = recording(model, reads)(symbolic_state(model))
    # a role whose every member is on its own CPU at this point (percpu_eager without migration) needs nothing
    fns = {role: fn for role, fn in declared.items()
           if not all(fn(sym, x).__class__ is int and fn(sym, x) == x for x in model.roles[role])}
    if not fns:
        return NOWHERE, actions
    tasks = set(task_roles(model.info))
    reads.clear()
    cpu_set: set[int] = set()
    for role, fn in fns.items():
        for x in model.roles[role]:
            fn(sym, x)
        named = model.info.roles[role].cpus
        for name in ([named] if named is not None else [n for n in model.roles if n not in declared and n not in tasks]):
            cpu_set.update(model.roles[name])
    cpus = tuple(sorted(cpu_set))
    out, acts, moving = [], set(), set()
    for act in actions:
        # (an interrupt or softirq handler of such a role runs on the member as the CPU it interrupts)
        # (the scheduler's own steps are not a task's: migrate is the barrier on both CPUs, see switches)
        if act.info.role in fns and act.cpus != (None,) and act.cpus and not (act.info.irq or act.info.softirq) \
                and not (act.info.builtin and act.info.role in tasks):
            name, j = "on_cpu", 2
            while name in act.arg_names:
                name, j = f"on_cpu{j}", j + 1
            act = extra_choices(act, (name,), [cpus])
            act = dataclasses.replace(act, info=dataclasses.replace(act.info, fn=_on_cpu(act.info.fn, fns[act.info.role])))
            acts.add(act.index)
        out.append(act)
    ro = RunsOn(fns, {r: tuple(model.roles[r]) for r in fns}, cpus, frozenset(acts), frozenset(), frozenset(reads))
    for act in out:  # which steps may move a member: those whose updates write what cpu= reads
        writes = _writes(model, act)
        if writes is None or writes & ro.reads:
            moving.add(act.index)
    return dataclasses.replace(ro, moving=frozenset(moving)), tuple(out)


def _task_cpu(s: Any, t: Any) -> Any:
    """task_cpu(p): the CPU a task runs on (checker.kernel.tasks)."""
    return s.task_cpu[t]


def _on_cpu(fn: Any, cpu_of: Any) -> Any:
    def step(s: Any, member: Any, *args: Any) -> Any:
        r = fn(s, member, *args[:-1])
        if r is DISABLED or r.__class__ is not Step:
            return r
        return when(And(r.guard, cpu_of(s, member) == args[-1]), **r.updates)

    step.__wrapped__ = fn  # type: ignore[attr-defined]
    return step


def _writes(model: Any, act: Any) -> set[str] | None:
    """The variables an action's updates name (run on symbols); None where that cannot be told."""
    from checker.language.lint import symbolic_state

    return _effects(act, symbolic_state(model))


def _effects(act: Any, s: Any) -> set[str] | None:
    """The variables the action's updates name, for every CPU and choice it has, run on the symbolic state
    ``s`` (whose reads a recording state class notes); None where some run raised (code that runs on numbers
    only). Every combination, not the first alone: a guard such as ``dest != cpu`` is plainly False at the
    first one (``cpu_down(cpu=0, dest=0)``), and that step would seem to write nothing."""
    writes: set[str] = set()
    for cpu in act.cpus:
        for args in act.choices:
            try:
                r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
            except Exception:
                return None
            if isinstance(r, Step):
                writes.update(r.updates)
    return writes


def own_slot(model: Any, s: tuple, cpu: int) -> int:
    """The slot a this_cpu access of ``cpu`` names: a task's is the CPU it runs on."""
    sch = model.scheduler
    if sch is not None and cpu in sch.task_set:
        return s[model.index["task_cpu"]][cpu]
    return cpu


def refuse_unsupported(model: Any) -> None:
    """Refuse, as a usage error, the points the weak memory models do not run (liveness). A 32-bit point runs:
    its halves (checker.kernel.tearing) are steps the model runs as any other, each with the accesses of the
    action it splits (two loads, or two stores, of the 64-bit location)."""
    if model.abstraction is not None:
        raise UsageError(f"{model.name}: --memory {model.memory} at a liveness-abstraction point is not "
                         f"supported: run it with --memory sc")


def run_step(model: Any, act: Any, view: tuple, cpu: Any, args: tuple) -> Step | None:
    """The spec's own step on what the CPU sees: its Step, or None where it is not enabled."""
    fn = act.info.fn
    r = fn(view, cpu, *args) if cpu is not None else fn(view, *args)
    if r is DISABLED:
        return None
    if r.__class__ is not Step:
        raise model._bad_return(act, r)
    g = r.guard
    if g is not True and not g:
        return None
    return r


def split_updates(model: Any, updates: dict, weak: frozenset, seen: Any = None) -> tuple[dict, dict[tuple, Any]]:
    """(updates of ordinary variables, weak location -> value written). A step that updates some fields of a
    word stores the whole word, the other fields as it read them in ``seen`` (the state the step ran on)."""
    normal, stores = {}, {}
    for w in model.words.values():
        if any(f in updates for f in w.fields):
            stores[(w.name, None)] = w.pack([updates[f] if f in updates else getattr(seen, f) for f in w.fields])
    for name, val in updates.items():
        if name in model.word_fields:
            continue
        if name in weak:
            size = model.arrays.get(name, model.ncpus_total)
            for sl, x in slots_of(val, size):
                stores[(name, sl)] = x
        else:
            normal[name] = val
    return normal, stores


def unlisted_store(model: Any, act: Any, loc: tuple) -> SpecError:
    """The error for an action that writes a weak variable its ``access=`` does not list."""
    v, sl = loc
    what = v if sl is None else f"{v}[{sl}]"
    listed = [a for a in getattr(act.info, "access", ()) if a.kind in ("store", "rmw") and a.var == v]
    if listed and sl is not None:  # it lists the variable, for other slots than this one (its own CPU's, by default)
        return SpecError(f"{model.cls.__name__}.{act.info.name} writes {what}, a weak variable's slot that its "
                         f"access= does not name: its {' and '.join(a.kind.capitalize() for a in listed)} of {v!r} "
                         f"{'is' if len(listed) == 1 else 'are'} of its own CPU's slot, or of the slots its slot= "
                         f"gives; name this one in program order, e.g. access=(..., Store({v!r}, \"plain\", "
                         f"slot=lambda s, cpu: ...)), or slot=\"all\" for every slot",
                         file=act.info.file, line=act.info.line)
    return SpecError(f"{model.cls.__name__}.{act.info.name} writes {what}, a weak variable, but its access= lists "
                     f"no Store or Rmw of {v!r}; add one in program order, e.g. access=(..., Store({v!r}, \"once\"))",
                     file=act.info.file, line=act.info.line)


def extra_choices(act: Any, names: tuple[str, ...], domains: list[tuple]) -> Any:
    """``act`` with more choice arguments (the model's own nondeterminism, shown in traces)."""
    import itertools

    if not names:
        return act
    combos = tuple(base + extra for base in act.choices for extra in itertools.product(*domains))
    return dataclasses.replace(act, arg_names=act.arg_names + names, choices=combos)
