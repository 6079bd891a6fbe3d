# SPDX-License-Identifier: GPL-2.0-only
"""The state graph as a file: JSON (node-link), GraphML or DOT, with a trace highlighted.

JSON and GraphML need only networkx; DOT needs pydot (the optional extra
``pip install 'pydot>=1.4'``), and rendering it needs Graphviz's ``dot``.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from checker.errors import UsageError
from checker.explore.graph import StateGraph, describe_label
from checker.result import flatten

if TYPE_CHECKING:
    import networkx as nx

FORMATS = ("dot", "graphml", "json")


def state_text(sg: StateGraph, node: int, show: tuple[str, ...] | None = None) -> str:
    """The state's variables as ``k=v`` (only those named in ``show``, by variable or slot name)."""
    model = sg.model
    flat = flatten(model.state_dict(sg.state(node)))
    if show is not None:
        flat = {k: v for k, v in flat.items() if k in show or k.split("[")[0] in show}
    return " ".join(f"{k}={model.show_value(k, v)}" for k, v in flat.items())


def changes_text(sg: StateGraph, u: int, v: int) -> str:
    """What a step changed: ``local[0]: 0 -> 1``, one variable per line."""
    model = sg.model
    a, b = flatten(model.state_dict(sg.state(u))), flatten(model.state_dict(sg.state(v)))
    return "\n".join(f"{k}: {model.show_value(k, a[k])} -> {model.show_value(k, x)}"
                     for k, x in b.items() if a.get(k) != x)


def known_names(sg: StateGraph) -> set[str]:
    """The variable names a ``--show`` list may name in this graph."""
    model = sg.model
    flat = flatten(model.state_dict(sg.state(next(iter(sg.graph.nodes)))))
    return set(flat) | {k.split("[")[0] for k in flat}


def step_text(label: dict[str, Any]) -> str:
    """An edge's label: actor, action and choices."""
    who = "-" if label["cpu"] is None else f"cpu{label['cpu']}"
    args = ", ".join(f"{k}={v}" for k, v in label["choices"].items())
    return f"{who} {label['action']}" + (f"({args})" if args else "")


def export_graph(sg: StateGraph, fmt: str, trace: list[tuple[int, int, int]] | None = None,
                 loop_start: int | None = None, show: tuple[str, ...] | None = None) -> str:
    """The graph in ``fmt``; the edges of ``trace`` (and their states) are marked ``trace=1`` with
    their position, the loop of a lasso from ``loop_start`` on ``loop=1``.

    Labels stay readable at any size: a node's label is its number (``s12``) and the variables
    named in ``show``; an edge's is its step and the variables it changed. Every node also
    carries the whole state (``state_text``; DOT shows it as a tooltip)."""
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    import networkx as nx  # here: a run that exports no graph does not pay for its import

    model = sg.model
    on_trace = {e: i for i, e in enumerate(trace or [])}
    trace_nodes = {n for e in on_trace for n in e[:2]} | ({trace[0][0]} if trace else set())
    out = nx.MultiDiGraph(name=f"{model.name} {model.params}")
    for n in sg.graph.nodes:
        picked = state_text(sg, n, show) if show else ""
        attrs: dict[str, Any] = {"label": f"s{n}" + (f"\n{picked}" if picked else ""),
                                 "state_text": state_text(sg, n), "initial": int(n in sg.initial),
                                 "trace": int(n in trace_nodes)}
        if fmt == "json":
            attrs["state"] = model.state_dict(sg.state(n))
        out.add_node(n, **attrs)
    for u, v, k, lab in sg.graph.edges(keys=True, data="label"):
        d = describe_label(model, lab)
        pos = on_trace.get((u, v, k))
        changed = changes_text(sg, u, v)
        attrs = {"label": step_text(d) + (f"\n{changed}" if changed else ""), "changes": changed,
                 "action": d["action"], "cpu": -1 if d["cpu"] is None else d["cpu"],
                 "choices": json.dumps(d["choices"], sort_keys=True), "trace": int(pos is not None),
                 "step": -1 if pos is None else pos + 1,
                 "loop": int(pos is not None and loop_start is not None and pos >= loop_start)}
        out.add_edge(u, v, key=k, **attrs)
    if fmt == "json":
        try:
            data = nx.node_link_data(out, edges="edges")
        except TypeError:  # networkx before 3.4 names the keyword `link`
            data = nx.node_link_data(out, link="edges")
        return json.dumps(data, indent=1, sort_keys=True) + "\n"
    if fmt == "graphml":
        return "\n".join(nx.generate_graphml(out)) + "\n"
    return _dot(out)


def _dot(g: nx.MultiDiGraph) -> str:
    try:
        import pydot  # noqa: F401  (networkx's DOT writer needs it)
    except ImportError:
        raise UsageError("--format dot needs pydot, which is not installed: pip install 'pydot>=1.4' (or, in the checkout, pip install '.[graph]') "
                         "(or use --format json or graphml, which need only networkx)") from None
    for _n, d in g.nodes(data=True):
        d["shape"] = "box"
        d["tooltip"] = d.pop("state_text")
        if d["initial"]:
            d["peripheries"] = 2
        if d["trace"]:
            d["color"] = "red"
    for _u, _v, d in g.edges(data=True):
        if d["trace"]:
            d["color"] = "red" if not d["loop"] else "blue"
            d["penwidth"] = 2
            d["label"] = f"{d['step']}: {d['label']}"
    from networkx.drawing.nx_pydot import to_pydot

    p = to_pydot(g)
    return p.to_string()
