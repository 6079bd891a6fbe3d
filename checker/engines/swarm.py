# SPDX-License-Identifier: GPL-2.0-only
"""One swarm search at one parameter point -> one Check per property (backend ``simulate``, method ``swarm``).

``checker.compiled.swarm`` runs the workers; here every path they found is
replayed on the interpreter, shrunk and replayed again
(``checker.simulate._shrunk_trace``) before it becomes a trace. A point the
compiled engine cannot lower runs as interpreted random walks
(``checker.simulate``) with the same seed, saying so.
"""
from __future__ import annotations

from typing import Any, Callable

from checker.compiled import swarm as csw
from checker.engines.common import build_check, property_meta
from checker.report.trace import list_lines, shown_trace
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Check, Outcome
from checker.simulate import _shrunk_trace
from checker.simulate.walk import Found
from checker.language.compile import Model
from checker.language.lint import lint
from checker.language.model import Params

#: The interpreter's states when a point cannot run as C (its breadth-first search, 10-20 K states a second).
FALLBACK_STATES = 200_000


def swarm_checks(cls: type, params: Params, opts: csw.SwarmOptions, *, timeout: float | None = None,
                 max_states: int | None = None, run: int = 0, symmetry: bool = True,
                 progress: Callable[[int, int], None] | None = None) -> list[Check]:
    """The swarm at one point; one Check per safety property and the deadlock check."""
    model = Model(cls, params)
    lint(model)
    try:
        low, sw = csw.search(model, opts, symmetry=symmetry, max_states=max_states, timeout=timeout)
    except csw.SwarmFallback as e:
        return _interpreted(cls, params, opts, str(e), timeout=timeout, max_states=max_states, symmetry=symmetry,
                            run=run)
    outcomes: dict[str, Outcome] = {}
    extras: dict[str, dict[str, Any]] = {}
    several = len(model.initial_states()) > 1
    reason = sw.summary()
    for k, p in [*enumerate(model.properties), (csw.DEADLOCK, None)]:
        name, kind = (p.name, p.kind) if p is not None else ("no_deadlock", "deadlock")
        hit = sw.hits.get(k)
        if hit is None:
            outcomes[name] = Outcome(name, kind, INCONCLUSIVE, reason)
            continue
        start, labs = csw.replayable(model, low, hit)  # every step enabled, as the C took it
        found = Found(hit.run, csw.describe(hit), hit.initial, labs)
        steps, start = _shrunk_trace(model, p, found)  # shrunk, replayed, and checked to decide it
        outcomes[name] = Outcome(name, kind, HOLDS if kind == "sometimes" else VIOLATED, None, steps,
                                 model.state_dict(start) if several else None)
        extras[name] = {"found_in_run": hit.run, "strategy": csw.describe(hit), "original_steps": len(labs),
                        "shrunk_steps": len(steps), "seconds_to_find": round(hit.seconds, 3)}
    base = {"method": "swarm", "seed": opts.seed, "workers": sw.workers, "runs_done": sw.runs,
            "coverage": round(sw.coverage, 6), "max_depth": opts.depth or csw.DEFAULT_DEPTH,
            "stopped": sorted(set(sw.stopped)), "compile_seconds": round(sw.compile_seconds, 3)}
    return _checks(cls, model, params, outcomes, extras, base, states=sw.states, transitions=sw.transitions,
                   depth=sw.depth, seconds=sw.seconds + sw.compile_seconds, run=run, engine="compiled", note=None)


def _interpreted(cls: type, params: Params, opts: csw.SwarmOptions, why: str, *, timeout: float | None,
                 max_states: int | None, symmetry: bool, run: int) -> list[Check]:
    """For a point the swarm cannot run as C: the interpreter's breadth-first search, to a state budget.
    Its violations and witnesses are real shortest traces; what it leaves undecided is inconclusive, and so
    is an invariant it found holding everywhere it looked (even if it looked everywhere: a swarm never
    says holds)."""
    from checker.explore import explore

    model = Model(cls, params)
    budget = min(max_states or FALLBACK_STATES, FALLBACK_STATES)
    r = explore(model, symmetry=symmetry, max_states=budget, timeout=timeout, engine="interpreted")
    wanted = {p.name for p in model.properties} | {"no_deadlock"}
    reason = (f"swarm: interpreted breadth-first search of {r.states:,} states ({why}); "
              f"{'every reachable state' if r.complete else f'stopped at {budget:,} states or the timeout'}")
    outcomes = {n: (o if o.verdict == VIOLATED or (o.kind == "sometimes" and o.verdict == HOLDS)
                    else Outcome(n, o.kind, INCONCLUSIVE, reason))
                for n, o in r.outcomes.items() if n in wanted}
    found = {n: {"found_in_run": 0, "strategy": "interpreted breadth-first search (shortest)",
                 "original_steps": len(o.trace), "shrunk_steps": len(o.trace)}
             for n, o in outcomes.items() if o.verdict != INCONCLUSIVE}
    base = {"method": "swarm", "seed": opts.seed, "workers": 1, "runs_done": 1,
            "max_depth": opts.depth or csw.DEFAULT_DEPTH, "interpreted": why}
    return _checks(cls, model, params, outcomes, found, base, states=r.states, transitions=r.transitions,
                   depth=r.depth, seconds=r.seconds, run=run, engine="interpreted",
                   note=f"interpreted breadth-first: {why}")


def _checks(cls: type, model: Model, params: Params, outcomes: dict[str, Outcome], extras: dict[str, dict],
            base: dict[str, Any], *, states: int, transitions: int, depth: int, seconds: float, run: int,
            engine: str, note: str | None) -> list[Check]:
    si = model.info
    init = model.state_dict(model.initial_states()[0])
    checks = [build_check(cls, model, run)] if si.api is not None else []
    for name, out in outcomes.items():
        start = out.initial_state or init
        expected, file, line, doc = property_meta(model, name)
        checks.append(Check(
            spec=model.name, file=file, line=line, params=params.shown(), property=name, kind=out.kind,
            backend="simulate", verdict=out.verdict, expected=expected, reason=out.reason,
            symmetry=False, states=states, transitions=transitions, depth=depth, seconds=seconds, run=run,
            initial_state=start, trace=out.trace, doc=doc, bug=name in cls.expect_violated,
            requested_symmetry=False, computed=params.computed, extra={**base, **extras.get(name, {})},
            trace_shown=(shown := shown_trace(model, start, out.trace) if out.trace else []),
            trace_text=list_lines(shown), engine=engine, engine_note=note))
    return checks
