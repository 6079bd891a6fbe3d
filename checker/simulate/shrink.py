# SPDX-License-Identifier: GPL-2.0-only
"""Shrinking a found trace to a short one that still decides the property.

A candidate is a sequence of step labels replayed from the run's initial
state; a step that is no longer enabled is skipped (as Hypothesis skips a
rule whose precondition fails), so every candidate yields a real trace: the
steps that did run. A candidate is kept when that trace reaches a state
that decides the property, cut at the first such state. Passes, each only
ever shortening:

1. drop every step of one CPU at a time (at 64 CPUs most are bystanders);
2. delta debugging (Zeller's ddmin): drop chunks, halving down to single steps;
3. lower each step's choice to an earlier declared value.

The steps fired over all replays are bounded (``budget``), so shrinking a
long trace stops with the shortest found so far: still a real trace, only
less short. The bound is a count, not a time, so shrinking is deterministic.
"""
from __future__ import annotations

from typing import Callable

from checker.language.compile import Label, Model

#: A state predicate: does this state decide the property (a violation, a witness)?
Decides = Callable[[tuple], bool]


class Replayer:
    """Replays label sequences from one initial state; counts the steps it fires."""

    def __init__(self, model: Model, initial: tuple, decides: Decides, *, at_end_only: bool = False):
        self.model = model
        self.initial = initial
        self.decides = decides
        self.at_end_only = at_end_only  # a deadlock is decided by the last state only
        self.fired = 0  # steps fired over all replays: what the budget bounds

    def run(self, labels: list[Label]) -> list[Label] | None:
        """The steps that ran, up to the first deciding state; None if no state decides."""
        model = self.model
        s = self.initial
        done: list[Label] = []
        if not self.at_end_only and self.decides(s):
            return done
        for label in labels:
            ai, cpu, ci = label
            act = model.actions[ai]
            t = model.fire(s, act, cpu, act.choices[ci])
            self.fired += 1
            if t is None:
                continue
            s = t
            done.append(label)
            if not self.at_end_only and self.decides(s):
                return done
        if self.at_end_only and self.decides(s):
            return done
        return None

    def states(self, labels: list[Label]) -> list[tuple]:
        """Every state of a trace whose steps must all be enabled (the final check)."""
        model = self.model
        out = [self.initial]
        for ai, cpu, ci in labels:
            act = model.actions[ai]
            t = model.fire(out[-1], act, cpu, act.choices[ci])
            if t is None:
                raise AssertionError(f"shrunk trace does not replay: {act.info.name} on cpu{cpu} is not enabled")
            out.append(t)
        return out


def shrink(rp: Replayer, labels: list[Label], *, budget: int = 100_000) -> list[Label]:
    """A short label sequence that, replayed strictly, reaches a deciding state at its end."""
    best = rp.run(labels)
    if best is None:
        raise AssertionError("the found trace does not replay to a deciding state")

    def attempt(cand: list[Label]) -> bool:
        nonlocal best
        if rp.fired >= budget:
            return False
        got = rp.run(cand)
        if got is not None and len(got) < len(best):
            best = got
            return True
        return False

    # 1. one CPU's steps at a time (CPU ids ascending, steps without a CPU first).
    for cpu in sorted({lab[1] for lab in best}, key=lambda c: -1 if c is None else c):
        attempt([lab for lab in best if lab[1] != cpu])
    # 2. ddmin, one pass per chunk size (halving): after a removal the next chunk starts where the
    # removed one did, so a pass costs about len/size replays and all passes about 2 * len, not
    # the len^2 of restarting from the front after every success.
    size = len(best) // 2
    while size >= 1 and rp.fired < budget:
        i = 0
        while i < len(best) and rp.fired < budget:
            if not attempt(best[:i] + best[i + size:]):
                i += size
        size //= 2
    # 3. earlier choices, step by step (a trace of the same length with smaller values).
    i = 0
    while i < len(best):
        ai, cpu, ci = best[i]
        for lower in range(ci):
            if rp.fired >= budget:
                break
            cand = best[:i] + [(ai, cpu, lower)] + best[i + 1:]
            got = rp.run(cand)
            if got is not None and len(got) <= len(best) and got[:i + 1] == cand[:i + 1]:
                best = got
                break
        i += 1
    return best
