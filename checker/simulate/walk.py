# SPDX-License-Identifier: GPL-2.0-only
"""Seeded random walks: the runs, the properties checked in every state, coverage.

Run ``r`` draws from ``random.Random(f"{seed}:{r}")`` (a string seed is
hashed with SHA-512, not Python's per-process salted ``hash``), so a run
depends only on the seed, its index, the model and the strategy rotation:
the same command finds the same trace, and run ``r`` replays alone.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable

from checker.errors import CheckerError
from checker.explore.search import _spec_exception
from checker.simulate.strategies import STRATEGIES, Steps
from checker.language.compile import Label, Model

DEADLOCK = "no_deadlock"


@dataclass
class Found:
    """The first run that decided a property, as it ran (before shrinking)."""

    run: int
    strategy: str
    initial: int  # index into model.initial_states()
    labels: list[Label]


@dataclass
class Walks:
    """What the runs saw: the deciding runs and the coverage."""

    runs: int = 0
    steps: int = 0
    max_depth: int = 0
    fingerprints: set[int] = field(default_factory=set)
    actions_seen: set[int] = field(default_factory=set)
    found: dict[str, Found] = field(default_factory=dict)
    stopped: str | None = None
    seconds: float = 0.0


def run_rng(seed: int, run: int) -> random.Random:
    """The random generator of one run, from the seed and the run number (a run replays alone)."""
    return random.Random(f"{seed}:{run}")


def walk(model: Model, *, runs: int, depth: int, seed: int, timeout: float | None = None,
         progress: Callable[[int, int], None] | None = None) -> Walks:
    """``runs`` random walks of at most ``depth`` steps; stops early once every property is decided.

    Properties are checked in every state a walk visits, the initial one
    included; a walk ends at ``depth`` or where nothing is enabled (a
    finished run, or a deadlock when ``@terminal`` is false there).
    """
    w = Walks()
    t0 = time.perf_counter()
    deadline = t0 + timeout if timeout else None
    steps = Steps(model)
    inits = model.initial_states()
    pending_inv = list(model.invariants)
    pending_some = list(model.sometimes)
    want_deadlock = True
    fps = w.fingerprints
    current: tuple | None = None
    try:
        for r in range(runs):
            if not (pending_inv or pending_some or want_deadlock):
                break
            if w.stopped or (deadline is not None and time.perf_counter() > deadline):
                w.stopped = "timeout"
                break
            if progress is not None:
                progress(r, runs)
            rng = run_rng(seed, r)
            strat = STRATEGIES[r % len(STRATEGIES)](steps, rng, depth)
            i0 = rng.randrange(len(inits))
            s = current = inits[i0]
            labels: list[Label] = []
            w.runs += 1
            for k in range(depth + 1):
                fps.add(hash(s))  # ints and tuples of ints hash the same in every process
                if pending_inv:
                    hit = [p for p in pending_inv if not p.fn(s)]
                    if hit:
                        for p in hit:
                            w.found[p.name] = Found(r, strat.describe(), i0, list(labels))
                        pending_inv = [p for p in pending_inv if p.name not in w.found]
                if pending_some:
                    hit = [p for p in pending_some if p.fn(s)]
                    if hit:
                        for p in hit:
                            w.found[p.name] = Found(r, strat.describe(), i0, list(labels))
                        pending_some = [p for p in pending_some if p.name not in w.found]
                if k == depth:
                    break
                if deadline is not None and (k & 1023) == 1023 and time.perf_counter() > deadline:
                    w.stopped = "timeout"  # a long run stops too; its states so far count
                    break
                got = strat.pick(s)
                if got is None:
                    if want_deadlock and not model.is_terminal(s):
                        w.found[DEADLOCK] = Found(r, strat.describe(), i0, list(labels))
                        want_deadlock = False
                    break
                label, s = got
                current = s
                labels.append(label)
                w.actions_seen.add(label[0])
            w.steps += len(labels)
            w.max_depth = max(w.max_depth, len(labels))
    except (CheckerError, MemoryError):  # out of memory is a limit, not the spec's fault
        raise
    except Exception as e:  # an exception inside spec code: say where and in which state
        raise _spec_exception(model, e, current) from None
    w.seconds = time.perf_counter() - t0
    return w
