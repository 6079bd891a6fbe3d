# SPDX-License-Identifier: GPL-2.0-only
"""The seam between a compiled model and its memory model: called by ``checker.kernel.passes``.

``prepare`` (before the state class is made) picks the model at the point
and adds its hidden variables; ``install`` (once the actions are compiled)
replaces the model's ``fire`` and adds the model's own steps. Under ``sc``,
or for a spec without ``access=`` annotations, neither changes anything.
"""
from __future__ import annotations

from typing import Any

from checker.ordering.machine import add_vars, memory_of, refuse_unsupported, runs_on


def prepare(model: Any) -> Any:
    """The memory model's machine at this point (None under sc); its hidden variables added."""
    mem = memory_of(model.info, model.params)
    model.memory = mem
    if mem == "sc":
        return None
    if mem == "tso":
        from checker.ordering.tso import Tso as Machine
    else:
        from checker.ordering.lkmm import Lkmm as Machine
    from checker.ordering.words import packings

    model.words = packings(model)  # one kernel word held as several variables: one location
    model.word_fields = frozenset(f for w in model.words.values() for f in w.fields)
    machine = Machine(model)
    ghosts = machine.ghosts()
    model.var_names, model.vars = add_vars(model.var_names, model.vars, ghosts)
    model.index = {n: i for i, n in enumerate(model.var_names)}
    per = frozenset(g.name for g in ghosts if g.kind == "percpu")
    model.percpu = model.percpu | per
    model.tupled = model.tupled | per
    if hasattr(machine, "prepared"):
        machine.prepared(model)
    return machine


def install(model: Any, machine: Any, actions: tuple) -> tuple:
    """Put ``machine`` (tso or lkmm) under the model's actions: the actions as the memory model runs them."""
    refuse_unsupported(model)
    machine.ro, actions = runs_on(model, actions)
    out = machine.install(actions)
    sch = model.scheduler
    if sch is not None:  # the scheduler asks what a task can do next: of the steps as the model now has them
        sch.task_actions = [a for a in out if a.info.role in sch.task_roles and not a.info.builtin]
    model.symmetry_note = f"symmetry off under --memory {model.memory}"
    return out


def settled(s: Any) -> bool:
    """No store is still buffered (tso): memory holds every store made. True at sc and under lkmm,
    where the spec's variables always hold each location's newest store."""
    model = getattr(type(s), "_countercheck_weak", None)
    return True if model is None else model.settled(s)
