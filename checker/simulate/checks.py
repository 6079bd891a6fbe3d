# SPDX-License-Identifier: GPL-2.0-only
"""One simulation at one parameter point -> one Check per property (backend ``simulate``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from checker.engines.common import build_check, property_meta
from checker.report.trace import list_lines, shown_trace
from checker.result import Check
from checker.simulate import Simulation, simulate
from checker.language.compile import Model
from checker.language.lint import lint
from checker.language.model import Params

#: Steps per run when ``--depth`` is not given.
DEFAULT_DEPTH = 1000


@dataclass(frozen=True)
class SimulateOptions:
    """``verify --simulate RUNS --depth D --seed S``."""

    runs: int
    depth: int = DEFAULT_DEPTH
    seed: int = 0


def simulate_checks(cls: type, params: Params, opts: SimulateOptions, *, timeout: float | None = None,
                    run: int = 0, progress: Callable[[int, int], None] | None = None) -> list[Check]:
    """Simulate one spec at one parameter point; one Check per property. ``progress(runs done,
    runs)`` is told how far the walks are."""
    model = Model(cls, params)
    lint(model)
    sim = simulate(model, runs=opts.runs, depth=opts.depth, seed=opts.seed, timeout=timeout, progress=progress)
    si = model.info
    init = model.state_dict(model.initial_states()[0])
    checks = [build_check(cls, model, run)] if si.api is not None else []
    for name, out in sim.outcomes.items():
        start = out.initial_state or init
        expected, file, line, doc = property_meta(model, name)
        checks.append(Check(
            spec=model.name, file=file, line=line, params=params.shown(), property=name, kind=out.kind,
            backend="simulate", verdict=out.verdict, expected=expected, reason=out.reason,
            symmetry=False, states=len(sim.walks.fingerprints), transitions=sim.walks.steps,
            depth=sim.walks.max_depth, seconds=sim.seconds, run=run, initial_state=start,
            trace=out.trace, doc=doc, bug=name in cls.expect_violated, requested_symmetry=False, computed=params.computed,
            extra=_extra(sim, opts, name),
            trace_shown=(shown := shown_trace(model, start, out.trace) if out.trace else []),
            trace_text=list_lines(shown)))
    return checks


def _extra(sim: Simulation, opts: SimulateOptions, name: str) -> dict:
    d = {"method": "simulate", "runs": opts.runs, "max_depth": opts.depth, "seed": opts.seed,
         "runs_done": sim.walks.runs, "actions_seen": len(sim.walks.actions_seen),
         "actions_total": sim.actions_total}
    d.update(sim.found.get(name, {}))
    return d
