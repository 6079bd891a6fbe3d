# SPDX-License-Identifier: GPL-2.0-only
"""Random simulation: seeded random walks far past the explorer's bound.

``simulate(model, runs=..., depth=..., seed=...)`` walks the model's
transition system (``Model.fire``, the explorer's own step function) with
the scheduling strategies of ``strategies.py`` rotated across runs, checks
every invariant and ``sometimes`` in every state visited, and shrinks what
it finds (``shrink.py``). It is honest about what it is:

- an invariant violated (or a deadlock) is ``violated``, with a real trace,
  replayed step by step from the initial state before it is reported;
- a ``sometimes`` seen is ``holds``, with its (real, shrunk) witness;
- everything else is ``inconclusive``, with the coverage as the reason
  (runs, depth, distinct states, actions seen). A random walk never shows
  that an invariant holds, nor that a ``sometimes`` is unreachable.

Limits: the lockdep-style context rules are the explorer's (they judge the
spec, not a run); distinct states are counted by fingerprint (Python's
``hash`` of the state tuple, deterministic for ints), without symmetry.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from checker.errors import CheckerError
from checker.explore.paths import make_step
from checker.explore.search import _spec_exception
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Outcome
from checker.simulate.shrink import Replayer, shrink
from checker.simulate.walk import DEADLOCK, Found, Walks, walk
from checker.language.compile import Model

#: Steps the shrinker may fire per property (over all its replays).
SHRINK_BUDGET = 100_000


@dataclass
class Simulation:
    """Per-property outcomes of a simulation, with its coverage."""

    spec: str
    params: dict[str, Any]
    runs: int
    depth: int
    seed: int
    walks: Walks
    actions_total: int
    outcomes: dict[str, Outcome]
    #: property -> how it was found: run, strategy, trace length before and after shrinking.
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Walking and shrinking.
    seconds: float = 0.0

    @property
    def coverage(self) -> str:
        w = self.walks
        text = (f"simulated: {w.runs} runs x depth {self.depth}, {len(w.fingerprints)} distinct states, "
                f"{len(w.actions_seen)}/{self.actions_total} actions seen")
        return text + (f"; stopped: {w.stopped}" if w.stopped else "")


def simulate(model: Model, *, runs: int, depth: int, seed: int = 0, timeout: float | None = None,
             progress: Callable[[int, int], None] | None = None) -> Simulation:
    """Random walks of ``model``; see the module docstring for what the verdicts mean."""
    t0 = time.perf_counter()
    w = walk(model, runs=runs, depth=depth, seed=seed, timeout=timeout, progress=progress)
    sim = Simulation(model.name, model.params.shown(), runs, depth, seed, w, len(model.actions), {})
    several = len(model.initial_states()) > 1
    for p in (*model.properties, None):
        name, kind = (p.name, p.kind) if p is not None else (DEADLOCK, "deadlock")
        hit = w.found.get(name)
        if hit is None:
            sim.outcomes[name] = Outcome(name, kind, INCONCLUSIVE, sim.coverage)
            continue
        try:
            steps, start = _shrunk_trace(model, p, hit)
        except CheckerError:
            raise
        except AssertionError:
            raise  # a trace that does not replay is the simulator's bug, not the spec's
        except Exception as e:  # spec code raising in a state only a shrinking candidate reached
            raise _spec_exception(model, e, None) from None
        sim.outcomes[name] = Outcome(name, kind, HOLDS if kind == "sometimes" else VIOLATED, None, steps,
                                     model.state_dict(start) if several else None)
        sim.found[name] = {"found_in_run": hit.run, "strategy": hit.strategy,
                           "original_steps": len(hit.labels), "shrunk_steps": len(steps)}
    sim.seconds = time.perf_counter() - t0
    return sim


def _shrunk_trace(model: Model, p: Any, hit: Found) -> tuple[list, tuple]:
    """The shrunk trace of a found property, checked to replay and decide it."""
    start = model.initial_states()[hit.initial]
    if p is None:
        rp = Replayer(model, start, lambda s: not model.successors(s) and not model.is_terminal(s),
                      at_end_only=True)
    elif p.kind == "sometimes":
        rp = Replayer(model, start, lambda s: bool(p.fn(s)))
    else:
        rp = Replayer(model, start, lambda s: not p.fn(s))
    labels = shrink(rp, hit.labels, budget=SHRINK_BUDGET)
    states = rp.states(labels)  # raises unless every step is enabled in turn
    if not rp.decides(states[-1]):
        raise AssertionError(f"the shrunk trace of {p.name if p else DEADLOCK} does not reach a deciding state")
    return [make_step(model, lab, a, b) for lab, a, b in zip(labels, states, states[1:])], start
