# SPDX-License-Identifier: GPL-2.0-only
"""Checks made on the state graph: liveness properties and action coverage.

Both need every concrete step, so they run on the unreduced graph
(``checker.explore.graph``) whatever symmetry reduction the explorer used;
the checks say so (``symmetry`` false, ``extra["graph"]``).
"""
from __future__ import annotations

import time
from typing import Any

from checker.explore.graph import DEFAULT_MAX_STATES, StateGraph, build_graph
from checker.explore.liveness import check_liveness
from checker.report.trace import list_lines, shown_lasso
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Check
from checker.language.compile import Model


def graph_for(model: Model, max_states: int | None) -> StateGraph:
    """The state graph that the liveness checks of ``model`` search, within ``max_states``."""
    return build_graph(model, max_states if max_states is not None else DEFAULT_MAX_STATES)


def liveness_checks(cls: type, model: Model, sg: StateGraph, run: int = 0) -> list[Check]:
    """One Check per liveness property of the model, from its state graph."""
    checks = []
    ab = model.abstraction
    for p in model.liveness:
        t0 = time.perf_counter()
        out = check_liveness(sg, p)
        seconds = time.perf_counter() - t0 + sg.seconds / len(model.liveness)
        lasso = out.lasso
        start = model.state_dict(sg.state(lasso.start if lasso else sg.initial[0]))
        extra: dict[str, Any] = {"graph": "unreduced", "fairness": out.fairness if out.fair else "none"}
        if ab is not None:
            extra["abstraction"] = _describe(ab)
        trace = lasso.trace if lasso else []
        checks.append(Check(
            spec=model.name, file=p.file, line=p.line, params=model.params.shown(), property=p.name, kind=p.kind,
            backend="explore", verdict=out.verdict, expected=p.expect, reason=out.reason, symmetry=False,
            states=sg.graph.number_of_nodes(), transitions=sg.graph.number_of_edges(), depth=None,
            seconds=seconds, run=run, initial_state=start, trace=trace, loop_start=lasso.loop_start if lasso else None,
            doc=p.doc, bug=p.name in cls.expect_violated, extra=extra, computed=model.params.computed,
            trace_shown=(shown := shown_lasso(model, start, trace, lasso.loop_start, lasso.stops) if lasso else []),
            trace_text=list_lines(shown)))
    return checks


def _describe(ab: Any) -> str:
    parts = []
    if ab.freeze:
        parts.append("frozen: " + ", ".join(ab.freeze))
    if ab.modulo:
        parts.append("reduced modulo: " + ", ".join(ab.modulo))
    return "; ".join(parts)


def coverage_check(cls: type, runs: list[tuple[Model, StateGraph]], run: int = 0) -> Check:
    """Transitions per action over the explored points, without reductions; an action that fires at
    no point is dead (usually a spec bug: a guard that can never hold)."""
    total: dict[str, int] = {}
    per_point = []
    complete = True
    for model, sg in runs:
        complete = complete and sg.complete
        per_point.append({"params": model.params.shown(), "transitions": sg.graph.number_of_edges(),
                          "fired": dict(sg.fired)})
        for name, n in sg.fired.items():
            total[name] = total.get(name, 0) + n
    dead = sorted(n for n, k in total.items() if k == 0)
    verdict = VIOLATED if dead else (HOLDS if complete else INCONCLUSIVE)
    model = runs[0][0]
    c = Check(spec=model.name, file=model.info.file, line=model.info.line, params={}, property="coverage",
              kind="coverage", backend="explore", verdict=verdict, expected=HOLDS,
              reason=None if verdict != INCONCLUSIVE else "max_states", symmetry=False,
              states=sum(sg.graph.number_of_nodes() for _m, sg in runs),
              transitions=sum(sg.graph.number_of_edges() for _m, sg in runs), run=run,
              doc="every action fires somewhere in the explored points (counted without reductions)",
              extra={"fired": total, "dead": dead, "points": per_point})
    width = max(len(n) for n in total) if total else 0
    c.trace_text = [f"{n:<{width}}  {k:>9} transitions" + ("  DEAD: never fires" if k == 0 else "")
                    for n, k in total.items()]
    if dead:  # how to silence it, by name, when the step cannot run here on purpose
        c.trace_text.append(f"a step that exists only at other points: @action(..., applies=lambda p: ...) "
                            f"on {', '.join(dead)}; a guard that can never hold is a spec bug")
    return c
