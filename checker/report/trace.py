# SPDX-License-Identifier: GPL-2.0-only
"""A trace as numbered lines a person reads at a glance."""
from __future__ import annotations

from typing import Any

from checker.result import Step, flatten
from checker.language.compile import Model


def render_trace(model: Model, initial: dict[str, Any], steps: list[Step]) -> list[str]:
    """``  3  cpu1  add_fast(amount=+1)   local[1]: 0 -> 1, exact: 1 -> 2``"""
    current = flatten(initial)
    rows = []
    if model.uninit_any:  # the value the run found in each uninitialised variable
        rows.append(("0", "-", "(start)", ", ".join(f"{n} = {initial.get(n)} (never assigned)"
                                                   for n in model.uninit_any)))
    for i, st in enumerate(steps, 1):
        task = model.scheduler is not None and st.cpu in model.scheduler.task_set
        who = "-" if st.cpu is None else (f"task{st.cpu}" if task else f"cpu{st.cpu}")
        if st.role and model.info.roles and st.role != next(iter(model.info.roles)) and not (
                task and len(model.scheduler.task_roles) == 1):  # (a task's id says it is one)
            who += f"/{st.role}"
        args = ", ".join(f"{k}={v}" for k, v in st.choices.items())
        call = f"{st.action}({args})" if args else st.action
        changes = ", ".join(f"{k}: {model.show_value(k, current.get(k))} -> {model.show_value(k, v)}"
                            for k, v in st.changes.items())
        current.update(st.changes)
        rows.append((str(i), who, call, changes))
    w0 = max((len(r[0]) for r in rows), default=1)
    w1 = max((len(r[1]) for r in rows), default=1)
    w2 = max((len(r[2]) for r in rows), default=1)
    return [f"{a:>{w0}}  {b:<{w1}}  {c:<{w2}}  {d}".rstrip() for a, b, c, d in rows]


def render_lasso(model: Model, initial: dict[str, Any], steps: list[Step], loop_start: int,
                 stops: bool) -> list[str]:
    """A lasso: the trace with a line where the loop starts and one saying how the run goes on."""
    rows = render_trace(model, initial, steps)
    at = loop_start + (1 if model.uninit_any else 0)
    if stops:
        return rows + ["-- the run stops here: nothing is enabled, so this state repeats forever"]
    n = len(steps)
    return (rows[:at] + [f"-- loop: steps {loop_start + 1}..{n} repeat forever --"] + rows[at:]
            + [f"-- back to the state after step {loop_start}" if loop_start else "-- back to the initial state"])


def first_paragraph(doc: str) -> str:
    """A docstring's first paragraph on one line."""
    return " ".join(doc.split("\n\n")[0].split())
