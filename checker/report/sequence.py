# SPDX-License-Identifier: GPL-2.0-only
"""A trace as a sequence chart: a lifeline per actor, the steps in order down the page.

In the style of herd7's and SPIN's message sequence charts: each actor (a
CPU, an interrupt handler on a CPU, a task) is a column headed by its name;
each step is a box on its actor's lifeline at its own row, with the call,
every store and the action's source line; a red arrow follows the
interleaving where it passes from one actor to another. ``to_dot`` writes
Graphviz DOT (``dot -Tsvg`` draws it); ``to_mermaid`` a Mermaid
``sequenceDiagram``, which GitHub draws in pull requests and issues.
"""
from __future__ import annotations

import re
import textwrap
from itertools import pairwise

from checker.report.lanes import source
from checker.report.trace import store_items
from checker.result import ShownStep

#: Header boxes, step boxes, the interleaving arrow, a lasso's loop arrow.
HEAD_FILL, STEP_FILL, ORDER_COLOR, LOOP_COLOR = "#dde6f0", "#fff8dc", "#c0392b", "#2e6fd8"


def lanes_of(shown: list[ShownStep | str]) -> list[tuple[str, str]]:
    """(lane, title) left to right: the lanes the steps use, each titled by its first step's actor."""
    titles: dict[str, tuple[tuple[int, int], str]] = {}
    for r in shown:
        if isinstance(r, ShownStep) and r.n > 0 and r.lane not in titles:
            titles[r.lane] = (r.rank, r.actor)
    return [(k, t) for k, (_r, t) in sorted(titles.items(), key=lambda kv: (kv[1][0], kv[0]))]


def step_lines(r: ShownStep, title: str) -> list[str]:
    """A step's box: ``3: add_store``, the actor when its lane is titled otherwise, the stores, the source."""
    lines = [f"{r.n}: {r.call}"] + ([f"({r.actor})"] if r.actor != title else [])
    return lines + store_items(r) + ([source(r)] if source(r) else [])


def _html(lines: list[str]) -> str:
    """A step box's HTML-like label: the call in bold, a store of the value already there in red."""
    out = []
    for i, x in enumerate(lines):
        t = x.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if i == 0:
            t = f"<B>{t}</B>"
        elif x.endswith("(same)"):
            t = f'<FONT COLOR="{ORDER_COLOR}">{t}</FONT>'
        out.append(t + '<BR ALIGN="LEFT"/>')
    return "".join(out)


def _dq(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(shown: list[ShownStep | str], title: str) -> str:
    """The chart in DOT: a column of nodes per lane kept in line by ``rank=same`` rows."""
    lanes = lanes_of(shown)
    index = {k: i for i, (k, _t) in enumerate(lanes)}
    titles = dict(lanes)
    out = ["digraph trace {",
           f'  graph [label="{"".join(_dq(x) + chr(92) + "l" for x in textwrap.wrap(title, 90))}", labeljust=l, labelloc=t, fontname="Helvetica", fontsize=12, newrank=true, '
           'nodesep=0.3, ranksep=0.2, splines=true];',
           '  node [fontname="Helvetica", fontsize=10];',
           '  edge [arrowhead=none, color="#7f8c8d", style=dashed, fontname="Helvetica", fontsize=9];']
    heads = [f"h{i}" for i in range(len(lanes))]
    for i, (_k, t) in enumerate(lanes):
        out.append(f'  h{i} [shape=box, style="filled,bold", fillcolor="{HEAD_FILL}", label="{_dq(t)}"];')
    out.append("  { rank=same; " + " ".join(heads) + " }")
    out += [f"  {a} -> {b} [style=invis];" for a, b in pairwise(heads)]
    prev = list(heads)  # each lane's last node: its lifeline goes on from there
    acted: list[tuple[str, int]] = []  # (node, step number) of the steps, in order
    for j, r in enumerate(shown):
        row = [f"r{j}_{i}" for i in range(len(lanes))]
        if isinstance(r, ShownStep) and r.n > 0:
            at = index[r.lane]
            label = _html(step_lines(r, titles[r.lane]))
            for i, name in enumerate(row):
                if i == at:
                    out.append(f'  {name} [shape=box, style="filled,rounded", fillcolor="{STEP_FILL}", '
                               f'label=<{label}>];')
                else:
                    out.append(f"  {name} [shape=point, width=0.02, color=\"#7f8c8d\"];")
            acted.append((row[at], r.n))
        else:  # a line across the chart (a lasso's loop, the start): a note in the first lane
            text = f"start: {r.note}" if isinstance(r, ShownStep) else r
            for i, name in enumerate(row):
                out.append(f'  {name} [shape=note, label="{_dq(text)}", fontsize=9];' if i == 0 else
                           f"  {name} [shape=point, width=0.02, color=\"#7f8c8d\"];")
        out.append("  { rank=same; " + " ".join(row) + " }")
        out += [f"  {a} -> {b} [weight=100];" for a, b in zip(prev, row, strict=True)]
        prev = row
    for (a, n), (b, _m) in pairwise(acted):
        if a.rsplit("_", 1)[1] != b.rsplit("_", 1)[1]:  # the interleaving passes to another actor
            out.append(f'  {a} -> {b} [style=solid, color="{ORDER_COLOR}", arrowhead=normal, constraint=false, '
                       f'tooltip="after step {n}"];')
    loop = next((r for r in shown if isinstance(r, str) and r.startswith("-- loop: steps ")), None)
    if loop is not None and acted:  # the lasso goes back to its loop's first step
        first = int(loop.split("steps ", 1)[1].split("..", 1)[0])
        back = next((node for node, n in acted if n == first), None)
        if back is not None:
            out.append(f'  {acted[-1][0]} -> {back} [style=bold, color="{LOOP_COLOR}", arrowhead=normal, '
                       f'constraint=false, label="repeats"];')
    out.append("}")
    return "\n".join(out) + "\n"


_MM = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;"}


def _mm(text: str) -> str:
    """Text safe in a Mermaid note: entity codes for what its grammar reads (``;`` ``#`` ``<`` ``>``)."""
    return re.sub(r"[#;<>]", lambda m: _MM[m.group()], text.replace(" -> ", " → "))


def to_mermaid(shown: list[ShownStep | str], title: str) -> str:
    """The chart as a Mermaid ``sequenceDiagram``: a participant per lane, a note per step, the
    interleaving as arrows between participants, a lasso's loop as a ``loop`` block."""
    lanes = lanes_of(shown)
    ids = {k: f"L{i}" for i, (k, _t) in enumerate(lanes)}
    titles = dict(lanes)
    out = ["sequenceDiagram", f"    %% {title}"]
    out += [f"    participant {ids[k]} as {_mm(t)}" for k, t in lanes]
    span = f"{ids[lanes[0][0]]},{ids[lanes[-1][0]]}" if len(lanes) > 1 else (ids[lanes[0][0]] if lanes else "")
    last: str | None = None
    depth = 0
    for r in shown:
        if isinstance(r, ShownStep) and r.n > 0:
            me = ids[r.lane]
            if last is not None and last != me:  # the interleaving passes to another actor
                out.append(f"    {'    ' * depth}{last}-->>{me}: then")
            out.append(f"    {'    ' * depth}Note over {me}: " + "<br/>".join(_mm(x) for x in step_lines(r, titles[r.lane])))
            last = me
        elif not span:
            continue
        elif isinstance(r, ShownStep):
            out.append(f"    Note over {span}: {_mm('start: ' + r.note)}")
        elif r.startswith("-- loop: "):
            out.append(f"    loop {_mm(r.strip('- ').replace('loop: ', ''))}")
            depth += 1
        elif r.startswith("-- back to") and depth:
            out.append("    end")
            depth -= 1
            out.append(f"    Note over {span}: {_mm(r.strip('- '))}")
        else:
            out.append(f"    {'    ' * depth}Note over {span}: {_mm(r.strip('- '))}")
    out += ["    end"] * depth
    return "\n".join(out) + "\n"
