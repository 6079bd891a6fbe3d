# SPDX-License-Identifier: GPL-2.0-only
"""A trace as people read it: each step's actor named by what it is, its call, every store.

``shown_trace`` turns the engine's steps into ``ShownStep`` rows while the
model is at hand (enum names, the CPU a task is on, the action's source
line); ``checker.report.lanes`` draws them as a column per actor, and
``list_lines`` as the one line per step that ``trace_text`` keeps.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from checker.kernel.tasks import TASK_CPU, task_roles
from checker.language.compile import Model
from checker.result import ShownStep, Step, Store
from checker.types import NOBODY

#: The lane of steps that no CPU takes (an action without a role).
NO_CPU = "(no cpu)"


def render_trace(model: Model, initial: dict[str, Any], steps: list[Step]) -> list[str]:
    """``  3  cpu1  add_fast(amount=+1)  local[1]: 0 -> 1, exact: 1 -> 2``"""
    return list_lines(shown_trace(model, initial, steps))


def render_lasso(model: Model, initial: dict[str, Any], steps: list[Step], loop_start: int,
                 stops: bool) -> list[str]:
    """A lasso: the trace with a line where the loop starts and one saying how the run goes on."""
    return list_lines(shown_lasso(model, initial, steps, loop_start, stops))


def shown_lasso(model: Model, initial: dict[str, Any], steps: list[Step], loop_start: int,
                stops: bool) -> list[ShownStep | str]:
    """A lasso's rows as shown: its steps, with a marker line where the loop starts (and whether it stops)."""
    rows = shown_trace(model, initial, steps)
    at = loop_start + (1 if model.uninit_any else 0)
    if stops:
        return rows + ["-- the run stops here: nothing is enabled, so this state repeats forever"]
    n = len(steps)
    return (rows[:at] + [f"-- loop: steps {loop_start + 1}..{n} repeat forever --"] + rows[at:]
            + [f"-- back to the state after step {loop_start}" if loop_start else "-- back to the initial state"])


def list_lines(shown: list[ShownStep | str]) -> list[str]:
    """One line per step (``--trace-style list``): number, actor, call, every store; markers as they are."""
    rows = [(str(r.n), r.actor, r.call, stores_text(r)) if isinstance(r, ShownStep) else r for r in shown]
    cells = [r for r in rows if isinstance(r, tuple)]
    w0 = max((len(r[0]) for r in cells), default=1)
    w1 = max((len(r[1]) for r in cells), default=1)
    w2 = max((len(r[2]) for r in cells), default=1)
    return [f"{r[0]:>{w0}}  {r[1]:<{w1}}  {r[2]:<{w2}}  {r[3]}".rstrip() if isinstance(r, tuple) else r
            for r in rows]


def store_text(st: Store) -> str:
    """``count: 0 -> -1``; a store of the value already there ``count = -1 (same)``."""
    return f"{st.var} = {st.new} (same)" if st.same else f"{st.var}: {st.old} -> {st.new}"


def store_items(row: ShownStep) -> list[str]:
    """A step's stores as text, the slots of one variable that got the value they had as one item
    (``slot0[0,1] = 0 (same)``), then the row's note."""
    out: list[str] = []
    same: dict[tuple[str, str], list[str]] = {}
    at: dict[tuple[str, str], int] = {}
    for st in row.stores:
        name, _, slot = st.var.partition("[")
        if st.same and slot:
            key = (name, st.new)
            if key not in same:
                same[key], at[key] = [], len(out)
                out.append("")
            same[key].append(slot[:-1])
        else:
            out.append(store_text(st))
    for (name, value), slots in same.items():
        out[at[(name, value)]] = f"{name}[{','.join(slots)}] = {value} (same)"
    return out + ([row.note] if row.note else [])


def stores_text(row: ShownStep) -> str:
    """A step's stores as one line of text: ``x = 1, count = -1 (same)``."""
    return ", ".join(store_items(row))


def shown_trace(model: Model, initial: dict[str, Any] | None, steps: list[Step]) -> list[ShownStep | str]:
    """The steps as ``ShownStep`` rows (a start row first when the run chose uninitialised values)."""
    initial = initial or {}
    state = {k: (list(v) if isinstance(v, list) else v) for k, v in initial.items()}
    rows: list[ShownStep | str] = []
    if model.uninit_any:  # the value the run found in each uninitialised variable
        rows.append(ShownStep(0, "", (-1, 0), "-", "(start)", (), note=", ".join(
            f"{n} = {initial.get(n)} (never assigned)" for n in model.uninit_any)))
    name = _Namer(model)
    # the compiled actions: a 32-bit tearing's halves (fold.store_lo) are there, with their action's source
    infos = {**model.info.actions, **{a.info.name: a.info for a in model.actions}}
    order = {n: i for i, n in enumerate(model.var_names)}
    # a ghost restated is the spec's bookkeeping, not a store the kernel makes, and a _name the checker's own
    # (32-bit tearing's halves): only their changes are shown
    ghosts = {n for n, v in model.vars.items() if getattr(v, "kind", None) == "ghost"
              or getattr(v, "register", False)}  # and a process function's generated pc and registers
    for i, st in enumerate(steps, 1):
        lane, rank, actor, hidden_arg = name(st, state)
        args = ", ".join(f"{k.removeprefix('__choice_')}={v}" for k, v in st.choices.items() if k != hidden_arg)
        a = infos.get(st.action)
        # a process function's step is named as its source reads: function:line primitive (checker.language.process)
        where = getattr(a.fn, "__countercheck_step__", None) if a is not None else None
        shown = f"{where[0]}:{where[1]} {where[2] or 'atomic'}" if where else st.action
        call = (f"{shown}({args})" if args else shown) + (f" x{st.repeat}" if st.repeat != 1 else "")
        stores = [Store(k, model.show_value(k, _get(state, k)), model.show_value(k, v)) for k, v in st.changes.items()]
        stores += [Store(k, model.show_value(k, _get(state, k)), model.show_value(k, _get(state, k)), same=True)
                   for k in st.unchanged if k.split("[")[0] not in ghosts and not k.startswith("_")]
        stores.sort(key=lambda s: (order.get(s.var.split("[")[0], len(order)), _slot(s.var)))
        a = infos.get(st.action)
        file, line = (a.file, a.line) if a is not None and not a.builtin else (None, None)
        rows.append(ShownStep(i, lane, rank, actor, call, tuple(stores), file, line))
        for k, v in st.changes.items():
            _put(state, k, v)
    return rows


class _Namer:
    """Who took a step, named by what it is: ``cpu1``, ``cpu2 (reader)``, ``irq on cpu1``, ``task2 on cpu0``."""

    def __init__(self, model: Model):
        si = model.info
        self.model = model
        self.params = model.params.as_dict()
        self.tasks = set(task_roles(si))  # the kernel's Task roles (checker.kernel.tasks)
        self.moved = {n: r for n, r in si.roles.items() if getattr(r, "cpu", None) is not None and n not in self.tasks}
        cpu_roles = [n for n in si.roles if n not in self.tasks and n not in self.moved]
        self.main = cpu_roles[0] if cpu_roles else None
        self.several = len(cpu_roles) > 1
        self.several_tasks = len(self.tasks) + len(self.moved) > 1

    def __call__(self, st: Step, state: dict[str, Any]) -> tuple[str, tuple[int, int], str, str | None]:
        """(lane, rank, actor, the choice that only names the CPU the step runs on)."""
        who, role = st.cpu, st.role
        if who is None:
            return NO_CPU, (3, 0), NO_CPU, None
        a = self.model.info.actions.get(st.action)
        irq = "irq" if a is not None and a.irq else "softirq" if a is not None and a.softirq else None
        suffix = f" ({role})" if role and self.several_tasks else ""
        if role in self.tasks:
            c = _get(state, f"{TASK_CPU}[{who}]")
            return f"task{who}", (1, who), f"task{who}" + (f" on cpu{c}" if c not in (None, NOBODY) else "") + suffix, None
        if role in self.moved:
            hidden = next((k for k in st.choices if k.startswith("on_cpu")), None)
            c = st.choices[hidden] if hidden is not None else _cpu_of(self.moved[role].cpu, self.params, state, who)
            if irq:
                return f"{irq}@{c}", (0, 3 * c + (1 if irq == "irq" else 2)), f"{irq} on cpu{c}", hidden
            if self.moved[role].cpus == role and c == who:  # CPUs each running their own task, at home
                return f"task{who}", (0, 3 * who), f"cpu{who}", hidden
            return f"task{who}", (1, who), f"task{who}" + (f" on cpu{c}" if c is not None else "") + suffix, hidden
        if irq:
            return f"{irq}@{who}", (0, 3 * who + (1 if irq == "irq" else 2)), f"{irq} on cpu{who}", None
        shown = f"cpu{who}" + (f" ({role})" if role and self.several and role != self.main else "")
        return f"cpu{who}", (0, 3 * who), shown, None


def _cpu_of(fn: Any, params: dict[str, Any], state: dict[str, Any], who: int) -> int | None:
    """The CPU a ``Role(cpu=...)`` member is on, by the role's own function (None if it cannot say)."""
    try:
        c = fn(SimpleNamespace(**{**params, **state}), who)
    except Exception:  # noqa: BLE001  (a function written for the explorer's state: only the name is lost)
        return None
    return c if isinstance(c, int) and c != NOBODY else None


def _get(state: dict[str, Any], key: str) -> Any:
    if "[" in key and key.endswith("]"):
        name, slot = key[:-1].split("[", 1)
        row = state.get(name)
        if isinstance(row, list) and slot.isdigit() and int(slot) < len(row):
            return row[int(slot)]
    return state.get(key)


def _put(state: dict[str, Any], key: str, value: Any) -> None:
    if "[" in key and key.endswith("]"):
        name, slot = key[:-1].split("[", 1)
        row = state.get(name)
        if isinstance(row, list) and slot.isdigit() and int(slot) < len(row):
            row[int(slot)] = value
            return
    state[key] = value


def _slot(key: str) -> int:
    tail = key[:-1].split("[", 1)[1] if key.endswith("]") and "[" in key else ""
    return int(tail) if tail.isdigit() else -1


def first_paragraph(doc: str) -> str:
    """A docstring's first paragraph on one line."""
    return " ".join(doc.split("\n\n")[0].split())

