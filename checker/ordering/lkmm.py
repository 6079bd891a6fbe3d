# SPDX-License-Identifier: GPL-2.0-only
"""``lkmm``: a view-based operational approximation of the Linux-kernel memory model.

In the style of the promising semantics (Kang et al., POPL 2017), with its
promises where a spec has a ``"once"`` store (``lkmm_promises`` per CPU;
``checker.ordering.promises`` says how they are made, fulfilled and
certified, and how properties treat a state with one out). Memory keeps, per location, its recent stores as *messages* in
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
- a store appends a message whose view is ``wf`` (``release``: ``cur``); a
  store of the value the step read for the location is no store;
- an Rmw reads the newest message and appends after it (atomicity); the new
  message's view joins the read one's (release sequences); ``mb`` is a full
  fence before and after, ``acquire``/``release`` as a load/store; a step
  that leaves the value as it was (a failed cmpxchg) is an unordered load;
- a ``this_cpu`` Rmw is atomic to its own CPU only (``_this_cpu``): it reads
  as a load does (a ``<var>_age`` choice from ``cur`` on; the message's view
  into ``acq``) and appends its store, carrying ``wf``, at the end, so a
  remote store may land in between (a lost update); its own CPU's stores
  are always in its ``cur``; leaving the value as it read it, it is an
  unordered load;
- ``smp_rmb``: ``cur`` joins ``acq``; ``smp_wmb``: ``wf`` joins ``ws``;
  ``smp_mb`` (and ``smp_mb__*``): ``cur`` joins ``acq`` and the global
  SC-fence view, which becomes ``cur``; ``wf`` becomes ``cur``;
- taking a Lock joins the view its last release left, and this CPU's stores and ``acq`` at its own last
  unlock (po-unlock-lock-po); releasing it leaves ``cur``; a step that only does that is no full barrier;
- a step without ``access=`` that touches a weak variable is fully ordered
  and reads the newest messages.

Each CPU reads at its own pace (not multicopy-atomic). Messages no CPU can
read any more are dropped (exact). A location keeps at most
``lkmm_history`` messages: a store past that moves the CPUs still at the
oldest message past it (a bound, with its ``sometimes``).

The representation: flat integer ghosts, written by expressions (``If``,
``Min``, ``Select``), so that the interpreter runs the steps on ints and the
compiled explorer lowers the same steps to C (as ``tso`` is written).
Messages are numbered by *age*, newest first (0 the newest store of the
location), and so are views: a view's entry for location ``j`` is the age of
the oldest message of ``j`` it allows. A load's (or a this_cpu Rmw's)
``<var>_age`` choice and an Rmw's newest message are then fixed slots; a
store shifts its location's messages by one and ages every view's entry for
it by one; dropping the messages no CPU can read is clamping the views'
entries and zeroing the slots past the kept count, so a state has one form
(the kept count of a location is one more than the oldest age a CPU's
``cur`` allows):

``lk_n[i]``                 messages kept of location ``i`` (1..lkmm_history)
``lk_val[i*H+a]``           the value of location ``i``'s message of age ``a`` (H = lkmm_history)
``lk_who[i*H+a]``           its writer's CPU + 1 (0: the initial value, or a step of no CPU; -(CPU + 1): a
                            promise of that CPU not yet fulfilled)
``lk_mark[i*H+a]``          its marking (``checker.ordering.races``)
``lk_msgview[(i*H+a)*N+j]`` its view's entry for location ``j`` (N locations)
``lk_view[(c*V+v)*N+j]``    CPU ``c``'s view ``v`` (cur, acq, wf, dep, ws, then one per dep= pointer)
``lk_sync[k*N+j]``          the SC-fence view (k=0) and each Lock's release view (k=1..)
``lk_taint[c*R+k]``         with promises: CPU ``c``'s register ``k`` holds a value from a load since its promise
``data_race``               the first data race (``races.code``; 0: none)

Tasks (a ``Task`` role): a task's accesses use the views of the CPU it runs
on (``task_cpu``), as a ``Role(cpu=)`` member's do; a context switch is
smp_mb() on its CPU and a migration on the old and the new CPU.
"""
from __future__ import annotations

from typing import Any

from checker.expr import And, If, Not, Or
from checker.language.compile import CompiledAction, Model
from checker.language.declare import DISABLED, Ghost, Step, when
from checker.types import NOBODY

from checker.ordering import races
from checker.ordering.promises import Promises
from checker.ordering.declare import weak_vars
from checker.ordering.machine import (ORDERED, PLAIN, classify, extra_choices, ghost, lock_vars, locations,
                                      own_slot, put_location, split_updates, switches, unlisted_store, value_at, weak_cpus,
                                      with_values)

CUR, ACQ, WF, DEP, WS = range(5)
THIS_CPU = "this_cpu"  # the Rmw order of this_cpu_*(): not atomic to other CPUs
VAL, WHO, MARK, VIEW = range(4)  # the fields of a message in a step's working state


def _plain(x: Any) -> bool:
    return x.__class__ is int or x.__class__ is bool


def _pick(c: Any, a: Any, b: Any) -> Any:
    """``a`` if ``c`` else ``b``: the object itself where it is decided, or both are one."""
    if a is b:
        return a
    if _plain(c):
        return a if c else b
    if _plain(a) and _plain(b) and a == b:
        return a
    return If(c, a, b)


def _older(a: Any, b: Any) -> Any:
    """The larger of two ages (the older message)."""
    if a is b:
        return a
    if _plain(a) and _plain(b):
        return a if a >= b else b
    return If(a >= b, a, b)


def _newer(a: Any, b: Any) -> Any:
    """The smaller of two ages: the join of two views' entries (age 0, the newest, absorbs)."""
    if a is b:
        return a
    if _plain(a) and _plain(b):
        return a if a <= b else b
    if _plain(a) and a == 0 or _plain(b) and b == 0:
        return 0
    return If(a <= b, a, b)


def _join(a: tuple, b: tuple) -> tuple:
    if a is b:
        return a
    return tuple(_newer(x, y) for x, y in zip(a, b))


def _set(v: tuple, i: int, x: Any) -> tuple:
    return v if v[i] is x else v[:i] + (x,) + v[i + 1:]


def _pick_view(c: Any, a: tuple, b: tuple) -> tuple:
    return a if a is b else tuple(_pick(c, x, y) for x, y in zip(a, b))


def _differs(x: Any, y: Any) -> Any:
    """Whether a store of ``x`` over ``y`` writes a new value: False where it is the same term."""
    if x is y:
        return False
    if _plain(x) and _plain(y):
        return x != y
    zx, zy = getattr(x, "z", None), getattr(y, "z", None)
    if zx is not None and zy is not None and zx.eq(zy):
        return False
    return x != y


class _Work:
    """One step's working state: the messages (newest first), the views (ages), the race, per location the
    stores this step appended (a load after them finds its message that much older)."""

    __slots__ = ("n", "msgs", "views", "sync", "race", "shift", "orig")

    def copy(self) -> "_Work":
        w = _Work()
        w.n, w.shift = list(self.n), list(self.shift)
        w.msgs = [list(x) for x in self.msgs]
        w.views = {c: list(v) for c, v in self.views.items()}
        w.sync = list(self.sync)
        w.race = self.race
        w.orig = self.orig
        return w

    def merge(self, c: Any, other: "_Work") -> "_Work":
        """``self`` where ``c`` holds, else ``other`` (a decided ``c`` picks one)."""
        if _plain(c):
            return self if c else other
        w = _Work()
        w.n = [_pick(c, a, b) for a, b in zip(self.n, other.n)]
        w.shift = [_pick(c, a, b) for a, b in zip(self.shift, other.shift)]
        w.msgs = []
        for ma, mb in zip(self.msgs, other.msgs):
            width = max(len(ma), len(mb))
            empty = (0, 0, 0, (0,) * len(ma[0][VIEW]))
            ma = ma + [empty] * (width - len(ma))  # past the kept count every slot is zero
            mb = mb + [empty] * (width - len(mb))
            w.msgs.append([x if x is y else (_pick(c, x[VAL], y[VAL]), _pick(c, x[WHO], y[WHO]),
                                             _pick(c, x[MARK], y[MARK]), _pick_view(c, x[VIEW], y[VIEW]))
                           for x, y in zip(ma, mb)])
        w.views = {k: [_pick_view(c, a, b) for a, b in zip(v, other.views[k])] for k, v in self.views.items()}
        w.sync = [_pick_view(c, a, b) for a, b in zip(self.sync, other.sync)]
        w.race = _pick(c, self.race, other.race)
        w.orig = self.orig
        return w


class Lkmm:
    """The operational approximation of the Linux-kernel memory model, installed under a model's actions."""
    memory = "lkmm"
    WF = WF  # the view a CPU's stores carry (for checker.ordering.promises, which lkmm imports)

    def __init__(self, model: Model):
        self.model = model
        self.locs = locations(model)
        self.weak = frozenset(weak_vars(model.info))
        self.locks = lock_vars(model)
        self.bound = model.params.lkmm_history
        self.n = len(self.locs)
        #: The pointer variables dep="p" names: each has a view per CPU after the five, at dep_of[p].
        named = sorted({a.dep for act in model.info.actions.values() for a in act.access if isinstance(a.dep, str)})
        self.dep_of = {v: WS + 1 + j for j, v in enumerate(named)}
        self.nv = WS + 1 + len(named)
        #: With locks, two views more: this CPU's own stores and ``acq`` at its last unlock. Unlock followed by
        #: lock on one CPU orders what came before the unlock before what comes after the lock, for every CPU
        #: (LKMM's po-unlock-lock-po, in ppo and cumul-fence), without being a full barrier.
        self.ul = self.nv if self.locks else None
        self.nv += 2 if self.locks else 0
        #: Promises (load buffering; checker.ordering.promises), where ``lkmm_promises`` allows any.
        # Only a "once" store can be promised: a spec without one has nothing to promise, and pays nothing.
        bound = getattr(model.params, "lkmm_promises", 0)
        once = any(a.kind == "store" and a.order == "once" for act in model.info.actions.values() for a in act.access)
        self.pr = Promises(self, bound) if bound and once else None

    def ghosts(self) -> list:
        N, H, nc = self.n, self.bound, self.model.ncpus_total
        names = ", ".join(f"{i}: {n}" for i, n in enumerate(self.locs.names))
        sizes = {"lk_n": N, "lk_val": N * H, "lk_who": N * H, "lk_mark": N * H, "lk_msgview": N * H * N,
                 "lk_view": nc * self.nv * N, "lk_sync": (1 + len(self.locks)) * N}
        if self.pr is not None:
            sizes.update(self.pr.ghost_sizes())
        docs = {"lk_n": f"lkmm: the stores kept per location ({names})",
                "lk_val": f"lkmm: [i*{H}+a] location i's store of age a (0 the newest): its value",
                "lk_who": "lkmm: its writer's CPU + 1 (0: the initial value; -(CPU + 1): a promise not yet fulfilled)",
                "lk_mark": "lkmm: its marking (0 marked, 1 plain, 2 race_ok)",
                "lk_msgview": f"lkmm: [(i*{H}+a)*{N}+j] its view: the oldest age of location j a CPU reading it may read",
                "lk_view": f"lkmm: [(c*{self.nv}+v)*{N}+j] CPU c's views (cur, acq, wf, dep, ws, dep= pointers), as ages",
                "lk_sync": f"lkmm: [k*{N}+j] the SC-fence view (k=0) and each lock's release view, as ages",
                "lk_taint": "lkmm: [c*R+k] CPU c's register k holds a value from a load since its promise"}
        out = []
        for name, size in sizes.items():
            g = Ghost(0, doc=docs[name])
            g.kind, g.name, g.length = "array", name, size
            out.append(g)
        names_ = self.locs.names
        out.append(ghost("data_race", "shared", lambda v: races.describe(v, names_, nc), "lkmm: the first data race"))
        self.sizes = sizes
        return out

    def prepared(self, model: Model) -> None:
        """After the variables are laid out: each location's one message is its initial value."""
        model.arrays = {**model.arrays, **self.sizes}
        model.tupled = model.tupled | frozenset(self.sizes)
        base = model.initial_states
        H = self.bound
        ix = {k: model.index[k] for k in self.sizes}

        def initial_states() -> list[tuple]:
            out = []
            for s in base():
                row = list(s)
                for k, size in self.sizes.items():
                    row[ix[k]] = (1 if k == "lk_n" else 0,) * size
                val = [0] * (self.n * H)
                for i, loc in enumerate(self.locs.var_of):
                    val[i * H] = value_at(s, model, loc)
                row[ix["lk_val"]] = tuple(val)
                out.append(model.state_cls(row))
            return out

        model.initial_states = initial_states  # type: ignore[method-assign]

    def install(self, actions: tuple) -> tuple:
        m = self.model
        self.kinds = classify(m, actions)
        self.cpus = weak_cpus(m, self.kinds, actions, self.ro)
        self.switches = switches(m, actions)
        if self.pr is not None:
            self.pr.analyse(actions)
        out = []
        for act in actions:
            kind = self.kinds[act.index]
            if act.index in self.switches:
                out.append(_with_fn(act, self._switch(act)))
                continue
            if kind == PLAIN:
                act2 = _with_fn(act, self._plain_moving(act)) if act.index in self.ro.moving else act
                if self.pr is not None and act.cpus != (None,):  # a step on registers carries their taint
                    act2 = _with_fn(act2, self._tainting(act, act2.info.fn))
                out.append(act2)
                continue
            names, domains = [], []
            for a in act.info.access:
                if not _reads_any(a):
                    continue
                count = self._slot_count(a)
                for k in range(count):
                    base = f"{a.var}_age" if count == 1 else f"{a.var}{k}_age"
                    name, j = base, 2
                    while name in names or name in act.arg_names:
                        name, j = f"{base}{j}", j + 1
                    names.append(name)
                    domains.append(tuple(range(self.bound)))
            act2 = _with_fn(act, self._step(act, kind, len(act.arg_names)))
            out.append(extra_choices(act2, tuple(names), domains))
        if self.pr is not None:
            out += self.pr.promise_actions(len(out))
            self.pr.wrap_properties(m)
        return tuple(out)

    def _tainting(self, act: CompiledAction, fn: Any) -> Any:
        """A step with no weak access (registers, a branch): a register it writes from a tainted one is
        tainted (checker.ordering.promises)."""
        roleless = act.cpus == (None,)

        def step(s: Any, *a: Any) -> Any:
            r = fn(s, *a)
            if roleless or r is DISABLED or r.__class__ is not Step:
                return r
            cpu = self.ro.me(act, a[0], a[1:])
            if not _plain(cpu):
                _not_lowerable("--memory lkmm with promises and a step whose CPU the state chooses")
            upd = dict(r.updates)
            self.pr.taint_updates(s, act, a[0], a[1:], cpu, set(), self.pr.outstanding_in(s, cpu), upd)
            return when(r.guard, **upd) if "lk_taint" in upd else r

        return step

    def _slot_count(self, a: Any) -> int:
        m = self.model
        if a.slot == "all":
            return m.arrays.get(a.var, m.ncpus_total)
        return 1

    def _slots(self, a: Any, s: Any, member: Any, me: int, args: tuple) -> list[int]:
        """The locations an access touches in this step (``slot=`` gets the spec's own arguments; the default
        is the own slot of the CPU ``me`` the step runs on)."""
        m = self.model
        if a.var not in m.tupled:
            return [self.locs.of[(a.var, None)]]
        if a.slot == "all":
            return [self.locs.of[(a.var, k)] for k in range(m.arrays.get(a.var, m.ncpus_total))]
        k = own_slot(m, s, me) if a.slot is None else a.slot(s, member, *args)
        if not _plain(k):
            _not_lowerable(f"--memory lkmm with an access whose slot= the state chooses ({a!r})")
        loc = (a.var, int(k))
        if loc not in self.locs.of:
            from checker.errors import SpecError
            raise SpecError(f"{m.cls.__name__}: {a!r}: slot {k!r} is outside {a.var}", file=a.file, line=a.line)
        return [self.locs.of[loc]]

    # -- traces -----------------------------------------------------------------------------------------
    @property
    def hidden(self) -> frozenset:
        """The flat ghosts, which traces show as ``shown`` renders them."""
        return frozenset(self.sizes)

    def shown(self, s: tuple) -> dict[str, Any]:
        """The hidden state as a person reads it: each location's kept stores oldest first
        (``mem_history``), each CPU's cur view (``cpu_view[c]``: ``x@1`` is the second kept store of x) and
        the SC-fence view (``sync_view``)."""
        m, N, H, nv = self.model, self.n, self.bound, self.nv
        n = s[m.index["lk_n"]]
        val, view, sync = s[m.index["lk_val"]], s[m.index["lk_view"]], s[m.index["lk_sync"]]
        names = self.locs.names

        def at(row: Any, base: int) -> str:
            return " ".join(f"{names[j]}@{n[j] - 1 - row[base + j]}" for j in range(N))

        def shown_value(i: int, x: int) -> str:  # a word's value as its fields
            w = m.words.get(names[i])
            return str(x) if w is None else w.show(x)

        out = {"mem_history": _Text(" | ".join(f"{names[i]}: " + ",".join(shown_value(i, val[i * H + a])
                                                                            for a in reversed(range(n[i])))
                                               for i in range(N)))}
        for c in self.cpus:
            out[f"cpu_view[{c}]"] = _Text(at(view, (c * nv + CUR) * N))
        out["sync_view"] = _Text("sc " + at(sync, 0))
        return out

    # -- state ----------------------------------------------------------------------------------------
    def bounds_note(self, outcomes: dict) -> str | None:
        """The bound, where it was reached (its witness holds): a verdict that needed every run is bounded."""
        o = outcomes.get("history_fills")
        notes = [f"histories of {self.bound} stores"] if o is not None and o.verdict == "holds" else []
        if self.pr is not None and self.pr.cands:  # a run needing more promises out at once is not explored
            notes.append(f"{self.pr.bound} promise{'s' if self.pr.bound > 1 else ''} per CPU")
        return ", ".join(notes) or None

    def settled(self, s: tuple) -> Any:
        """No promise is outstanding (a state with one holds a store the program has not made yet)."""
        return True if self.pr is None else Not(self.pr.any_outstanding(s))

    def _load(self, s: Any) -> _Work:
        N, H, nv = self.n, self.bound, self.nv
        w = _Work()
        w.n = list(s.lk_n)
        w.shift = [0] * N
        val, who, mark, mv = s.lk_val, s.lk_who, s.lk_mark, s.lk_msgview
        w.msgs = [[(val[i * H + a], who[i * H + a], mark[i * H + a], tuple(mv[(i * H + a) * N:(i * H + a + 1) * N]))
                   for a in range(H)] for i in range(N)]
        lv = s.lk_view
        w.views = {c: [tuple(lv[(c * nv + v) * N:(c * nv + v + 1) * N]) for v in range(nv)] for c in self.cpus}
        ls = s.lk_sync
        w.sync = [tuple(ls[k * N:(k + 1) * N]) for k in range(1 + len(self.locks))]
        w.race = s.data_race
        w.orig = ([list(x) for x in w.msgs], {c: list(v) for c, v in w.views.items()}, list(w.sync))
        return w

    def _store(self, s: Any, w: _Work, upd: dict) -> None:
        """The updates that take ``s`` to ``w`` (canonical: ``_finish`` ran), into ``upd``: only what changed
        (a message or view tuple that is still the one ``_load`` read is skipped whole)."""
        N, H, nv = self.n, self.bound, self.nv
        msgs0, views0, sync0 = w.orig
        d: dict[str, dict] = {"lk_n": {}, "lk_val": {}, "lk_who": {}, "lk_mark": {}, "lk_msgview": {},
                              "lk_view": {}, "lk_sync": {}}

        def put(name: str, k: int, x: Any, y: Any) -> None:
            if x is not y and not (_plain(x) and _plain(y) and x == y):
                d[name][k] = x

        def put_view(name: str, base: int, v: tuple, v0: tuple) -> None:
            if v is not v0:
                for j, (x, y) in enumerate(zip(v, v0)):
                    put(name, base + j, x, y)

        for i in range(N):
            put("lk_n", i, w.n[i], s.lk_n[i])
            for a in range(H):
                msg, o = w.msgs[i][a], msgs0[i][a]
                if msg is o:
                    continue
                k = i * H + a
                put("lk_val", k, msg[VAL], o[VAL])
                put("lk_who", k, msg[WHO], o[WHO])
                put("lk_mark", k, msg[MARK], o[MARK])
                put_view("lk_msgview", k * N, msg[VIEW], o[VIEW])
        for c, views in w.views.items():
            for v in range(nv):
                put_view("lk_view", (c * nv + v) * N, views[v], views0[c][v])
        for k, v in enumerate(w.sync):
            put_view("lk_sync", k * N, v, sync0[k])
        for name, x in d.items():
            if x:
                upd[name] = x
        if not (w.race is s.data_race):
            upd["data_race"] = w.race
        m = self.model
        for i, (v, sl) in enumerate(self.locs.var_of):  # each weak variable holds its location's newest store
            if w.msgs[i][0] is msgs0[i][0]:
                continue  # (the newest store is the one the variable already holds)
            x, old = w.msgs[i][0][VAL], value_at(s, m, (v, sl))
            if x is old or (_plain(x) and _plain(old) and x == old):
                continue
            put_location(m, upd, (v, sl), x)

    def _value(self, li: int, x: Any) -> Any:
        """A stored value as its variable's type holds it (a wrapping word wraps)."""
        m = self.model
        var = self.locs.var_of[li][0]
        if var in m.words:  # a word's fields, packed: the spec's step computed each as its type holds it
            return x
        if _plain(x) or isinstance(x, int):
            return m._value(var, x, None)
        t = m._wrap.get(var)
        if t is None:
            return x
        from checker.symbolic.term import Sym, to_z3_num

        return Sym((to_z3_num(x) - t.lo) % (1 << t.bits) + t.lo, t)  # two's complement, as the Z3 encoding wraps

    # -- the operations ---------------------------------------------------------------------------------
    def _oldest(self, w: _Work) -> tuple:
        """A view that allows every kept message: each location's oldest age."""
        return tuple(n - 1 for n in w.n)

    def _full(self, w: _Work, V: list) -> None:
        """smp_mb(): cur joins acq and the SC-fence view, which becomes cur; wf becomes cur."""
        cur = _join(_join(V[CUR], V[ACQ]), w.sync[0])
        V[CUR] = cur
        w.sync[0] = cur
        V[WF] = cur

    def _append(self, w: _Work, li: int, value: Any, carried: tuple, writer: Any, mark: int) -> None:
        """A new newest message of location ``li``: every view's entry for ``li`` ages by one."""
        mv = _set(carried, li, 0)

        def older(v: tuple) -> tuple:
            return v[:li] + (v[li] + 1,) + v[li + 1:]

        for c, views in w.views.items():
            w.views[c] = [older(v) for v in views]
        w.sync = [older(v) for v in w.sync]
        for i, msgs in enumerate(w.msgs):  # (a slot past the kept count stays zero)
            n = w.n[i]
            w.msgs[i] = [(x[VAL], x[WHO], x[MARK], _pick_view(a < n, older(x[VIEW]), x[VIEW]) if a else older(x[VIEW]))
                         for a, x in enumerate(msgs)]
        w.msgs[li].insert(0, (self._value(li, value), writer + 1, mark, mv))
        w.n[li] = w.n[li] + 1
        w.shift[li] = w.shift[li] + 1

    def _raise_own(self, w: _Work, c: Any, li: int) -> None:
        """The appending CPU has seen its own store: cur and ws reach it."""
        if c in w.views:
            V = w.views[c]
            V[CUR] = _set(V[CUR], li, 0)
            V[WS] = _set(V[WS], li, 0)

    def _race(self, w: _Work, li: int, seen: Any, cpu: int, mark: int, store: bool) -> None:
        """``w.race`` if set, else the code of the oldest store newer than ``seen`` (an age) that this access
        races with (``races.racing_writer``), else 0."""
        if mark == races.RACE_OK or (_plain(w.race) and w.race != 0):
            return
        nc = self.model.ncpus_total
        found: Any = 0
        for a, msg in enumerate(w.msgs[li]):  # newest first: the last that qualifies is the oldest
            who, mk = msg[WHO], msg[MARK]
            if self.pr is not None:  # an outstanding promise's writer is -(CPU + 1)
                who = _pick(who < 0, -who, who) if not _plain(who) else abs(who)
            cond = And(a < seen, who != 0, who != cpu + 1, mk != races.RACE_OK,
                       True if mark == races.PLAIN else mk == races.PLAIN)
            found = _pick(cond, 1 + (((li * nc + cpu) * nc + (who - 1)) * 2 + int(store)), found)
        w.race = _pick(w.race != 0, w.race, found) if not _plain(w.race) else found

    def _message(self, w: _Work, li: int, age: Any) -> tuple:
        msgs = w.msgs[li]
        if _plain(age):
            return msgs[age] if age < len(msgs) else (0, 0, 0, (0,) * self.n)
        out = (0, 0, 0, (0,) * self.n)
        for a, msg in enumerate(msgs):
            hit = age == a
            out = (_pick(hit, msg[VAL], out[VAL]), _pick(hit, msg[WHO], out[WHO]), _pick(hit, msg[MARK], out[MARK]),
                   _pick_view(hit, msg[VIEW], out[VIEW]))
        return out

    def _finish(self, s: Any, w: _Work, conds: list | None = None) -> None:
        """Drop what no CPU can read (the bound: the CPUs furthest behind move on): per location, the kept
        count is one more than the oldest age a CPU's cur allows, at most the bound. With promises, a step
        that would drop an outstanding one is not run (it could never be fulfilled): its condition joins
        ``conds``."""
        H = self.bound
        for li in range(self.n):
            curs = [w.views[c][CUR][li] for c in self.cpus]
            old = [s.lk_view[(c * self.nv + CUR) * self.n + li] for c in self.cpus]
            if w.n[li] is s.lk_n[li] and all(a is b for a, b in zip(curs, old)) and len(w.msgs[li]) == H:
                continue  # untouched: the kept count is already that
            keep: Any = 1
            for x in curs:
                keep = _older(keep, x + 1)
            keep = keep if _plain(keep) and keep <= H else (H if _plain(keep) else If(keep <= H, keep, H))
            top = keep - 1

            def clamp(v: tuple, li: int = li, top: Any = top) -> tuple:  # bound per location (ruff B023)
                x = v[li]
                if _plain(x) and _plain(top):
                    y = x if x <= top else top
                else:
                    y = If(x <= top, x, top)
                return v if y is x else v[:li] + (y,) + v[li + 1:]

            for c, views in w.views.items():
                w.views[c] = [clamp(v) for v in views]
            w.sync = [clamp(v) for v in w.sync]
            w.msgs = [[(x[VAL], x[WHO], x[MARK], clamp(x[VIEW])) for x in msgs] for msgs in w.msgs]
            if self.pr is not None and conds is not None:
                for a, x in enumerate(w.msgs[li]):
                    if a >= 1:
                        conds.append(Not(And(a >= keep, x[WHO] < 0)))
            msgs = w.msgs[li][:H]
            msgs += [(0, 0, 0, (0,) * self.n)] * (H - len(msgs))
            zero = (0, 0, 0, (0,) * self.n)
            for a in range(1, H):  # past the kept count every slot is zero: one form per state
                kept = a < keep
                x = msgs[a]
                msgs[a] = x if kept is True else zero if kept is False else \
                    (_pick(kept, x[VAL], 0), _pick(kept, x[WHO], 0), _pick(kept, x[MARK], 0),
                     tuple(_pick(kept, e, 0) for e in x[VIEW]))
            w.msgs[li] = msgs
            w.n[li] = keep
        for msgs in w.msgs:
            del msgs[H:]

    # -- steps ----------------------------------------------------------------------------------------
    def _step(self, act: CompiledAction, kind: str, nbase: int) -> Any:
        roleless = act.cpus == (None,)

        def step(s: Any, *a: Any) -> Any:
            cpu, args = (None, a) if roleless else (a[0], a[1:])
            if kind == ORDERED:
                return self._ordered(s, act, cpu, args)
            return self._annotated(s, act, cpu, args[:nbase], args[nbase:])

        return step

    def _run(self, act: CompiledAction, view: Any, cpu: Any, args: tuple) -> Any:
        """The spec's own step on what the CPU sees: its Step, or DISABLED where it is decided not enabled."""
        fn = act.info.fn
        r = fn(view, cpu, *args) if cpu is not None else fn(view, *args)
        if r is DISABLED:
            return r
        if r.__class__ is not Step:
            raise self.model._bad_return(act, r)
        g = r.guard
        if _plain(g) and not g:
            return DISABLED
        return r

    def _stores(self, act: CompiledAction, r: Step, cpu: Any, conds: list, seen: Any) -> tuple[dict, dict]:
        """(the step's updates of ordinary variables, location -> value its stores write; ``seen``: the state
        the step ran on, whose fields a word's store keeps where the step leaves them)."""
        normal, stores = split_updates(self.model, r.updates, self.weak, seen)
        todo = {}
        for loc, x in stores.items():
            if loc not in self.locs.of:
                v, k = loc
                # A slot the state picks (on terms, as the compiled engine lowers a Role(cpu=) member's
                # `local={_on(s, t): ...}`), where the step's accesses of it name the own slot: the CPU it runs on.
                if _plain(k) or cpu is None or not any(a.var == v and a.kind in ("store", "rmw") and a.slot is None
                                                       for a in act.info.access):
                    _not_lowerable(f"--memory lkmm with a store to {v}[{k}] at an index the state chooses")
                conds.append(k == cpu)
                loc = (v, cpu)
            todo[self.locs.of[loc]] = x
        return normal, todo

    def _lock_events(self, s: Any, normal: dict) -> list[tuple[int, Any, Any]]:
        """(lock number, taken, released) for each lock the step's updates name, as conditions."""
        out = []
        for k, lk in enumerate(self.locks):
            if lk in normal:
                old, new = getattr(s, lk), normal[lk]
                out.append((k, And(old == NOBODY, new != NOBODY), And(old != NOBODY, new == NOBODY)))
        return out

    def _annotated(self, s: Any, act: CompiledAction, member: Any, base: tuple, ages: tuple) -> Any:
        m = self.model
        cpu = self.ro.me(act, member, base)  # the CPU it runs on (a Role(cpu=) member's hidden choice)
        sargs = self.ro.spec_args(act, base)  # the spec's own choices, for slot= functions
        N, H = self.n, self.bound
        lv, vals = s.lk_view, s.lk_val
        cur0 = (cpu * self.nv + CUR) * N  # where this CPU's cur starts in lk_view
        conds: list = []
        # 1. which message each load reads (by age); the step runs on those values. A message older than
        #    the CPU's view before the step is never readable (views only grow): refused before running it.
        reads: list[tuple[int, int]] = []
        values: dict[tuple, Any] = {}
        k = 0
        for a in act.info.access:
            if not _reads_any(a):
                continue
            for li in self._slots(a, s, member, cpu, sargs):
                age = ages[k]
                k += 1
                ok = age <= lv[cur0 + li]
                if ok is False:
                    return DISABLED
                conds.append(ok)
                reads.append((li, age))
                values[self.locs.var_of[li]] = vals[li * H + age]
        seen = with_values(m, s, values) if values else s
        r = self._run(act, seen, member, base)
        if r is DISABLED:
            return r
        normal, todo = self._stores(act, r, cpu, conds, seen)
        events = self._lock_events(s, normal)
        pr, loaded = self.pr, set()
        if pr is not None:
            if not _plain(cpu):
                _not_lowerable("--memory lkmm with promises and a step whose CPU the state chooses")
            if pr.blocks(act, normal):  # it orders the CPU's later stores after it: not with one in memory
                conds.append(Not(pr.outstanding_in(s, cpu)))
            loaded = {self.locs.names[li] for a in act.info.access if a.kind in ("load", "rmw")
                      for li in self._slots(a, s, member, cpu, sargs)}
        w = self._load(s)
        V = w.views[cpu]
        for lk, taken, _ in events:  # spin_lock(): an acquire of the last unlock's view (later stores carry it)
            self._acquire(w, V, lk, taken)
        ri = 0
        # 2. the accesses in program order
        for a in act.info.access:
            if a.kind in ("lock", "unlock"):  # a critical section in one step: spin_lock()/spin_unlock() in order
                lk = self.locks.index(a.var)
                V = w.views[cpu]
                if a.kind == "lock":
                    self._acquire(w, V, lk, True)
                else:
                    self._release(w, V, lk, True)
                continue
            if a.kind == "fence":
                V = w.views[cpu]
                if a.order == "rmb":
                    V[CUR] = _join(V[CUR], V[ACQ])
                elif a.order == "wmb":
                    V[WF] = _join(V[WF], V[WS])
                else:
                    self._full(w, V)
                continue
            mark = races.marking(a)
            for li in self._slots(a, s, member, cpu, sargs):
                V = w.views[cpu]
                if a.kind == "load":
                    li, age = reads[ri]
                    ri += 1
                    lb = V[CUR][li]
                    if a.dep:
                        lb = _newer(lb, V[DEP if a.dep is True else self.dep_of[a.dep]][li])
                    msg = self._read_at(w, li, age, lb, cpu, mark, False, conds)
                    if msg is None:
                        return DISABLED
                    if a.order == "acquire":  # cumulative: a later store carries what was acquired
                        V[CUR] = _join(V[CUR], msg[VIEW])
                        V[WF] = _join(V[WF], msg[VIEW])
                    V[DEP] = msg[VIEW]
                    if a.var in self.dep_of:
                        V[self.dep_of[a.var]] = msg[VIEW]
                elif a.kind == "store":
                    if li not in todo:
                        continue  # the step did not write it
                    x = todo.pop(li)
                    if pr is not None and li in pr.locs_of.get(cpu, ()):
                        w = self._fulfil(w, s, act, member, base, cpu, li, x, a, seen, loaded, conds)
                        continue
                    w = self._store_at_end(w, li, x, a, seen, cpu)
                elif a.order == THIS_CPU:
                    li, age = reads[ri]
                    ri += 1
                    if pr is not None and li in pr.locs_of.get(cpu, ()):  # coherence: after its own promise
                        conds.append(Not(pr.mine([x[WHO] for x in w.msgs[li]], cpu)))
                    read = value_at(seen, m, self.locs.var_of[li])  # the value the step ran on
                    w = self._this_cpu(w, a, li, age, todo.pop(li, read), read, cpu, mark, conds)
                    if w is None:
                        return DISABLED
                else:  # rmw: the newest message, and the new one right after it
                    if pr is not None and li in pr.locs_of.get(cpu, ()):  # coherence: after its own promise
                        conds.append(Not(pr.mine([x[WHO] for x in w.msgs[li]], cpu)))
                    msg = w.msgs[li][0]
                    self._race(w, li, V[CUR][li], cpu, mark, True)
                    new = todo.pop(li, msg[VAL])
                    if a.var in self.dep_of:  # a pointer an Rmw returned: loads through it depend on it
                        V[self.dep_of[a.var]] = msg[VIEW]
                    changed = _differs(new, msg[VAL])
                    same = w if changed is True else (w.copy() if changed is not False else w)
                    if changed is not True:  # unchanged (a failed cmpxchg): an unordered load
                        U = same.views[cpu]
                        U[CUR] = _set(U[CUR], li, 0)
                        U[ACQ] = _join(U[ACQ], msg[VIEW])
                    if changed is False:
                        w = same
                        continue
                    if a.order == "mb":
                        self._full(w, V)
                    V[CUR] = _set(V[CUR], li, 0)
                    if a.order in ("mb", "acquire"):
                        V[CUR] = _join(V[CUR], msg[VIEW])
                        V[WF] = _join(V[WF], msg[VIEW])
                    else:
                        V[ACQ] = _join(V[ACQ], msg[VIEW])
                    carried = _join(V[CUR] if a.order in ("mb", "release") else V[WF], msg[VIEW])
                    self._append(w, li, new, carried, cpu, races.MARKED)
                    self._raise_own(w, cpu, li)
                    if a.order == "mb":
                        self._full(w, w.views[cpu])
                    w = w.merge(changed, same)
        for li, x in todo.items():  # the spec restating a slot it read (a write of every slot as a whole): no store
            d = _differs(x, value_at(seen, m, self.locs.var_of[li]))
            if d is True:
                raise unlisted_store(m, act, self.locs.var_of[li])
            if d is not False and not any(a.var == self.locs.var_of[li][0] and a.kind in ("store", "rmw")
                                          and a.slot is None for a in act.info.access):
                _not_lowerable(f"{act.info.name}: a store to {self.locs.names[li]} its access= does not list")
            # (else, on terms, another CPU's slot of a variable the step accesses as its own: the spec restating
            # it, as `{c: If(c == s.on[t], new, s.x[c]) ...}` does; on numbers a different value is refused above.
            # Z3 tells the two apart: where the slot can change on an enabled step, it is a store no access=
            # lists, which the interpreter refuses, so the point runs there rather than drop the store.)
            if d is not False and _can_hold(And(r.guard, *conds, d)):
                _not_lowerable(f"{act.info.name}: a store to {self.locs.names[li]} (another CPU's slot) its "
                               f"access= does not list")
        V = w.views[cpu]
        for lk, _, released in events:  # spin_unlock(): a release
            self._release(w, V, lk, released)
        if pr is not None:  # the registers it wrote from a load since its promise (a later store depends on them)
            normal = dict(normal)
            pr.taint_updates(s, act, member, base, cpu, loaded, pr.outstanding(w, cpu), normal)
        return self._done(s, act, r, w, normal, And(r.guard, *conds))

    def _store_at_end(self, w: _Work, li: int, x: Any, a: Any, seen: Any, cpu: int) -> _Work:
        """A store joins coherence order at the end: a new newest message (none where it writes the value the
        location holds)."""
        m = self.model
        mark = races.marking(a)
        # `x=If(ok, new, s.x)`: the branch that leaves it is no store (as for an Rmw)
        stored = _differs(x, value_at(seen, m, self.locs.var_of[li]))
        if stored is False:
            return w
        w2 = w.copy() if not _plain(stored) else w
        V2 = w2.views[cpu]
        self._race(w2, li, V2[CUR][li], cpu, mark, True)
        self._append(w2, li, x, V2[CUR] if a.order == "release" else V2[WF], cpu, mark)
        self._raise_own(w2, cpu, li)
        return w2.merge(stored, w)

    def _fulfil(self, w: _Work, s: Any, act: CompiledAction, member: Any, base: tuple, cpu: int, li: int, x: Any,
                a: Any, seen: Any, loaded: set, conds: list) -> _Work:
        """A store to a location where its CPU may have a promise out (checker.ordering.promises): with one,
        the store fulfils it (the message is already in coherence order, where the promise put it), which
        needs the same value, a ``"once"`` store, no dependency on a load since the promise, and the CPU not
        yet past it (coherence); a store that cannot is not run. Without one, a store at the end."""
        whos = [msg[WHO] for msg in w.msgs[li]]
        has = self.pr.mine(whos, cpu)
        if has is False:
            return self._store_at_end(w, li, x, a, seen, cpu)
        normal = self._store_at_end(w.copy(), li, x, a, seen, cpu)
        V = w.views[cpu]
        pa = sum(If(who == -(cpu + 1), k, 0) for k, who in enumerate(whos))  # the promise's age
        pv = sum(If(who == -(cpu + 1), msg[VAL], 0) for who, msg in zip(whos, w.msgs[li]))  # and value
        dependent = self.pr.dependent_store(s, act, member, base, cpu, li, loaded)
        ok = And(a.order == "once", x == pv, Not(dependent), pa <= V[CUR][li])
        conds.append(Or(Not(has), ok))
        f = w.copy()
        f.msgs[li] = [(msg[VAL], _pick(msg[WHO] == -(cpu + 1), cpu + 1, msg[WHO]), msg[MARK], msg[VIEW])
                      for msg in f.msgs[li]]
        F = f.views[cpu]
        self._race(f, li, F[CUR][li], cpu, races.marking(a), True)
        F[CUR] = _set(F[CUR], li, _newer(F[CUR][li], pa))  # its own store: seen
        F[WS] = _set(F[WS], li, _newer(F[WS][li], pa))
        return f.merge(has, normal)

    def _acquire(self, w: _Work, V: list, lk: int, taken: Any) -> None:
        """Taking lock ``lk`` (where ``taken`` holds): its last release's view joins ``cur`` and ``wf``; and
        po-unlock-lock-po: this CPU's loads before its last unlock, and its stores, before what follows."""
        lv = w.sync[1 + lk]
        V[CUR] = _pick_view(taken, _join(_join(V[CUR], lv), V[self.ul + 1]), V[CUR])
        V[WF] = _pick_view(taken, _join(_join(V[WF], lv), V[self.ul]), V[WF])

    def _release(self, w: _Work, V: list, lk: int, released: Any) -> None:
        """Releasing lock ``lk`` (where ``released`` holds): it leaves ``cur`` for the next taker, and this CPU's
        stores and ``acq`` for its own next lock (po-unlock-lock-po)."""
        w.sync[1 + lk] = _pick_view(released, V[CUR], w.sync[1 + lk])
        V[self.ul], V[self.ul + 1] = _pick_view(released, V[WS], V[self.ul]), _pick_view(released, V[ACQ],
                                                                                         V[self.ul + 1])

    def _read_at(self, w: _Work, li: int, age: Any, lb: Any, cpu: int, mark: int, write: bool,
                 conds: list) -> Any:
        """Read location ``li``'s message of the step's ``age`` choice, no older than ``lb`` (coherence, or a
        dependency): the condition joins ``conds``, ``cur`` moves up to it and its view joins ``acq``. The
        message, or None where the age is decided too old. ``write``: the access also stores (a data race's
        kind)."""
        V = w.views[cpu]
        t = age + w.shift[li] if not (_plain(w.shift[li]) and w.shift[li] == 0) else age
        ok = t <= lb  # coherence (or the dependency) forbids that old a store
        if ok is False:
            return None
        conds.append(ok)
        self._race(w, li, lb, cpu, mark, write)
        msg = self._message(w, li, t)
        if self.pr is not None:  # not its own promise: that store comes after this load in program order
            conds.append(msg[WHO] != -(cpu + 1))
        V[CUR] = _set(V[CUR], li, _newer(V[CUR][li], t))
        V[ACQ] = _join(V[ACQ], msg[VIEW])
        return msg

    def _this_cpu(self, w: _Work, a: Any, li: int, age: Any, x: Any, read: Any, cpu: int, mark: int,
                  conds: list) -> _Work | None:
        """A this_cpu_*() read-modify-write: atomic to its own CPU only (Documentation/core-api/this_cpu_ops.rst:
        "this_cpu ops do not have lock semantics. A remote write may interfere with a this_cpu RMW operation";
        x86 emits one instruction with a %gs prefix and no LOCK, include/asm-generic/percpu.h a plain read and
        write inside raw_local_irq_save()). So it reads as a load does, any message ``cur`` allows (the step's
        ``age`` choice), and appends its store at the end of the coherence order: a remote store may land
        between the message it read and its own (a lost update). Its own CPU's stores (an interrupt handler's
        included) are always in ``cur``: against them it is atomic. Relaxed: the read message's view joins
        ``acq`` only and the store carries ``wf``. ``x`` is what the step writes (``read`` if nothing): the
        value it read left as it was (a failed this_cpu_cmpxchg) is no store, an unordered load. None: the
        age is decided too old."""
        V = w.views[cpu]
        # coherence: no older than what this CPU has seen (its own stores included)
        msg = self._read_at(w, li, age, V[CUR][li], cpu, mark, True, conds)
        if msg is None:
            return None
        if a.var in self.dep_of:  # a pointer it returned: loads through it depend on it
            V[self.dep_of[a.var]] = msg[VIEW]
        stored = _differs(x, read)
        if stored is False:
            return w
        w2 = w.copy() if not _plain(stored) else w
        self._append(w2, li, x, w2.views[cpu][WF], cpu, races.MARKED)
        self._raise_own(w2, cpu, li)
        return w2.merge(stored, w)

    def _ordered(self, s: Any, act: CompiledAction, cpu: Any, args: tuple) -> Any:
        """A step without access= that touches weak memory: smp_mb(), the newest values, smp_mb()."""
        m = self.model
        r = self._run(act, s, cpu, args)
        if r is DISABLED:
            return r
        cpu = self.ro.me(act, cpu, args)  # the CPU it runs on (a Role(cpu=) member's hidden choice)
        conds: list = []
        normal, todo = self._stores(act, r, cpu, conds, s)
        w = self._load(s)
        who = [cpu] if cpu is not None else list(self.cpus)
        temp = cpu is not None and cpu not in w.views
        if temp:  # a CPU of no weak step: a view that allows everything, for this step only
            w.views[cpu] = [self._oldest(w)] * self.nv
        events = self._lock_events(s, normal) if cpu is not None else []
        if self.pr is not None:  # fully ordered: not while a CPU it orders has a promise out
            conds += [Not(self.pr.outstanding_in(s, c)) for c in who]
        newest = (0,) * self.n
        for c in who:
            V = w.views[c]
            self._full(w, V)
            V[CUR] = newest  # (taking a lock joins its release view into this: already the newest)
        for li, x in todo.items():
            # a location left as it was (a slot restated, a branch that does not write it) is no store
            stored = _differs(x, value_at(s, m, self.locs.var_of[li]))
            if stored is False:
                continue
            w2 = w.copy() if not _plain(stored) else w
            carried = w2.views[who[0]][CUR] if who else self._oldest(w2)
            self._append(w2, li, x, carried, cpu if cpu is not None else -1, races.MARKED)
            if who:
                self._raise_own(w2, who[0], li)
            w = w2.merge(stored, w)
        for c in who:
            V = w.views[c]
            V[CUR] = newest
            self._full(w, V)
        for lk, _, released in events:
            w.sync[1 + lk] = _pick_view(released, w.views[cpu][CUR], w.sync[1 + lk])
        # Fully ordered also for the next taker of every lock: such a step is often a whole critical section
        # in one (an interrupt's slow path: spin_lock, fold, spin_unlock), whose unlock the next lock must see.
        for c in who:
            w.sync[1:] = [_join(v, w.views[c][CUR]) for v in w.sync[1:]]
        if temp:
            del w.views[cpu]
        return self._done(s, act, r, w, normal, And(r.guard, *conds))

    def _done(self, s: Any, act: CompiledAction, r: Step, w: _Work, normal: dict, guard: Any) -> Any:
        more: list = []
        if act.index in self.ro.moving:
            self._moved(w, self.ro.moved(self.model, s, r.updates))
            if self.pr is not None:  # the scheduler's barriers: not with a promise out
                more.append(Not(self.pr.any_outstanding(s)))
        self._finish(s, w, more)
        upd = dict(normal)
        self._store(s, w, upd)
        return when(And(guard, *more), **upd)

    def _moved(self, w: _Work, pairs: list) -> None:
        """Role(cpu=) members moved to another CPU: the scheduler's smp_mb() on the old CPU, then on the new
        one, which has seen what the old one had (the member's program order continues there). Where the
        CPUs are terms (the compiled explorer's lowering), one branch per pair of CPUs."""
        cpus = list(w.views)
        for old, new in pairs:
            if _plain(old) and _plain(new):
                if old != new:
                    self._move(w, old, new)
                continue
            out = w
            for o in cpus + [None]:
                for n in cpus + [None]:
                    if o is None and n is None or o == n:
                        continue
                    hit = And(old != new, old == o if o is not None else And(*[old != c for c in cpus]),
                              new == n if n is not None else And(*[new != c for c in cpus]))
                    if hit is False:
                        continue
                    b = w.copy()
                    self._move(b, o, n)
                    out = b.merge(hit, out)
            w.n, w.msgs, w.views, w.sync, w.race, w.shift = out.n, out.msgs, out.views, out.sync, out.race, out.shift

    def _move(self, w: _Work, old: Any, new: Any) -> None:
        if old in w.views:
            self._full(w, w.views[old])
            if new in w.views:
                w.views[new][CUR] = _join(w.views[new][CUR], w.views[old][CUR])
        if new in w.views:
            self._full(w, w.views[new])

    def _plain_moving(self, act: CompiledAction) -> Any:
        """A step with no weak access that may move a Role(cpu=) member: the scheduler's barrier."""
        fn = act.info.fn

        def step(s: Any, *a: Any) -> Any:
            r = fn(s, *a)
            if r is DISABLED or r.__class__ is not Step:
                return r
            pairs = self.ro.moved(self.model, s, r.updates)
            if not pairs:
                return r
            w = self._load(s)
            self._moved(w, pairs)
            self._finish(s, w)
            upd = dict(r.updates)
            self._store(s, w, upd)
            return when(r.guard, **upd)

        return step

    def _switch(self, act: CompiledAction) -> Any:
        """A scheduler step: a context switch (``schedule(cpu, to)``) is smp_mb() on that CPU (__schedule()'s
        smp_mb__after_spinlock() after taking the rq lock, kernel/sched/core.c); a migration is ``_moved``'s
        barrier on the old CPU, then the new one. Views are the CPU's: the task finds them where it runs."""
        fn = act.info.fn
        on_cpu = act.info.role not in self.model.scheduler.task_roles

        def step(s: Any, *a: Any) -> Any:
            r = fn(s, *a)
            if r is DISABLED or r.__class__ is not Step:
                return r
            pairs = self.ro.moved(self.model, s, r.updates) if act.index in self.ro.moving else []
            cpu = a[0] if on_cpu else None
            if not pairs and cpu not in self.cpus:
                return r
            w = self._load(s)
            if cpu in w.views:
                self._full(w, w.views[cpu])
            self._moved(w, pairs)
            more = [Not(self.pr.any_outstanding(s))] if self.pr is not None else []  # not with a promise out
            self._finish(s, w, more)
            upd = dict(r.updates)
            self._store(s, w, upd)
            return when(And(r.guard, *more), **upd)

        return step


def _reads_any(a: Any) -> bool:
    """An access that reads a message of the CPU's choosing (an ``<var>_age`` choice): a load, or a this_cpu
    read-modify-write (atomic to its own CPU only)."""
    return a.kind == "load" or a.kind == "rmw" and a.order == THIS_CPU


class _Text(str):
    """A rendered value: shown as it reads (``repr`` would quote it)."""

    def __repr__(self) -> str:
        return str(self)


#: _can_hold's answers by the condition's text: only the lowering asks (on numbers a store's change is a bool),
#: once per step and slot, and a sweep lowers the same steps at many points.
_HELD: dict[str, bool] = {}


def _can_hold(cond: Any) -> bool:
    """Whether a condition on terms is satisfiable (Z3; the variables' ranges left free: a doubt says yes)."""
    import z3

    from checker.symbolic.term import to_z3_bool

    z = to_z3_bool(cond)
    key = z.sexpr()
    held = _HELD.get(key)
    if held is None:
        solver = z3.Solver()
        # a resource limit (about 5 s of an idle core), not wall time: under load a timeout would send the same
        # point to the interpreter on one run and not the next (checker/prove/solver.py limits Z3 the same way)
        solver.set("rlimit", 50_000_000)
        solver.add(z)
        held = solver.check() != z3.unsat
        if len(_HELD) >= 4096:
            _HELD.clear()
        _HELD[key] = held
    return held


def _not_lowerable(what: str) -> None:
    """Only reached on terms (the compiled engine's lowering): the point then runs on the interpreter."""
    from checker.errors import NotLowerable

    raise NotLowerable(what)


def _with_fn(act: CompiledAction, fn: Any) -> CompiledAction:
    import dataclasses

    return dataclasses.replace(act, info=dataclasses.replace(act.info, fn=fn))
