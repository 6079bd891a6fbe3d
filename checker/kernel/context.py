# SPDX-License-Identifier: GPL-2.0-only
"""Context rules checked like lockdep, on every transition the explorer takes.

What a spec declares is enough: its ``Lock()`` variables (a lock is held by
the CPU whose id it holds), per-CPU variables typed ``IRQS_OFF`` (interrupts
disabled on that CPU) or ``PREEMPT_COUNT`` (preemption disabled while
non-zero), and actions marked ``@action(sleeps=True)`` (a GFP_KERNEL
allocation, a mutex). Each rule is a verdict of every spec it applies to,
found like any property and reported with its shortest traces:

- ``no_sleep_in_atomic``: a sleeping action taken by a CPU (or task) that
  holds a spinlock, has interrupts off or preemption disabled (on
  PREEMPT_RT also taking a ``spinlock_t`` there), with the place that made
  the context atomic;
- ``lock_order``: taking lock B while holding A records the edge A -> B
  with the step that did it; a cycle is an inversion, reported with the two
  shortest traces that take the locks in opposite orders;
- ``irq_safe_locks``: a lock taken in interrupt context and, elsewhere, with
  interrupts on: the two shortest traces, one per context;
- ``no_irq_deadlock``: a state where an interrupt handler can run and would
  spin on a spinlock that the code it interrupted holds on that CPU;
- ``no_lock_deadlock``: a state where CPUs or tasks wait in a cycle, each
  for a lock (spinning or sleeping) the next one holds: a waiter has no step
  but would have one were that lock free (found even while others run);
- ``context_restored`` (a property, ``checker.language.model``): a finished run
  left interrupts or preemption off.

A spec that breaks one is violated (exit 1), as lockdep's splat would stop
a patch; a bug spec may declare the rule ``expect_violated``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.types import NOBODY, BoolType, CpuIdType, IntType

if TYPE_CHECKING:
    from checker.language.compile import Model


class _IrqsOff(BoolType):
    """Interrupts disabled on this CPU (local_irq_save ... local_irq_restore)."""


class _PreemptCount(IntType):
    """preempt_count(): preemption disabled while non-zero."""


class _MigrateDisabled(IntType):
    """migrate_disable() depth: the task may be preempted but not moved while non-zero."""


class _BhOff(IntType):
    """local_bh_disable() depth: no softirq runs over the task while non-zero."""


IRQS_OFF = _IrqsOff("irqs_off", None, False)
PREEMPT_COUNT = _PreemptCount("preempt_count", None, False)
MIGRATE_DISABLED = _MigrateDisabled("migrate_disabled", None, False)
BH_OFF = _BhOff("bh_off", None, False)


#: The rules' verdicts, each a check of every spec it applies to.
NO_SLEEP, LOCK_ORDER, IRQ_SAFE, IRQ_DEADLOCK = "no_sleep_in_atomic", "lock_order", "irq_safe_locks", "no_irq_deadlock"
LOCK_DEADLOCK = "no_lock_deadlock"
RULE_DOCS = {
    NO_SLEEP: "no step that may sleep runs in atomic context (a spinlock held, interrupts or preemption off; on "
              "PREEMPT_RT taking a spinlock_t there is sleeping)",
    LOCK_ORDER: "every two spinlocks are taken in one order (lockdep's lock order): two traces take them in "
                "opposite orders",
    IRQ_SAFE: "a spinlock taken in interrupt context is never taken with interrupts on (lockdep's irq-safety): two "
              "traces take it in the two contexts",
    IRQ_DEADLOCK: "no interrupt handler runs where it would spin on a spinlock held by the code it interrupted",
    LOCK_DEADLOCK: "no CPU or task waits, in a cycle, for a lock held by the next one (a deadlock even while others "
                   "still run)",
}


class ContextRules:
    """Watches transitions; ``outcomes`` gives each rule's verdict."""

    def __init__(self, model: "Model"):
        self.model = model
        idx = model.index
        self.locks = [(n, idx[n]) for n, v in model.vars.items()
                      if isinstance(v.type, CpuIdType) and n not in model.tupled and getattr(v, "spinlock", False)]
        self.irqs = [idx[n] for n, v in model.vars.items() if isinstance(v.type, _IrqsOff) and n in model.percpu]
        self.preempt = [idx[n] for n, v in model.vars.items()
                        if isinstance(v.type, _PreemptCount) and n in model.percpu]
        #: Every lock, spinning or sleeping: who waits for whom (``no_lock_deadlock``).
        self.all_locks = [(n, idx[n]) for n, v in model.vars.items()
                          if isinstance(v.type, CpuIdType) and n not in model.tupled and hasattr(v, "spinlock")]
        self.sleepers = {a.index for a in model.actions if a.info.sleeps}
        self.irq_actions = {a.index for a in model.actions if a.info.irq}
        #: (member, the function giving its CPU) of each Role(cpu=): a handler on a CPU interrupts the members
        #: on it, not the ones that moved away (a member's id is not its CPU)
        self.members = [(x, r.cpu) for name, r in model.info.roles.items() if getattr(r, "cpu", None) is not None
                        for x in model.roles[name]]
        self._member_ids = {x for x, _ in self.members}
        # On PREEMPT_RT a spinlock_t sleeps: taking one in atomic context is sleeping there.
        self.rt = bool(getattr(model.params, "preempt_rt", 0)) if "preempt_rt" in model.params.as_dict() else False
        self.rt_locks = {pos for n, pos in self.locks if not getattr(model.vars[n], "raw", True)}
        if model.scheduler is not None and model.scheduler.rt:  # the task model's preempt=rt
            self.rt = True
        self.active = len(self.locks) >= 2 or bool(self.sleepers) or bool(self.irqs or self.preempt) or \
            (self.rt and bool(self.rt_locks)) or bool(self.irq_actions and self.locks) or \
            len(self.all_locks) >= 2
        #: the lock order seen, (held, taken) -> the first transition taking them so, in the order found
        self.order: dict[tuple[str, str], dict[str, Any]] = {}
        self.sleep_violation: tuple | None = None
        self.irq_taken: dict[str, tuple] = {}  # lock -> a label taking it in interrupt context
        self.irqs_on_taken: dict[str, tuple] = {}  # lock -> a label taking it in task context, irqs on
        self.unbalanced: tuple | None = None
        self.irq_deadlock: tuple | None = None  # (state, the handler's label, the lock it would spin on)
        self.lock_cycle: tuple | None = None  # (state, [(waiter, lock, holder), ...])
        self._seen: Any = None
        # Set by a parallel search before each event: the place of the
        # transition in the sequential order, so that workers' first events
        # merge into the sequential search's first events (``absorb``).
        self.key: tuple | None = None
        self.keys: dict[tuple, tuple | None] = {}

    def on_transition(self, s: tuple, label: tuple, t: tuple) -> None:
        ai, cpu, _ = label
        if self.irq_deadlock is None and self.irq_actions and self.locks and s is not self._seen:
            self._seen = s
            self._irq_spins(s)
        if cpu is None:
            return
        for n, pos in self.locks:  # irq-safety: who takes each lock, in which context
            if t[pos] == cpu and s[pos] != cpu:
                if ai in self.irq_actions:
                    if n not in self.irq_taken:
                        self.irq_taken[n] = (s, label)
                        self.keys["irq_taken", n] = self.key
                elif self.irqs and not any(s[p][cpu] for p in self.irqs):
                    if n not in self.irqs_on_taken:
                        self.irqs_on_taken[n] = (s, label)
                        self.keys["irqs_on_taken", n] = self.key
                if self.rt and pos in self.rt_locks and self.sleep_violation is None:
                    why = self._atomic(s, cpu)
                    if why is not None:
                        self.sleep_violation = (s, label, why + f" (and {n} is a spinlock_t, which sleeps "
                                                                 f"on PREEMPT_RT)")
                        self.keys["sleep_violation",] = self.key
        if len(self.locks) >= 2:
            held = [n for n, pos in self.locks if s[pos] == cpu]
            if held:
                for n, pos in self.locks:
                    if t[pos] == cpu and s[pos] != cpu:
                        for h in held:
                            if (h, n) not in self.order:
                                self.order[h, n] = {"action": ai, "state": s, "label": label}
                                self.keys["edge", h, n] = self.key
        if ai in self.sleepers and self.sleep_violation is None:
            why = self._atomic(s, cpu)
            if why is not None:
                self.sleep_violation = (s, label, why)
                self.keys["sleep_violation",] = self.key

    def on_terminal(self, s: tuple) -> None:
        """Every return path restores interrupts and preemption."""
        if self.unbalanced is None:
            for pos in self.irqs + self.preempt:
                for cpu, v in enumerate(s[pos]):
                    if v:
                        self.unbalanced = (s, cpu, self.model.var_names[pos], v)
                        self.keys["unbalanced",] = self.key
                        return

    def on_state(self, s: tuple, succ: list) -> None:
        """A cycle of waiters: each CPU or task with no step to take here would have one if a lock held by the
        next were free (``no_lock_deadlock``; global deadlocks are ``no_deadlock``'s too)."""
        if self.lock_cycle is not None or len(self.all_locks) < 2:
            return
        held = [(n, pos, s[pos]) for n, pos in self.all_locks if s[pos] != NOBODY]
        if len(held) < 2:
            return
        m = self.model
        busy = {label[1] for label, _ in succ}
        waits: dict[int, tuple[str, int]] = {}
        for act in m.actions:
            if act.info.builtin or act.info.irq or act.info.softirq:
                continue
            for a in act.cpus:
                if a is None or a in busy or a in waits:
                    continue
                for n, pos, b in held:
                    if b == a:
                        continue
                    freed = list(s)
                    freed[pos] = NOBODY
                    freed = m.state_cls(freed)
                    if any(m.fire(freed, act, a, args) is not None for args in act.choices):
                        waits[a] = (n, b)
                        break
        for start in waits:  # each waiter waits for one holder: follow the chain
            seen: list[int] = []
            a = start
            while a in waits and a not in seen:
                seen.append(a)
                a = waits[a][1]
            if a in seen:
                cyc = seen[seen.index(a):]
                self.lock_cycle = (s, [(w, *waits[w]) for w in cyc])
                self.keys["lock_cycle",] = self.key
                return

    def irq_spins(self, s: tuple) -> None:
        """``no_irq_deadlock`` at ``s`` (the compiled engine found a spinning handler there first)."""
        if self.irq_deadlock is None:
            self._irq_spins(s)

    def _irq_spins(self, s: tuple) -> None:
        """A handler that can run on a CPU whose own code holds a spinlock the handler waits for: it spins
        forever (the holder cannot run until the handler returns)."""
        m = self.model
        sched = m.scheduler
        for act in m.actions:
            if act.index not in self.irq_actions:
                continue
            for c in act.cpus:
                holders = {c} if sched is None else {c, s[sched.p_curr][c]}
                if self.members:  # a member's id names it, not a CPU: the members on c hold c's locks
                    if c in self._member_ids:
                        holders.discard(c)
                    holders |= {x for x, fn in self.members if fn(s, x) == c}
                for n, pos in self.locks:
                    if s[pos] not in holders or s[pos] == NOBODY:
                        continue
                    freed = list(s)
                    freed[pos] = NOBODY
                    freed = m.state_cls(freed)
                    for ci, args in enumerate(act.choices):
                        if m.fire(freed, act, c, args) is not None and m.fire(s, act, c, args) is None:
                            self.irq_deadlock = (s, (act.index, c, ci), n)
                            self.keys["irq_deadlock",] = self.key
                            return

    def trace_states(self) -> list[tuple]:
        """The states whose traces ``outcomes`` asks for (a parallel search fetches their paths)."""
        out = [v[0] for v in (self.unbalanced, self.sleep_violation, self.irq_deadlock, self.lock_cycle)
               if v is not None]
        out += [v[0] for v in (*self.irq_taken.values(), *self.irqs_on_taken.values())]
        out += [d["state"] for d in self.order.values()]
        return out

    # -- merging the records of parallel workers ------------------------------
    def record(self) -> dict[tuple, tuple]:
        """Every first event with its key, picklable (states as plain tuples)."""
        out: dict[tuple, tuple] = {}
        for ev, key in self.keys.items():
            if ev[0] == "edge":
                attrs = dict(self.order[ev[1], ev[2]])
                attrs["state"] = tuple(attrs["state"])
                value: Any = attrs
            elif ev[0] in ("irq_taken", "irqs_on_taken"):
                first, label = getattr(self, ev[0])[ev[1]]
                value = (tuple(first), label)
            else:
                first, *rest = getattr(self, ev[0])
                value = (tuple(first), *rest)
            out[ev] = (key, value)
        return out

    def absorb(self, records: list[dict[tuple, tuple]], cut: tuple | None) -> None:
        """Take, for each event, the worker record with the least key (the
        one the sequential search meets first), ignoring transitions past a
        state-limit cut ``(depth, rank)``."""
        best: dict[tuple, tuple] = {}
        for rec in records:
            for ev, (key, value) in rec.items():
                if cut is not None and key[0] == cut[0] and key[1] > cut[1]:
                    continue
                if ev not in best or key < best[ev][0]:
                    best[ev] = (key, value)
        make = self.model.state_cls
        for ev, (key, value) in sorted(best.items(), key=lambda kv: kv[1][0]):
            self.keys[ev] = key
            if ev[0] == "edge":
                value = dict(value, state=make(value["state"]))
                self.order[ev[1], ev[2]] = value
            elif ev[0] in ("irq_taken", "irqs_on_taken"):
                getattr(self, ev[0])[ev[1]] = (make(value[0]), value[1])
            else:
                first, *rest = value
                setattr(self, ev[0], (make(first), *rest))

    def _atomic(self, s: tuple, cpu: int) -> str | None:
        for n, pos in self.locks:
            if s[pos] == cpu:
                return f"holds the spinlock {n}"
        for pos in self.irqs:
            if s[pos][cpu]:
                return "has interrupts off"
        for pos in self.preempt:
            if s[pos][cpu]:
                return "has preemption disabled"
        return None

    def outcomes(self, trace_to: Any, complete: bool, stopped: str | None) -> dict[str, Any]:
        """A verdict for each rule that applies to the spec: violated with the shortest traces, else holds
        (inconclusive when the search stopped early). ``trace_to(state)`` gives ``(steps, last state)``."""
        from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Outcome

        m = self.model
        out: dict[str, Outcome] = {}

        def verdict(name: str, kind: str, found: bool, **kw: Any) -> None:
            if found:
                out[name] = Outcome(name, kind, VIOLATED, None, **kw)
            else:
                out[name] = Outcome(name, kind, HOLDS if complete else INCONCLUSIVE,
                                    None if complete else stopped)

        def place(act_index: int, who: int) -> str:
            act = m.actions[act_index].info
            return f"{m.cls.__name__}.{act.name} on {self._who(who)} ({act.file}:{act.line})"

        if self.sleepers or (self.rt and self.rt_locks):
            v = self.sleep_violation
            if v is None:
                verdict(NO_SLEEP, "invariant", False)
            else:
                s, label, why = v
                steps, who = self._trace_with(trace_to, s, label, lambda x, lab, t: self._atomic(x, lab[1]))
                since = self._since(steps[:-1], who)
                act = m.actions[label[0]].info
                verdict(NO_SLEEP, "invariant", True, trace=steps, finding=(
                    f"{m.cls.__name__}.{act.name} ({act.file}:{act.line}) may sleep but {self._who(who)} {why}"
                    + (f", since {since}" if since else "") + " (\"BUG: sleeping function called from invalid "
                    "context\")"))
        if len(self.locks) >= 2:
            import networkx as nx  # here: a spec with one lock does not pay for its import

            try:
                cycle = nx.find_cycle(nx.DiGraph(list(self.order)))
            except nx.NetworkXNoCycle:
                cycle = None
            if not cycle:
                verdict(LOCK_ORDER, "inversion", False)
            else:
                traces, places = [], []
                for a, b, *_ in cycle[:2]:
                    edge = self.order[a, b]
                    pos_a, pos_b = m.index[a], m.index[b]
                    steps, who = self._trace_with(trace_to, edge["state"], edge["label"],
                                                  lambda x, lab, t, pa=pos_a, pb=pos_b: x[pa] == lab[1] and t[pb] == lab[1])
                    traces.append(steps)
                    places.append(f"{b} taken while holding {a} in {place(edge['action'], who)}")
                verdict(LOCK_ORDER, "inversion", True, trace=traces[0], second_trace=traces[1],
                        finding="inconsistent lock order (a possible deadlock, as lockdep reports it): "
                                + "; but ".join(places))
        if self.irq_actions and self.locks:
            both = [n for n in self.irq_taken if n in self.irqs_on_taken]
            if not both:
                verdict(IRQ_SAFE, "inversion", False)
            else:
                n = both[0]
                pos = m.index[n]
                taken = lambda x, lab, t: t[pos] == lab[1] and x[pos] != lab[1]  # noqa: E731
                first, who1 = self._trace_with(trace_to, *self.irq_taken[n], taken)
                second, who2 = self._trace_with(trace_to, *self.irqs_on_taken[n], taken)
                a, b = m.actions[self.irq_taken[n][1][0]].info, m.actions[self.irqs_on_taken[n][1][0]].info
                verdict(IRQ_SAFE, "inversion", True, trace=first, second_trace=second, finding=(
                    f"{n} is taken in interrupt context by {a.name} ({a.file}:{a.line}) and with interrupts on by "
                    f"{b.name} ({b.file}:{b.line}) on {self._who(who2)}: an interrupt on that CPU can deadlock on "
                    f"it (take it with spin_lock_irqsave)"))
            v = self.irq_deadlock
            if v is None:
                verdict(IRQ_DEADLOCK, "deadlock", False)
            else:
                s, label, lock = v
                steps, _final = trace_to(s)
                act = m.actions[label[0]].info
                verdict(IRQ_DEADLOCK, "deadlock", True, trace=steps, finding=(
                    f"the interrupt handler {m.cls.__name__}.{act.name} ({act.file}:{act.line}) can run here and "
                    f"spin on {lock}, which the code it interrupted holds on that CPU: it never returns"))
        if len(self.all_locks) >= 2:
            v = self.lock_cycle
            if v is None:
                verdict(LOCK_DEADLOCK, "deadlock", False)
            else:
                s, cycle = v
                steps, _final = trace_to(s)
                verdict(LOCK_DEADLOCK, "deadlock", True, trace=steps, finding=(
                    "a cycle of waiters: " + ", ".join(f"{self._who(w)} waits for {n}, held by {self._who(h)}"
                                                       for w, n, h in cycle)))
        return out

    def _who(self, actor: int) -> str:
        sched = self.model.scheduler
        return f"task{actor}" if sched is not None and actor in sched.task_set else f"cpu{actor}"

    def _trace_with(self, trace_to: Any, s: tuple, label: tuple, test: Any) -> tuple[list, int]:
        """The shortest trace to ``s`` and then the step ``label`` took there: under symmetry ``s`` is a
        renaming of the trace's last state, so the step is the one of the same action that passes ``test``."""
        from checker.result import make_step

        m = self.model
        steps, final = trace_to(s)
        for lab, t in m.successors(final):
            if lab[0] == label[0] and lab[2] == label[2] and test(final, lab, t):
                return steps + [make_step(m, lab, final, t)], lab[1]
        return steps, label[1]  # pragma: no cover - a renaming always has the step

    def _since(self, steps: list, cpu: int) -> str | None:
        """The last step of ``cpu`` that made its context atomic."""
        m = self.model
        lock_names = {n for n, _ in self.locks}
        atomic_vars = {m.var_names[p] for p in self.irqs + self.preempt}
        for st in reversed(steps):
            if st.cpu != cpu:
                continue
            touched = any(k in lock_names and v == cpu for k, v in st.changes.items()) or any(
                k.split("[")[0] in atomic_vars and k.endswith(f"[{cpu}]") and v for k, v in st.changes.items())
            if touched:
                act = next(a.info for a in m.actions if a.info.name == st.action)
                return f"{m.cls.__name__}.{act.name} ({act.file}:{act.line})"
        return None
