# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker graph SPEC``: export the explored state graph to a file.

The graph is built at one parameter point: the first of the spec's default
explorer run (its smallest), with the ``--set`` values in place. It is the
unreduced graph (every concrete step, no symmetry reduction), so a size
limit guards it: past ``--max-states`` the export is refused (exit 2) with
how to make it smaller.

With ``--trace-only --trace PROPERTY`` it draws instead the trace ``verify``
prints for that property at that point (the explorer's shortest, with
symmetry reduction; a liveness lasso from the unreduced graph) as a sequence
chart: DOT, Mermaid (GitHub draws it) or SVG (``checker.report.sequence``).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from typing import Any

from checker.errors import UsageError
from checker.explore.graph import StateGraph, build_graph
from checker.report.graph_export import FORMATS, export_graph

#: What --trace-only writes: a sequence chart in DOT, Mermaid, or SVG (DOT drawn by Graphviz).
CHART_FORMATS = ("dot", "mermaid", "svg")
#: States an export may hold unless --max-states says otherwise (a drawing past this is unreadable).
EXPORT_MAX_STATES = 5_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``graph`` command's options."""
    p.add_argument("spec", metavar="SPEC", help="a built-in spec name, a spec file, or FILE.py:ClassName")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="set a parameter (one value each: the graph is of one point)")
    p.add_argument("--format", choices=FORMATS + CHART_FORMATS[1:], default="dot",
                   help="the state graph: dot, graphml or json; with --trace-only: dot, mermaid or svg")
    p.add_argument("--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument("--max-states", type=int, default=None, metavar="N",
                   help=f"refuse graphs of more than N states (default {EXPORT_MAX_STATES}); with --trace-only, "
                        "stop the search after N states (default: no limit)")
    p.add_argument("--show", metavar="VAR,VAR", help="variables to print in each state's box (by default "
                   "only its number: each edge lists what its step changed, every node holds its whole state)")
    p.add_argument("--trace", metavar="PROPERTY", help="highlight the counterexample (or witness) of PROPERTY")
    p.add_argument("--trace-only", action="store_true",
                   help="draw only PROPERTY's trace, as verify finds it, as a sequence chart: a lifeline per "
                        "actor (--format dot, mermaid for GitHub, or svg, which needs Graphviz's dot)")


def main(args: argparse.Namespace) -> int:
    """``graph``: export one parameter point's unreduced state graph (DOT, GraphML or JSON), or with
    ``--trace-only`` one property's trace as a sequence chart; the exit code."""
    from checker.language.compile import Model

    if args.max_states is not None and args.max_states < 1:
        raise UsageError("--max-states must be at least 1")
    if args.trace_only or args.format in CHART_FORMATS[1:]:
        return trace_chart(args)
    args.max_states = args.max_states or EXPORT_MAX_STATES
    cls, params = _point(args)
    model = Model(cls, params)
    sg = build_graph(model, args.max_states)
    if not sg.complete:
        raise UsageError(f"the state graph of {cls.spec_name} at {params} has more than {args.max_states} states; "
                         f"export a smaller point (smaller --set values: fewer CPUs, fewer ops, a smaller batch) "
                         f"or raise --max-states")
    edges, loop_start = trace_edges(sg, args.trace) if args.trace else (None, None)
    show = tuple(x.strip() for x in args.show.split(",") if x.strip()) if args.show else None
    if show:
        from checker.report.graph_export import known_names

        unknown = [x for x in show if x not in known_names(sg)]
        if unknown:
            raise UsageError(f"--show {', '.join(unknown)}: no such variable; the state's variables are: "
                             f"{', '.join(sorted(n for n in known_names(sg) if '[' not in n))}")
    text = export_graph(sg, args.format, edges, loop_start, show)
    _emit(args.output, text)
    print(f"{cls.spec_name} at {params}: {sg.graph.number_of_nodes()} states, {sg.graph.number_of_edges()} "
          f"transitions (unreduced)" + (f"; {args.trace}: {len(edges)} steps highlighted (the trace alone, a "
                                                 f"chart per actor: add --trace-only)" if edges else
                                        f"; {args.trace}: no counterexample to highlight" if args.trace else ""),
          file=sys.stderr)
    return 0


def _emit(path: str | None, text: str) -> None:
    """``text`` to ``path`` (whole or not at all: ``checker.report.write``), or to stdout."""
    if path:
        from checker.report.write import write_atomic

        try:
            write_atomic(path, text)
        except OSError as e:
            raise UsageError(f"cannot write {path}: {e.strerror}") from None
    else:
        sys.stdout.write(text)


def _point(args: argparse.Namespace) -> tuple[type, Any]:
    """The spec class and its one parameter point (the first of its explore sweep, with --set in place)."""
    import checker.loader as loader
    from checker.verify import own_sets, param_points, parse_set

    classes = loader.resolve([args.spec])
    if len(classes) != 1:
        raise UsageError(f"{args.spec} holds {len(classes)} specs; name one as FILE.py:ClassName")
    cls = classes[0]
    sets = own_sets(cls, parse_set(args.set))
    several = [k for k, v in sets.items() if len(v) != 1]
    if several:
        raise UsageError(f"--set {', '.join(several)}: the graph is of one parameter point; give one value each")
    return cls, param_points(cls, sets, "explore")[0]


def trace_chart(args: argparse.Namespace) -> int:
    """``--trace-only``: the trace verify prints for PROPERTY at the point, as a sequence chart."""
    from checker.engines.explore import explore_checks

    if not args.trace_only:
        raise UsageError(f"--format {args.format} draws a trace: add --trace-only --trace PROPERTY")
    if not args.trace:
        raise UsageError("--trace-only draws one property's trace: name it with --trace PROPERTY")
    if args.format not in CHART_FORMATS:
        raise UsageError(f"--trace-only draws a sequence chart: --format {' , '.join(CHART_FORMATS)}, "
                         f"not {args.format}")
    if args.show:
        raise UsageError("--show picks the variables in the state graph's boxes; a trace chart shows every store")
    cls, params = _point(args)
    every = explore_checks(cls, params, max_states=args.max_states)
    checks = [c for c in every if c.property == args.trace]
    if not checks:
        known = ", ".join(sorted({c.property for c in every}))
        raise UsageError(f"--trace {args.trace}: {cls.spec_name} has no such property at this point; its "
                         f"properties: {known}")
    c = checks[0]
    where = f"{cls.spec_name} at " + " ".join(f"{k}={v}" for k, v in c.params.items())
    if not c.trace_shown:
        if c.verdict == "inconclusive":
            print(f"{where}: {c.property} is inconclusive ({c.reason}): no trace to draw; raise --max-states",
                  file=sys.stderr)
            return 3
        raise UsageError(f"{where}: {c.property} {c.verdict} with no trace to draw; choose a point where it fails "
                         f"(--set) or another property")
    title = f"{c.spec}.{c.property} {c.verdict} after {len(c.trace)} steps; " + " ".join(
        f"{k}={v}" for k, v in c.params.items())
    text = chart(c.trace_shown, title, args.format)
    _emit(args.output, text)
    print(f"{where}: {c.property} {c.verdict}, {len(c.trace)} steps drawn ({args.format})", file=sys.stderr)
    return 0


def chart(shown: list, title: str, fmt: str) -> str:
    """The sequence chart in ``fmt``: DOT, Mermaid, or SVG drawn by Graphviz's ``dot`` from the DOT."""
    from checker.report.sequence import to_dot, to_mermaid

    if fmt == "mermaid":
        return to_mermaid(shown, title)
    dot = to_dot(shown, title)
    if fmt == "dot":
        return dot
    exe = shutil.which("dot")
    if exe is None:
        raise UsageError("--format svg needs Graphviz's dot, which is not installed (apt-get install graphviz, "
                         "brew install graphviz); or write --format dot and draw it elsewhere")
    r = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise UsageError(f"Graphviz's dot could not draw the chart: {r.stderr.strip()[:500]}")
    return r.stdout


def trace_edges(sg: StateGraph, name: str) -> tuple[list[tuple[int, int, int]], int | None]:
    """The graph edges of a property's trace: the shortest path to the first state violating an
    invariant (or witnessing a ``sometimes``, or deadlocked), or a liveness lasso."""
    from checker.explore.liveness import check_liveness

    model = sg.model
    live = {p.name: p for p in model.liveness}
    if name in live:
        out = check_liveness(sg, live[name])
        return (out.lasso.edges, out.lasso.loop_start) if out.lasso else ([], None)
    props = {p.name: p for p in model.properties}
    if name == "no_deadlock":
        def hit(s: tuple, n: int) -> bool:
            return sg.graph.out_degree(n) == 0 and not model.is_terminal(s)
    elif name in props:
        p = props[name]

        def hit(s: tuple, n: int) -> bool:
            return bool(p.fn(s)) == (p.kind == "sometimes")
    else:
        known = ", ".join([*props, *live, "no_deadlock"])
        raise UsageError(f"--trace {name}: {model.name} has no such property at {model.params}; its properties: "
                         f"{known}")
    for n in sg.graph.nodes:  # discovery order: the first hit is at the least depth
        if hit(sg.state(n), n):
            return sg.prefix(n), None
    return [], None
