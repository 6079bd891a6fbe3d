# SPDX-License-Identifier: GPL-2.0-only
"""The explore engine: a spec at one point, explored exhaustively; liveness on its state graph.

Which explorer runs is a choice inside this engine, by name (``EXPLORERS``):
each is a function with ``checker.explore.explore``'s signature and result
type (an ``Exploration``), given as "module:function" (loaded on first use)
or as the function itself. A new explorer is one entry there, e.g.
``EXPLORERS["compiled"] = "checker.compiled:explore"`` (or a
``functools.partial`` fixing its own options), chosen by the request's
``explorer`` option (``verify(..., explorer="compiled")``).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from checker.engines import Request, _load
from checker.engines.common import DEADLOCK, build_check, property_meta, with_shown, with_sources
from checker.report.trace import list_lines, shown_trace
from checker.result import INCONCLUSIVE, NOT_APPLICABLE, Check, Exploration, Outcome
from checker.language.compile import Model
from checker.language.lint import lint
from checker.language.model import Params

#: Explorers by name: "module:function" (loaded on first use) or the function.
EXPLORERS: dict[str, str | Callable[..., Any]] = {"interpreted": "checker.explore:explore"}
DEFAULT_EXPLORER = "interpreted"
#: The reason of a check whose exploration ran out of memory.
MEMORY = "memory"


def explorer(name: str = DEFAULT_EXPLORER) -> Callable[..., Any]:
    """The explore function registered as ``name`` (the interpreted or the compiled explorer)."""
    from checker.errors import UsageError

    if name not in EXPLORERS:
        raise UsageError(f"no explorer {name!r}; the explorers are: {', '.join(EXPLORERS)}")
    ref = EXPLORERS[name]
    return ref if callable(ref) else _load(ref)


def out_of_memory(model: Model, symmetry: bool, seconds: float) -> Exploration:
    """The exploration that ran out of memory: nothing decided, every property inconclusive (``memory``)."""
    outcomes = {p.name: Outcome(p.name, p.kind, INCONCLUSIVE, MEMORY) for p in model.properties}
    outcomes[DEADLOCK] = Outcome(DEADLOCK, "deadlock", INCONCLUSIVE, MEMORY)
    return Exploration(model.name, model.params.shown(), symmetry, 0, 0, 0, seconds, False, MEMORY, outcomes,
                       model.state_dict(model.initial_states()[0]))


def undecided_checks(cls: type, params: Params, run: int, reason: str, backend: str = "explore") -> list[Check]:
    """The checks an exploration of ``cls`` at ``params`` makes, each inconclusive for ``reason``, without
    exploring: a run stopped before or during this point lists the same checks (the same JUnit cases
    and SARIF results) as a complete one. Quick after a spec's first point (a Ctrl-C before thousands
    of points must end at once): the properties the model adds to the spec's own are taken from it."""
    from checker.kernel.context import RULE_DOCS
    from checker.language.compile import LIVENESS

    si = cls.__countercheck_info__
    added = _added_properties(cls, params)
    if backend == "simulate":  # random walks judge the safety properties and deadlock, not the context rules
        added = tuple((n, k) for n, k in added if n not in RULE_DOCS and k not in LIVENESS)
    abstraction = si.abstraction_at(params) is not None
    props = [(p.name, p.kind) for p in si.properties.values() if p.applies is None or p.applies(params)]
    props += [(name, kind) for name, kind in added if name != DEADLOCK]
    safety = [] if abstraction else [(n, k) for n, k in props if k not in LIVENESS] + [(DEADLOCK, "deadlock")]
    if backend == "simulate":
        props = [(n, k) for n, k in props if k not in LIVENESS]
    checks = []
    if si.api is not None and not abstraction and backend == "explore":
        checks.append(Check(spec=cls.spec_name, file=si.file, line=si.line, params=params.shown(),
                            property="builds", kind="build", backend=backend, verdict=INCONCLUSIVE,
                            expected=si.builtin_expect.get("builds", "holds"), reason=reason, run=run,
                            doc="every symbol a caller uses exists in this configuration",
                            bug="builds" in cls.expect_violated))
    docs = {p.name: p for p in si.properties.values()}
    for name, kind in safety + [(n, k) for n, k in props if k in LIVENESS]:
        p = docs.get(name)
        checks.append(Check(spec=cls.spec_name, file=p.file if p else si.file, line=p.line if p else si.line,
                            params=params.shown(), property=name, kind=kind, backend=backend,
                            verdict=INCONCLUSIVE, expected=p.expect if p else si.builtin_expect.get(name, "holds"),
                            reason=reason, run=run, doc=p.doc if p else "", bug=name in cls.expect_violated))
    return checks


_ADDED: dict[type, tuple[tuple[str, str], ...]] = {}


def _added_properties(cls: type, params: Params) -> tuple[tuple[str, str], ...]:
    """(name, kind) of the checks an exploration of ``cls`` makes that the spec does not declare (the
    overflow check, the kernel's context rules), from its first point."""
    if cls not in _ADDED:
        model = Model(cls, params)
        own = cls.__countercheck_info__.properties
        added = [(p.name, p.kind) for p in (*model.properties, *model.liveness) if p.name not in own]
        if model.rules.active:  # nothing found yet: every rule that applies, undecided
            added += [(o.name, o.kind) for o in model.rules.outcomes(None, False, None).values()]
        _ADDED[cls] = tuple(added)
    return _ADDED[cls]


def never_reached(states: int, complete: bool) -> str:
    """The reason of a ``sometimes`` that no explored state satisfies."""
    return f"never reached in {states:,} states ({'exhaustive' if complete else 'limit hit'})"


class ExploreEngine:
    """The exhaustive explorer as an engine: a spec at a point in, its checks out."""
    name = "explore"

    def run(self, request: Request) -> list[Check]:
        o = request.options
        return explore_checks(
            request.cls, request.params, symmetry=o.get("symmetry", True),
            max_states=request.limits.max_states, timeout=request.limits.timeout, run=request.run,
            jobs=request.runner.jobs, cluster=request.runner.cluster, checkpoint=request.runner.checkpoint,
            resume=request.runner.resume, progress=request.progress, fingerprint=o.get("fingerprint", False),
            graphs=request.graphs, explorer_name=o.get("explorer", DEFAULT_EXPLORER), warn=request.warn,
            ran=request.ran,
            engine=o.get("engine", "interpreted"), max_memory=request.limits.max_memory, por=o.get("por", False))


def explore_checks(cls: type, params: Params, *, symmetry: bool = True, max_states: int | None = None,
                   timeout: float | None = None, run: int = 0, jobs: int | None = None, cluster: str | None = None,
                   checkpoint: Any = None, resume: bool = False, progress: Any = None,
                   fingerprint: bool = False, graphs: list | None = None,
                   explorer_name: str = DEFAULT_EXPLORER, warn: Callable[[str], None] | None = None,
                   engine: str = "interpreted", max_memory: int | None = None,
                   ran: set[tuple[str, str]] | None = None, por: bool = False) -> list[Check]:
    """Explore one spec at one parameter point; one Check per property. Liveness properties are
    checked on the unreduced state graph, which ``graphs`` (for coverage) also collects. ``warn`` is
    told, before the search starts, when the point looks out of the explorer's reach. ``ran``
    collects the bug spec's overrides that ran (checker.overrides)."""
    from checker.engines.estimate import out_of_reach
    from checker.live import graph_for, liveness_checks, liveness_for
    from checker.overrides import removed_steps, watching

    model = Model(cls, params)
    if warn is not None and max_states is None:  # with a state limit the run ends anyway
        why = out_of_reach(model)
        if why:
            warn(why)
    lint(model)
    overrides = getattr(cls, "__countercheck_overrides__", ())
    if ran is not None:
        ran.update((cls.__name__, n) for n in removed_steps(model, overrides))
    with watching() as seen:
        sg = graph_for(model, max_states) if graphs is not None else None
        if graphs is not None:
            graphs.append((model, sg))
        if sg is not None:  # (coverage needs the interpreter's graph: liveness is searched on it)
            live = liveness_checks(cls, model, sg, run) if model.liveness else []
        else:
            live = liveness_for(cls, model, run, engine=engine, max_states=max_states, timeout=timeout,
                                max_memory=max_memory) if model.liveness else []
        if model.abstraction is not None:  # unbounded runs with dropped values: liveness only
            if ran is not None:
                ran.update(seen)
                if any(c.engine == "compiled" for c in live):  # (steps run in C are not seen: assumed run)
                    ran.update((cls.__name__, n) for n in overrides)
            return live
        t0 = time.perf_counter()
        try:
            result = explorer(explorer_name)(
                model, symmetry=symmetry, max_states=max_states, timeout=timeout, jobs=jobs, cluster=cluster,
                checkpoint=checkpoint, resume=resume, fingerprint=fingerprint, engine=engine,
                max_memory=max_memory, progress=progress.exploring(f"{model.name} [{params}]") if progress else None,
                **({"por": True} if por else {}))  # partial-order reduction: the compiled explore() only
        except MemoryError:  # the search's states are gone with its frame: every check is undecided
            result = out_of_memory(model, symmetry, time.perf_counter() - t0)
    if ran is not None:
        ran.update(seen)
        # Calls made in other processes or in generated C are not seen here: assume those overrides ran.
        if (jobs or 1) > 1 or cluster is not None or result.engine == "compiled":
            ran.update((cls.__name__, n) for n in overrides)
    si = model.info
    checks = [build_check(cls, model, run)] if si.api is not None else []
    for name, out in result.outcomes.items():
        start = out.initial_state or result.initial_state
        expected, file, line, doc = property_meta(model, name)
        extra: dict[str, Any] = {} if result.omission_probability is None else {
            "fingerprint": True, "omission_probability": result.omission_probability}
        if out.kind == "sometimes" and out.verdict != "holds" and not (
                out.reason in (MEMORY, "killed") and (not result.states or result.engine == "compiled")):
            # say how hard it was looked for (not after a search lost to memory without its count, nor
            # one killed before it printed what it had found)
            extra["unreached"] = never_reached(result.states, result.complete)
        if out.bounded:  # reached under the task model's preemption/migration bounds
            extra["bounded"] = out.bounded
        if out.finding:
            extra["finding"] = out.finding
        if out.second_trace:  # an inversion: the locks taken in the other order or context
            second = with_shown(with_sources(out.second_trace, si.actions), si.vars)
            extra["second_trace"] = [st.to_json() for st in second]
        extra.update(getattr(result, "extra", None) or {})  # an explorer's own fields (e.g. which one ran)
        checks.append(Check(
            spec=model.name, file=file, line=line, params=params.shown(), property=name, kind=out.kind,
            backend="explore", verdict=out.verdict, expected=expected, reason=out.reason,
            symmetry=result.symmetry, states=result.states, transitions=result.transitions,
            depth=result.depth, seconds=result.seconds, run=run, initial_state=start,
            trace=out.trace, doc=doc, bug=name in cls.expect_violated, requested_symmetry=symmetry,
            trace_shown=(shown := _trace_shown(model, start, out)), trace_text=list_lines(shown), extra=extra, computed=params.computed,
            engine=result.engine, engine_note=result.engine_note))
    checks += not_applicable_checks(cls, model, run, "explore")
    return checks + live


def not_applicable_checks(cls: type, model: Model, run: int, backend: str) -> list[Check]:
    """The SC-only properties of a tso or lkmm point: not checked, each reported ``not_applicable`` with why
    and the weak-memory property that states the claim there."""
    from checker.ordering.declare import MEMORY

    out = []
    mem = MEMORY.names[model.params.memory] if model.not_applicable else ""
    for p in model.not_applicable:
        why = (f"sc_only: its meaning needs sequential consistency; not checked under {mem}"
               + (f" (under weak memory: {p.weak_counterpart})" if p.weak_counterpart else ""))
        out.append(Check(spec=model.name, file=p.file, line=p.line, params=model.params.shown(), property=p.name,
                         kind=p.kind, backend=backend, verdict=NOT_APPLICABLE, expected=p.expect, reason=why,
                         run=run, doc=p.doc, bug=p.name in cls.expect_violated, computed=model.params.computed))
    return out


def _trace_shown(model: Model, start: dict | None, out: Outcome) -> list:
    """The trace for people; an inversion's second trace after it."""
    if not out.trace:
        return []
    shown = shown_trace(model, start, out.trace)
    if out.second_trace:
        shown += ["-- and, in the other order or context:"] + shown_trace(model, start, out.second_trace)
    return shown
