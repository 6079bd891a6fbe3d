# SPDX-License-Identifier: GPL-2.0-only
"""The reachable state graph of a model, as a networkx multigraph.

Built breadth-first through the model's own ``successors`` (the same steps,
in the same fixed order, as the search loop), without symmetry reduction:
liveness, coverage and export all need every concrete step. Nodes are
numbered in discovery order and carry the state; each edge is one step,
keyed by its position among its source's successors, and carries the
step's label ``(action index, cpu, choice index)``. Two steps from one
state to another stay two edges, so the edge count is the explorer's
transition count.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checker.explore.paths import make_step
from checker.result import StopReason, Step
from checker.language.compile import Model

if TYPE_CHECKING:
    import networkx as nx

#: States a graph may hold unless told otherwise.
DEFAULT_MAX_STATES = 200_000


@dataclass
class StateGraph:
    """The graph, its initial nodes, and the BFS tree that gives shortest paths."""

    model: Model
    graph: nx.MultiDiGraph
    initial: list[int]
    #: node -> (predecessor, edge key) of the first step that reached it; None for initial nodes.
    parent: dict[int, tuple[int, int] | None]
    #: Transitions per action name (every action of the model, 0 when it never fired).
    fired: Counter = field(default_factory=Counter)
    #: None when every reachable state is in the graph, else why it stopped.
    stopped: str | None = None
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def state(self, node: int) -> tuple:
        return self.graph.nodes[node]["state"]

    def label(self, u: int, v: int, key: int) -> tuple:
        return self.graph.edges[u, v, key]["label"]

    def prefix(self, node: int) -> list[tuple[int, int, int]]:
        """Edges ``(u, v, key)`` of a shortest path from an initial node to ``node``."""
        path = []
        while self.parent[node] is not None:
            u, k = self.parent[node]
            path.append((u, node, k))
            node = u
        path.reverse()
        return path

    def start_of(self, node: int) -> int:
        """The initial node of the shortest path to ``node``."""
        while self.parent[node] is not None:
            node = self.parent[node][0]
        return node

    def steps(self, edges: list[tuple[int, int, int]]) -> list[Step]:
        return [make_step(self.model, self.label(u, v, k), self.state(u), self.state(v)) for u, v, k in edges]


def build_graph(model: Model, max_states: int | None = DEFAULT_MAX_STATES) -> StateGraph:
    """Every state reachable from the initial states, up to ``max_states`` of them.

    Past the limit the graph is cut (``stopped`` is ``max_states``): states
    already found keep every step to a found state, the others are dropped.
    """
    t0 = time.perf_counter()
    import networkx as nx  # here: a verify that draws no graph does not pay for its import

    g = nx.MultiDiGraph()
    ids: dict[tuple, int] = {}
    parent: dict[int, tuple[int, int] | None] = {}
    # Actions whose role has no CPU at this point cannot fire: they are not counted as dead.
    fired: Counter = Counter({a.info.name: 0 for a in model.actions if a.cpus})
    initial = []
    stopped = None
    for s0 in model.initial_states():
        if s0 not in ids:
            ids[s0] = len(ids)
            g.add_node(ids[s0], state=s0)
            parent[ids[s0]] = None
            initial.append(ids[s0])
    queue = list(initial)
    head = 0
    names = [a.info.name for a in model.actions]
    while head < len(queue):
        u = queue[head]
        head += 1
        s = g.nodes[u]["state"]
        for key, (label, t) in enumerate(model.successors(s)):
            v = ids.get(t)
            if v is None:
                if max_states is not None and len(ids) >= max_states:
                    stopped = StopReason.MAX_STATES
                    continue
                v = ids[t] = len(ids)
                g.add_node(v, state=t)
                parent[v] = (u, key)
                queue.append(v)
            g.add_edge(u, v, key=key, label=label)
            fired[names[label[0]]] += 1
    return StateGraph(model, g, initial, parent, fired, stopped, time.perf_counter() - t0)


def describe_label(model: Model, label: tuple) -> dict[str, Any]:
    """An edge's label as exports show it: cpu, action and choices."""
    name, cpu, choices = model.label_parts(label)
    return {"cpu": cpu, "action": name, "choices": choices}
