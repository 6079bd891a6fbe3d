"""x86-TSO (Sewell et al., "x86-TSO", CACM 2010): a FIFO store buffer per CPU, of bounded depth.

- A store (``Store`` of any order, and a ``this_cpu`` Rmw: ``this_cpu_*`` is
  not LOCKed) goes into the CPU's buffer; a full buffer waits for a flush.
- A load reads the CPU's own newest buffered store to the location, else
  memory. Memory is hidden (``tso_memory``, where it differs): the spec's
  variables hold each location's newest store, buffered or not, so that
  properties relating them to ghosts the same step updates keep their
  meaning; a flush that leaves no store to that location buffered anywhere
  sets the variable to what memory now holds (the coherence-last store).
- A LOCKed RMW (every ``Rmw`` but ``this_cpu``), ``smp_mb()``, taking or
  releasing a Lock and a step without ``access=`` that touches a weak
  variable run only with the CPU's buffer empty (they drain it), and write
  memory directly. ``smp_rmb``/``smp_wmb`` and the ``smp_mb__*`` fences order
  nothing more on x86 (its atomics are already full barriers).
- ``flush`` (an engine step of each CPU) writes the oldest buffered store
  to memory: traces show every buffered store reaching memory.

Releasing a lock drains the buffer first: stronger than x86, where the
unlocking store itself waits in the buffer (a later load of the unlocking
CPU may pass it); the holder's exclusion is the same either way.
"""
from __future__ import annotations

from typing import Any

from checker.spec.declare import DISABLED, ActionInfo
from checker.spec.compile import CompiledAction, Model

from checker.ordering.machine import (ORDERED, PLAIN, classify, ghost, involved, switches, lock_events, lock_vars, locations,
                                      run_step, set_slots, split_updates, unlisted_store, weak_cpus, with_values)
from checker.ordering.declare import weak_vars

#: RMW orders that are not LOCKed on x86.
UNLOCKED = ("this_cpu",)


class Tso:
    memory = "tso"

    def __init__(self, model: Model):
        self.model = model
        self.locs = locations(model)
        self.weak = frozenset(weak_vars(model.info))
        self.locks = lock_vars(model)
        self.depth = model.params.sb_depth

    def ghosts(self) -> list:
        names = self.locs.names

        def show(b: Any) -> str:
            return "[" + ", ".join(f"{names[i]}={x}" for i, x in (b or ())) + "]"

        def show_memory(v: Any) -> str:
            return "as the variables" if not v else " ".join(f"{names[i]}={x}" for i, x in enumerate(v))

        return [ghost("store_buffer", "percpu", show, "x86-TSO: this CPU's buffered stores, oldest first"),
                ghost("tso_memory", "shared", show_memory,
                      "x86-TSO: what memory holds (the variables hold each location's newest store)")]

    def install(self, actions: tuple) -> tuple:
        m = self.model
        self.sb = m.index["store_buffer"]
        self.mem = m.index["tso_memory"]
        self.kinds = classify(m, actions)
        self.base_fire = m.fire
        self.drains: dict[int, bool] = {}
        self.orders: dict[int, dict[str, str]] = {}
        for act in actions:
            acc = act.info.access
            self.drains[act.index] = any((a.kind == "rmw" and a.order not in UNLOCKED) or
                                         (a.kind == "fence" and a.order == "mb") for a in acc)
            orders: dict[str, str] = {}
            for a in acc:
                if a.kind in ("store", "rmw") and a.var not in orders:
                    orders[a.var] = "buffered" if (a.kind == "store" or a.order in UNLOCKED) else "locked"
            self.orders[act.index] = orders
        out = list(actions)
        cpus = set(weak_cpus(m, self.kinds, actions))
        self.flushes: set[int] = set()
        for role, r in m.roles.items():
            mine = tuple(c for c in r if c in cpus)
            if not mine:
                continue
            info = ActionInfo("flush", _never, role, (), "x86-TSO: the CPU's oldest buffered store reaches memory",
                              None, None, builtin=True)
            self.flushes.add(len(out))
            out.append(CompiledAction(len(out), info, mine, (), ((),)))
        self.switches = switches(m, actions)
        m.fire = self.fire  # type: ignore[method-assign]
        return tuple(out)

    # -- steps ----------------------------------------------------------------------------------------
    def memory_values(self, s: tuple) -> dict[tuple, int]:
        """What memory holds where it differs from the spec's variables (which hold each location's
        newest store, buffered or not): the values a CPU reads past its own buffer."""
        mem = s[self.mem]
        if not mem:
            return {}
        from checker.ordering.machine import value_at

        return {loc: x for loc, x in zip(self.locs.var_of, mem) if x != value_at(s, self.model, loc)}

    def fire(self, s: tuple, act: CompiledAction, cpu: Any, args: tuple) -> tuple | None:
        if act.index in self.flushes:
            return self.flush(s, cpu)
        if act.index in self.switches:  # the scheduler's full barrier: the tasks involved drain first
            t = self.base_fire(s, act, cpu, args)
            if t is None or any(s[self.sb][c] for c in involved(self.model, s, t)):
                return None
            return t
        kind = self.kinds[act.index]
        if kind == PLAIN:
            return self.base_fire(s, act, cpu, args)
        m = self.model
        sb = s[self.sb]
        if kind == ORDERED:  # fully ordered: as if smp_mb() before and after, on memory
            if (any(sb) if cpu is None else sb[cpu]):
                return None
            r = run_step(m, act, with_values(m, s, self.memory_values(s)), cpu, args)
            if r is None:
                return None
            normal, stores = split_updates(m, r.updates, self.weak)
            return self._result(s, act, cpu, normal, {loc: m._value(loc[0], x, act) for loc, x in stores.items()},
                                None)
        buf = sb[cpu] or ()
        if buf and self.drains[act.index]:
            return None
        seen = self.memory_values(s)
        seen.update({self.locs.var_of[i]: x for i, x in buf})  # the newest entry of its own buffer wins
        r = run_step(m, act, with_values(m, s, seen), cpu, args)
        if r is None:
            return None
        normal, stores = split_updates(m, r.updates, self.weak)
        taken, released = lock_events(m, s, normal, cpu, self.locks)
        if buf and (taken or released):
            return None
        orders = self.orders[act.index]
        direct: dict[tuple, int] = {}
        new = list(buf)
        for loc, x in stores.items():
            how = orders.get(loc[0])
            if how is None:
                raise unlisted_store(m, act, loc)
            value = m._value(loc[0], x, act)
            if how == "locked":  # the buffer is empty: memory directly
                direct[loc] = value
            else:
                new.append((self.locs.of[loc], value))
        if len(new) > self.depth:
            return None
        return self._result(s, act, cpu, normal, direct, tuple(new[len(buf):]), new)

    def _result(self, s: tuple, act: Any, cpu: Any, normal: dict, direct: dict[tuple, int],
                buffered: tuple | None, new: list | None = None) -> tuple:
        """The state after a step: ordinary updates, memory written directly, stores buffered; each
        spec variable takes the newest store made to it."""
        m = self.model
        mem = self._memory(s)
        upd = dict(normal)
        for loc, x in direct.items():
            mem[self.locs.of[loc]] = x
            _put(upd, loc, x)
        for i, x in buffered or ():
            _put(upd, self.locs.var_of[i], x)
        t = m.apply(s, upd, act)
        ghosts: dict[str, Any] = {"tso_memory": self._pack(t, mem)}
        if new is not None:
            ghosts["store_buffer"] = {cpu: tuple(new) or 0}
        return set_slots(m, t, ghosts)

    def _memory(self, s: tuple) -> list:
        from checker.ordering.machine import value_at

        mem = s[self.mem]
        return list(mem) if mem else [value_at(s, self.model, loc) for loc in self.locs.var_of]

    def _pack(self, t: tuple, mem: list) -> Any:
        from checker.ordering.machine import value_at

        same = all(x == value_at(t, self.model, loc) for loc, x in zip(self.locs.var_of, mem))
        return 0 if same else tuple(mem)

    def flush(self, s: tuple, cpu: int) -> tuple | None:
        sb = s[self.sb]
        buf = sb[cpu]
        if not buf:
            return None
        i, x = buf[0]
        mem = self._memory(s)
        mem[i] = x
        rest = buf[1:]
        pending = any(j == i for j, _ in rest) or any(j == i for c, b in enumerate(sb) if c != cpu and b
                                                       for j, _ in b)
        upd: dict[str, Any] = {}
        if not pending:  # the last store to reach memory is the location's newest
            _put(upd, self.locs.var_of[i], x)
        t = self.model.apply(s, upd) if upd else s
        return set_slots(self.model, t, {"store_buffer": {cpu: rest or 0}, "tso_memory": self._pack(t, mem)})

    def bounds_note(self, outcomes: dict) -> str | None:
        """The bound, where it was reached (its witness holds): a verdict that needed every run is bounded."""
        o = outcomes.get("store_buffer_fills")
        return f"store buffers of {self.depth}" if o is not None and o.verdict == "holds" else None

    def settled(self, s: tuple) -> bool:
        return not any(s[self.model.index["store_buffer"]])


def _put(upd: dict, loc: tuple, value: Any) -> None:
    v, sl = loc
    if sl is None:
        upd[v] = value
    else:
        upd.setdefault(v, {})[sl] = value


def _never(s: Any, cpu: Any) -> Any:
    """The flush step is the model's own (``Tso.fire``): its spec-level function enables nothing."""
    return DISABLED

