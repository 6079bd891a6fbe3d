# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker graph SPEC``: export the explored state graph to a file.

The graph is built at one parameter point: the first of the spec's default
explorer run (its smallest), with the ``--set`` values in place. It is the
unreduced graph (every concrete step, no symmetry reduction), so a size
limit guards it: past ``--max-states`` the export is refused (exit 2) with
how to make it smaller.
"""
from __future__ import annotations

import argparse
import sys

from checker.errors import UsageError
from checker.explore.graph import StateGraph, build_graph
from checker.report.graph_export import FORMATS, export_graph

#: States an export may hold unless --max-states says otherwise (a drawing past this is unreadable).
EXPORT_MAX_STATES = 5_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", metavar="SPEC", help="a built-in spec name, a spec file, or FILE.py:ClassName")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="set a parameter (one value each: the graph is of one point)")
    p.add_argument("--format", choices=FORMATS, default="dot")
    p.add_argument("--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument("--max-states", type=int, default=EXPORT_MAX_STATES, metavar="N",
                   help=f"refuse graphs of more than N states (default {EXPORT_MAX_STATES})")
    p.add_argument("--show", metavar="VAR,VAR", help="variables to print in each state's box (by default "
                   "only its number: each edge lists what its step changed, every node holds its whole state)")
    p.add_argument("--trace", metavar="PROPERTY", help="highlight the counterexample (or witness) of PROPERTY")


def main(args: argparse.Namespace) -> int:
    from checker import loader
    from checker.language.compile import Model
    from checker.verify import own_sets, param_points, parse_set

    if args.max_states < 1:
        raise UsageError("--max-states must be at least 1")
    classes = loader.resolve([args.spec])
    if len(classes) != 1:
        raise UsageError(f"{args.spec} holds {len(classes)} specs; name one as FILE.py:ClassName")
    cls = classes[0]
    sets = own_sets(cls, parse_set(args.set))
    several = [k for k, v in sets.items() if len(v) != 1]
    if several:
        raise UsageError(f"--set {', '.join(several)}: the graph is of one parameter point; give one value each")
    params = param_points(cls, sets, "explore")[0]
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
    if args.output:
        from checker.report.write import write_atomic

        try:
            write_atomic(args.output, text)
        except OSError as e:
            raise UsageError(f"cannot write {args.output}: {e.strerror}") from None
    else:
        sys.stdout.write(text)
    print(f"{cls.spec_name} at {params}: {sg.graph.number_of_nodes()} states, {sg.graph.number_of_edges()} "
          f"transitions (unreduced)" + (f"; {args.trace}: {len(edges)} steps highlighted" if edges else
                                        f"; {args.trace}: no counterexample to highlight" if args.trace else ""),
          file=sys.stderr)
    return 0


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
