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


#: ``--engine auto``: a point's liveness graph is built by the interpreter up to this many states; a larger
#: one is built and searched in C (checker.compiled.liveness), as ``auto`` hands safety searches over.
AUTO_LIVE_STATES = 300


def liveness_for(cls: type, model: Model, run: int = 0, *, engine: str = "interpreted", max_states: int | None = None,
                 timeout: float | None = None, max_memory: int | None = None) -> list[Check]:
    """The liveness checks of ``model``: on the interpreter's state graph (``engine`` interpreted, or ``auto``
    for a graph of at most AUTO_LIVE_STATES states), else on the compiled engine (checker.compiled.liveness),
    which says so on each check; a point it cannot lower runs on the interpreter, saying why."""
    note = None
    if engine != "interpreted":
        if engine == "auto" and (max_states is None or max_states > AUTO_LIVE_STATES):
            small = build_graph(model, AUTO_LIVE_STATES)
            if small.complete:
                return liveness_checks(cls, model, small, run)
        elif engine == "auto":
            return liveness_checks(cls, model, graph_for(model, max_states), run)
        from checker.compiled.engine import Fallback
        from checker.compiled.liveness import NOTE, compiled_liveness

        try:
            g = compiled_liveness(model, max_states=max_states, timeout=timeout, max_memory=max_memory)
            return liveness_checks(cls, model, g, run, ("compiled", NOTE))
        except Fallback as e:
            note = f"interpreted: {e}"
    return liveness_checks(cls, model, graph_for(model, max_states), run, ("interpreted", note) if note else None)


def liveness_checks(cls: type, model: Model, sg: Any, run: int = 0,
                    engine: tuple[str, str | None] | None = None) -> list[Check]:
    """One Check per liveness property of the model, from its state graph (``sg``: the interpreter's
    StateGraph, or the compiled engine's CompiledGraph with its outcomes); ``engine``: (which, note)."""
    checks = []
    ab = model.abstraction
    compiled = getattr(sg, "outcomes", None)
    nodes = sg.nodes if compiled is not None else sg.graph.number_of_nodes()
    edges = sg.edges if compiled is not None else sg.graph.number_of_edges()
    for p in model.liveness:
        t0 = time.perf_counter()
        out = compiled[p.name] if compiled is not None else check_liveness(sg, p)
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
            states=nodes, transitions=edges, depth=None, engine=engine[0] if engine else None,
            engine_note=engine[1] if engine else None,
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
