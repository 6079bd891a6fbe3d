# SPDX-License-Identifier: GPL-2.0-only
"""x86-TSO (Sewell et al., "x86-TSO", CACM 2010): a FIFO store buffer per CPU, of bounded depth.

- A store (``Store`` of any order, and a ``this_cpu`` Rmw: ``this_cpu_*`` is
  not LOCKed) goes into the CPU's buffer; a full buffer waits for a flush.
- A load reads the CPU's own newest buffered store to the location, else
  memory. Memory is hidden (``tso_memory``, one slot per location): the
  spec's variables hold each location's newest store, buffered or not, so
  that properties relating them to ghosts the same step updates keep their
  meaning; a flush that leaves no store to that location buffered anywhere
  sets the variable to what memory now holds (the coherence-last store).
- A LOCKed RMW (every ``Rmw`` but ``this_cpu``), ``smp_mb()``, taking a Lock
  and a step without ``access=`` that touches a weak variable run only with
  the CPU's buffer empty (they drain it), and write memory directly.
  ``smp_rmb``/``smp_wmb`` and the ``smp_mb__*`` fences order nothing more on
  x86 (its atomics are already full barriers).
- Releasing a Lock (a step that sets it to NOBODY) is a store like any other,
  as on x86: ``spin_unlock()`` is ``queued_spin_unlock()``, an
  ``smp_store_release(&lock->locked, 0)``, a plain MOV
  (include/asm-generic/qspinlock.h, arch/x86/include/asm/qspinlock.h), while
  ``spin_lock()`` is a LOCK CMPXCHG. Each Lock is a location after the weak
  ones (``tso_memory`` holds its word); the release enters the buffer last
  in its step (after the step's buffered stores: the critical section's
  stores reach memory before the unlock), so the CPU's later loads pass it.
  The spec's Lock variable is the holder in program order (NOBODY from the
  release on), which the context rules read; a step reads it as that,
  unless another CPU's release of it is still buffered: then as memory
  (held). Taking it needs the CPU's buffer empty, so no CPU takes a lock
  whose release another CPU still buffers, and the releaser re-takes it
  only once its own buffer drained.
- ``flush`` (an engine step of each CPU) writes the oldest buffered store
  to memory: traces show every buffered store reaching memory.

The transformation is written in the expression vocabulary (``If``,
``And``, ...) over flat integer ghosts (``sb_n``: entries, ``sb_loc<k>`` /
``sb_val<k>``: the k-th oldest entry, ``tso_memory[i]``), so that the
interpreter runs it on ints and the compiled explorer lowers it to C, the
same steps on both (whether a step releases is itself an expression: the
entry is there only where it does).
"""
from __future__ import annotations

from typing import Any

from checker.expr import AllOf, And, If, Implies, Not, Or
from checker.language.compile import CompiledAction, Model
from checker.language.declare import DISABLED, ActionInfo, Ghost, Step, when
from checker.types import NOBODY, IntType

from checker.ordering.declare import weak_vars
from checker.ordering.machine import (ORDERED, PLAIN, Locations, _Shown, classify, lock_vars, locations,
                                      put_location, split_updates, switches, unlisted_store, value_at, weak_cpus,
                                      with_values)

#: RMW orders that are not LOCKed on x86.
UNLOCKED = ("this_cpu",)


class Tso:
    """x86-TSO: a FIFO store buffer per CPU, installed under a model's actions."""
    memory = "tso"

    def __init__(self, model: Model):
        self.model = model
        self.weak = frozenset(weak_vars(model.info))
        self.locks = lock_vars(model)
        self.locs = _with_locks(locations(model), self.locks)
        #: location index of each Lock (after the weak variables' slots)
        self.lock_loc = {name: self.locs.of[(name, None)] for name in self.locks}
        self.depth = model.params.sb_depth

    def ghosts(self) -> list:
        names = self.locs.names

        def show_loc(v: Any) -> str:
            return names[v] if isinstance(v, int) and 0 <= v < len(names) else "-"

        out = [self._ghost("sb_n", "percpu", Ghost, None, "x86-TSO: stores in this CPU's store buffer")]
        for k in range(self.depth):
            out.append(self._ghost(f"sb_loc{k}", "percpu", Ghost, _Shown("location", show_loc),
                                   f"x86-TSO: the location of this CPU's {_nth(k)} buffered store (-1: none)", -1))
            out.append(self._ghost(f"sb_val{k}", "percpu", Ghost, None, "x86-TSO: its value"))
        mem = self._ghost("tso_memory", "array", Ghost, None, "x86-TSO: what memory holds, per location ("
                          + ", ".join(f"{i}: {n}" for i, n in enumerate(names)) + ")")
        mem.length = len(names)
        out.append(mem)
        return out

    @staticmethod
    def _ghost(name: str, kind: str, cls: type, t: IntType | None, doc: str, init: int = 0) -> Ghost:
        g = cls(init, doc=doc) if t is None else cls(init, type=t, doc=doc)
        g.kind, g.name = kind, name
        return g

    def prepared(self, model: Model) -> None:
        """After the variables are laid out: memory starts as the variables' initial values."""
        model.arrays = {**model.arrays, "tso_memory": len(self.locs)}
        model.tupled = model.tupled | {"tso_memory"}
        base = model.initial_states
        pos = model.index["tso_memory"]

        def initial_states() -> list[tuple]:
            out = []
            for s in base():
                row = list(s)
                row[pos] = tuple(value_at(s, model, loc) for loc in self.locs.var_of)
                out.append(model.state_cls(row))
            return out

        model.initial_states = initial_states  # type: ignore[method-assign]

    def install(self, actions: tuple) -> tuple:
        m = self.model
        self.kinds = classify(m, actions)
        self.switches = switches(m, actions)
        self.cpus = weak_cpus(m, self.kinds, actions, self.ro)
        out = []
        for act in actions:
            kind = self.kinds[act.index]
            if act.index in self.switches:
                fn = self._switch(act)
            elif kind == PLAIN:
                fn = act.info.fn
            else:
                fn = self._step(act, kind)
            if act.index in self.ro.moving:
                fn = self._moving(fn)
            out.append(_with_fn(act, fn))
        for role, r in m.roles.items():
            mine = tuple(c for c in r if c in self.cpus)
            if mine:
                info = ActionInfo("flush", self._flush, role, (),
                                  "x86-TSO: the CPU's oldest buffered store reaches memory", None, None, builtin=True)
                out.append(CompiledAction(len(out), info, mine, (), ((),)))
        return tuple(out)

    def bounds_note(self, outcomes: dict) -> str | None:
        """The bound, where it was reached (its witness holds): a verdict that needed every run is bounded."""
        o = outcomes.get("store_buffer_fills")
        return f"store buffers of {self.depth}" if o is not None and o.verdict == "holds" else None

    def settled(self, s: Any) -> Any:
        from checker.expr import AllOf

        return AllOf([n == 0 for n in s[self.model.index["sb_n"]]])  # an expression: the compiled engine lowers it

    # -- the steps, as expressions ------------------------------------------------------------------------
    def _entries(self, s: Any, cpu: int) -> tuple[Any, list, list]:
        n = s.sb_n[cpu]
        return n, [getattr(s, f"sb_loc{k}")[cpu] for k in range(self.depth)], \
            [getattr(s, f"sb_val{k}")[cpu] for k in range(self.depth)]

    def _step(self, act: CompiledAction, kind: str) -> Any:
        m, D = self.model, self.depth
        fn = act.info.fn
        acc = act.info.access
        draining = [i for i, a in enumerate(acc) if (a.kind == "rmw" and a.order not in UNLOCKED) or
                    (a.kind == "fence" and a.order == "mb") or a.kind == "lock"]  # (spin_lock: LOCK CMPXCHG)
        sections = [(a.kind, a.var) for a in acc if a.kind in ("lock", "unlock")]
        drains = kind == ORDERED or bool(draining)
        # Program order inside the step: a store listed before the step's last draining access (a LOCKed
        # RMW, smp_mb()) reaches memory before it (x86 drains the buffer, this store included: with the buffer
        # empty at the step's start that is writing it directly); a later one is buffered, in access= order.
        last_drain = draining[-1] if draining else -1
        orders: dict[str, str] = {}
        place: dict[str, int] = {}
        for i, a in enumerate(acc):
            if a.kind in ("store", "rmw"):  # the variable's last listing gives its (final) value's place
                locked = a.kind == "rmw" and a.order not in UNLOCKED
                orders[a.var] = "locked" if (locked or i < last_drain) else "buffered"
                place[a.var] = i
        locs, of = self.locs, self.locs.of
        lock_loc = self.lock_loc
        lock_at = set(lock_loc.values())
        every = self.cpus
        roleless = act.cpus == (None,)
        # A per-CPU variable whose every access names the CPU's own slot: an update of another slot is the spec
        # restating what the step read (a write of every slot as a whole), not a store of the step.
        own_only = {a.var for a in acc if a.kind in ("store", "rmw") and a.var in m.info.vars
                    and m.info.vars[a.var].kind == "percpu" and m.scheduler is None}
        own_only -= {a.var for a in acc if a.kind in ("store", "rmw") and a.slot is not None}

        def step(s: Any, *a: Any) -> Any:
            member, args = (None, a) if roleless else (a[0], a[1:])
            cpu = self.ro.me(act, member, args)  # whose buffer: the CPU a Role(cpu=) member runs on
            mem = s.tso_memory
            if cpu is None:  # a step of no CPU: fully ordered for every CPU
                conds = [s.sb_n[c] == 0 for c in every]
                seen = {loc: mem[i] for i, loc in enumerate(locs.var_of) if loc[0] not in lock_loc}
                n = 0
            else:
                n, lk, lv = self._entries(s, cpu)
                conds = [n == 0] if drains else []
                seen = {}
                for i, loc in enumerate(locs.var_of):
                    if loc[0] in lock_loc:
                        continue
                    v = mem[i]
                    for k in range(D):  # the newest entry of its own buffer wins
                        v = If(And(k < n, lk[k] == i), lv[k], v)
                    seen[loc] = v
            for name, i in lock_loc.items():
                # A Lock reads as its variable (the holder in program order: the CPU's own buffered release
                # included, by forwarding) unless another CPU's release of it is still buffered: then as memory
                # (held). Not as memory outright: the context rules ask whether a step could run were a lock
                # free by freeing the variable (ContextRules._irq_spins, on_state, the compiled cc_irq_spins).
                pending = [] if cpu is None else self._pending(s, i, cpu)
                seen[(name, None)] = If(Or(*pending), mem[i], getattr(s, name)) if pending else getattr(s, name)
            view = with_values(m, s, seen)
            r = fn(view, member, *args) if member is not None else fn(view, *args)
            if r is DISABLED:
                return r
            normal, stores = split_updates(m, r.updates, self.weak, view)
            upd: dict[str, Any] = dict(normal)
            memw: list[tuple[int, Any, Any]] = []  # (location, condition, value): stores written to memory
            buffered: list[tuple[tuple, Any, Any]] = []  # (location, value, condition)
            lockmem: list[tuple[int, Any, Any]] = []  # (location, condition, value): lock words written to memory
            releases: list[tuple[int, Any]] = []  # (location, condition): a release buffered, last in the step
            for name, i in lock_loc.items():
                if name not in normal:
                    continue
                new = normal[name]
                if cpu is None or kind == ORDERED:  # fully ordered: to memory in the step
                    lockmem.append((i, True, new))
                    continue
                old = seen[(name, None)]
                # spin_unlock() is a plain store on x86 (smp_store_release(&lock->locked, 0)): buffered. Taking
                # (or any other change) is a LOCKed RMW (the cmpxchg of spin_lock()): the buffer empty, to memory.
                rel = And(new == NOBODY, old != NOBODY)
                take = And(new != old, Not(rel))
                conds.append(Or(Not(take), n == 0))
                lockmem.append((i, take, new))
                releases.append((i, rel))
            for what, name in sections:  # a critical section in one step: taken (to memory), its release buffered
                i = lock_loc[name]
                if what == "lock":
                    lockmem.append((i, True, cpu))
                else:
                    releases.append((i, True))
            made: dict[tuple, Any] = {}  # a store made only where its condition holds (default: always)
            for loc in [loc for loc in stores if loc[1] is not None and loc[1].__class__ is not int]:
                x = stores.pop(loc)  # a slot the state picks (on terms, as the compiled engine lowers it)
                if cpu is not None and loc[0] in own_only:  # the own slot: the CPU the step runs on
                    conds.append(loc[1] == cpu)
                    stores[(loc[0], cpu)] = x
                    continue
                # (a task's this_cpu slot, task_cpu[t]): a store to each slot, made where the index names it,
                # as the interpreter, on ints, makes the one store the index names
                for k in range(m.arrays.get(loc[0], m.ncpus_total)):
                    hit = loc[1] == k
                    if (loc[0], k) in stores:  # also a store to that slot by name: the later one, as a dict does
                        stores[(loc[0], k)] = If(hit, x, stores[(loc[0], k)])
                        made[(loc[0], k)] = Or(hit, made.get((loc[0], k), True))
                    else:
                        stores[(loc[0], k)] = x
                        made[(loc[0], k)] = hit
            for loc, x in stores.items():
                how = "locked" if kind == ORDERED else orders.get(loc[0])
                if how is None:
                    raise unlisted_store(m, act, loc)
                if cpu is not None and loc[0] in own_only and loc[1] != cpu:
                    if isinstance(x, int) and isinstance(seen[loc], int) and x != seen[loc]:
                        raise unlisted_store(m, act, loc)
                    continue
                p = made.get(loc, True)
                _put(m, upd, loc, x if p is True else If(p, x, value_at(s, m, loc)))  # the newest store
                if how == "locked" or cpu is None:
                    memw.append((of[loc], p, x))
                else:
                    buffered.append((loc, x, p))
            buffered.sort(key=lambda e: place[e[0][0]])  # stable: one variable's slots keep their order
            # The entries the step appends, in program order: its buffered stores, then the releases of its
            # locks (an unlock ends its critical section: the step's stores reach memory before it), each there
            # only where the step does release. More than the buffer holds: x86 stalls until the oldest drain.
            # The step waits for an empty buffer (the flush steps empty it) and its oldest entries beyond the
            # depth reach memory in the step.
            entries = [(of[loc], x, p, loc) for loc, x, p in buffered]
            entries += [(i, NOBODY, rel, None) for i, rel in releases]
            total: Any = 0
            before = []
            for e in entries:
                before.append(total)
                total = total + If(e[2], 1, 0)
            spill = If(total > D, total - D, 0)
            spilled: list[tuple[int, Any, Any]] = []  # (location, condition, value)
            if entries:
                newloc, newval = list(lk), list(lv)
                for (i, x, present, _loc), p in zip(entries, before):
                    out_ = And(present, p < spill)
                    if out_ is not False:
                        spilled.append((i, out_, x))
                    kept = And(present, p >= spill)
                    if kept is False:
                        continue
                    at = n + p - spill
                    for k in range(D):
                        newloc[k] = If(And(kept, at == k), i, newloc[k])
                        newval[k] = If(And(kept, at == k), x, newval[k])
                if not _zero(spill):
                    conds.append(Or(spill == 0, n == 0))
                if not _zero(total):
                    conds.append(n + total - spill <= D)
                    upd["sb_n"] = {cpu: n + total - spill}
                    for k in range(D):
                        upd[f"sb_loc{k}"] = {cpu: newloc[k]}
                        upd[f"sb_val{k}"] = {cpu: newval[k]}
            # a store written to memory now is not the newest while another CPU still buffers one to its location:
            # that one reaches memory later (as in _flush)
            for i, when_, x in memw + [e for e in spilled if e[0] not in lock_at]:
                loc = locs.var_of[i]
                later = self._pending(s, i, cpu)
                if later:
                    p = made.get(loc, True)  # (what the variable holds: the store, where it is made)
                    newest = x if p is True else If(p, x, value_at(s, m, loc))
                    _put(m, upd, loc, If(And(when_, Or(*later)), value_at(s, m, loc), newest))
            writes: dict[int, Any] = {}
            for i, when_, x in memw + lockmem + spilled:
                if when_ is not False:
                    writes[i] = If(when_, x, writes.get(i, mem[i]))
            memupd = writes
            if memupd:
                upd["tso_memory"] = memupd
            return when(And(r.guard, *conds), **upd)

        return step

    def _pending(self, s: Any, i: int, cpu: int) -> list:
        """Whether another CPU than ``cpu`` buffers a store to location ``i``: one term per entry."""
        out = []
        for c in self.cpus:
            if c != cpu:
                ln, lks, _ = self._entries(s, c)
                out += [And(k < ln, lks[k] == i) for k in range(self.depth)]
        return out

    def _flush(self, s: Any, cpu: int) -> Any:
        n, lk, lv = self._entries(s, cpu)
        mem = s.tso_memory
        loc0, val0 = lk[0], lv[0]
        upd: dict[str, Any] = {"tso_memory": {i: If(loc0 == i, val0, mem[i]) for i in range(len(self.locs))}}
        for i, loc in enumerate(self.locs.var_of):
            later = [And(k < n, lk[k] == i) for k in range(1, self.depth)] + self._pending(s, i, cpu)
            # the last store to a location to reach memory is its newest
            _put(self.model, upd, loc, If(And(loc0 == i, Not(Or(*later))), val0, value_at(s, self.model, loc)))
        upd["sb_n"] = {cpu: n - 1}
        for k in range(self.depth):
            upd[f"sb_loc{k}"] = {cpu: lk[k + 1] if k + 1 < self.depth else -1}
            upd[f"sb_val{k}"] = {cpu: lv[k + 1] if k + 1 < self.depth else 0}
        return when(n > 0, **upd)

    def _moving(self, fn: Any) -> Any:
        """A step that may move a Role(cpu=) member to another CPU: the scheduler's full barrier on both, so
        it waits until their buffers are drained (the member's program order continues on the new CPU)."""
        m, ro = self.model, self.ro

        def step(s: Any, *a: Any) -> Any:
            r = fn(s, *a)
            if r is DISABLED or r.__class__ is not Step:
                return r
            conds = [Or(old == new, AllOf([Implies(Or(old == c, new == c), s.sb_n[c] == 0) for c in self.cpus]))
                     for old, new in ro.moved(m, s, r.updates)]
            return when(And(r.guard, *conds), **r.updates) if conds else r

        return step

    def _switch(self, act: CompiledAction) -> Any:
        """The scheduler's context switch on a CPU (``schedule(cpu, to)``): a full barrier on that CPU, so its
        buffer drains first. __schedule() takes the rq lock and then smp_mb__after_spinlock()
        (kernel/sched/core.c); on x86 the lock is a LOCK CMPXCHG, which drains the buffer. A migration is
        ``_moving``'s barrier on the old and the new CPU."""
        fn = act.info.fn
        if act.info.role in self.model.scheduler.task_roles:  # migrate(t, dest): see _moving
            return fn

        def step(s: Any, cpu: Any, *args: Any) -> Any:
            r = fn(s, cpu, *args)
            if r is DISABLED or r.__class__ is not Step or cpu not in self.cpus:
                return r
            return when(And(r.guard, s.sb_n[cpu] == 0), **r.updates)

        return step

def _with_locks(locs: Locations, locks: tuple[str, ...]) -> Locations:
    """The weak locations and, after them, one per Lock (its word in memory: a release waits in the buffer)."""
    names, of, var_of = list(locs.names), dict(locs.of), list(locs.var_of)
    for name in locks:
        of[(name, None)] = len(names)
        var_of.append((name, None))
        names.append(name)
    return Locations(tuple(names), of, tuple(var_of))


def _with_fn(act: CompiledAction, fn: Any) -> CompiledAction:
    import dataclasses

    return dataclasses.replace(act, info=dataclasses.replace(act.info, fn=fn))


def _put(model: Any, upd: dict, loc: tuple, value: Any) -> None:
    if loc[0] in model.words:
        put_location(model, upd, loc, value)
        return
    v, sl = loc
    if sl is None:
        upd[v] = value
    else:
        upd.setdefault(v, {})[sl] = value


def _zero(x: Any) -> bool:
    """A plain 0 (an int, not a term): the step appends nothing, or spills nothing."""
    return x.__class__ is int and x == 0


def _nth(k: int) -> str:
    return {0: "oldest", 1: "second"}.get(k, f"{k + 1}th")
