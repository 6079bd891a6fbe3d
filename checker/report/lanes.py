# SPDX-License-Identifier: GPL-2.0-only
"""A trace drawn as lanes: a column per actor, the interleaving read top to bottom.

::

    #  cpu0                     irq on cpu0           source
    -  -----------------------  --------------------  -----------------
    1  add_load(amount=-1)      |                     up_add_race.py:24
       pc[0]: idle -> loaded,   |
       loaded[0] = 0 (same),    |
       pending[0]: 0 -> -1,     |
       ops_left[0]: 1 -> 0,     |
       preempt[0]: 0 -> 1       |
    2  |                        irq_add(amount=-1)    percpu_up.py:95
       |                        count: 0 -> -1,
       |                        irq_left[0]: 1 -> 0,
       |                        exact: 0 -> -1
    3  add_store                |                     percpu_up.py:89
       count = -1 (same),       |
       pc[0]: loaded -> idle,   |
       loaded[0] = 0 (same),    |
       pending[0]: -1 -> 0,     |
       irqs[0] = false (same),  |
       preempt[0]: 1 -> 0,      |
       exact: -1 -> -2          |
    (same): a store of the value already there

Every line fits ``width`` columns: values wrap inside their lane, the source
column moves into the cells when the lanes need its room, and a trace with
more actors than fit side by side is drawn as one column naming the actor on
each step. ``(same)`` marks a store of the value already there.
"""
from __future__ import annotations

import os
import re
import textwrap

from checker.report.trace import store_items
from checker.result import Check, ShownStep

#: The narrowest a lane gets before the trace is drawn as one column instead.
MIN_LANE = 10
#: A lane this wide shows most stores on one line: the source column gives way to lanes narrower than this.
ROOMY = 26
#: The narrowest width a trace is drawn at (a number, a lane and the gaps).
MIN_WIDTH = 40
#: How a trace is drawn: ``lanes`` (a column per actor) or ``list`` (one line per step, never wrapped).
STYLES = ("lanes", "list")
#: What a chart that uses ``(same)`` says about it.
SAME_LEGEND = "(same): a store of the value already there"
GAP = "  "


def trace_lines(check: Check, style: str = "lanes", width: int = 100) -> list[str]:
    """A check's trace for the text report: lanes within ``width`` (``style="lanes"``), or the one line per
    step of ``trace_text`` (``style="list"``, and for traces that are not steps: build errors, coverage)."""
    if style == "lanes" and check.trace_shown:
        return draw_lanes(check.trace_shown, width)
    return list(check.trace_text)


def source(row: ShownStep) -> str:
    """``percpu_up.py:84``: the action's file name and line (the spec's path is in the reproduce line)."""
    if not row.file or row.line is None:
        return ""
    return f"{os.path.basename(row.file)}:{row.line}"


def draw_lanes(shown: list[ShownStep | str], width: int = 100) -> list[str]:
    """The trace as lanes, every line at most ``width`` columns (at least ``MIN_WIDTH``)."""
    width = max(width, MIN_WIDTH)
    steps = [r for r in shown if isinstance(r, ShownStep) and r.n > 0]
    titles: dict[str, str] = {}
    ranks: dict[str, tuple[int, int]] = {}
    for r in steps:
        titles.setdefault(r.lane, r.actor)
        ranks.setdefault(r.lane, r.rank)
    lanes = sorted(titles, key=lambda k: (ranks[k], k))
    numw = max((len(str(r.n)) for r in steps), default=1)
    where = {id(r): source(r) for r in steps}
    atw = max((len(w) for w in where.values()), default=0)
    if atw:
        atw = max(atw, len("source"))
    fixed = numw + len(GAP) * len(lanes)
    natural = {k: max([len(titles[k])] + [_longest(r, titles[k]) for r in steps if r.lane == k]) for k in lanes}
    # the source column when the lanes keep room enough beside it, else inside each cell
    widths = _share(natural, width - fixed - (atw + len(GAP) if atw else 0), MIN_LANE) if atw else None
    if widths is not None and any(widths[k] < min(natural[k], ROOMY) for k in lanes):
        widths = None  # the lanes need the source column's room more than it needs a column
    in_cells = widths is None and bool(atw)
    if widths is None:
        if in_cells:
            natural = {k: max(n, *(len(where[id(r)]) for r in steps if r.lane == k)) for k, n in natural.items()}
        widths = _share(natural, width - fixed, MIN_LANE)
    if widths is None or not lanes:
        return _stacked(shown, width, numw)
    out = _header(lanes, titles, widths, numw, atw if not in_cells else 0)
    for r in shown:
        if isinstance(r, str):
            out += textwrap.wrap(r, width, subsequent_indent="   ") or [""]
            continue
        if r.n == 0:
            out += textwrap.wrap(f"start: {r.note}", width, subsequent_indent="   ")
            continue
        cell = _cell(r, titles[r.lane], widths[r.lane])
        if in_cells and where[id(r)]:
            cell += _wrap(where[id(r)], widths[r.lane])
        for i, text in enumerate(cell):
            row = [f"{str(r.n) if i == 0 else '':>{numw}}"]
            for k in lanes:
                row.append(f"{text if k == r.lane else '|':<{widths[k]}}")
            if atw and not in_cells:
                row.append(where[id(r)] if i == 0 else "")
            out.append(GAP.join(row).rstrip())
    if any(s.same for r in steps for s in r.stores):
        out += textwrap.wrap(SAME_LEGEND, width)
    return out


def _header(lanes: list[str], titles: dict[str, str], widths: dict[str, int], numw: int, atw: int) -> list[str]:
    heads = {k: textwrap.wrap(titles[k], widths[k]) or [""] for k in lanes}
    depth = max(len(h) for h in heads.values())
    out = []
    for i in range(depth):
        row = [f"{'#' if i == 0 else '':>{numw}}"]
        row += [f"{heads[k][i] if i < len(heads[k]) else '':<{widths[k]}}" for k in lanes]
        if atw:
            row.append("source" if i == 0 else "")
        out.append(GAP.join(row).rstrip())
    rule = ["-" * numw] + ["-" * widths[k] for k in lanes] + (["-" * atw] if atw else [])
    return out + [GAP.join(rule)]


def _cell(r: ShownStep, title: str, w: int) -> list[str]:
    """A step's lines in its lane: the actor when it is not the lane's (a task that moved), the call,
    then the stores packed on lines of at most ``w``."""
    lines = textwrap.wrap(f"[{r.actor}]", w) if r.actor != title else []
    lines += _wrap_call(r.call, w)
    items = store_items(r)
    for j, item in enumerate(items):  # one store a line: a lane reads down, not across
        item += "," if j < len(items) - 1 else ""
        old, arrow, new = item.partition(" -> ")
        if len(item) > w and arrow:  # broken before its arrow: the new value under the old
            lines += _wrap(old, w) + _wrap("  -> " + new, w)
        else:
            lines += _wrap(item, w)
    return lines


def _wrap(text: str, w: int) -> list[str]:
    return textwrap.wrap(text, w, break_on_hyphens=False, subsequent_indent="  " if w > 12 else "") or [""]


def _wrap_call(call: str, w: int) -> list[str]:
    """A call broken after its ``(`` and ``, `` where it must be, never inside an argument that fits."""
    if len(call) <= w:
        return [call]
    tokens = re.findall(r"[^(,]*(?:\(|, |,|$)", call)
    lines, line = [], ""
    for tok in (t for t in tokens if t):
        if line and len(line) + len(tok.rstrip()) > w:
            lines.append(line.rstrip())
            line = "  "
        line += tok
    lines.append(line.rstrip())
    return [part for ln in lines for part in (_wrap(ln, w) if len(ln) > w else [ln])]


def _longest(r: ShownStep, title: str) -> int:
    """The widest single item of a step's cell: what its lane needs so that nothing wraps."""
    items = [r.call] + [x + "," for x in store_items(r)]
    if r.actor != title:
        items.append(f"[{r.actor}]")
    return max(len(x) for x in items)


def _share(natural: dict[str, int], room: int, least: int) -> dict[str, int] | None:
    """Each lane's width: what it needs when all fit in ``room``, else an even share of what is left after
    the lanes that need less than their share (None when a share would be under ``least``)."""
    if not natural:
        return {}
    if sum(natural.values()) <= room:
        return dict(natural)
    out: dict[str, int] = {}
    left, rest = room, dict(natural)
    while rest:
        share = left // len(rest)
        small = {k: n for k, n in rest.items() if n <= share}
        if not small:
            break
        out.update(small)
        left -= sum(small.values())
        for k in small:
            del rest[k]
    if rest:
        share = left // len(rest)
        if share < least:
            return None
        out.update((k, share) for k in rest)
    return out


def _stacked(shown: list[ShownStep | str], width: int, numw: int) -> list[str]:
    """One column, the actor named on each step: for more actors than fit side by side."""
    out: list[str] = []
    pad = " " * (numw + 2)
    for r in shown:
        if isinstance(r, str):
            out += textwrap.wrap(r, width, subsequent_indent="   ") or [""]
        elif r.n == 0:
            out += textwrap.wrap(f"start: {r.note}", width, subsequent_indent="   ")
        else:
            head, src = f"{r.n:>{numw}}  {r.actor}: {r.call}", source(r)
            if src and len(head) + 2 + len(src) <= width:  # the source on the step's line where it fits
                head, src = f"{head}  {src}", ""
            out += textwrap.wrap(head, width, subsequent_indent=pad + "  ", break_on_hyphens=False)
            body = store_items(r) + ([f"at {src}"] if src else [])
            out += textwrap.wrap(", ".join(body), width, initial_indent=pad, subsequent_indent=pad,
                                 break_on_hyphens=False)
    if any(s.same for r in shown if isinstance(r, ShownStep) for s in r.stores):
        out += textwrap.wrap(SAME_LEGEND, width)
    return out
