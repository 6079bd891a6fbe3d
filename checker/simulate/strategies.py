# SPDX-License-Identifier: GPL-2.0-only
"""Scheduling strategies: which enabled step a random walk takes next.

A step is picked in three levels, CPU, then action, then choice, each in a
random order, firing candidates through ``Model.fire`` until one is enabled.
At 64 CPUs that tests a few dozen guards per step instead of building every
successor (thousands), and a walk that finds nothing enabled has tried every
step, so "no successor" is exact (a deadlock or a finished run).

The strategies differ in which CPUs and actions they prefer; every one falls
back to the plain uniform pick when its preference has nothing enabled, so
none can stall a run that could go on:

- ``uniform``: a CPU with something enabled, uniformly; then an action.
- ``swarm``: per run, a random half of the actions, of each kept action's
  choices and of the CPUs (swarm testing: leaving steps out lets the others
  run deep, e.g. every add of one sign, so the locals fill up).
- ``sticky``: the CPU that ran last runs again with a per-run probability
  (0.5 to 0.95), so one CPU gets far through a multi-step kernel path.
- ``priority``: PCT-style: random CPU priorities, the highest with something
  enabled runs; at a few random steps the running CPU drops to the lowest
  priority (preemption at an arbitrary point).
"""
from __future__ import annotations

import random
from typing import Any, Iterator, Sequence

from checker.language.compile import CompiledAction, Label, Model

Pick = tuple[Label, tuple]
#: Action index -> the choice indices a run allows it.
Mask = dict[int, list[int]]


class Steps:
    """A model's steps grouped by CPU (``None`` for steps no CPU takes)."""

    def __init__(self, model: Model):
        self.model = model
        by_cpu: dict[Any, list[CompiledAction]] = {}
        for act in model.actions:
            for cpu in act.cpus:
                by_cpu.setdefault(cpu, []).append(act)
        # Deterministic order: steps without a CPU first, then CPU ids ascending.
        self.cpus: list[Any] = sorted(by_cpu, key=lambda c: -1 if c is None else c)
        self.by_cpu = by_cpu

    def on_cpu(self, s: tuple, cpu: Any, rng: random.Random, mask: Mask | None = None) -> Pick | None:
        """An enabled step of ``cpu`` (only the actions and choices in ``mask``, if given), or None."""
        fire = self.model.fire
        acts = self.by_cpu[cpu]
        if mask is not None:
            acts = [a for a in acts if a.index in mask]
        for act in _shuffled(acts, rng):
            allowed = range(len(act.choices)) if mask is None else mask[act.index]
            for ci in (allowed if len(allowed) == 1 else _shuffled(allowed, rng)):
                t = fire(s, act, cpu, act.choices[ci])
                if t is not None:
                    return (act.index, cpu, ci), t
        return None

    def uniform(self, s: tuple, rng: random.Random, cpus: list[Any] | None = None,
                mask: Mask | None = None) -> Pick | None:
        """An enabled step of a random CPU that has one (among ``cpus`` and ``mask`` if given)."""
        for cpu in _shuffled(self.cpus if cpus is None else cpus, rng):
            got = self.on_cpu(s, cpu, rng, mask)
            if got is not None:
                return got
        return None


def _shuffled(items: Sequence[Any], rng: random.Random) -> Iterator[Any]:
    """The items in a random order, drawn lazily (Fisher-Yates): a walk
    usually stops at the first few, so most of the shuffle is never paid."""
    items = list(items)
    n = len(items)
    for i in range(n):
        j = rng.randrange(i, n) if i < n - 1 else i
        items[i], items[j] = items[j], items[i]
        yield items[i]


class Uniform:
    """One run's scheduler: ``pick(state)`` -> (label, next state) or None when nothing is enabled.
    The others prefer some steps and fall back to this pick."""

    name = "uniform"

    def __init__(self, steps: Steps, rng: random.Random, depth: int):
        self.steps = steps
        self.rng = rng

    def pick(self, s: tuple) -> Pick | None:
        return self.steps.uniform(s, self.rng)

    def describe(self) -> str:
        return self.name


class Swarm(Uniform):
    """Swarm testing: per run, a random half of the actions, choices and CPUs is preferred."""
    name = "swarm"

    def __init__(self, steps: Steps, rng: random.Random, depth: int):
        super().__init__(steps, rng, depth)
        mask: Mask = {}
        for a in steps.model.actions:
            if rng.random() < 0.5:
                n = len(a.choices)
                mask[a.index] = [c for c in range(n) if rng.random() < 0.5] or [rng.randrange(n)]
        if not mask:
            a = rng.choice(steps.model.actions)
            mask[a.index] = list(range(len(a.choices)))
        self.mask = mask
        self.cpus = [c for c in steps.cpus if rng.random() < 0.5] or [rng.choice(steps.cpus)]

    def pick(self, s: tuple) -> Pick | None:
        # Relax the CPUs first, then the actions: a swarm's choice of steps outlives its CPUs' work.
        got = self.steps.uniform(s, self.rng, self.cpus, self.mask)
        if got is None:
            got = self.steps.uniform(s, self.rng, None, self.mask)
        return got if got is not None else self.steps.uniform(s, self.rng)

    def describe(self) -> str:
        names = []
        for a in self.steps.model.actions:
            if a.index in self.mask:
                kept = self.mask[a.index]
                if len(kept) == len(a.choices):
                    names.append(a.info.name)
                elif len(kept) <= 2:
                    names.append(f"{a.info.name}[{'|'.join(_show(a, c) for c in kept)}]")
                else:
                    names.append(f"{a.info.name}[{len(kept)}/{len(a.choices)} choices]")
        return f"swarm ({len(self.cpus)} CPUs; {', '.join(names)})"


def _show(act: CompiledAction, ci: int) -> str:
    return ",".join(f"{n}={v}" for n, v in zip(act.arg_names, act.choices[ci]))


class Sticky(Uniform):
    """The CPU that ran last runs again with a per-run probability, to get far along one path."""
    name = "sticky"

    def __init__(self, steps: Steps, rng: random.Random, depth: int):
        super().__init__(steps, rng, depth)
        self.p = rng.choice((0.5, 0.8, 0.95))
        self.last: Any = _NONE

    def pick(self, s: tuple) -> Pick | None:
        got = None
        if self.last is not _NONE and self.rng.random() < self.p:
            got = self.steps.on_cpu(s, self.last, self.rng)
        if got is None:
            got = self.steps.uniform(s, self.rng)
        if got is not None:
            self.last = got[0][1]
        return got

    def describe(self) -> str:
        return f"sticky (p={self.p})"


class Priority(Uniform):
    """PCT-style: random CPU priorities; the highest with a step enabled runs."""
    name = "priority"

    def __init__(self, steps: Steps, rng: random.Random, depth: int):
        super().__init__(steps, rng, depth)
        self.order = list(steps.cpus)
        rng.shuffle(self.order)  # highest priority first
        self.changes = frozenset(rng.randrange(depth) for _ in range(rng.randint(1, 3))) if depth else frozenset()
        self.step = 0
        self.last: Any = _NONE

    def pick(self, s: tuple) -> Pick | None:
        if self.step in self.changes and self.last is not _NONE:
            self.order.remove(self.last)  # the running CPU is preempted: lowest priority from now on
            self.order.append(self.last)
        self.step += 1
        for cpu in self.order:
            got = self.steps.on_cpu(s, cpu, self.rng)
            if got is not None:
                self.last = cpu
                return got
        return None

    def describe(self) -> str:
        return f"priority ({len(self.changes)} change points)"


_NONE = object()

#: Rotated across runs: run i uses STRATEGIES[i % len(STRATEGIES)].
STRATEGIES: tuple[type[Uniform], ...] = (Uniform, Swarm, Sticky, Priority)
