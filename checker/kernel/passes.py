# SPDX-License-Identifier: GPL-2.0-only
"""The kernel environment as passes over a spec: applied here, above the language and below the engines.

The language (``checker.language``) collects a spec class's declarations and
lowers a spec at a parameter point to one ``Model``; it imports nothing above
it. At fixed hook points it calls its ``Environment``; the package
``checker`` installs ``KERNEL`` below as that environment, so every spec class
and every model goes through these passes, in this order:

at class creation (``declare``), over the declarations:
  1. tasks and the scheduler (``checker.kernel.tasks.add_task_model``):
     before the interrupt guard, as a spec with tasks guards its handlers by
     the CPU's task;
  2. interrupt handlers run only with interrupts on (``guard_irq_actions``);
  3. the language's own checks: uninitialised reads, C words;
  4. 32-bit tearing's ghosts (``checker.kernel.tearing.add_ghosts``);
  5. the memory model's parameter and properties
     (``checker.ordering.declare.add_memory_model``);
  6. ``context_restored`` (``add_context_check``), for the context rules;

at a parameter point (``checker.language.compile.Model``), over the model:
  1. ``variables``: ``LONG`` is 32 bits on a 32-bit kernel; a weak memory
     model's hidden variables join the state (``checker.ordering.install.prepare``);
  2. ``steps``: at a 32-bit point, plain 64-bit accesses in halves;
  3. ``finish``: the scheduler's steps, the memory model's machine under the
     actions, the canonical form for symmetry (``checker.explore.symmetry``)
     and the context rules (``checker.kernel.context``).

The engines then read the passed model.
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from checker.expr import And, Implies
from checker.explore.symmetry import Symmetry
from checker.kernel import tearing
from checker.kernel.context import ContextRules, _IrqsOff, _PreemptCount
from checker.kernel.tasks import Scheduler, add_task_model, has_tasks
from checker.language.declare import DISABLED, PropertyInfo, when
from checker.language.model import Environment, SpecInfo
from checker.ordering import declare as memory_declare
from checker.ordering import install as weak_memory


class KernelEnvironment(Environment):
    """The kernel's passes, composed in the order of the module's docstring."""

    def declare(self, si: SpecInfo, cls: type) -> None:
        add_task_model(si, cls)
        guard_irq_actions(si)
        super().declare(si, cls)
        tearing.add_ghosts(si)  # a spec with a Bits parameter: the slots of 32-bit accesses in halves
        memory_declare.add_memory_model(si, cls)  # a spec with access= annotations: --memory and its bounds
        add_context_check(si)

    def assumptions(self, si: SpecInfo, base: tuple[str, ...], memory: str | None) -> tuple[str, ...]:
        name = tearing.bits_param(si)
        if name is not None:  # the word size is a parameter: the 64-bit assumption is replaced
            base = (base[0], f"64-bit or 32-bit kernel ({name}=64|32: on 32, a plain 64-bit load or store is two "
                             f"32-bit accesses, atomic64_t and local64_t stay whole)") + base[2:]
        if memory not in (None, "sc"):
            base = memory_declare.assumptions(si, base, memory)
        return base

    def variables(self, model: Any) -> None:
        model.vars = tearing.resolve_types(model.info, model.params)  # LONG is 32 bits on a 32-bit kernel
        #: The memory model at this point (sc, tso, lkmm; checker.ordering): under tso and lkmm its hidden
        #: variables join the state and its machine fires the steps.
        model.weak = weak_memory.prepare(model)

    def steps(self, model: Any) -> None:
        bits = tearing.bits_param(model.info)
        #: A 32-bit point: plain 64-bit accesses in halves (checker.kernel.tearing), explorer only.
        model.tearing = bits is not None and getattr(model.params, bits) == 32
        if model.tearing:
            model.actions = tearing.split(model, model.actions)

    def finish(self, model: Any) -> None:
        #: The scheduler of a spec with tasks (checker.kernel.tasks), else None.
        model.scheduler = Scheduler(model) if has_tasks(model.info) else None
        if model.scheduler is not None:
            model.scheduler.task_actions = [a for a in model.actions
                                            if a.info.role in model.scheduler.task_roles and not a.info.builtin]
            model.state_cls._countercheck_model = model  # the scheduler's steps ask the model what a task can do
        if model.weak is not None:  # after the scheduler and the word checks: its fire wraps theirs
            model.state_cls._countercheck_weak = model.weak
            model.actions = weak_memory.install(model, model.weak, model.actions)
        model.symmetry = Symmetry(model)  # the canonical form is a declared-role matter
        if model.weak is not None:  # buffers and views name locations by CPU: not permuted, so no reduction
            model.symmetry.active = False
        model.rules = ContextRules(model)


#: The environment the package ``checker`` puts under the language.
KERNEL = KernelEnvironment()


def add_context_check(si: SpecInfo) -> None:
    """A spec with ``IRQS_OFF`` / ``PREEMPT_COUNT`` per-CPU variables gets ``context_restored``: every
    finished run has restored interrupts and preemption on every CPU.

    The context rules (checker.kernel.context) reject a spec that breaks it, as lockdep would; a bug
    spec that declares it ``expect_violated`` gets it as a property instead, with its shortest trace."""
    ctx = [n for n, v in si.vars.items() if v.kind == "percpu" and isinstance(v.type, (_IrqsOff, _PreemptCount))]
    if not ctx or si.terminal is None or "context_restored" in si.properties:
        return
    finished = si.terminal

    def context_restored(s: Any) -> Any:
        return Implies(finished(s), And(*[x == 0 for n in ctx for x in getattr(s, n)]))

    si.properties["context_restored"] = PropertyInfo(
        "context_restored", context_restored, "invariant", "holds", None,
        f"every finished run has restored {', '.join(ctx)} to 0 on every CPU (every return path re-enables "
        f"what it disabled)", si.file, si.line)


def guard_irq_actions(si: SpecInfo) -> None:
    """An interrupt handler runs on its CPU only while that CPU has interrupts on."""
    irq_vars = [n for n, v in si.vars.items() if v.kind == "percpu" and isinstance(v.type, _IrqsOff)]
    for name, a in list(si.actions.items()):
        if not a.irq or not irq_vars or getattr(a.fn, "__countercheck_irq_guarded__", False):
            continue
        fn = a.fn

        def handler(s: Any, cpu: Any, *args: Any, _fn: Any = fn) -> Any:
            r = _fn(s, cpu, *args)
            if r is DISABLED:
                return r
            return when(And(r.guard, *[getattr(s, v)[cpu] == 0 for v in irq_vars]), **r.updates)

        handler.__countercheck_irq_guarded__ = True  # type: ignore[attr-defined]
        handler.__wrapped__ = fn  # type: ignore[attr-defined]
        handler.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        si.actions[name] = dataclasses.replace(a, fn=handler)
