# SPDX-License-Identifier: GPL-2.0-only
"""The kernel's execution model: tasks apart from CPUs, and the scheduler between them.

A spec that declares a ``Task`` role (``workers = Task("ntasks", cpus="cpus")``)
gets, from this module, what the kernel provides without the code under
check asking for it:

- parameters ``preemptions`` (K: preemptions in a run, -1 for no bound),
  ``migrations`` (M, likewise) and ``preempt`` (the preemption model,
  ``CONFIG_PREEMPT``/``_VOLUNTARY``/``_NONE``/``_RT``: full, voluntary,
  none, rt; default full), unless the spec declares them itself;
- variables ``task_cpu`` (per task: the CPU it is on, ``task_cpu(p)``),
  ``curr`` (per CPU: the task it runs, ``rq->curr``; NOBODY when idle)
  and the ghosts ``preemptions_done`` and ``migrations_done``;
- the rules, as guards on the spec's own steps:

  1. a task's step runs only while its CPU runs it
     (``curr[task_cpu[t]] == t``);
  2. a hard-irq handler (``@action(irq=True)``, on a CPU) runs only while the
     task its CPU runs has interrupts on; a handler is one step, so it runs
     with interrupts off and never nests;
  3. a softirq handler (``softirq=True``) runs on irq exit where the
     interrupted task has interrupts and bottom halves on, and on PREEMPT_RT
     in ksoftirqd, so only where that task could be switched out;

- and two steps of its own, appended after the spec's actions:

  ``schedule(cpu, to)``: the CPU switches to task ``to`` (on that CPU, with a
  step to take). From an idle CPU, or from a task with no step to take (it
  waits: it blocked, spins or finished), the switch is free. Otherwise it is
  a preemption: allowed where the current task is not atomic (its
  ``PREEMPT_COUNT`` and ``IRQS_OFF`` variables are 0, it holds no spinlock
  (a ``spinlock_t`` is a sleeping lock on rt)), and by the model: anywhere
  on full and rt, only before a step marked ``sleeps=True`` (``might_sleep``
  is a ``might_resched`` point) on voluntary, never on none; and counted,
  at most K in a run. A task that waits with preemption off keeps its CPU:
  the tasks behind it wait too (a deadlock when it waits for one of them).

  ``migrate(t, dest)``: task ``t`` (not pinned, with a step to take) moves
  to CPU ``dest``: where it could be switched out and its
  ``MIGRATE_DISABLED`` variables are 0 (on rt a held ``spinlock_t`` also
  disables migration); a queued task on any model, a running one as a
  preemption would allow. Its old CPU goes idle if it ran there; it runs on
  ``dest`` at once if ``dest`` is idle, else it waits there for a switch.
  At most M in a run.

Tasks and CPUs share one numbering (the roles in declaration order), so a
``Lock`` holds the id of the task holding it, ``CpuId`` values may name a
task, and CPU and task symmetry permute the one numbering
(``checker.explore.symmetry``). A verdict reached with a finite bound is
reported as bounded (``bounds_note``).
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import TYPE_CHECKING, Any

from checker.errors import SpecError
from checker.expr import And, If, Not, Or, Select
from checker.kernel.context import _BhOff, _IrqsOff, _MigrateDisabled, _PreemptCount
from checker.language.declare import DISABLED, ActionInfo, Ghost, Lock, Param, PerCpu, Task, when
from checker.types import NOBODY, CpuIdType, Enum

if TYPE_CHECKING:
    from checker.language.compile import Model

#: The preemption models (Kconfig PREEMPT, PREEMPT_VOLUNTARY, PREEMPT_NONE, PREEMPT_RT).
PREEMPT = Enum("full", "voluntary", "none", "rt", name="preempt")

TASK_CPU, CURR, PREEMPTED, MIGRATED = "task_cpu", "curr", "preemptions_done", "migrations_done"
#: The names this module adds to a spec with tasks.
BUILTIN_VARS = (TASK_CPU, CURR, PREEMPTED, MIGRATED)


class _TaskIdType(CpuIdType):
    """A task id or NOBODY (in the one numbering of CPUs and tasks: permuted by symmetry)."""

    def show(self, v: int) -> str:
        return "-" if v == NOBODY else f"task{v}"


TaskId = _TaskIdType("task_id", None, True)


def task_roles(si: Any) -> dict[str, Task]:
    """The spec's task roles (``Task``), by name."""
    return {n: r for n, r in si.roles.items() if isinstance(r, Task)}


def add_task_model(si: Any, cls: type) -> None:
    """At class creation: the parameters, variables, guards and scheduler steps of a spec with tasks."""
    from checker.language.declare import PerTask
    from checker.language.model import decl_line

    roles = task_roles(si)
    for n, v in si.vars.items():
        if isinstance(v, PerTask) and v.role not in roles:
            known = ", ".join(roles) or '(none: declare one, e.g. workers = Task("ntasks", cpus="cpus"))'
            raise SpecError(f"{cls.__name__}.{n} is PerTask(role={v.role!r}), which is not a Task role; the task "
                            f"roles are: {known}", file=si.file, line=decl_line(cls, n))
    if not roles:
        return

    def fail(msg: str, name: str | None = None) -> SpecError:
        return SpecError(f"{cls.__name__}: {msg}", file=si.file, line=decl_line(cls, name) if name else si.line)

    cpu_roles = {r.cpus for r in roles.values()}
    for n, r in roles.items():
        if r.cpus not in si.roles or isinstance(si.roles[r.cpus], Task):
            cpus = ", ".join(k for k, v in si.roles.items() if not isinstance(v, Task))
            hint = cpus or '(none: declare one, e.g. cpus = Role("ncpus", symmetric=True))'
            raise fail(f"task role {n!r} runs on cpus={r.cpus!r}, which is not a CPU role; the CPU roles are: "
                       f"{hint}", n)
    if len(cpu_roles) > 1:
        raise fail(f"its task roles run on different CPU roles ({', '.join(sorted(cpu_roles))}); give them one "
                   f"CPU role: tasks of one kernel share its CPUs")
    cpu_role = next(iter(cpu_roles))
    for name, default in (("preemptions", Param(1, domain=range(-1, 65), doc="preemptions in a run (-1: no bound)")),
                          ("migrations", Param(0, domain=range(-1, 65), doc="migrations in a run (-1: no bound)")),
                          ("preempt", Param(PREEMPT.full, domain=PREEMPT,
                                            doc="the preemption model: full, voluntary, none or rt"))):
        if name not in si.params:
            default.name, default.owner = name, cls
            si.params[name] = default
    for n in BUILTIN_VARS:
        if n in si.vars:
            raise fail(f"declares {n!r}, which the task model provides (the scheduler's own state); rename it", n)

    def placement(p: Any) -> tuple[list[int], list[int]]:
        """Task i of the roles, in order, on the (i % ncpus)-th CPU; each CPU runs its first task."""
        total = p.ncpus_total
        on, curr = [NOBODY] * total, [NOBODY] * total
        cpus = list(getattr(p, cpu_role))
        if not cpus:
            return on, curr
        i = 0
        for rn in roles:
            for t in getattr(p, rn):
                c = cpus[i % len(cpus)]
                on[t] = c
                if curr[c] == NOBODY:
                    curr[c] = t
                i += 1
        return on, curr

    def declare(name: str, var: Any) -> None:
        var.name, var.owner = name, cls
        si.vars[name] = var

    declare(TASK_CPU, PerCpu(lambda p: placement(p)[0], type=CpuIdType("cpu_id", None, True),
                             doc="task_cpu(p): the CPU the task is on"))
    declare(CURR, PerCpu(lambda p: placement(p)[1], type=TaskId, doc="rq->curr: the task the CPU runs"))
    declare(PREEMPTED, Ghost(0, doc="preemptions so far"))
    declare(MIGRATED, Ghost(0, doc="migrations so far"))

    ctx = {n: v for n, v in si.vars.items() if v.kind == "percpu"}
    irq_task = [n for n, v in ctx.items() if isinstance(v.type, _IrqsOff) and v.role in roles]
    irq_cpu = [n for n, v in ctx.items() if isinstance(v.type, _IrqsOff) and v.role not in roles]
    bh_task = [n for n, v in ctx.items() if isinstance(v.type, _BhOff) and v.role in roles]
    for name, a in list(si.actions.items()):
        if a.builtin:
            continue
        if a.role in roles:
            if a.irq or a.softirq:
                raise SpecError(f"{cls.__name__}.{name}: an interrupt handler runs on a CPU, not in a task; "
                                f"give it role={cpu_role!r}", file=a.file, line=a.line)
            si.actions[name] = _guarded(a, _on_cpu)
        elif a.role == cpu_role and (a.irq or a.softirq):
            atomic = ([n for n, v in ctx.items() if isinstance(v.type, (_IrqsOff, _PreemptCount)) and v.role in roles],
                      [(n, v.raw) for n, v in si.vars.items() if isinstance(v, Lock) and v.spinlock])
            si.actions[name] = _guarded(a, _irq_guard(irq_task, irq_cpu, bh_task if a.softirq else None,
                                                      atomic if a.softirq else None))
    tasks_of = lambda p: tuple(t for rn in roles for t in getattr(p, rn))  # noqa: E731
    for name, fn, role, choose, doc in (
            ("schedule", _schedule, cpu_role, {"to": tasks_of},
             "__schedule(): the CPU switches to another task (a preemption, or a switch from a waiting task)"),
            *((("migrate" if len(roles) == 1 else f"migrate_{rn}"), _migrate, rn,
               {"dest": (lambda p, _c=cpu_role: tuple(getattr(p, _c)))},
               "the scheduler moves the task to another CPU (load balancing, set_cpus_allowed)")
              for rn, r in roles.items() if not r.pinned)):
        if name in si.actions:
            raise fail(f"declares an action {name!r}, which is the scheduler's step in the task model; rename it",
                       name)
        si.actions[name] = ActionInfo(name, fn, role, tuple(choose.items()), doc, __file__,
                                      inspect.getsourcelines(fn)[1], builtin=True)


def _guarded(a: ActionInfo, guard: Any) -> ActionInfo:
    fn = a.fn

    def step(s: Any, who: Any, *args: Any, _fn: Any = fn) -> Any:
        r = _fn(s, who, *args)
        if r is DISABLED or r.__class__ is not type(DISABLED):
            return r
        return when(And(guard(s, who), r.guard), **r.updates)

    step.__countercheck_irq_guarded__ = True  # type: ignore[attr-defined]
    step.__wrapped__ = fn  # type: ignore[attr-defined]
    step.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return dataclasses.replace(a, fn=step)


def _on_cpu(s: Any, t: Any) -> Any:
    """Rule 1: the task's CPU runs it."""
    return Select(s.curr, Select(s.task_cpu, t)) == t


def _irq_guard(irq_task: list[str], irq_cpu: list[str], bh_task: list[str] | None,
               atomic: tuple[list[str], list[tuple[str, bool]]] | None) -> Any:
    """Rules 2 and 3: the handler runs only where the CPU's task has interrupts (and, for a softirq, bottom
    halves) on; on rt a softirq runs in ksoftirqd, so only where that task could be switched out."""
    def guard(s: Any, c: Any) -> Any:
        cur = s.curr[c]
        idle = cur == NOBODY
        conds = [getattr(s, v)[c] == 0 for v in irq_cpu]
        conds += [If(idle, True, Select(getattr(s, v), cur) == 0) for v in irq_task + (bh_task or [])]
        if atomic is not None and s.preempt == PREEMPT.rt:
            ctx, locks = atomic
            conds += [If(idle, True, Select(getattr(s, v), cur) == 0) for v in ctx]
            conds += [If(idle, True, getattr(s, n) != cur) for n, raw in locks if raw]
        return And(*conds) if conds else True

    return guard


def _schedule(s: Any, c: int, to: int) -> Any:
    """__schedule(): the CPU switches to task ``to``; a preemption when the task it leaves could go on."""
    return s._countercheck_model.scheduler.schedule(s, c, to)


def _migrate(s: Any, t: int, dest: int) -> Any:
    """The scheduler moves the task to CPU ``dest`` (load balancing; a running task is preempted first)."""
    return s._countercheck_model.scheduler.migrate(s, t, dest)


class Scheduler:
    """The scheduler's steps at one parameter point (concrete states: the explorer and the simulator)."""

    def __init__(self, model: "Model"):
        si = model.info
        self.model = model
        roles = task_roles(si)
        self.task_roles = tuple(roles)
        self.tasks = tuple(t for n in roles for t in model.roles[n])
        self.task_set = frozenset(self.tasks)
        self.pinned = frozenset(t for n, r in roles.items() if r.pinned for t in model.roles[n])
        self.cpus = tuple(model.roles[next(iter(roles.values())).cpus])
        idx = model.index
        self.p_cpu, self.p_curr, self.p_pre, self.p_mig = (idx[n] for n in BUILTIN_VARS)

        def positions(kind: type, per_task: bool) -> tuple[int, ...]:
            return tuple(idx[n] for n, v in model.vars.items()
                         if n in model.percpu and isinstance(v.type, kind) and (v.role in roles) == per_task)

        self.t_atomic = positions(_IrqsOff, True) + positions(_PreemptCount, True)
        self.c_atomic = positions(_IrqsOff, False) + positions(_PreemptCount, False)
        self.t_migrate = positions(_MigrateDisabled, True)
        self.locks = tuple((idx[n], v.raw) for n, v in model.vars.items()
                           if isinstance(v, Lock) and v.spinlock and n not in model.tupled)
        p = model.params
        self.kind = p.preempt
        self.rt = self.kind == PREEMPT.rt
        self.K, self.M = p.preemptions, p.migrations
        self.task_actions: list = []  # filled by the model once its actions are compiled
        self._state: Any = None
        self._runnable: dict[int, bool] = {}
        self._sleeps: dict[int, bool] = {}
        self._sym_state: Any = None
        self._sym: dict[tuple, Any] = {}

    # -- what the scheduler asks of a task --------------------------------------------------
    def atomic(self, s: tuple, t: int) -> bool:
        """The task cannot be switched out: interrupts or preemption off, or a spinlock held."""
        for pos in self.t_atomic:
            if s[pos][t]:
                return True
        if self.c_atomic:
            c = s[self.p_cpu][t]
            if s[self.p_curr][c] == t and any(s[pos][c] for pos in self.c_atomic):
                return True
        for pos, raw in self.locks:
            if s[pos] == t and (raw or not self.rt):
                return True
        return False

    def _scan(self, s: tuple, t: int) -> None:
        """Whether ``t`` has a step to take were its CPU running it, and whether one of them sleeps."""
        if self._state is not s:
            self._state, self._runnable, self._sleeps = s, {}, {}
        if t in self._runnable:
            return
        c = s[self.p_cpu][t]
        x = s
        if s[self.p_curr][c] != t:
            row = list(s)
            cur = list(s[self.p_curr])
            cur[c] = t
            row[self.p_curr] = tuple(cur)
            x = self.model.state_cls(row)
        role = self.model.role_of(t)
        run = sleep = False
        fire = self.model.fire
        for act in self.task_actions:
            if act.info.role != role:
                continue
            for args in act.choices:
                if fire(x, act, t, args) is not None:
                    run = True
                    sleep = sleep or act.info.sleeps
                    break
            if sleep:
                break
        self._runnable[t], self._sleeps[t] = run, sleep

    def runnable(self, s: tuple, t: int) -> bool:
        self._scan(s, t)
        return self._runnable[t]

    def at_resched_point(self, s: tuple, t: int) -> bool:
        """The task's next step may sleep: ``might_sleep()``, a voluntary preemption point."""
        self._scan(s, t)
        return self._sleeps[t]

    def _preemptible_here(self, s: tuple, t: int) -> bool:
        """The preemption model allows switching the running task ``t`` out here."""
        if self.kind == PREEMPT.none:
            return False
        if self.kind == PREEMPT.voluntary:
            return self.at_resched_point(s, t)
        return True

    # -- the steps -------------------------------------------------------------------
    def schedule(self, s: tuple, c: int, to: int) -> Any:
        if s[self.p_pre].__class__ is not int:
            return self._schedule_sym(s, c, to)
        on, curr = s[self.p_cpu], s[self.p_curr]
        t = curr[c]
        if on[to] != c or t == to or not self.runnable(s, to):
            return DISABLED
        if t == NOBODY:
            return when(True, curr={c: to})
        if self.atomic(s, t):
            return DISABLED
        if not self.runnable(s, t):  # it waits (blocked, spinning, done): schedule() picks the next
            return when(True, curr={c: to})
        n = s[self.p_pre]
        if not self._preemptible_here(s, t) or (self.K >= 0 and n >= self.K):
            return DISABLED
        # no bound: no count either (it would grow without bound, and nothing reads it)
        return when(True, curr={c: to}, **({PREEMPTED: n + 1} if self.K >= 0 else {}))

    def migrate(self, s: tuple, t: int, dest: int) -> Any:
        if s[self.p_pre].__class__ is not int:
            return self._migrate_sym(s, t, dest)
        on, curr = s[self.p_cpu], s[self.p_curr]
        c = on[t]
        n = s[self.p_mig]
        if dest == c or t in self.pinned or (self.M >= 0 and n >= self.M):
            return DISABLED
        if self.atomic(s, t) or any(s[pos][t] for pos in self.t_migrate):
            return DISABLED
        if self.rt and any(s[pos] == t for pos, raw in self.locks):
            return DISABLED  # rt's spin_lock() on a spinlock_t does migrate_disable()
        if not self.runnable(s, t):
            return DISABLED
        running = curr[c] == t
        if running and not self._preemptible_here(s, t):
            return DISABLED
        moved = {c: NOBODY} if running else {}
        if curr[dest] == NOBODY:
            moved[dest] = t
        return when(True, task_cpu={t: dest}, **({CURR: moved} if moved else {}),
                    **({MIGRATED: n + 1} if self.M >= 0 else {}))

    # -- the same steps on symbolic states (the Z3 backend, per-N: CPU and task ids concrete) ------------
    def _guards(self, x: tuple, u: int, sleeping: bool = False) -> Any:
        """Some step of task ``u`` (one that may sleep, with ``sleeping``) is enabled in ``x``."""
        role = self.model.role_of(u)
        out = []
        for act in self.task_actions:
            if act.info.role != role or (sleeping and not act.info.sleeps):
                continue
            for args in act.choices:
                r = act.info.fn(x, u, *args)
                if r is not DISABLED:
                    out.append(r.guard)
        return Or(*out) if out else False

    def _with_curr(self, s: tuple, cpu: Any, u: int) -> tuple:
        """``s`` with CPU ``cpu`` (maybe a term) running task ``u``."""
        row = list(s)
        row[self.p_curr] = tuple(If(cpu == k, u, v) for k, v in enumerate(s[self.p_curr]))
        return self.model.state_cls(row)

    def _atomic_sym(self, s: tuple, u: int) -> Any:
        on, curr = s[self.p_cpu], s[self.p_curr]
        conds = [s[pos][u] != 0 for pos in self.t_atomic]
        conds += [And(Select(curr, on[u]) == u, Select(s[pos], on[u]) != 0) for pos in self.c_atomic]
        conds += [s[pos] == u for pos, raw in self.locks if raw or not self.rt]
        return Or(*conds) if conds else False

    def _of_task(self, s: tuple, what: str, u: int) -> Any:
        """``_guards(s, u)`` (``what`` "runs"), ``_guards(s, u, sleeping=True)`` ("sleeps"), the same
        with ``u`` running on its CPU ("runs_on_its_cpu") or ``_atomic_sym(s, u)`` ("atomic") for the
        symbolic state ``s``, built once: a lowering asks them of the same state at every CPU's and task's
        scheduler step, and each runs every step of ``u``."""
        if self._sym_state is not s:
            self._sym_state, self._sym = s, {}
        key = (what, u)
        if key not in self._sym:
            if what == "atomic":
                self._sym[key] = self._atomic_sym(s, u)
            elif what == "runs_on_its_cpu":
                self._sym[key] = self._guards(self._with_curr(s, s[self.p_cpu][u], u), u)
            else:
                self._sym[key] = self._guards(s, u, sleeping=what == "sleeps")
        return self._sym[key]

    def _schedule_sym(self, s: tuple, c: int, to: int) -> Any:
        on, curr = s[self.p_cpu], s[self.p_curr]
        t = curr[c]
        others = [u for u in self.tasks if u != to]
        goes_on = Or(*[And(t == u, self._of_task(s, "runs", u)) for u in others]) if others else False
        atomic = Or(*[And(t == u, self._of_task(s, "atomic", u)) for u in others]) if others else False
        if self.kind == PREEMPT.none:
            here: Any = False
        elif self.kind == PREEMPT.voluntary:
            here = Or(*[And(t == u, self._of_task(s, "sleeps", u)) for u in others]) if others else False
        else:
            here = True
        n = s[self.p_pre]
        within = True if self.K < 0 else n < self.K
        # (with on[to] == c, running ``to`` on c is running it on its CPU: one term per task, not per CPU)
        guard = And(on[to] == c, t != to, self._of_task(s, "runs_on_its_cpu", to),
                    Or(t == NOBODY, And(Not(atomic), Or(Not(goes_on), And(here, within)))))
        counted = And(t != NOBODY, goes_on)
        return when(guard, curr={c: to}, **({PREEMPTED: If(counted, n + 1, n)} if self.K >= 0 else {}))

    def _migrate_sym(self, s: tuple, t: int, dest: int) -> Any:
        on, curr = s[self.p_cpu], s[self.p_curr]
        if t in self.pinned:
            return DISABLED
        c = on[t]
        n = s[self.p_mig]
        running = Select(curr, c) == t
        if self.kind == PREEMPT.none:
            here: Any = Not(running)
        elif self.kind == PREEMPT.voluntary:
            here = Or(Not(running), self._of_task(s, "sleeps", t))
        else:
            here = True
        conds = [c != dest, Not(self._of_task(s, "atomic", t)), here, self._of_task(s, "runs_on_its_cpu", t)]
        conds += [s[pos][t] == 0 for pos in self.t_migrate]
        if self.rt:
            conds += [s[pos] != t for pos, _raw in self.locks]
        if self.M >= 0:
            conds.append(n < self.M)
        moved = {k: If(And(running, c == k), NOBODY, curr[k]) for k in self.cpus if k != dest}
        moved[dest] = If(curr[dest] == NOBODY, t, curr[dest])
        return when(And(*conds), task_cpu={t: dest}, **{CURR: moved}, **({MIGRATED: n + 1} if self.M >= 0 else {}))

    # -- reporting --------------------------------------------------------------------
    def bounds_note(self) -> str | None:
        """"<= K preemptions, <= M migrations" for the bounds that cut runs off at this point, else None."""
        parts = []
        movable = len(self.cpus) >= 2 and any(t not in self.pinned for t in self.tasks)
        shared = len(self.tasks) > len(self.cpus) or (movable and self.M != 0 and len(self.tasks) >= 2)
        if shared and self.K >= 0 and self.kind != PREEMPT.none:
            parts.append(f"<= {self.K} preemption{'s' if self.K != 1 else ''}")
        if movable and self.M >= 0:
            parts.append(f"<= {self.M} migration{'s' if self.M != 1 else ''}")
        return ", ".join(parts) if parts else None


def has_tasks(si: Any) -> bool:
    """Whether the spec declares tasks (and so runs under the scheduler model)."""
    return bool(task_roles(si))

