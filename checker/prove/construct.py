# SPDX-License-Identifier: GPL-2.0-only
"""Witnesses by construction: replay a spec's schedule at large CPU counts.

Exhaustive exploration and BMC stop at a few CPUs; a bound claimed for 256
CPUs is shown exact by running the spec's own actions, concretely, along a
schedule the spec provides, and evaluating its properties at the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from checker.errors import SpecError
from checker.result import Step
from checker.language.compile import Model, Row
from checker.language.declare import DISABLED


@dataclass
class Replay:
    """A witness run replayed on the explorer: its final state and the trace, compressed per schedule line."""
    final: tuple
    steps: int
    trace: list[Step]  # compressed: one entry per schedule line, with its repeat count


def replay(model: Model, schedule_fn: Any) -> Replay:
    """Run the schedule: each line is ``(action, cpu, choices[, repeat])``, or ``(block, repeat)``
    with ``block`` a sequence of ``(action, cpu, choices)`` run in order ``repeat`` times (one
    trace line, its actions joined by ``; ``)."""
    s = model.initial_states()[0]
    # The slots are changed in place (per-CPU rows as ``Row``s) where the model's ``apply`` is the plain one;
    # a model that rewrites updates (an Abstraction) builds a new state each step.
    in_place = getattr(model.apply, "__func__", None) is Model.apply
    vals = _thaw(model, s)
    actions = {a.info.name: a for a in model.actions}
    trace: list[Step] = []
    total = 0
    for block, repeat in schedule_lines(model, schedule_fn):
        start = s
        for n in range(repeat):
            for name, cpu, choices in block:
                act = actions.get(name)
                if act is None:
                    raise SpecError(f"witness {schedule_fn.__name__} names the action {name!r}, which "
                                    f"{model.cls.__name__} does not have", file=model.info.file, line=model.info.line)
                args = tuple(choices[a] for a in act.arg_names)
                if in_place:
                    s = model.state_cls(vals)
                r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
                if r is DISABLED or not r.guard:
                    raise SpecError(f"witness {schedule_fn.__name__}: step {total + 1} ({name} on cpu{cpu}, "
                                    f"repetition {n + 1} of {repeat}) is not enabled at {model.params}",
                                    file=model.info.file, line=model.info.line)
                if in_place:
                    model.apply_in_place(vals, r.updates, act)
                else:
                    s = model.apply(s, r.updates, act)
                total += 1
        if in_place:
            s = _freeze(model, vals)
        name = "; ".join(b[0] for b in block)
        cpus = {b[1] for b in block}
        cpu = next(iter(cpus)) if len(cpus) == 1 else None
        choices = {k: v for b in block for k, v in b[2].items()}
        trace.append(Step(cpu, model.role_of(cpu), name, choices, model.changes(start, s), repeat))
    return Replay(s, total, trace)


def schedule_lines(model: Model, schedule_fn: Any) -> Iterator[tuple[tuple, int]]:
    """The schedule's lines at ``model``'s point as ``(block, repeat)``, ``block`` its ``(action, cpu, choices)``."""
    for entry in schedule_fn(model.params):
        if isinstance(entry[0], (list, tuple)):
            yield tuple(entry[0]), entry[1]
        else:
            name, cpu, choices, repeat = entry if len(entry) == 4 else (*entry, 1)
            yield ((name, cpu, choices),), repeat


def _thaw(model: Model, s: tuple) -> list:
    return [Row(v) if n in model.tupled else v for n, v in zip(model.var_names, s)]


def _freeze(model: Model, vals: list) -> tuple:
    return model.state_cls(tuple(v) if v.__class__ is Row else v for v in vals)
