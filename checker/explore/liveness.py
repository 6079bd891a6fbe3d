# SPDX-License-Identifier: GPL-2.0-only
"""Liveness (``eventually``, ``leads_to``) on the state graph: fair SCCs and lassos.

A run is a maximal path of the graph. One that reaches a state with nothing
enabled stays there forever (TLA+'s stuttering at the end), so it violates
``eventually P`` if P never held. An infinite run ends up circling in one
strongly connected component; it counts only if it keeps the actions'
fairness (per action and CPU: a weakly fair step continuously enabled is
taken, a strongly fair step enabled again and again is taken).

For a goal (states or steps) the search removes the goal from the graph and
asks whether a trigger state (the initial states for ``eventually``, the P
states for ``leads_to``) reaches, without meeting the goal, a state with
nothing enabled or a fair cycle. Fair cycles come from the standard SCC
decomposition: in a component, a strongly fair step enabled somewhere but
never taken inside rules out the states where it is enabled (then the rest
is decomposed again); a weakly fair step enabled in every state but never
taken inside rules out the whole component.

The counterexample is a lasso: the shortest path to the trigger, a shortest
path on to the cycle, and a short cycle (one that takes each fair step the
component takes and visits a state where each other weakly fair step is
disabled). ``loop_start`` is the index of the cycle's first step; a run that
stops has ``loop_start`` equal to its length (the last state repeats).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from checker.explore.graph import StateGraph
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Step
from checker.language.declare import PropertyInfo

Edge = tuple  # (u, v, key)
Instance = tuple  # (action index, cpu): fairness is per action and CPU


@dataclass
class Lasso:
    """Where a liveness property fails: a trace and where its loop starts."""

    trace: list[Step]
    loop_start: int
    start: int  # the initial node the trace starts from
    stops: bool  # the run ends in a state with nothing enabled
    edges: list[Edge] = field(default_factory=list)  # the trace's graph edges (u, v, key)


@dataclass
class LivenessOutcome:
    """The verdict of one ``eventually`` or ``leads_to`` property, with its lasso when violated."""
    name: str
    kind: str
    verdict: str
    reason: str | None = None
    lasso: Lasso | None = None
    fair: bool = True
    fairness: dict[str, str] = field(default_factory=dict)  # action -> weak/strong, as used


def check_liveness(sg: StateGraph, prop: PropertyInfo) -> LivenessOutcome:
    """The verdict of one liveness property on a (complete) state graph."""
    model = sg.model
    fairness = {a.index: a.info.fair for a in model.actions if a.info.fair} if prop.fair else {}
    used = {model.actions[i].info.name: f for i, f in fairness.items()}
    if not sg.complete:
        return LivenessOutcome(prop.name, prop.kind, INCONCLUSIVE, sg.stopped, None, prop.fair, used)
    triggers, in_goal, goal_edge = _goal(sg, prop)
    lasso = find_lasso(sg, triggers, in_goal, goal_edge, fairness)
    return LivenessOutcome(prop.name, prop.kind, VIOLATED if lasso else HOLDS, None, lasso, prop.fair, used)


def _goal(sg: StateGraph, prop: PropertyInfo) -> tuple[list[int], Callable[[int], bool], Callable[[Edge], bool]]:
    """Trigger nodes, and the goal as a state test and a step test."""
    g = sg.graph
    nodes = list(g.nodes)
    values = {n: prop.fn(sg.state(n)) for n in nodes}
    if prop.kind == "leads_to":
        for r in values.values():
            if not (isinstance(r, tuple) and len(r) == 2):
                raise _bad_result(prop, r)
        triggers = [n for n in nodes if _truth(values[n][0])]
        goals = {n: values[n][1] for n in nodes}
    else:
        triggers = list(nodes) if prop.always else list(sg.initial)
        goals = values
    if any(callable(q) for q in goals.values()):
        def goal_edge(e: Edge) -> bool:
            u, v, _k = e
            q = goals[u]
            return _truth(q(sg.state(u), sg.state(v))) if callable(q) else _truth(q)

        return triggers, lambda n: False, goal_edge
    hit = {n for n, q in goals.items() if _truth(q)}
    return triggers, hit.__contains__, lambda e: False


def _truth(x: Any) -> bool:
    return bool(x)


def _bad_result(prop: PropertyInfo, r: Any) -> Exception:
    from checker.errors import SpecError

    return SpecError(f"{prop.name} is a @leads_to property and returned {r!r}; it returns the pair (P, Q), e.g.\n"
                     f"    return s.pc[0] == PC.acquire, s.pc[0] == PC.idle", file=prop.file, line=prop.line)


def find_lasso(sg: StateGraph, triggers: Iterable[int], in_goal: Callable[[int], bool],
               goal_edge: Callable[[Edge], bool], fairness: dict[int, str]) -> Lasso | None:
    """A shortest-prefix lasso from a trigger that avoids the goal, or None."""
    g = sg.graph
    # The graph without the goal: R. Enabledness is judged on the whole graph.
    succ: dict[int, list[tuple[int, int, Instance]]] = {}
    enabled: dict[int, set[Instance]] = {}
    for u in g.nodes:
        out = []
        en = set()
        for _u, v, k, lab in g.out_edges(u, keys=True, data="label"):
            inst = (lab[0], lab[1])
            en.add(inst)
            if not in_goal(u) and not in_goal(v) and not goal_edge((u, v, k)):
                out.append((v, k, inst))
        if not in_goal(u):
            succ[u] = out
        enabled[u] = en
    stops = {u for u in succ if g.out_degree(u) == 0}
    comp_of: dict[int, frozenset] = {}
    for comp in _fair_components(succ, set(succ), enabled, fairness):
        for n in comp:
            comp_of[n] = comp
    bad = stops | set(comp_of)
    if not bad:
        return None
    # Which nodes of R reach a bad node within R (backwards breadth-first).
    pred: dict[int, list[int]] = {}
    for u, out in succ.items():
        for v, _k, _i in out:
            pred.setdefault(v, []).append(u)
    doomed = set(bad)
    queue = deque(bad)
    while queue:
        v = queue.popleft()
        for u in pred.get(v, ()):
            if u not in doomed:
                doomed.add(u)
                queue.append(u)
    hits = sorted(t for t in triggers if t in doomed)  # node ids are in BFS order: the first is shallowest
    if not hits:
        return None
    t = hits[0]
    prefix = sg.prefix(t)
    onward = _bfs_path(succ, t, lambda n: n in bad, doomed)
    end = onward[-1][1] if onward else t
    edges = prefix + onward
    if end in stops:
        return Lasso(sg.steps(edges), len(edges), sg.start_of(t), True, edges)
    loop = _fair_loop(succ, end, comp_of[end], enabled, fairness)
    return Lasso(sg.steps(edges + loop), len(edges), sg.start_of(t), False, edges + loop)


def _fair_components(succ: dict[int, list], nodes: set[int], enabled: dict[int, set[Instance]],
                     fairness: dict[int, str]) -> list[frozenset]:
    """The fair non-trivial SCCs of R restricted to ``nodes``, decomposed as the module says."""
    import networkx as nx  # here: a verify with no liveness property does not pay for its import

    dg = nx.DiGraph()
    dg.add_nodes_from(nodes)
    dg.add_edges_from((u, v) for u in nodes for v, _k, _i in succ[u] if v in nodes)
    out = []
    work = [frozenset(c) for c in nx.strongly_connected_components(dg)]
    while work:
        comp = work.pop()
        if len(comp) == 1:
            (n,) = comp
            if not any(v == n for v, _k, _i in succ[n]):
                continue  # a single state without a loop: no cycle here
        taken = {inst for u in comp for v, _k, inst in succ[u] if v in comp}
        strong_bad = {i for u in comp for i in enabled[u]
                      if fairness.get(i[0]) == "strong" and i not in taken}
        if strong_bad:
            rest = {u for u in comp if not (enabled[u] & strong_bad)}
            if rest:
                sub = dg.subgraph(rest)
                work.extend(frozenset(c) for c in nx.strongly_connected_components(sub))
            continue
        weak = {i for u in comp for i in enabled[u] if fairness.get(i[0]) == "weak" and i not in taken}
        if any(all(i in enabled[u] for u in comp) for i in weak):
            continue  # a weakly fair step enabled throughout and never taken: no fair run stays here
        out.append(comp)
    return out


def _bfs_path(succ: dict[int, list], start: int, goal: Callable[[int], bool], within: set[int] | frozenset,
              first_step: bool = False) -> list[Edge]:
    """Edges of a shortest path in R from ``start`` to a node satisfying ``goal``, staying ``within``;
    with ``first_step`` the path has at least one edge (a cycle back to ``start``)."""
    if goal(start) and not first_step:
        return []
    back: dict[int, Edge] = {}
    seen = set() if first_step else {start}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for v, k, _i in succ[u]:
            if v not in within or v in seen:
                continue
            seen.add(v)
            back[v] = (u, v, k)
            if goal(v):
                path = []
                n = v
                while True:
                    e = back[n]
                    path.append(e)
                    n = e[0]
                    if n == start:
                        break
                path.reverse()
                return path
            queue.append(v)
    raise AssertionError("no path inside a strongly connected component")  # pragma: no cover


def _fair_loop(succ: dict[int, list], start: int, comp: frozenset, enabled: dict[int, set[Instance]],
               fairness: dict[int, str]) -> list[Edge]:
    """A cycle from ``start`` inside ``comp`` that keeps fairness: it takes a step of every fair
    instance the component takes, and visits a state disabling each weakly fair one it does not."""
    inside = {(u, v, k): inst for u in sorted(comp) for v, k, inst in succ[u] if v in comp}
    take = {inst for inst in inside.values() if fairness.get(inst[0])}
    weak = {i for u in comp for i in enabled[u] if fairness.get(i[0]) == "weak" and i not in take}
    visit = {i: {u for u in comp if i not in enabled[u]} for i in weak}
    loop: list[Edge] = []
    at = start

    def walk(edges: list[Edge]) -> None:
        nonlocal at
        for e in edges:
            loop.append(e)
            take.discard(inside[e])
            at = e[1]
            for i in [i for i, ns in visit.items() if at in ns]:
                del visit[i]

    for i in [i for i, ns in visit.items() if at in ns]:
        del visit[i]
    while take or visit:
        sources = {e[0]: e for e, inst in sorted(inside.items(), reverse=True) if inst in take}
        targets = set(sources) | set().union(*visit.values())
        walk(_bfs_path(succ, at, targets.__contains__, comp))
        if at in sources and inside[sources[at]] in take:
            walk([sources[at]])
    if at != start or not loop:
        walk(_bfs_path(succ, at, lambda n: n == start, comp, first_step=not loop))
    return loop
