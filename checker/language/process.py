# SPDX-License-Identifier: GPL-2.0-only
"""Process functions: a kernel function written as restricted Python, lowered to ordinary actions.

    @process(role="adders", calls="ops_left", args={"amount": (-1, 1)})
    def percpu_counter_add_batch(k, s, t, amount):
        count = k.this_cpu_read(s.local)
        while True:
            ...

A call ``k.<primitive>(...)`` (``checker.language.primitives``) is one atomic step, and so is a
``with k.atomic():`` block. At class creation the function's ``ast`` is read (``checker.language.cfg``) and
lowered, as PlusCal's translator does, to one ``@action`` per way through one step:

- Control points are the entry, each loop head reached after a step, each ``k.label("name")`` reached after a
  step, and the point before each step reached after a step. Local code (assignments, tests, ghost updates, ``k.assume``) joins the step it lies next to:
  the code before a step runs in it, and so does the code after the last step up to the next control point.
- A test of an ``if`` or ``while`` is never run as Python control flow on a state value: each way through a
  step is its own action, and the test (or its negation) is part of that action's guard. ``and``/``or``/``not``
  and ``x if c else y`` are rewritten to ``And``/``Or``/``Not``/``If``.
- The program counter is a generated per-CPU variable ``<role>_pc`` (an ``Enum``: ``idle``, ``done`` and the
  control points, ``<function>_L<line>``, lines counted from the ``def``); a local that is live at a control
  point is a generated register ``<role>_<name>``, reset to 0 wherever it is dead.
- Each action carries the memory-ordering annotations of its primitives, in program order, and of the plain
  accesses (``s.count += ...``) to variables some primitive treats as memory; its fairness is strong if it
  waits for a lock, weak if it starts inside a lock or an interrupts-off section, none otherwise, unless
  ``@process(fair=...)`` gives the function's steps their least fairness.

``x = k.choose(values)`` is a value chosen by the step it lies in, every one tried: an argument of each
generated action that passes it (values: constants, or an expression of the parameters and roles, never of the
state). ``k.might_sleep()`` marks its step ``sleeps`` (``@action(sleeps=True)``).

An ``irq=True`` process is an interrupt handler: it runs between any two steps of its CPU's task (where
interrupts are on). On a role whose other functions are task code it must be one step; on a role of handlers
only (the CPUs, with the tasks a ``Task`` role) it may take several, on that role's pc and registers, and the
tasks' ``runs=`` says that a task waits while its CPU's handler is inside (``specs/percpu_lazy.py``). ``calls="budget"`` makes every call decrement the per-CPU variable
``budget`` and return to ``idle`` (``calls=True``: return to ``idle`` with no budget, a callback called again
and again); without it the function runs once and ends in ``done``.
``at(s, t, "function", where)`` is true where CPU ``t`` is at a control point of the function. A subclass (a bug
spec) may redefine a process function by name: the functions of its role are lowered again in the subclass (one pc
and one set of registers per role), and the base's steps of that role are left out of it.

A primitive's memory is a spec variable, or a word the spec keeps as several variables (a class attribute with
``fields`` and a view: ``load(*fields)`` the value a load returns, ``store(value, me, *fields)`` the fields a
store leaves; ``percpu_lazy``'s ``c->v``): the code sees one value, the annotations name the word. A plain
access to it, ``s.c_v`` or ``s.c_v = v`` (C's ``c->v.counter = v``), goes through the same view and is annotated
as a plain load or store of the word (``specs/bugs/lazy_publish_plain_store.py``).
``k.address_dep(s.p, k.per_cpu(s.x, cpu))`` marks a load whose address came from this CPU's last load of ``p``.

On a ``Task`` role the function runs in tasks (``checker.kernel.tasks`` schedules them): the pc and the registers
are per task, ``this_cpu_*`` reach the CPU the task is on now (the scheduler's ``task_cpu``, named, not imported),
and the context primitives change the task's own ``IRQS_OFF``, ``PREEMPT_COUNT`` and ``MIGRATE_DISABLED``
variables, which the scheduler reads; a context primitive whose variable the spec lacks is refused.
"""
from __future__ import annotations

import ast
import copy
import functools
import inspect
import itertools
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from checker.errors import SpecError
from checker.expr import And, If, Not, Or, Select
from checker.language import cfg as C
from checker.language.declare import DISABLED, Between, Fill, Ghost, Lock, PerCpu, PerTask, Role, Step, Task, Var
from checker.language.primitives import PRIMITIVES, StepAccess
from checker.types import NOBODY, CpuIdType, Enum, Int


@dataclass(frozen=True)
class ProcessInfo:
    """What ``@process`` records about a function."""

    fn: Callable[..., Any]
    role: str
    calls: str | bool | None
    args: tuple[tuple[str, Any], ...]
    applies: Callable[[Any], bool] | None
    irq: bool
    runs: Callable[..., Any] | None
    fair: str | None = None
    returns: Callable[..., Any] | None = None


def process(fn: Callable | None = None, *, role: str, calls: str | bool | None = None, args: dict[str, Any] | None = None,
            applies: Callable[[Any], bool] | None = None, irq: bool = False,
            runs: Callable[..., Any] | None = None, fair: str | None = None,
            returns: Callable[..., Any] | None = None) -> Any:
    """Mark ``fn(k, s, cpu, *args)`` as a kernel function run by each CPU of ``role``, lowered to actions.

    ``calls`` names a per-CPU budget: each call takes one and returns to ``idle``; ``calls=True``: called
    again and again, with no budget (a callback: the guards of its first step say when); without it the
    function runs once. ``args`` maps each argument to the values to try (as ``@action``'s ``choose``). ``applies``
    keeps the function where it is true of the parameters (a variant). ``irq=True``: an interrupt handler of
    the role's CPUs, one step. ``runs(s, cpu)``: a condition every step taken with interrupts on needs
    (that no other task holds this CPU with interrupts off). ``fair``: the least fairness of every step
    (``"weak"``: the CPU running the function runs on; ``"strong"``: also a step whose guard waits, on a lock
    not in the primitive table or a ``k.assume``, is taken if enabled again and again), as PlusCal's ``fair``
    and ``fair+ process``; a spinlock's step stays strongly fair. ``returns(s, cpu, value)``: the observer of
    what ``return value`` returns (the caller's use is not modelled): the updates it gives (ghosts judging the
    value, as ``k.update`` takes them) are written in the step that returns."""
    if fair not in (None, "weak", "strong"):
        raise SpecError(f"@process(fair={fair!r}): fairness is None, 'weak' or 'strong'")

    def deco(f: Callable) -> Callable:
        f.__countercheck_process__ = ProcessInfo(f, role, calls, tuple((args or {}).items()), applies, irq, runs,
                                                 fair, returns)
        return f

    return deco(fn) if fn is not None else deco


# ---- the step context at run time -----------------------------------------------------------------------------

class _Disabled(Exception):
    """A guard of the step is false on concrete values: the rest of it need not run."""


class StepContext:
    """One firing of a generated action: reads see the step's own writes; writes and guards are collected."""

    __slots__ = ("state", "me", "this_cpu", "guards", "whole", "slots", "low")

    def __init__(self, state: Any, me: Any, low: "_Lowered"):
        self.state = state
        self.me = me
        self.low = low
        self.this_cpu = me if low.info.irq or low.role_cpu is None else low.role_cpu(state, me)
        self.guards: list[Any] = []
        self.whole: dict[str, Any] = {}
        self.slots: dict[str, list[list[Any]]] = {}

    nobody = NOBODY

    # -- reads and writes -----------------------------------------------------------------------------------
    def get(self, name: str) -> Any:
        if name in self.whole:
            return self.whole[name]
        base = getattr(self.state, name)
        if name in self.slots:
            if not isinstance(base, tuple):
                raise SpecError(f"{self.low.name}: {name} is read whole after a write to one of its slots in the "
                                f"same step; read the slot ({name}[cpu]) instead")
            return tuple(self.get_slot(name, i) for i in range(len(base)))
        return base

    def get_slot(self, name: str, i: Any) -> Any:
        w = self.whole.get(name)
        if w is not None:
            base = w.value if isinstance(w, Fill) else Select(w, i)
        else:
            seq = getattr(self.state, name)
            base = seq[i] if i.__class__ is int and isinstance(seq, tuple) and 0 <= i < len(seq) else Select(seq, i)
        for k, v in self.slots.get(name, ()):
            if k is i or (k.__class__ is int and i.__class__ is int):
                if k == i:
                    base = v
            else:
                base = If(i == k, v, base)
        return base

    def set(self, name: str, value: Any) -> None:
        self.slots.pop(name, None)
        self.whole[name] = value

    def set_slot(self, name: str, i: Any, value: Any) -> None:
        if name in self.whole:
            raise SpecError(f"{self.low.name}: a slot of {name} is written after the whole of it in one step")
        entries = self.slots.setdefault(name, [])
        for e in entries:
            if e[0] is i or (e[0].__class__ is int and i.__class__ is int and e[0] == i):
                e[1] = value
                return
        entries.append([i, value])

    def read(self, var: str, slot: Any) -> Any:
        w = self.low.words.get(var) if slot is None else None
        if w is not None:  # a word held as several variables: its value, as its view reads them
            return w.load(*[self.get(f) for f in w.fields])
        return self.get(var) if slot is None else self.get_slot(var, slot)

    def write(self, var: str, slot: Any, value: Any) -> None:
        w = self.low.words.get(var) if slot is None else None
        if w is not None:
            for f, x in zip(w.fields, w.store(value, self.me, *[self.get(f) for f in w.fields])):
                self.set(f, x)
            return
        if slot is None:
            self.set(var, value)
        else:
            self.set_slot(var, slot, value)

    def update(self, updates: dict[str, Any]) -> None:
        """k.update(helper(s)): write a helper's updates, as ``when(**updates)`` takes them."""
        for name, value in updates.items():
            if isinstance(value, dict):
                for i, v in value.items():
                    self.set_slot(name, i, v)
            else:
                self.set(name, value)

    def guard(self, cond: Any) -> None:
        if cond is False or (cond.__class__ is int and not cond):
            raise _Disabled
        if cond is not True:
            self.guards.append(cond)

    # -- context ----------------------------------------------------------------------------------------------
    def _ctx_slot(self) -> Any:
        # a task's interrupt state is saved and restored with the task (per task); a CPU's is the CPU's
        return self.me if self.low.task else self.this_cpu

    def irq_save(self) -> Any:
        v = self.low.irqs_var
        if v is None:
            return 0
        old = self.get_slot(v, self._ctx_slot())
        self.set_slot(v, self._ctx_slot(), 1)
        return old

    def irq_restore(self, flags: Any) -> None:
        v = self.low.irqs_var
        if v is not None:
            self.set_slot(v, self._ctx_slot(), flags)

    def preempt(self, d: int) -> None:
        v = self.low.preempt_var
        if v is not None:
            self.set_slot(v, self.me, self.get_slot(v, self.me) + d)

    def migrate(self, d: int) -> None:
        v = self.low.migrate_var
        if v is not None:
            self.set_slot(v, self.me, self.get_slot(v, self.me) + d)

    # -- what process code calls -------------------------------------------------------------------------------
    def call(self, name: str, var: str | None, *args: Any, outcome: str | None = None, at: Any = None) -> Any:
        effect = PRIMITIVES[name].effect
        kw = {"outcome": outcome} if outcome is not None else {}
        ctx = self if at is None else _Element(self, at)
        return effect(ctx, var, *args, **kw) if var is not None else effect(ctx, *args, **kw)

    def data_race(self, var: str) -> Any:
        return self.get(var)

    def any_cpu(self, var: str, choice: Any) -> Any:
        self.guard(self.get_slot(var, choice) == 0)
        self.set_slot(var, choice, 1)
        return choice

    def reg(self, name: str) -> Any:
        return self.get_slot(name, self.me)

    def finish(self, regs: dict[str, Any], pc: Any) -> Step:
        for name, value in regs.items():
            self.set_slot(name, self.me, value)
        if pc is not None:
            self.set_slot(self.low.pc_var, self.me, pc)
        updates: dict[str, Any] = dict(self.whole)
        for name, entries in self.slots.items():
            updates[name] = {k: v for k, v in entries}
        g = self.guards
        return Step(g[0] if len(g) == 1 else And(*g) if g else True, updates)


class _Element:
    """A step context seen through one element of an Array: a primitive on ``s.v[i]`` (``&item[i].count``)
    reads and writes ``v[i]`` where it would read and write all of a shared ``v``."""

    __slots__ = ("ctx", "at")

    def __init__(self, ctx: StepContext, at: Any):
        self.ctx, self.at = ctx, at

    def read(self, var: str, slot: Any) -> Any:
        return self.ctx.get_slot(var, self.at if slot is None else slot)

    def write(self, var: str, slot: Any, value: Any) -> None:
        self.ctx.set_slot(var, self.at if slot is None else slot, value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ctx, name)


#: The scheduler's variable holding the CPU each task is on (``task_cpu(p)``, declared by checker.kernel.tasks
#: for a spec with a Task role): named here, not imported, so the language stays below the kernel layer.
TASK_CPU = "task_cpu"


def _on_task_cpu(s: Any, t: Any) -> Any:
    """The CPU task ``t`` is on now: what its this_cpu_* and raw_cpu_* resolve through."""
    on = getattr(s, TASK_CPU)
    return on[t] if t.__class__ is int and isinstance(on, tuple) else Select(on, t)


# ---- lowering --------------------------------------------------------------------------------------------------

@dataclass
class Point:
    """A control point: where a CPU can be between two steps of the function."""

    node: int | None  # None: idle or done (outside the function)
    label: str
    line: int  # counted from the def (1)
    prim: str | None
    irqs: int | None = 0  # interrupts-off depth, None where the ways in disagree
    locks: frozenset[str] | None = frozenset()


@dataclass
class _Path:
    items: list[tuple[str, Any]]  # ("node", id) or ("test", (id, truth))
    dest: int | None  # a node id, or None for the exit
    first_step: int | None = None
    choices: list[str] = field(default_factory=list)


class _Lowered:
    """One process function's lowering state, shared by its actions."""

    def __init__(self, cls: type, name: str, info: ProcessInfo, g: C.Graph, decls: dict[str, Any],
                 roles: dict[str, Role], words: dict[str, Any] | None = None):
        self.cls, self.name, self.info, self.g, self.decls = cls, name, info, g, decls
        self.words = words or {}
        role = roles.get(info.role)
        if role is None:
            raise SpecError(f"{cls.__name__}.{name}: @process(role={info.role!r}) names no role of the spec "
                            f"(its roles: {', '.join(roles) or 'none'})", file=g.file, line=g.def_line)
        #: a Task role's functions run in tasks the scheduler moves (checker.kernel.tasks): this_cpu is the
        #: CPU the task is on now, its context (irqs, preempt_count, migrate_disable) is the task's own
        self.task = isinstance(role, Task)
        self.role_cpu = _on_task_cpu if self.task else role.cpu
        self.roles = roles
        self.runs = info.runs
        self.reset: dict[str, int] = {}  # a register's value where it is dead, by local
        self.pc_var = f"{info.role}_pc"
        self.has_pc = True  # set by the role's lowering: False where no function of the role has a control point
        self.own_pc = True  # False: a one-step interrupt handler on a role whose pc is its tasks' (it leaves it be)
        self.irqs_var = self._context_var("irqs_off")
        self.preempt_var = self._context_var("preempt_count")
        self.migrate_var = self._context_var("migrate_disabled")
        if self.task:
            self._check_task_context()

    def _check_task_context(self) -> None:
        """On a task the scheduler reads the context from the task's variables: a primitive that changes one
        the spec does not declare would be silently lost, so say which to declare."""
        need = {"irqs": ("irqs_var", "IRQS_OFF", "irqs"), "preempt": ("preempt_var", "PREEMPT_COUNT", "pcount"),
                "migrate": ("migrate_var", "MIGRATE_DISABLED", "pinned_now")}
        for n in sorted(self.g.nodes, key=lambda n: n.line):
            if n.kind != "prim":
                continue
            for c in ast.walk(n.stmt):
                if not (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in PRIMITIVES
                        and isinstance(c.func.value, ast.Name) and c.func.value.id == self.g.k):
                    continue
                p = PRIMITIVES[c.func.attr]
                for field_, (attr, typ, example) in need.items():
                    if getattr(p, field_) and getattr(self, attr) is None:
                        raise SpecError(
                            f"process function {self.name}: k.{p.name}() changes the task's {typ.lower()} context, "
                            f"and role {self.info.role!r} has no variable for it; declare one, e.g. "
                            f"`{example} = PerTask(0, type={typ}, role={self.info.role!r})`",
                            file=self.g.file, line=c.lineno)

    def _context_var(self, type_name: str) -> str | None:
        for n, v in self.decls.items():
            if isinstance(v, PerCpu) and getattr(v.type, "name", None) == type_name and v.role == self.info.role:
                return n
        return None


def _decided(test: ast.expr, facts: dict[str, bool]) -> bool | None:
    """A test this way has already decided: a constant, or a try_cmpxchg's flag (``ok``, ``not ok``)."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name) and test.id in facts:
        return facts[test.id]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decided(test.operand, facts)
        return None if inner is None else not inner
    return None


def _outcome_flag(st: ast.AST) -> str | None:
    """The name ``ok`` of ``ok, old = k.try_cmpxchg(...)``, which each outcome's way knows the value of."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple) \
            and st.targets[0].elts and isinstance(st.targets[0].elts[0], ast.Name):
        return st.targets[0].elts[0].id
    return None


def _rel(g: C.Graph, line: int) -> int:
    return line - g.def_line + 1


def _paths(low: _Lowered, start: int) -> list[_Path]:
    """Every way from the control point at ``start`` through one step to the next control point."""
    g = low.g
    out: list[_Path] = []

    def err(line: int, what: str, instead: str) -> SpecError:
        return SpecError(f"process function {low.name}: {what}; write instead: {instead}", file=g.file, line=line)

    def walk(i: int, stepped: bool, depth: int, items: list, heads: frozenset[int], first: int | None,
             moved: bool = True, known: tuple = ()) -> None:
        if len(out) > 256:
            raise err(g.nodes[start].line, "more than 256 ways through one step", "fewer branches between steps, "
                      "or a step (a primitive) between them")
        n = g.nodes[i]
        facts = dict(known)  # locals known true or false on this way: the outcome of a try_cmpxchg
        if n.kind == "exit":
            out.append(_Path(items, None, first))
            return
        if n.kind == "branch":
            if n.loop:
                if i != start or moved:
                    if stepped:
                        out.append(_Path(items, i, first))
                        return
                    if i in heads:
                        raise err(n.line, "a loop with no step on some way round: it would spin inside one step",
                                  "a primitive (a step) in every way through the loop body, or `k.assume(cond)` "
                                  "to wait for cond")
                heads = heads | {i}
            test = n.stmt
            decided = _decided(test, facts)
            if decided is not None:
                walk(n.next if decided else n.other, stepped, depth, items, heads, first, True, known)
                return
            walk(n.next, stepped, depth, items + [("test", (i, True))], heads, first, True, known)
            if n.other is not None:
                walk(n.other, stepped, depth, items + [("test", (i, False))], heads, first, True, known)
            return
        # a context-only primitive joins a step next to it: one that disables (local_irq_save, preempt_disable)
        # the step after it, so a control point lies before it; one that enables, the step before it
        joins = n.joins if n.kind == "prim" and depth == 0 else None
        if joins == "next" and not stepped:
            pass
        elif joins == "prev" and stepped:
            pass
        elif n.kind in ("prim", "atomic_in") and depth == 0:
            if stepped:
                out.append(_Path(items, i, first))
                return
            first = i
            stepped = True
        if n.kind == "atomic_in":
            walk(n.next, stepped, depth + 1, items, heads, first, True, known)
        elif n.kind == "atomic_out":
            walk(n.next, stepped, depth - 1, items, heads, first, True, known)
        else:
            for name in n.defs:
                facts.pop(name, None)
            outcomes = PRIMITIVES[n.prim].outcomes if n.kind == "prim" and n.prim in PRIMITIVES else ()
            if not outcomes:
                walk(n.next, stepped, depth, items + [("node", i)], heads, first, True, tuple(facts.items()))
                return
            flag = _outcome_flag(n.stmt)
            for o in outcomes:
                f = dict(facts)
                if flag is not None:
                    f[flag] = o == outcomes[0]
                walk(n.next, stepped, depth, items + [("node", i, o)], heads, first, True, tuple(f.items()))

    walk(start, False, 0, [], frozenset(), None, False)
    return out


class _Rewrite(ast.NodeTransformer):
    """Process code to step code: primitives through the context, state through it, Python logic to And/Or."""

    def __init__(self, low: _Lowered, choices: dict[str, str]):
        self.low = low
        self.k, self.s = low.g.k, low.g.s
        self.choices = choices  # local name -> the action argument it is chosen into
        self.outcome: str | None = None  # the outcome of the statement's primitive on this way

    def ctx(self, attr: str, *args: ast.expr) -> ast.Call:
        return ast.Call(ast.Attribute(ast.Name("__k", ast.Load()), attr, ast.Load()), list(args), [])

    def var_name(self, e: ast.expr) -> str:
        assert isinstance(e, ast.Attribute)
        return e.attr

    def visit_Call(self, c: ast.Call) -> Any:
        f = c.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == self.k:
            name = f.attr
            if name == "assume":
                return self.ctx("guard", self.visit(c.args[0]))
            if name == "update":
                return self.ctx("update", self.visit(c.args[0]))
            if name == "any_cpu":
                return self.ctx("any_cpu", ast.Constant(self.var_name(c.args[0])),
                                ast.Name(self.choices[_choice_key(c)], ast.Load()))
            if name == "choose":  # the value is the action's argument: its domain is the choose= of the action
                return ast.Name(self.choices[_choice_key(c)], ast.Load())
            if name == "address_dep":  # the load itself; the dependency is the memory models' (_Accesses)
                return self.visit(c.args[1])
            if name == "data_race":
                inner = c.args[0]
                if isinstance(inner, ast.Call):
                    return self.visit(inner)
                return self.ctx("data_race", ast.Constant(self.var_name(inner)))
            if name == "raw_smp_processor_id":
                return ast.Attribute(ast.Name("__k", ast.Load()), "this_cpu", ast.Load())
            p = PRIMITIVES[name]
            pos = C.var_position(name)
            if pos is not None:
                mem = c.args[pos]
                rest = [self.visit(a) for i, a in enumerate(c.args) if i != pos]
                if isinstance(mem, ast.Subscript):  # one element of an Array: s.item[i]
                    call = self.ctx("call", ast.Constant(name), ast.Constant(self.var_name(mem.value)), *rest)
                    call.keywords = [ast.keyword("at", self.visit(mem.slice))]
                    if p.outcomes:
                        call.keywords.append(ast.keyword("outcome", ast.Constant(self.outcome or p.outcomes[0])))
                    return call
                call = self.ctx("call", ast.Constant(name), ast.Constant(self.var_name(mem)), *rest)
            else:
                call = self.ctx("call", ast.Constant(name), ast.Constant(None), *[self.visit(a) for a in c.args])
            if p.outcomes:
                call.keywords = [ast.keyword("outcome", ast.Constant(self.outcome or p.outcomes[0]))]
            return call
        return self.generic_visit(c)

    def visit_BoolOp(self, e: ast.BoolOp) -> Any:
        fn = "And" if isinstance(e.op, ast.And) else "Or"
        return ast.Call(ast.Name(f"__{fn}", ast.Load()), [self.visit(v) for v in e.values], [])

    def visit_UnaryOp(self, e: ast.UnaryOp) -> Any:
        if isinstance(e.op, ast.Not):
            return ast.Call(ast.Name("__Not", ast.Load()), [self.visit(e.operand)], [])
        return self.generic_visit(e)

    def visit_IfExp(self, e: ast.IfExp) -> Any:
        return ast.Call(ast.Name("__If", ast.Load()), [self.visit(e.test), self.visit(e.body), self.visit(e.orelse)],
                        [])

    def visit_Compare(self, e: ast.Compare) -> Any:
        if len(e.ops) == 1:
            return self.generic_visit(e)
        parts, left = [], e.left
        for op, right in zip(e.ops, e.comparators):
            parts.append(ast.Compare(self.visit(left), [op], [self.visit(right)]))
            left = right
        return ast.Call(ast.Name("__And", ast.Load()), parts, [])

    def visit_Subscript(self, e: ast.Subscript) -> Any:
        if isinstance(e.value, ast.Attribute) and isinstance(e.value.value, ast.Name) \
                and e.value.value.id == self.s and isinstance(e.ctx, ast.Load):
            return self.ctx("get_slot", ast.Constant(e.value.attr), self.visit(e.slice))
        return self.generic_visit(e)

    def visit_Attribute(self, e: ast.Attribute) -> Any:
        if isinstance(e.value, ast.Name) and e.value.id == self.s and isinstance(e.ctx, ast.Load):
            if e.attr in self.low.words:  # a plain load of a word held as several variables: through its view
                return self.ctx("read", ast.Constant(e.attr), ast.Constant(None))
            return self.ctx("get", ast.Constant(e.attr))
        return self.generic_visit(e)

    def store(self, target: ast.expr, value: ast.expr) -> ast.stmt:
        """``target = value`` where target may be s.x or s.x[i]."""
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self.s:
            if target.attr in self.low.words:  # a plain store of such a word (c->v.counter = ...): its view
                return ast.Expr(self.ctx("write", ast.Constant(target.attr), ast.Constant(None), value))
            return ast.Expr(self.ctx("set", ast.Constant(target.attr), value))
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) \
                and isinstance(target.value.value, ast.Name) and target.value.value.id == self.s:
            return ast.Expr(self.ctx("set_slot", ast.Constant(target.value.attr), self.visit(target.slice), value))
        return ast.Assign([target], value)

    def statement(self, st: ast.stmt) -> list[ast.stmt]:
        if isinstance(st, ast.Expr):
            return [ast.Expr(self.visit(st.value))]
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            value = self.visit(st.value)
            if len(targets) == 1:
                return [self.store(targets[0], value)]
            tmp = ast.Name("__v", ast.Store())
            return [ast.Assign([tmp], value)] + [self.store(t, ast.Name("__v", ast.Load())) for t in targets]
        if isinstance(st, ast.AugAssign):
            t = st.target
            load = ast.fix_missing_locations(ast.copy_location(_as_load(t), t))
            value = ast.BinOp(self.visit(load), st.op, self.visit(st.value))
            return [self.store(t, value)]
        raise AssertionError(type(st))


def _as_load(t: ast.expr) -> ast.expr:
    if isinstance(t, ast.Name):
        return ast.Name(t.id, ast.Load())
    if isinstance(t, ast.Attribute):
        return ast.Attribute(t.value, t.attr, ast.Load())
    if isinstance(t, ast.Subscript):
        return ast.Subscript(t.value, t.slice, ast.Load())
    raise AssertionError(type(t))


class _Accesses(ast.NodeVisitor):
    """The memory accesses of a path's statements, in evaluation order, as the weak-memory models read them."""

    def __init__(self, low: _Lowered, memory: frozenset[str], choices: dict[str, str], chosen: list[str],
                 file: str | None):
        self.low, self.memory, self.choices, self.chosen, self.file = low, memory, choices, chosen, file
        self.k, self.s = low.g.k, low.g.s
        self.out: list[StepAccess] = []
        self.line = 0
        #: set by _emit: the step's parameters after the CPU, the registers live into it, its role; and the
        #: locals assigned so far in it (an element's index must not use one: it is placed by the state before)
        self.params: list[str] = []
        self.live_in: frozenset[str] = frozenset()
        self.role = ""
        self.assigned: set[str] = set()
        self.current: dict[str, int] = {}  # a chosen local -> the position of its latest choice among the arguments

    def slot_of(self, idx: ast.expr, line: int) -> Any:
        if isinstance(idx, ast.Name) and idx.id == self.low.g.cpu:
            return None
        if isinstance(idx, ast.Name) and idx.id in self.current:  # a CPU chosen in this step (k.any_cpu, k.choose)
            pos = self.current[idx.id]
            return lambda s, cpu, *ch, _p=pos: ch[_p]
        if isinstance(idx, ast.Name) and idx.id in self.params:  # an argument of the function, in its first step
            at = self.params.index(idx.id)
            return lambda s, cpu, *ch, _p=at: ch[_p]
        raise SpecError(f"process function {self.low.name}: the slot of this access is neither the acting CPU nor "
                        f"a CPU chosen in the same step (k.any_cpu, or an argument in the first step), so the memory "
                        f"models cannot place it",
                        file=self.file, line=line)

    def element_slot(self, idx: ast.expr, line: int) -> Callable[..., Any]:
        """The index of ``s.v[idx]`` as the memory models ask for it, ``slot(s, cpu, *arguments)``: the expression
        evaluated on the state before the step, its locals read from their registers."""
        names = {n.id for n in ast.walk(idx) if isinstance(n, ast.Name)} - {self.s}
        late = sorted(names & self.assigned)
        if late:
            raise SpecError(f"process function {self.low.name}: the element's index uses {', '.join(late)}, set "
                            f"earlier in the same step; the memory models place an access by the state before the "
                            f"step, so compute the index from values the step starts with", file=self.file, line=line)
        return _element_slot(self.low, idx, self.params, sorted(names & self.live_in), self.role)

    def add(self, kind: str, var: str, order: str, slot: Any = None, race_ok: bool = False,
            dep: bool | str = False) -> None:
        self.out.append(StepAccess(kind, var, order, slot, race_ok, dep, self.file, self.line))

    def visit_Call(self, c: ast.Call) -> None:
        f = c.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == self.k:
            name, race_ok, dep = f.attr, False, False
            while name in ("data_race", "address_dep"):  # wrappers of one primitive's load
                if name == "address_dep":
                    dep, c = c.args[0].attr, c.args[1]  # type: ignore[attr-defined]
                elif isinstance(c.args[0], ast.Call):
                    c, race_ok = c.args[0], True
                else:
                    self.add("load", c.args[0].attr, "plain", race_ok=True, dep=dep)  # type: ignore[attr-defined]
                    return
                name = c.func.attr  # type: ignore[attr-defined]
            if name == "choose":  # values of the parameters: no access
                return
            if name in ("assume", "any_cpu", "update", "raw_smp_processor_id"):
                for a in c.args[1:] if name == "any_cpu" else c.args:
                    self.visit(a)
                return
            p = PRIMITIVES[name]
            pos = C.var_position(name)
            for i, a in enumerate(c.args):
                if i != pos:
                    self.visit(a)
            mem = c.args[pos] if pos is not None else None
            var = None if mem is None else mem.value.attr if isinstance(mem, ast.Subscript) \
                else mem.attr  # type: ignore[attr-defined]
            slot = self.slot_of(c.args[1], c.lineno) if p.slot == "cpu" else None
            if isinstance(mem, ast.Subscript):
                self.visit(mem.slice)
                slot = self.element_slot(mem.slice, c.lineno)
            for kind, order in p.access:
                self.add(kind, var if kind != "fence" else None, order, slot, race_ok and kind == "load",
                         dep if kind == "load" else False)
            return
        self.generic_visit(c)

    def visit_Attribute(self, e: ast.Attribute) -> None:
        if isinstance(e.value, ast.Name) and e.value.id == self.s and e.attr in self.memory:
            self.add("load" if isinstance(e.ctx, ast.Load) else "store", e.attr, "plain")
            return
        self.generic_visit(e)

    def visit_Subscript(self, e: ast.Subscript) -> None:
        v = e.value
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == self.s \
                and v.attr in self.memory:
            self.visit(e.slice)
            self.add("load" if isinstance(e.ctx, ast.Load) else "store", v.attr, "plain",
                     self.slot_of(e.slice, e.lineno))
            return
        self.generic_visit(e)

    def statement(self, st: ast.stmt) -> None:
        self.line = st.lineno
        if isinstance(st, ast.AugAssign):
            self.visit(_as_load(st.target))
            self.visit(st.value)
            self.visit(st.target)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            self.visit(st.value)
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                self.visit(t)
            arg = self.choices.get(_choice_key(st.value)) if isinstance(st.value, ast.Call) else None
            if arg is not None:
                self.current[st.targets[0].id] = self.chosen.index(arg[len("__choice_"):])  # type: ignore[union-attr]
        else:
            self.visit(st)
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                self.assigned |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}

    def test(self, e: ast.expr, line: int) -> None:
        self.line = line
        self.visit(e)


def _element_slot(low: _Lowered, idx: ast.expr, params: list[str], regs: list[str], role: str) -> Callable[..., Any]:
    """``slot(s, cpu, *arguments)``: the index ``idx`` of an element access, on the state before the step."""
    g = low.g
    rw = _Rewrite(low, {})
    body: list[ast.stmt] = [
        ast.Assign([ast.Name("__k", ast.Store())], ast.Call(ast.Name("__Ctx", ast.Load()), [
            ast.Name("__state", ast.Load()), ast.Name(g.cpu, ast.Load()), ast.Name("__low", ast.Load())], [])),
        ast.Assign([ast.Name(g.s, ast.Store())], ast.Name("__state", ast.Load()))]
    body += [ast.Assign([ast.Name(r, ast.Store())], rw.ctx("reg", ast.Constant(f"{role}_{r}"))) for r in regs]
    body.append(ast.Return(rw.visit(_copy(idx))))
    fn = ast.FunctionDef(name="__slot", args=ast.arguments(posonlyargs=[], args=[ast.arg("__state"), ast.arg(g.cpu)] + [
        ast.arg(x) for x in params], kwonlyargs=[], kw_defaults=[], defaults=[]), body=body, decorator_list=[],
        returns=None)
    mod = ast.Module([fn], [])
    ast.copy_location(fn, idx)
    ast.fix_missing_locations(mod)
    for n in ast.walk(mod):
        if hasattr(n, "lineno") and (getattr(n, "end_lineno", None) or 0) < n.lineno:
            n.end_lineno = n.lineno
    ns = dict(low.info.fn.__globals__, **g.extra)
    ns.update({"__Ctx": StepContext, "__low": low, "__And": And, "__Or": Or, "__Not": Not, "__If": If})
    exec(compile(mod, g.file or "<process>", "exec"), ns)
    return ns["__slot"]


def _register_types(lw: _Lowered) -> dict[str, Any]:
    """The declared types of a function's locals (``cpu: CpuId = k.raw_smp_processor_id()``): a register holding a
    CPU is renamed with the CPUs by symmetry, and reset to NOBODY where it is dead."""
    out: dict[str, Any] = {}
    for n in lw.g.nodes:
        st = n.stmt
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            try:
                out[st.target.id] = eval(compile(ast.Expression(st.annotation), lw.g.file or "<process>", "eval"),
                                         dict(lw.info.fn.__globals__, **lw.g.extra))
            except Exception as e:
                raise SpecError(f"process function {lw.name}: the type of {st.target.id} "
                                f"({ast.unparse(st.annotation)}) is not a name the spec's module defines: {e}",
                                file=lw.g.file, line=st.lineno) from None
    return out


def _reset_value(typ: Any) -> int:
    return NOBODY if isinstance(typ, CpuIdType) else 0


def _source_ast(fn: Callable) -> tuple[ast.FunctionDef, str | None]:
    file = inspect.getsourcefile(fn)
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise SpecError(f"{fn.__name__}: @process decorates a plain `def`", file=file, line=first)
    return node, file


def _helpers(cls: type, fn: Callable) -> C.Resolve:
    """How the process function ``fn`` of ``cls`` finds the helpers it inlines: ``helper(k, ...)`` a function of its
    module, ``s.spec.helper(k, ...)`` an attribute of ``cls`` (a static method a subclass may redefine)."""
    s_name = fn.__code__.co_varnames[1] if fn.__code__.co_argcount > 1 else None

    def resolve(call: ast.Call) -> tuple[str, ast.FunctionDef, str | None, dict[str, Any]] | None:
        f = call.func
        if isinstance(f, ast.Name):
            helper = fn.__globals__.get(f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and f.value.attr == "spec" \
                and isinstance(f.value.value, ast.Name) and f.value.value.id == s_name:
            helper = getattr(cls, f.attr, None)
        else:
            return None
        if not inspect.isfunction(helper) or hasattr(helper, "__countercheck_process__"):
            return None
        try:
            node, file = _source_ast(helper)
        except (OSError, TypeError, SpecError):
            return None
        return helper.__name__, node, file, helper.__globals__

    return resolve


def _memory_vars(graphs: list[C.Graph], decls: dict[str, Any]) -> frozenset[str]:
    """The variables some primitive works on (plain accesses to these are annotated too)."""
    out = set()
    for g in graphs:
        for n in g.nodes:
            if n.kind != "prim":
                continue
            for c in ast.walk(n.stmt):
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) \
                        and c.func.value.id == g.k:
                    pos = C.var_position(c.func.attr) if c.func.attr in PRIMITIVES else 0
                    mem = c.args[pos] if pos is not None and len(c.args) > pos else None
                    mem = mem.value if isinstance(mem, ast.Subscript) else mem
                    name = mem.attr if isinstance(mem, ast.Attribute) else None
                    if name in decls and not isinstance(decls[name], (Lock, Ghost)):
                        out.add(name)
    return frozenset(out)


def _word_views(cls: type) -> dict[str, Any]:
    """The spec's words held as several variables that a primitive may name (``k.atomic64_read(s.c_v)``): class
    attributes with ``fields`` (the variables, e.g. a ``OneWord`` of the memory models, which then see one
    location) and a view, ``load(*fields) -> value`` and ``store(value, me, *fields) -> new fields`` (``me``: the
    CPU or task storing). Duck-typed: the language names no layer above it."""
    out: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        for n, v in base.__dict__.items():
            if isinstance(getattr(v, "fields", None), tuple) and callable(getattr(v, "load", None)) \
                    and callable(getattr(v, "store", None)):
                out[n] = v
    return out


def expand(cls: type) -> None:
    """Lower every ``@process`` function of ``cls`` (its own body) to variables and actions set on ``cls``."""
    found = [(n, v.__countercheck_process__) for n, v in list(cls.__dict__.items())
             if callable(v) and hasattr(v, "__countercheck_process__")]
    # A subclass (a bug spec) that redefines a base's process function, or a helper one inlines, lowers again
    # every function of that function's role, the most derived definition of each: a role has one program counter
    # and one set of registers, so its functions are lowered together. The base's steps of that role are left out.
    inherited: dict[str, dict[str, Any]] = {}
    for base in cls.__mro__[1:]:
        for n, rec in getattr(base, "__countercheck_processes__", {}).items():
            inherited.setdefault(n, rec)
    mine = {n for n, _ in found}
    again = {inherited[n]["role"] for n in mine if n in inherited}
    again |= {rec["role"] for rec in inherited.values() if any(h in cls.__dict__ for h in rec.get("helpers", ()))}
    if not found and not again:
        return
    if again:
        for n, rec in inherited.items():
            if rec["role"] in again and n not in mine:
                found.append((n, getattr(cls, n).__countercheck_process__))
    decls: dict[str, Any] = {}
    roles: dict[str, Role] = {}
    for base in reversed(cls.__mro__):
        for n, v in base.__dict__.items():
            if isinstance(v, Var) and not (getattr(v, "register", False) and any(
                    n == f"{r}_pc" or n.startswith(f"{r}_") for r in again)):
                decls[n] = v
            elif isinstance(v, Role):
                roles[n] = v
    names = frozenset(n for n, _ in found)
    lows = []
    words = _word_views(cls)
    for name, info in found:
        node, file = _source_ast(info.fn)
        g = C.build(node, file, name, names - {name}, _helpers(cls, info.fn), info.fn.__globals__)
        if g.returns_line is not None and info.returns is None:
            raise SpecError(f"process function {name}: it returns a value, and nothing observes it (the caller's "
                            f"copy is not modelled); write instead: @process(..., returns=judge), judge(s, cpu, "
                            f"value) giving the ghost updates that record it", file=file, line=g.returns_line)
        lows.append(_Lowered(cls, name, info, g, decls, roles, words))
    # The variables some primitive works on, in every process function of the spec: a role lowered again in a
    # subclass annotates its plain accesses to a variable that only another role's primitives name (the reader's
    # data_race(s.count) makes the sum's plain load of fbc->count a memory access), as the base did.
    others = []
    for n in inherited:
        if n not in names:
            fn = getattr(cls, n).__countercheck_process__.fn
            others.append(C.build(*_source_ast(fn), n, names, _helpers(cls, fn), fn.__globals__))
    memory = _memory_vars([lw.g for lw in lows] + others, decls) | frozenset(words)  # (a word's plain accesses too)
    by_role: dict[str, list[_Lowered]] = {}
    for lw in lows:
        by_role.setdefault(lw.info.role, []).append(lw)
    registry: dict[str, dict[str, Any]] = {n: rec for n, rec in inherited.items() if rec["role"] not in by_role}
    for role, group in by_role.items():
        _lower_role(cls, role, group, decls, memory, registry)
    for rec in inherited.values():
        if rec["role"] in again:
            for a in rec.get("actions", ()):
                if a not in cls.__dict__:
                    setattr(cls, a, _left_out(a, rec["role"]))
    cls.__countercheck_processes__ = registry


def _left_out(name: str, role: str) -> Callable[..., Any]:
    """A base's step of a process function lowered again in a subclass: not a step of the subclass."""
    def gone(s: Any, cpu: Any) -> Any:
        return DISABLED

    gone.__name__ = name
    gone.__countercheck_action__ = {"role": role, "choose": {}, "uses": {}, "sleeps": False, "irq": False,
                                    "applies": lambda p: False, "fair": None, "softirq": False, "access": ()}
    return gone


def _lower_role(cls: type, role: str, group: list[_Lowered], decls: dict[str, Any], memory: frozenset[str],
                registry: dict[str, dict[str, Any]]) -> None:
    pcs = ["idle"] + (["done"] if any(lw.info.calls is None and not lw.info.irq for lw in group) else [])
    plans = []
    regs: dict[str, None] = {}
    types: dict[str, Any] = {}
    for lw in group:
        for r, typ in _register_types(lw).items():
            if types.setdefault(r, typ) is not typ:
                raise SpecError(f"{cls.__name__}: the local {r!r} is declared with two types in process functions of "
                                f"role {role!r}", file=lw.g.file, line=lw.g.def_line)
    for lw in group:
        lw.reset = {r: _reset_value(t) for r, t in types.items()}
        points, actions = _plan(lw)
        plans.append((lw, points, actions))
        for p in points.values():
            if p.node is not None:
                pcs.append(p.label)
            if p.node is not None:
                for r in sorted(lw.g.live[p.node]):  # (a frozenset of str: its order is salted per process)
                    regs[r] = None
    taken = set(decls) | {a for a in dir(cls) if not a.startswith("__") and not (  # (a base's, lowered again)
        a.startswith(f"{role}_") and getattr(getattr(cls, a, None), "register", False))}
    pc_name = f"{role}_pc"
    if pc_name in taken:
        raise SpecError(f"{cls.__name__}: {pc_name} is declared, and process functions of role {role!r} need the "
                        f"name for their program counter; rename it")
    enum = Enum(*pcs, name=pc_name)
    # (a role whose functions are interrupt handlers and one-step callbacks, calls=True, is never inside one)
    has_pc = len(pcs) > 1 or any(not lw.info.irq and lw.info.calls is not True for lw in group)
    # interrupt handlers with steps inside run over the CPU's task on a pc of their own: a role of handlers only
    handlers_only = all(lw.info.irq for lw in group)
    for lw, points, _ in plans:
        lw.has_pc = has_pc
        lw.own_pc = not lw.info.irq or handlers_only
        if not lw.own_pc and len([p for p in points.values() if p.node is not None]):
            raise SpecError(f"process function {lw.name}: an interrupt handler (irq=True) with steps inside runs over "
                            f"its CPU's task, so it needs a program counter of its own, and role {role!r} runs "
                            f"other code; put it on a role of handlers only (the CPUs, with the tasks a Task role: "
                            f"specs/percpu_lazy.py), or make it one step (`with k.atomic():`)",
                            file=lw.g.file, line=lw.g.def_line)
    if has_pc:
        per = PerTask if group[0].task else PerCpu
        v = per(enum.idle, type=enum, role=role, doc=f"where each CPU of {role} is in its process functions")
        v.register = True  # generated: traces show its changes only
        v.__set_name__(cls, pc_name)
        setattr(cls, pc_name, v)
    for r in regs:
        rn = f"{role}_{r}"
        if rn in taken:
            raise SpecError(f"{cls.__name__}: {rn} is declared, and the local {r!r} of a process function of role "
                            f"{role!r} needs the name for its register; rename one of them")
        typ = types.get(r, Int)
        v = (PerTask if group[0].task else PerCpu)(_reset_value(typ), type=typ, role=role,
                                                   doc=f"the local `{r}` of a process function, between its steps")
        v.register = True
        v.__set_name__(cls, rn)
        setattr(cls, rn, v)
    for lw, points, actions in plans:
        registry[lw.name] = {"role": role, "pc": pc_name, "enum": enum, "helpers": lw.g.helpers,
                             "points": {k: p for k, p in points.items() if p.node is not None},
                             "actions": tuple(a.name for a in actions)}
        for a in actions:
            _emit(cls, lw, a, points, enum, role, memory)


@dataclass
class _Action:
    start: int | None  # the node id of the start point (None: the entry)
    path: _Path
    name: str = ""


def _plan(lw: _Lowered) -> tuple[dict[int | None, Point], list[_Action]]:
    """The control points of one function and the ways between them."""
    g = lw.g
    exit_label = "done" if lw.info.calls is None and not lw.info.irq else "idle"
    points: dict[int | None, Point] = {None: Point(None, exit_label, 0, None)}
    todo: list[int | None] = [None]
    seen: set[int | None] = set()
    actions: list[_Action] = []
    while todo:
        at = todo.pop(0)
        if at in seen:
            continue
        seen.add(at)
        for path in _paths(lw, g.entry if at is None else at):
            actions.append(_Action(at, path))
            irqs, locks = _context_after(lw, points[at], path)
            if path.dest is not None:
                n = g.nodes[path.dest]
                if path.dest not in points:
                    points[path.dest] = Point(path.dest, "", _rel(g, n.line), _point_prim(g, path.dest), irqs, locks)
                else:
                    p = points[path.dest]
                    if p.irqs != irqs:
                        p.irqs = None
                    if p.locks != locks:
                        p.locks = None
                todo.append(path.dest)
            elif irqs or locks:
                raise SpecError(f"process function {lw.name}: a way through it returns with interrupts off or "
                                f"{', '.join(sorted(locks or ())) or 'a lock'} held", file=g.file,
                                line=g.nodes[path.first_step].line if path.first_step is not None else g.def_line)
    used: set[str] = set()
    for p in sorted((p for p in points.values() if p.node is not None), key=lambda p: (p.line, p.node)):
        label = f"{lw.name}_L{p.line}"
        while label in used:
            label += "_"
        used.add(label)
        p.label = label
    # action names: function, line and primitive of the step; ways that share them by their destination
    base: dict[str, list[_Action]] = {}
    for a in actions:
        fs = a.path.first_step
        if fs is None:
            stem = f"{lw.name}_L{_rel(g, g.nodes[a.start].line) if a.start is not None else 1}_local"
        else:
            n = g.nodes[fs]
            stem = f"{lw.name}_L{_rel(g, n.line)}_{n.prim or 'atomic'}"
        base.setdefault(stem, []).append(a)
    for stem, group in base.items():
        for a in group:
            if len(group) == 1:
                a.name = stem
            else:
                d = a.path.dest
                a.name = f"{stem}_{'ret' if d is None else 'L%d' % points[d].line}"
        names = [a.name for a in group]
        for i, a in enumerate(group):
            if names.count(a.name) > 1:
                a.name = f"{a.name}_{i + 1}"
    return points, actions


def _point_prim(g: C.Graph, i: int) -> str:
    """What a control point stands before: its primitive; for an atomic block the first primitive inside it on
    its straight-line start (else "atomic"); for a loop head "loop"."""
    n = g.nodes[i]
    while n.kind == "prim" and n.joins == "next" and n.next is not None:  # the step it joins names the point
        j = n.next
        while j is not None and g.nodes[j].kind == "local":
            j = g.nodes[j].next
        if j is None or g.nodes[j].kind not in ("prim", "atomic_in"):
            break
        i, n = j, g.nodes[j]
    if n.kind == "prim":
        return n.prim or "prim"
    if n.kind == "branch":
        return n.prim or "loop"  # a k.label("name") is a loop head that never loops back, named
    j = n.next
    while j is not None and g.nodes[j].kind == "local":
        j = g.nodes[j].next
    return (g.nodes[j].prim or "atomic") if j is not None and g.nodes[j].kind == "prim" else "atomic"


def _context_after(lw: _Lowered, start: Point, path: _Path) -> tuple[int, frozenset[str]]:
    irqs = start.irqs or 0
    locks = set(start.locks or ())
    g = lw.g
    for kind, x, *_ in path.items:
        if kind != "node":
            continue
        n = g.nodes[x]
        if n.kind != "prim":
            continue
        for c in ast.walk(n.stmt):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) \
                    and c.func.value.id == g.k and c.func.attr in PRIMITIVES:
                p = PRIMITIVES[c.func.attr]
                irqs += p.irqs
                if p.lock == "take":
                    locks.add(c.args[0].attr)  # type: ignore[attr-defined]
                elif p.lock == "release":
                    locks.discard(c.args[0].attr)  # type: ignore[attr-defined]
    return max(irqs, 0), frozenset(locks)


def _emit(cls: type, lw: _Lowered, a: _Action, points: dict[int | None, Point], enum: Enum, role: str,
          memory: frozenset[str]) -> None:
    g = lw.g
    info = lw.info
    entry = a.start is None
    start = points[a.start] if not entry else Point(None, "idle", 0, None)
    # the CPUs (k.any_cpu) and values (k.choose) chosen in this step become action arguments after the
    # function's own
    chosen: list[str] = []
    calls: list[ast.Call] = []
    choice_of: dict[int, str] = {}
    stmts: list[ast.stmt] = []
    for kind, x, *_ in a.path.items:
        if kind == "node":
            for c in ast.walk(g.nodes[x].stmt):
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) \
                        and c.func.attr in ("any_cpu", "choose") \
                        and isinstance(c.func.value, ast.Name) and c.func.value.id == g.k:
                    st = g.nodes[x].stmt
                    if not (isinstance(st, ast.Assign) and st.value is c and len(st.targets) == 1
                            and isinstance(st.targets[0], ast.Name)):
                        example = "other = k.any_cpu(s.visited)" if c.func.attr == "any_cpu" else \
                            "ok = k.choose((True, False))"
                        raise SpecError(f"process function {lw.name}: k.{c.func.attr}() is assigned to a local: "
                                        f"`{example}`", file=g.file, line=c.lineno)
                    cname = st.targets[0].id
                    if cname in g.args:
                        raise SpecError(f"process function {lw.name}: {cname} is an argument of the function (its "
                                        f"values are chosen by args=); choose into another local",
                                        file=g.file, line=c.lineno)
                    # a local chosen again in the same step is a second argument, named apart
                    n = sum(1 for x in chosen if x == cname or x.startswith(f"{cname}_"))
                    stem = cname if n == 0 else f"{cname}_{n + 1}"
                    chosen.append(stem)
                    calls.append(c)
                    choice_of[_choice_key(c)] = f"__choice_{stem}"
    rw = _Rewrite(lw, choice_of)
    acc = _Accesses(lw, memory, choice_of, chosen, g.file)
    live_in = g.live[a.start] if a.start is not None else frozenset()
    args = list(g.args) if entry else []
    acc.params, acc.live_in, acc.role = args + [f"__choice_{c}" for c in chosen], live_in, role
    for r in sorted(live_in):
        stmts.append(ast.Assign([ast.Name(r, ast.Store())], rw.ctx("reg", ast.Constant(f"{role}_{r}"))))
    for item in a.path.items:
        kind, x = item[0], item[1]
        if kind == "test":
            i, truth = x
            n = g.nodes[i]
            t = rw.visit(_copy(n.stmt))
            stmts.append(ast.Expr(rw.ctx("guard", t if truth else ast.Call(ast.Name("__Not", ast.Load()), [t], []))))
            acc.test(n.stmt, n.line)
        else:
            n = g.nodes[x]
            rw.outcome = item[2] if len(item) > 2 else None
            stmts.extend(rw.statement(_copy(n.stmt)))
            acc.statement(n.stmt)
    live_out = g.live[a.path.dest] if a.path.dest is not None else frozenset()
    regs = {}
    for r in sorted(set(live_in) | set(live_out)):
        regs[f"{role}_{r}"] = ast.Name(r, ast.Load()) if r in live_out else ast.Constant(lw.reset.get(r, 0))
    dest = points[a.path.dest]
    pc = getattr(enum, dest.label) if lw.has_pc and lw.own_pc else None
    stmts.append(ast.Return(rw.ctx("finish", ast.Dict([ast.Constant(k) for k in regs], list(regs.values())),
                                   ast.Constant(pc))))
    params = [g.s, g.cpu] + args + [f"__choice_{c}" for c in chosen]
    # choices named by the local they are assigned to: the action's argument names must be the choose keys
    first_line = g.nodes[a.path.first_step].line if a.path.first_step is not None else (
        g.nodes[a.start].line if a.start is not None else g.def_line)
    body = [ast.Assign([ast.Name("__k", ast.Store())],
                       ast.Call(ast.Name("__Ctx", ast.Load()), [ast.Name("__state", ast.Load()),
                                                                 ast.Name(g.cpu, ast.Load()),
                                                                 ast.Name("__low", ast.Load())], [])),
            ast.Assign([ast.Name(g.s, ast.Store())], ast.Name("__state", ast.Load()))]
    prologue = _prologue(lw, 0 if entry else getattr(enum, start.label), start, entry, rw)
    fn = ast.FunctionDef(name=a.name, args=ast.arguments(posonlyargs=[], args=[ast.arg("__state")] + [
        ast.arg(p) for p in params[1:]], kwonlyargs=[], kw_defaults=[], defaults=[]), body=body + prologue + stmts,
        decorator_list=[], returns=None)
    fn.lineno = first_line
    mod = ast.Module([fn], [])
    ast.fix_missing_locations(mod)
    for n in ast.walk(mod):  # generated nodes take their statement's line; none may end before it starts
        if hasattr(n, "lineno") and (getattr(n, "end_lineno", None) or 0) < n.lineno:
            n.end_lineno = n.lineno
            n.end_col_offset = max(getattr(n, "col_offset", 0) or 0, getattr(n, "end_col_offset", 0) or 0)
    code = compile(mod, g.file or "<process>", "exec")
    ns = dict(info.fn.__globals__, **g.extra)
    ns.update({"__Ctx": StepContext, "__low": lw, "__And": And, "__Or": Or, "__Not": Not, "__If": If,
               C.RETURNS: info.returns})
    exec(code, ns)
    inner = ns[a.name]
    choose = dict(info.args) if entry else {}
    for c, call in zip(chosen, calls):
        choose[f"__choice_{c}"] = _cpus_of(lw, call, g)
    doc = _describe(lw, a, start, dest)

    def run(*xs: Any, _inner: Callable = inner) -> Any:
        try:
            return _inner(*xs)
        except _Disabled:
            return DISABLED

    run.__signature__ = inspect.signature(inner)  # type: ignore[attr-defined]
    run.__name__ = a.name
    run.__qualname__ = f"{cls.__name__}.{a.name}"
    run.__doc__ = doc
    run.__wrapped__ = inner  # type: ignore[attr-defined]  # its file and line: the step's, in the spec
    fair = _fairness(lw, a, start)
    accesses = tuple(acc.out)
    if _locks_within(lw, a):
        # The lock is taken and released inside this one step, so the memory models see no lock (its state
        # does not change): the step is left unannotated, which they take as fully ordered, as the lock
        # orders it against every other holder.
        accesses = ()
    run.__countercheck_action__ = {"role": role, "choose": choose, "uses": {}, "sleeps": _sleeps(lw, a), "irq": info.irq,
                                   "applies": info.applies, "fair": fair, "softirq": False,
                                   "access": accesses}
    run.__countercheck_step__ = (lw.name, _rel(g, first_line), a.path.first_step and g.nodes[a.path.first_step].prim)
    if a.name in cls.__dict__:
        raise SpecError(f"{cls.__name__}: the step {a.name} of process function {lw.name} clashes with a name of the "
                        f"spec", file=g.file, line=first_line)
    setattr(cls, a.name, run)


def _copy(node: Any) -> Any:
    return copy.deepcopy(node)


_choice_keys = itertools.count(1)


def _choice_key(c: ast.Call) -> int:
    """A ``k.choose``/``k.any_cpu`` call's key, which the deep copies the rewrite works on keep. Not its position:
    a helper inlined into a step has its statements at the call's line, so two choices in it would share one
    argument (and a choice between them would never be tried)."""
    key = getattr(c, "_countercheck_choice", None)
    if key is None:
        key = c._countercheck_choice = next(_choice_keys)  # type: ignore[attr-defined]
    return key


def _prologue(lw: _Lowered, start_pc: int, start: Point, entry: bool, rw: _Rewrite) -> list[ast.stmt]:
    """The guards every step from ``start`` has: where the CPU is, its budget, and that it may run."""
    out: list[ast.stmt] = []
    cpu = ast.Name(lw.g.cpu, ast.Load())
    if lw.has_pc and lw.own_pc:
        cur = rw.ctx("get_slot", ast.Constant(lw.pc_var), cpu)
        out.append(ast.Expr(rw.ctx("guard", ast.Compare(cur, [ast.Eq()], [ast.Constant(start_pc)]))))
    if entry and isinstance(lw.info.calls, str):
        left = rw.ctx("get_slot", ast.Constant(lw.info.calls), cpu)
        out.append(ast.Expr(rw.ctx("guard", ast.Compare(left, [ast.Gt()], [ast.Constant(0)]))))
        out.append(ast.Expr(rw.ctx("set_slot", ast.Constant(lw.info.calls), cpu, ast.BinOp(
            rw.ctx("get_slot", ast.Constant(lw.info.calls), cpu), ast.Sub(), ast.Constant(1)))))
    if lw.info.runs is not None and not lw.info.irq and not start.irqs:
        out.append(ast.Expr(rw.ctx("guard", ast.Call(ast.Attribute(ast.Name("__low", ast.Load()), "runs", ast.Load()),
                                                     [ast.Name("__state", ast.Load()), cpu], []))))
    return out


def _cpus_of(lw: _Lowered, c: ast.Call, g: C.Graph) -> Any:
    """The CPUs ``name = k.any_cpu(s.v)`` chooses from: those of v's role (``Between(0, n - 1)`` for the first
    role declared, whose CPUs start at 0: the Z3 backend states that for any n); for ``name = k.choose(values)``
    the values, an expression of the parameters (``s.cpus``, ``range(1, s.stacks + 1)``) evaluated on them."""
    if c.func.attr == "choose":  # type: ignore[attr-defined]
        return _choice_values(lw, c, g)
    var = lw.decls.get(c.args[0].attr)  # type: ignore[attr-defined]
    if not isinstance(var, PerCpu) or var.role is None:
        raise SpecError(f"process function {lw.name}: k.any_cpu() takes a per-CPU variable of a "
                        f"role (the CPUs to visit)", file=g.file, line=c.lineno)
    r = var.role
    role = lw.roles[r]
    if r == next(iter(lw.roles)) and isinstance(role.count, str):
        return Between(0, lambda p, _n=role.count: getattr(p, _n) - 1)
    return lambda p, _r=r: getattr(p, _r)


def _choice_values(lw: _Lowered, c: ast.Call, g: C.Graph) -> Any:
    """``k.choose(values)``'s values as ``choose=`` takes them: constant ones as they are, others as a function
    of the parameters (``s.<param>`` and ``s.<role>`` read the point's parameters and CPUs, never the state)."""
    expr = c.args[0]
    try:
        return tuple(ast.literal_eval(expr))
    except (ValueError, TypeError, SyntaxError):
        pass
    code = compile(ast.fix_missing_locations(ast.Expression(_copy(expr))), g.file or "<process>", "eval")
    glb = dict(lw.info.fn.__globals__, **g.extra)
    where = f"{g.file}:{c.lineno}"

    def values(p: Any, _code: Any = code, _s: str = g.s) -> Any:
        try:
            return tuple(eval(_code, glb, {_s: p}))  # noqa: S307 - the spec's own expression, as choose= lambdas
        except AttributeError as e:
            raise SpecError(f"process function {lw.name}: k.choose() takes values of the parameters and roles "
                            f"(s.<param>, s.<role>), not of the state ({e}); a value of the state is read, not "
                            f"chosen", file=g.file, line=c.lineno) from None
    values.__qualname__ = values.__name__ = f"choose@{where}"
    return values


def _sleeps(lw: _Lowered, a: _Action) -> bool:
    """Whether the step calls a primitive that may sleep (k.might_sleep())."""
    g = lw.g
    return any(g.nodes[x].kind == "prim" and any(
        isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in PRIMITIVES
        and PRIMITIVES[c.func.attr].sleeps for c in ast.walk(g.nodes[x].stmt))
        for kind, x, *_ in a.path.items if kind == "node")


def _locks_within(lw: _Lowered, a: _Action) -> bool:
    """Whether the step takes a lock and releases it again (a handler's whole critical section in one step)."""
    g = lw.g
    taken = set()
    for kind, x, *_ in a.path.items:
        if kind != "node" or g.nodes[x].kind != "prim":
            continue
        for c in ast.walk(g.nodes[x].stmt):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in PRIMITIVES:
                p = PRIMITIVES[c.func.attr]
                if p.lock == "take":
                    taken.add(c.args[0].attr)  # type: ignore[attr-defined]
                elif p.lock == "release" and c.args[0].attr in taken:  # type: ignore[attr-defined]
                    return True
    return False


def _fairness(lw: _Lowered, a: _Action, start: Point) -> str | None:
    if lw.info.irq:
        return None
    g = lw.g
    fs = a.path.first_step
    if fs is not None and g.nodes[fs].kind == "prim" and PRIMITIVES.get(g.nodes[fs].prim or "", None) is not None \
            and PRIMITIVES[g.nodes[fs].prim].waits:
        return "strong"  # a waiter on a queued spinlock is served once those before it are
    if lw.info.fair is not None:
        return lw.info.fair  # the function's own (at least weak where a lock is held)
    if start.irqs or start.locks:
        return "weak"  # a CPU holding a lock or with interrupts off runs on
    return None


def _describe(lw: _Lowered, a: _Action, start: Point, dest: Point) -> str:
    g = lw.g
    fs = a.path.first_step
    where = f"{lw.name}:{_rel(g, g.nodes[fs].line)} {g.nodes[fs].prim or 'atomic'}" if fs is not None else \
        f"{lw.name} (local code)"
    tests = [("" if item[1][1] else "not ") + ast.unparse(g.nodes[item[1][0]].stmt) for item in a.path.items
             if item[0] == "test"]
    tests += [f"{g.nodes[item[1]].prim} {item[2]}" for item in a.path.items if len(item) > 2]
    return (f"{where}: from {start.label} to {dest.label}" + (f", where {'; '.join(tests)}" if tests else "") + ".")


# ---- control points in properties ------------------------------------------------------------------------------

def at(s: Any, t: Any, function: str, where: int | str) -> Any:
    """True where CPU ``t`` is at a control point of process function ``function``: ``where`` is its line
    (counted from the ``def``, as in the step names), the name of its ``k.label("name")``, or the primitive the
    point is before (``"loop"`` for a loop head, ``"atomic"`` for an atomic block)."""
    pc, values = _point_values(_spec_class(s), function, where)
    cur = _pc(s, t, pc)
    if isinstance(cur, int):  # a state's value, not a term: the explorer's and the simulator's hot path
        return cur in values
    return Or(*[cur == v for v in values]) if len(values) > 1 else cur == values[0]


def _spec_class(s: Any) -> type:
    spec = s.spec
    return spec if isinstance(spec, type) else type(spec)


def _pc(s: Any, t: Any, pc: str) -> Any:
    """CPU ``t``'s value of the program counter ``pc``: a state's value, or a term."""
    pcs = getattr(s, pc)
    return pcs[t] if isinstance(t, int) and isinstance(pcs, tuple) else Select(pcs, t)


@functools.lru_cache(maxsize=None)
def _point_values(cls: type, function: str, where: int | str) -> tuple[str, tuple]:
    """The pc variable of ``function`` and its values at ``where`` (memoised: properties ask at every state)."""
    reg = getattr(cls, "__countercheck_processes__", {}).get(function)
    if reg is None:
        raise SpecError(f"at(..., {function!r}, ...): no process function of that name")
    values = tuple(getattr(reg["enum"], p.label) for p in reg["points"].values()
                   if p.line == where or p.prim == where)
    if not values:
        raise SpecError(f"at(..., {function!r}, {where!r}): no control point there; its points: "
                        + ", ".join(f"line {p.line} ({p.prim})" for p in reg["points"].values()))
    return reg["pc"], values


def _points_where(s: Any, t: Any, role: str, lock: str | None) -> Any:
    """Where CPU ``t`` of ``role`` holds ``lock`` (None: has interrupts off) in one of its process functions."""
    pc, values = _role_point_values(_spec_class(s), role, lock)
    if not values:
        return False
    cur = _pc(s, t, pc)
    if isinstance(cur, int):
        return cur in values
    return Or(*[cur == v for v in values])


@functools.lru_cache(maxsize=None)
def _role_point_values(cls: type, role: str, lock: str | None) -> tuple[str, tuple]:
    """The pc variable of ``role``'s process functions and its values at the points where ``lock`` is held (None:
    where interrupts are off); memoised, as ``_point_values``."""
    reg = getattr(cls, "__countercheck_processes__", {})
    entries = [r for r in reg.values() if r["role"] == role]
    if not entries:
        raise SpecError(f"no process function runs on role {role!r}")
    values = tuple(getattr(r["enum"], p.label) for r in entries for p in r["points"].values()
                   if (bool(p.locks) and lock in p.locks if lock is not None else p.irqs))
    return entries[0]["pc"], values


def holding(s: Any, t: Any, lock: str, role: str) -> Any:
    """True where CPU ``t`` of ``role`` is between taking ``lock`` and releasing it in one of its process
    functions: a structural fact of the lowering, for lemmas such as ``(s.lock == t) == holding(...)``."""
    return _points_where(s, t, role, lock)


def irqs_off(s: Any, t: Any, role: str) -> Any:
    """True where CPU ``t`` of ``role`` is inside an interrupts-off section of one of its process functions
    (after local_irq_save or an irqsave lock, before the restore): a structural fact of the lowering."""
    return _points_where(s, t, role, None)
