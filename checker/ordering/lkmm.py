"""``lkmm``: a view-based operational approximation of the Linux-kernel memory model.

In the style of the promising semantics (Kang et al., POPL 2017) without
promises. Memory keeps, per location, its recent stores as *messages* in
coherence order (a store is appended at the end); each message carries a
*view*: for every location, the oldest message a CPU that synchronises
with this one may still read. Each CPU has views of its own:

``cur``  the oldest message of each location it may read (coherence: it only grows);
``acq``  the join of the views of the messages it has read (taken in by smp_rmb/smp_mb);
``wf``   the view its stores carry (raised by smp_wmb to its own earlier stores, by smp_mb to ``cur``);
``dep``  the view of the message its last annotated load read (a ``dep=True`` load starts from it);
``ws``   its own stores (what smp_wmb orders);
then, for each variable some ``dep="p"`` names, the view of the message its last load (or Rmw) of ``p``
read: a ``dep="p"`` load starts from it, in any later step (every load through a pointer read once).

Rules (``docs/weak-memory.md`` says what this allows and forbids):

- a load reads any message from ``cur`` on (the step's ``<var>_age`` choice:
  0 the newest, 1 the one before, ...); ``acquire`` joins the message's view
  into ``cur``, ``once``/``plain`` into ``acq``; a ``dep=True`` load reads no
  older than ``dep``, a ``dep="p"`` load no older than the last load of ``p``;
- a store appends a message whose view is ``wf`` (``release``: ``cur``);
- an Rmw reads the newest message and appends after it (atomicity); the new
  message's view joins the read one's (release sequences); ``mb`` is a full
  fence before and after, ``acquire``/``release`` as a load/store; a step
  that leaves the value as it was (a failed cmpxchg) is an unordered load;
- ``smp_rmb``: ``cur`` joins ``acq``; ``smp_wmb``: ``wf`` joins ``ws``;
  ``smp_mb`` (and ``smp_mb__*``): ``cur`` joins ``acq`` and the global
  SC-fence view, which becomes ``cur``; ``wf`` becomes ``cur``;
- taking a Lock joins the view its last release left, and this CPU's stores and ``acq`` at its own last
  unlock (po-unlock-lock-po); releasing it leaves ``cur``; a step that only does that is no full barrier;
- a step without ``access=`` that touches a weak variable is fully ordered
  and reads the newest messages.

Each CPU reads at its own pace (not multicopy-atomic). Messages no CPU can
read any more are dropped and timestamps renumbered (exact). A location
keeps at most ``lkmm_history`` messages: a store past that moves the CPUs
still at the oldest message past it (a bound, with its ``sometimes``).
"""
from __future__ import annotations

from typing import Any

from checker.language.compile import CompiledAction, Model

from checker.ordering import races
from checker.ordering.declare import weak_vars
from checker.ordering.machine import (ORDERED, PLAIN, classify, extra_choices, ghost, involved, own_slot, switches, lock_events, lock_vars,
                                      locations, run_step, set_slots, split_updates, unlisted_store, value_at,
                                      weak_cpus, with_values)

FULL = ("mb", "before_atomic", "after_atomic", "after_spinlock", "after_unlock_lock")
CUR, ACQ, WF, DEP, WS = range(5)


def _join(a: tuple, b: tuple) -> tuple:
    return tuple(x if x >= y else y for x, y in zip(a, b))


def _raise(v: tuple, i: int, t: int) -> tuple:
    return v if v[i] >= t else v[:i] + (t,) + v[i + 1:]


class Lkmm:
    memory = "lkmm"

    def __init__(self, model: Model):
        self.model = model
        self.locs = locations(model)
        self.weak = frozenset(weak_vars(model.info))
        self.locks = lock_vars(model)
        self.bound = model.params.lkmm_history
        self.n = len(self.locs)
        self.zero = (0,) * self.n
        #: The pointer variables dep="p" names: each has a view per CPU after the five, at DEP_OF[p].
        named = sorted({a.dep for act in model.info.actions.values() for a in act.access if isinstance(a.dep, str)})
        self.dep_of = {v: WS + 1 + j for j, v in enumerate(named)}
        self.nv = WS + 1 + len(named)
        #: With locks, two views more: this CPU's own stores and ``acq`` at its last unlock. Unlock followed by
        #: lock on one CPU orders what came before the unlock before what comes after the lock, for every CPU
        #: (LKMM's po-unlock-lock-po, in ppo and cumul-fence), without being a full barrier.
        self.ul = self.nv if self.locks else None
        self.nv += 2 if self.locks else 0

    def ghosts(self) -> list:
        names = self.locs.names
        ncpus = self.model.ncpus_total

        def show_history(h: Any) -> str:
            if not h:
                return "(initial values)"
            return " | ".join(f"{names[i]}: {','.join(str(m[0]) for m in msgs)}" for i, msgs in enumerate(h))

        def show_view(v: Any) -> str:
            cur = v[CUR] if v else self.zero
            return " ".join(f"{names[i]}@{t}" for i, t in enumerate(cur))

        def show_sync(v: Any) -> str:
            sc = v[0] if v else self.zero
            return "sc " + " ".join(f"{names[i]}@{t}" for i, t in enumerate(sc))

        return [
            ghost("mem_history", "shared", show_history, "lkmm: each location's kept stores, oldest first"),
            ghost("cpu_view", "percpu", show_view,
                  "lkmm: the oldest kept store of each location this CPU may read (index into mem_history)"),
            ghost("sync_view", "shared", show_sync, "lkmm: the SC-fence view and each lock's release view"),
            ghost("data_race", "shared", lambda v: races.describe(v, names, ncpus), "lkmm: the first data race"),
        ]

    def install(self, actions: tuple) -> tuple:
        m = self.model
        self.kinds = classify(m, actions)
        self.base_fire = m.fire
        self.cpus = weak_cpus(m, self.kinds, actions, self.ro)
        self.nbase: dict[int, int] = {}
        out = []
        for act in actions:
            self.nbase[act.index] = len(act.arg_names)
            names, domains = [], []
            for a in act.info.access:
                if a.kind != "load":
                    continue
                count = self._slot_count(a)
                for k in range(count):
                    base = f"{a.var}_age" if count == 1 else f"{a.var}{k}_age"
                    name, j = base, 2
                    while name in names or name in act.arg_names:
                        name, j = f"{base}{j}", j + 1
                    names.append(name)
                    domains.append(tuple(range(self.bound)))
            out.append(extra_choices(act, tuple(names), domains))
        self.switches = switches(m, actions)
        m.fire = self.fire  # type: ignore[method-assign]
        self.h_ix, self.v_ix = m.index["mem_history"], m.index["cpu_view"]
        self.s_ix, self.r_ix = m.index["sync_view"], m.index["data_race"]
        return tuple(out)

    def _slot_count(self, a: Any) -> int:
        m = self.model
        if a.slot == "all":
            return m.arrays.get(a.var, m.ncpus_total)
        return 1

    def _slots(self, a: Any, s: tuple, member: Any, me: int, args: tuple) -> list[int]:
        """The locations an access touches in this step (``slot=`` gets the spec's own arguments; the default
        is the own slot of the CPU ``me`` the step runs on)."""
        m = self.model
        if a.var not in m.tupled:
            return [self.locs.of[(a.var, None)]]
        if a.slot == "all":
            return [self.locs.of[(a.var, k)] for k in range(m.arrays.get(a.var, m.ncpus_total))]
        k = own_slot(m, s, me) if a.slot is None else a.slot(s, member, *args)
        loc = (a.var, int(k))
        if loc not in self.locs.of:
            from checker.errors import SpecError
            raise SpecError(f"{m.cls.__name__}: {a!r}: slot {k!r} is outside {a.var}", file=a.file, line=a.line)
        return [self.locs.of[loc]]

    # -- state ----------------------------------------------------------------------------------------
    def bounds_note(self, outcomes: dict) -> str | None:
        """The bound, where it was reached (its witness holds): a verdict that needed every run is bounded."""
        o = outcomes.get("history_fills")
        return f"histories of {self.bound} stores" if o is not None and o.verdict == "holds" else None

    def settled(self, s: tuple) -> bool:
        return True

    def _initial(self, s: tuple) -> tuple:
        """Each location's history before any weak step: its initial value, written by nobody."""
        return tuple(((value_at(s, self.model, loc), self.zero, -1, races.MARKED),) for loc in self.locs.var_of)

    def _history(self, s: tuple) -> list[list]:
        return [list(x) for x in (s[self.h_ix] or self._initial(s))]

    def _views(self, s: tuple) -> dict[int, list]:
        row = s[self.v_ix]
        return {c: (list(row[c]) if row[c] else [self.zero] * self.nv) for c in self.cpus}

    def _sync(self, s: tuple) -> list:
        v = s[self.s_ix]
        return [v[0], list(v[1])] if v else [self.zero, [self.zero] * len(self.locks)]

    # -- steps ----------------------------------------------------------------------------------------
    def fire(self, s: tuple, act: CompiledAction, cpu: Any, args: tuple) -> tuple | None:
        if act.index in self.switches:
            return self._switch(s, act, cpu, args)
        kind = self.kinds[act.index]
        if kind == PLAIN:
            t = self.base_fire(s, act, cpu, args)
        elif kind == ORDERED:
            t = self._ordered(s, act, cpu, args)
        else:
            t = self._annotated(s, act, cpu, args)
        if t is not None and act.index in self.ro.moving:
            t = self._moved(s, t, act)
        return t

    def _moved(self, s: tuple, t: tuple, act: CompiledAction) -> tuple:
        """A Role(cpu=) member moved to another CPU: the scheduler's smp_mb() on the old CPU, then on the new
        one, which has seen what the old one had (the member's program order continues there)."""
        pairs = self.ro.pairs(s, t)
        if not pairs:
            return t
        views, sync = self._views(t), self._sync(t)
        for old, new in pairs:
            if old in views:
                self._full(views[old], sync)
                if new in views:
                    views[new][CUR] = _join(views[new][CUR], views[old][CUR])
            if new in views:
                self._full(views[new], sync)
        return self._finish(t, act, {}, self._history(t), views, sync, t[self.r_ix])

    def _switch(self, s: tuple, act: CompiledAction, cpu: Any, args: tuple) -> tuple | None:
        """A context switch or migration: the scheduler's smp_mb() on each task involved (views are per task,
        and travel with it)."""
        t = self.base_fire(s, act, cpu, args)
        if t is None:
            return None
        views = self._views(t)
        sync = self._sync(t)
        for c in involved(self.model, s, t):
            if c in views:
                self._full(views[c], sync)
        return self._finish(t, act, {}, self._history(t), views, sync, t[self.r_ix])

    def _full(self, V: list, sync: list) -> None:
        cur = _join(_join(V[CUR], V[ACQ]), sync[0])
        V[CUR] = cur
        sync[0] = cur
        V[WF] = cur

    def _annotated(self, s: tuple, act: CompiledAction, cpu: int, args: tuple) -> tuple | None:
        m = self.model
        nb = self.nbase[act.index]
        base, ages = args[:nb], args[nb:]
        me, sargs = self.ro.me(act, cpu, base), self.ro.spec_args(act, base)  # the CPU it runs on; the spec's args
        H0 = s[self.h_ix] or self._initial(s)
        row = s[self.v_ix][me]
        cur0 = row[CUR] if row else self.zero
        # 1. which message each load reads (by age); the step runs on those values. A message older than
        #    the CPU's view before the step is never readable (views only grow): refused before running it.
        reads: list[tuple[int, int]] = []
        values: dict[tuple, int] = {}
        k = 0
        for a in act.info.access:
            if a.kind != "load":
                continue
            for li in self._slots(a, s, cpu, me, sargs):
                t = len(H0[li]) - 1 - ages[k]
                k += 1
                if t < cur0[li]:
                    return None
                reads.append((li, t))
                values[self.locs.var_of[li]] = H0[li][t][0]
        seen = with_values(m, s, values) if values else s
        r = run_step(m, act, seen, cpu, base)
        if r is None:
            return None
        H = [list(x) for x in H0]
        normal, stores = split_updates(m, r.updates, self.weak)
        taken, released = lock_events(m, s, normal, self.locks)
        views = self._views(s)
        V = views[me]
        sync = self._sync(s)
        for lk in taken:  # spin_lock(): an acquire of the last unlock's view (later stores carry it too)
            V[CUR] = _join(V[CUR], sync[1][self.locks.index(lk)])
            V[WF] = _join(V[WF], sync[1][self.locks.index(lk)])
            V[CUR] = _join(V[CUR], V[self.ul + 1])  # po-unlock-lock-po: loads before the CPU's last unlock,
            V[WF] = _join(V[WF], V[self.ul])  # and its stores, before what follows this lock
        race = s[self.r_ix]
        todo = {self.locs.of[loc]: x for loc, x in stores.items()}
        ri = 0
        # 2. the accesses in program order
        for a in act.info.access:
            if a.kind == "fence":
                if a.order == "rmb":
                    V[CUR] = _join(V[CUR], V[ACQ])
                elif a.order == "wmb":
                    V[WF] = _join(V[WF], V[WS])
                else:
                    self._full(V, sync)
                continue
            mark = races.marking(a)
            for li in self._slots(a, s, cpu, me, sargs):
                if a.kind == "load":
                    li, t = reads[ri]
                    ri += 1
                    lb = V[CUR][li]
                    if a.dep:
                        lb = max(lb, V[DEP if a.dep is True else self.dep_of[a.dep]][li])
                    if t < lb:
                        return None  # coherence (or the dependency) forbids that old a store
                    race = race or self._race(H[li], lb, me, mark, li, False)
                    msg = H[li][t]
                    V[CUR] = _raise(V[CUR], li, t)
                    V[ACQ] = _join(V[ACQ], msg[1])
                    if a.order == "acquire":  # cumulative: a later store carries what was acquired
                        V[CUR] = _join(V[CUR], msg[1])
                        V[WF] = _join(V[WF], msg[1])
                    V[DEP] = msg[1]
                    if a.var in self.dep_of:
                        V[self.dep_of[a.var]] = msg[1]
                elif a.kind == "store":
                    if li not in todo:
                        continue  # the step did not write it
                    if todo[li] == value_at(seen, m, self.locs.var_of[li]):
                        del todo[li]  # `x=If(ok, new, s.x)`: the branch that leaves it is no store (as for an Rmw)
                        continue
                    race = race or self._race(H[li], V[CUR][li], me, mark, li, True)
                    self._append(H, V, li, todo.pop(li), V[CUR] if a.order == "release" else V[WF], me, mark)
                else:  # rmw: the newest message, and the new one right after it
                    t = len(H[li]) - 1
                    msg = H[li][t]
                    race = race or self._race(H[li], V[CUR][li], me, mark, li, True)
                    new = todo.pop(li, msg[0])
                    if a.var in self.dep_of:  # a pointer an Rmw returned: loads through it depend on it
                        V[self.dep_of[a.var]] = msg[1]
                    if new == msg[0]:  # unchanged (a failed cmpxchg): an unordered load
                        V[CUR] = _raise(V[CUR], li, t)
                        V[ACQ] = _join(V[ACQ], msg[1])
                        continue
                    if a.order == "mb":
                        self._full(V, sync)
                    V[CUR] = _raise(V[CUR], li, t)
                    if a.order in ("mb", "acquire"):
                        V[CUR] = _join(V[CUR], msg[1])
                        V[WF] = _join(V[WF], msg[1])
                    else:
                        V[ACQ] = _join(V[ACQ], msg[1])
                    carried = _join(V[CUR] if a.order in ("mb", "release") else V[WF], msg[1])
                    self._append(H, V, li, new, carried, me, races.MARKED)
                    if a.order == "mb":
                        self._full(V, sync)
        for li in [li for li, x in todo.items() if x == value_at(seen, m, self.locs.var_of[li])]:
            del todo[li]  # the spec restating a slot it read (a write of every slot as a whole): no store
        if todo:
            raise unlisted_store(m, act, self.locs.var_of[next(iter(todo))])
        for lk in released:  # spin_unlock(): a release
            sync[1][self.locks.index(lk)] = V[CUR]
            V[self.ul], V[self.ul + 1] = V[WS], V[ACQ]
        return self._finish(s, act, normal, H, views, sync, race)

    def _ordered(self, s: tuple, act: CompiledAction, cpu: Any, args: tuple) -> tuple | None:
        """A step without access= that touches weak memory: smp_mb(), the newest values, smp_mb()."""
        m = self.model
        r = run_step(m, act, s, cpu, args)
        if r is None:
            return None
        normal, stores = split_updates(m, r.updates, self.weak)
        # a location left as it was (a slot restated, a branch that does not write it) is no store
        stores = {loc: x for loc, x in stores.items() if x != value_at(s, m, loc)}
        H = self._history(s)
        views = self._views(s)
        sync = self._sync(s)
        newest = tuple(len(x) - 1 for x in H)
        me = self.ro.me(act, cpu, args)
        who = [me] if me is not None else list(self.cpus)
        taken, released = lock_events(m, s, normal, self.locks) if me is not None else ([], [])
        for c in who:
            V = views[c] if c in views else [self.zero] * self.nv
            self._full(V, sync)
            V[CUR] = _join(V[CUR], newest)
            for lk in taken:
                V[CUR] = _join(V[CUR], sync[1][self.locks.index(lk)])
            views[c] = V
        for loc, x in stores.items():
            li = self.locs.of[loc]
            V = views[who[0]] if who else [self.zero] * self.nv
            self._append(H, V, li, x, V[CUR], me if me is not None else -1, races.MARKED)
        newest = tuple(len(x) - 1 for x in H)
        for c in who:
            if c in views:
                views[c][CUR] = _join(views[c][CUR], newest)
                self._full(views[c], sync)
        for lk in released:
            sync[1][self.locks.index(lk)] = views[me][CUR]
        # Fully ordered also for the next taker of every lock: such a step is often a whole critical section
        # in one (an interrupt's slow path: spin_lock, fold, spin_unlock), whose unlock the next lock must see.
        for c in who:
            if c in views:
                sync[1] = [_join(v, views[c][CUR]) for v in sync[1]]
        if me is not None and me not in self.cpus:
            del views[me]
        return self._finish(s, act, normal, H, views, sync, s[self.r_ix])

    def _race(self, hist: list, seen: int, cpu: int, mark: int, li: int, store: bool) -> int:
        w = races.racing_writer(tuple(hist), seen, cpu, mark)
        if w is None:
            return 0
        return races.code(li, cpu, w, store, self.model.ncpus_total)

    def _append(self, H: list, V: list, li: int, value: Any, carried: tuple, cpu: int, mark: int) -> None:
        t = len(H[li])
        value = self.model._value(self.locs.var_of[li][0], value, None)
        H[li].append((value, _raise(carried, li, t), cpu, mark))
        V[CUR] = _raise(V[CUR], li, t)
        V[WS] = _raise(V[WS], li, t)

    # -- keeping the state finite -------------------------------------------------------------------
    def _finish(self, s: tuple, act: CompiledAction, normal: dict, H: list, views: dict, sync: list,
                race: int) -> tuple:
        for li in range(self.n):
            drop = len(H[li]) - self.bound  # the bound: the CPUs furthest behind move on
            seen = min((views[c][CUR][li] for c in views), default=len(H[li]) - 1)
            drop = max(drop, seen)
            if drop > 0:
                self._shift(H, views, sync, li, drop)
        m = self.model
        upd = dict(normal)
        for li, msgs in enumerate(H):  # each weak variable holds its location's newest store
            v, sl = self.locs.var_of[li]
            if sl is None:
                if v in upd or msgs[-1][0] != s[m.index[v]]:
                    upd[v] = msgs[-1][0]
            elif msgs[-1][0] != s[m.index[v]][sl]:
                upd.setdefault(v, {})[sl] = msgs[-1][0]
        t = m.apply(s, upd)
        initial = all(len(x) == 1 and x[0][2] < 0 and x[0][1] == self.zero for x in H)
        row = {c: (0 if all(x == self.zero for x in v) else tuple(v)) for c, v in views.items()}
        sv = 0 if sync[0] == self.zero and all(x == self.zero for x in sync[1]) else (sync[0], tuple(sync[1]))
        return set_slots(m, t, {"mem_history": 0 if initial else tuple(tuple(x) for x in H), "cpu_view": row,
                                "sync_view": sv, "data_race": race})

    def _shift(self, H: list, views: dict, sync: list, li: int, k: int) -> None:
        """Drop location ``li``'s ``k`` oldest messages and renumber: every view of ``li`` moves down by ``k``."""

        def down(v: tuple) -> tuple:
            x = v[li] - k
            return v[:li] + (x if x > 0 else 0,) + v[li + 1:]

        H[li] = H[li][k:]
        for j, msgs in enumerate(H):
            H[j] = [(mv, down(view), w, mk) for mv, view, w, mk in msgs]
        for V in views.values():
            for i in range(len(V)):
                V[i] = down(V[i])
        sync[0] = down(sync[0])
        sync[1] = [down(v) for v in sync[1]]
