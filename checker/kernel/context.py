"""Context rules checked like lockdep, on every transition the explorer takes.

What a spec declares is enough: its ``Lock()`` variables (a lock is held by
the CPU whose id it holds), per-CPU variables typed ``IRQS_OFF`` (interrupts
disabled on that CPU) or ``PREEMPT_COUNT`` (preemption disabled while
non-zero), and actions marked ``@action(sleeps=True)`` (a GFP_KERNEL
allocation, a mutex). Two rules are checked:

- *lock order*: taking lock B while holding A records the edge A -> B with
  the action that did it; a cycle (A -> B here, B -> A there) is an
  inversion, reported with both places;
- *sleeping in atomic context*: a sleeping action taken by a CPU that holds
  a spinlock, has interrupts off or preemption disabled is reported with the
  action and the place that made the context atomic.

Either makes the spec rejected (exit 2), as lockdep's splat would stop a
patch, whatever the properties say. So does a finished run that left
interrupts or preemption off; that one is also the property
``context_restored``, which a bug spec may declare ``expect_violated``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import networkx as nx

from checker.errors import SpecError
from checker.types import BoolType, CpuIdType, IntType

if TYPE_CHECKING:
    from checker.spec.compile import Model


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


class ContextRules:
    """Watches transitions; ``finish`` raises the first rule broken."""

    def __init__(self, model: "Model"):
        self.model = model
        idx = model.index
        self.locks = [(n, idx[n]) for n, v in model.vars.items()
                      if isinstance(v.type, CpuIdType) and n not in model.tupled and getattr(v, "spinlock", False)]
        self.irqs = [idx[n] for n, v in model.vars.items() if isinstance(v.type, _IrqsOff) and n in model.percpu]
        self.preempt = [idx[n] for n, v in model.vars.items()
                        if isinstance(v.type, _PreemptCount) and n in model.percpu]
        self.sleepers = {a.index for a in model.actions if a.info.sleeps}
        self.irq_actions = {a.index for a in model.actions if a.info.irq}
        # On PREEMPT_RT a spinlock_t sleeps: taking one in atomic context is sleeping there.
        self.rt = bool(getattr(model.params, "preempt_rt", 0)) if "preempt_rt" in model.params.as_dict() else False
        self.rt_locks = {pos for n, pos in self.locks if not getattr(model.vars[n], "raw", True)}
        self.active = len(self.locks) >= 2 or bool(self.sleepers) or bool(self.irqs or self.preempt) or \
            (self.rt and bool(self.rt_locks))
        self.order = nx.DiGraph()
        self.sleep_violation: tuple | None = None
        self.irq_taken: dict[str, tuple] = {}  # lock -> a label taking it in interrupt context
        self.irqs_on_taken: dict[str, tuple] = {}  # lock -> a label taking it in task context, irqs on
        self.unbalanced: tuple | None = None
        # Set by a parallel search before each event: the place of the
        # transition in the sequential order, so that workers' first events
        # merge into the sequential search's first events (``absorb``).
        self.key: tuple | None = None
        self.keys: dict[tuple, tuple | None] = {}

    def on_transition(self, s: tuple, label: tuple, t: tuple) -> None:
        ai, cpu, _ = label
        if cpu is None:
            return
        for n, pos in self.locks:  # irq-safety: who takes each lock, in which context
            if t[pos] == cpu and s[pos] != cpu:
                if ai in self.irq_actions:
                    if n not in self.irq_taken:
                        self.irq_taken[n] = label
                        self.keys["irq_taken", n] = self.key
                elif self.irqs and not any(s[p][cpu] for p in self.irqs):
                    if n not in self.irqs_on_taken:
                        self.irqs_on_taken[n] = label
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
                            if not self.order.has_edge(h, n):
                                self.order.add_edge(h, n, action=ai, state=s, label=label)
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

    # -- merging the records of parallel workers ------------------------------
    def record(self) -> dict[tuple, tuple]:
        """Every first event with its key, picklable (states as plain tuples)."""
        out: dict[tuple, tuple] = {}
        for ev, key in self.keys.items():
            if ev[0] == "edge":
                attrs = dict(self.order.edges[ev[1], ev[2]])
                attrs["state"] = tuple(attrs["state"])
                value: Any = attrs
            elif ev[0] in ("irq_taken", "irqs_on_taken"):
                value = getattr(self, ev[0])[ev[1]]
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
                self.order.add_edge(ev[1], ev[2], **value)
            elif ev[0] in ("irq_taken", "irqs_on_taken"):
                getattr(self, ev[0])[ev[1]] = value
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

    def finish(self, trace_to: Any) -> None:
        """Raise SpecError for a broken rule; ``trace_to(state)`` gives the
        shortest trace to a state (to find where the context became atomic)."""
        m = self.model
        if len(self.locks) >= 2:
            try:
                cycle = nx.find_cycle(self.order)
            except nx.NetworkXNoCycle:
                cycle = None
            if cycle:
                places = []
                for a, b, *_ in cycle:
                    edge = self.order.edges[a, b]
                    act = m.actions[edge["action"]].info
                    places.append(f"{b} taken while holding {a} in {m.cls.__name__}.{act.name} on "
                                  f"cpu{edge['label'][1]} ({act.file}:{act.line})")
                raise SpecError(f"{m.cls.__name__}: inconsistent lock order (a possible deadlock, as lockdep "
                                f"reports it): " + "; but ".join(places), file=m.info.file, line=m.info.line)
        for n, irq_label in self.irq_taken.items():
            on = self.irqs_on_taken.get(n)
            if on is not None:
                a, b = m.actions[irq_label[0]].info, m.actions[on[0]].info
                raise SpecError(f"{m.cls.__name__}: {n} is taken in interrupt context by {a.name} "
                                f"({a.file}:{a.line}) and with interrupts on by {b.name} ({b.file}:{b.line}) "
                                f"on cpu{on[1]}: an interrupt on that CPU can deadlock on it (take it with "
                                f"spin_lock_irqsave)", file=b.file, line=b.line)
        restored = m.info.properties.get("context_restored")
        if self.unbalanced is not None and not (restored is not None and restored.expect == "violated"):
            # (a bug spec that expects it violated gets the property's verdict and trace instead)
            s, cpu, var, v = self.unbalanced
            steps, final = trace_to(s)
            since = self._since(steps, cpu)
            raise SpecError(f"{m.cls.__name__}: cpu{cpu} finishes with {var} = {v}: a return path does not "
                            f"restore it" + (f"; it was set by {since}" if since else ""),
                            file=m.info.file, line=m.info.line)
        if self.sleep_violation is not None:
            s, label, why = self.sleep_violation
            act = m.actions[label[0]].info
            steps, final = trace_to(s)
            # Under symmetry the stored state is a renaming of the trace's last
            # state: find the CPU that plays the sleeper's part there.
            cpu = next((lab[1] for lab, _ in m.successors(final)
                        if lab[0] == label[0] and self._atomic(final, lab[1]) is not None), label[1])
            since = self._since(steps, cpu)
            raise SpecError(f"{m.cls.__name__}.{act.name} ({act.file}:{act.line}) may sleep but cpu{cpu} {why}"
                            + (f", since {since}" if since else "")
                            + " (\"BUG: sleeping function called from invalid context\")",
                            file=act.file, line=act.line)

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
