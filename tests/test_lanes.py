# SPDX-License-Identifier: GPL-2.0-only
"""Counterexamples drawn per CPU: a lane per actor named by what it is, every store (one of the value
already there marked), the action's file:line, the width kept; and the same trace as a sequence chart."""
import io
import re
import shutil

import pytest

from checker import CpuId, Param, PerCpu, Role, Shared, Spec, action, graphcmd, invariant, terminal, when
from checker.cli import build_parser
from checker.engines.explore import explore_checks
from checker.errors import UsageError
from checker.graphcmd import chart
from checker.report.lanes import SAME_LEGEND, draw_lanes
from checker.report.sequence import to_dot, to_mermaid
from checker.report.text import trace_block
from checker.report.trace import list_lines
from checker.report.width import output_width
from checker.result import ShownStep, Store
from checker.verify import param_points
from conftest import FIXTURES
from tasks import ThisCpuInc


def trace_of(cls, prop, **sets):
    point = param_points(cls, {k: (v,) for k, v in sets.items()}, "explore")[0]
    (c,) = [c for c in explore_checks(cls, point) if c.property == prop]
    assert c.verdict == "violated" and c.trace_shown
    return c


@pytest.fixture(scope="module")
def lost_inc():
    """A task's __this_cpu_inc interrupted between its load and its store: the store loses the handler's add."""
    return trace_of(ThisCpuInc, "no_lost_inc", ncpus=1, ntasks=2, irq=1)


def cells(lines):
    """{step: {lane title: the text in that lane, lines joined}} of a chart drawn in lanes."""
    head = next(ln for ln in lines if ln.startswith("#"))
    cols = [(m.start(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", head)][1:]
    out, step = {}, None
    for ln in lines[2:]:
        m = re.match(r"\s*(\d+)  ", ln)
        if m:
            step = int(m.group(1))
        elif not ln.startswith(" "):
            continue
        for i, (at, title) in enumerate(cols):
            end = cols[i + 1][0] if i + 1 < len(cols) else len(ln)
            text = ln[at:end].strip()
            if text and text != "|":
                out.setdefault(step, {}).setdefault(title, []).append(text)
    return {n: {k: " ".join(v) for k, v in lanes.items()} for n, lanes in out.items()}


def test_a_lane_per_actor_named_by_what_it_is_and_the_lost_store_marked(lost_inc):
    lines = draw_lanes(lost_inc.trace_shown, 100)
    assert lines[0].split("  ")[0] == "#" and re.split(r"\s{2,}", lines[0]) == [
        "#", "irq on cpu0", "task1 on cpu0", "source"]
    steps = cells(lines)
    assert [list(steps[n]) for n in (1, 2, 3)] == [["task1 on cpu0", "source"], ["irq on cpu0", "source"],
                                                 ["task1 on cpu0", "source"]]
    assert steps[1]["task1 on cpu0"].startswith("read pc[1]: idle -> read,")
    assert steps[2]["irq on cpu0"] == "irq_inc counter[0]: 0 -> 1, irq_left[0]: 1 -> 0, adds: 0 -> 1"
    # the write stores counter[0] = 1 over the handler's 1: the lost update, shown and marked
    assert steps[3]["task1 on cpu0"].startswith("write counter[0] = 1 (same), pc[1]: read -> done,")
    assert lines[-1] == SAME_LEGEND
    assert [steps[n]["source"] for n in (1, 2, 3)] == ["tasks.py:33", "tasks.py:46", "tasks.py:40"]
    # the step's own data says the same: the slot was written although it did not change
    assert "counter[0]" in lost_inc.trace[2].unchanged and "counter[0]" not in lost_inc.trace[2].changes


def test_the_width_is_kept_and_values_wrap_inside_their_lane(lost_inc):
    for width in (100, 75, 60, 40):
        lines = draw_lanes(lost_inc.trace_shown, width)
        assert max(map(len, lines)) <= width, (width, lines)
        text = "\n".join(lines)
        assert "task1 on cpu0" in text and "counter[0] = 1" in text and "tasks.py:40" in text
    narrow = draw_lanes(lost_inc.trace_shown, 60)  # the source column gives way: each cell ends with it
    assert "source" not in narrow[0] and cells(narrow)[3]["task1 on cpu0"].endswith("tasks.py:40")


def test_more_actors_than_fit_are_drawn_one_a_line_each_named():
    rows = [ShownStep(i, f"cpu{i}", (0, 3 * i), f"cpu{i}", "add_fast(amount=-1)",
                      (Store(f"local[{i}]", "0", "-1"), Store("count", "5", "5", same=True)), "/x/eager.py", 200)
            for i in range(1, 9)]
    lines = draw_lanes(rows, 75)
    assert max(map(len, lines)) <= 75
    assert lines[0] == "1  cpu1: add_fast(amount=-1)  eager.py:200"
    assert lines[1] == "   local[1]: 0 -> -1, count = 5 (same)"


def test_the_list_style_keeps_one_line_per_step(lost_inc):
    assert lost_inc.trace_text == list_lines(lost_inc.trace_shown)
    listed = trace_block(lost_inc, style="list", width=40)  # not wrapped: for grep and diff
    assert listed[2:5] == ["  " + t for t in lost_inc.trace_text]
    assert len(lost_inc.trace_text) == 3
    assert re.match(r"3  task1 on cpu0  write +counter\[0\] = 1 \(same\), pc\[1\]: read -> done", lost_inc.trace_text[2])


class Movers(Spec):
    """Tasks of the spec's own making (Role(cpu=...)), numbered after the CPUs, each on the CPU on[t]."""

    kernel = "test fixture"
    ncpus = Param(2, domain=(2,))
    ntasks = Param(1, domain=(1,))
    cpus = Role("ncpus", symmetric=True)
    tasks = Role("ntasks", cpu=lambda s, t: s.on[t])
    on = PerCpu(0, type=CpuId, role="tasks", doc="the CPU the task runs on")
    count = Shared(0)

    @action(role="tasks")
    def bump(s, t):
        return when(s.count == 0, count=1)

    @action(role="cpus")
    def reset(s, c):
        return when(s.count == 1, count=1)

    @terminal
    def done(s):
        return s.count == 1

    @invariant
    def never_twice(s):
        """Fails after a bump and a store of the same value."""
        return s.count == 0


def test_a_task_of_a_cpu_role_is_a_task_on_its_cpu_not_a_cpu():
    c = trace_of(Movers, "never_twice")
    (row,) = c.trace_shown
    assert (row.actor, row.call) == ("task2 on cpu0", "bump")  # id 2 at ncpus=2: a task, on[2] = cpu0


def test_the_command_line_draws_lanes_at_the_width_asked(cli):
    r = cli("verify", "up_add_race", "--mode", "explore", "--set", "ops=1", "--set", "irq=1", "--width", "75",
            "--traces", "all")
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("up_add_race.every_add_kept violated after 3 steps")[1].split("reproduce:")[0]
    trace = block.splitlines()[2:-1]
    assert max(map(len, trace)) <= 75 and re.split(r"\s{2,}", trace[0].strip()) == [
        "#", "cpu0", "irq on cpu0", "source"]
    assert "count = -1 (same)" in block  # the store that loses the handler's add


# -- the sequence chart ---------------------------------------------------------------------------


def mermaid_problems(text):
    """What would stop Mermaid's sequenceDiagram grammar: undeclared participants, unbalanced blocks,
    characters its lexer reads (``;`` ``#`` outside an entity, ``<``/``>`` outside ``<br/>``)."""
    lines = text.splitlines()
    problems = [] if lines[0] == "sequenceDiagram" else ["first line"]
    declared, depth = set(), 0
    for ln in lines[1:]:
        s = ln.strip()
        if s.startswith("%%") or not s:
            continue
        if m := re.fullmatch(r"participant (\w+) as (.+)", s):
            declared.add(m.group(1))
            body = m.group(2)
        elif m := re.fullmatch(r"Note over (\w+)(?:,(\w+))?: (.+)", s):
            problems += [f"undeclared {p}" for p in m.groups()[:2] if p and p not in declared]
            body = m.group(3)
        elif m := re.fullmatch(r"(\w+)-->>(\w+): (.+)", s):
            problems += [f"undeclared {p}" for p in m.groups()[:2] if p not in declared]
            body = m.group(3)
        elif s.startswith("loop "):
            depth += 1
            body = s[5:]
        elif s == "end":
            depth -= 1
            problems += ["end without loop"] if depth < 0 else []
            continue
        else:
            problems.append(f"statement: {s}")
            continue
        bare = re.sub(r"#(?:\d+|lt|gt);|<br/>", "", body)
        problems += [f"unescaped {ch!r} in {body}" for ch in ";#<>" if ch in bare]
    return problems + (["unclosed loop"] if depth else [])


def test_the_mermaid_chart_is_a_sequence_diagram_with_a_note_per_step(lost_inc):
    text = to_mermaid(lost_inc.trace_shown, "this_cpu_inc.no_lost_inc")
    assert mermaid_problems(text) == []
    assert "participant L0 as irq on cpu0" in text and "participant L1 as task1 on cpu0" in text
    notes = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("Note over")]
    assert [n.split(":")[0] for n in notes] == ["Note over L1", "Note over L0", "Note over L1"]
    assert "3: write<br/>counter[0] = 1 (same)<br/>" in notes[2] and "→" in notes[2]
    assert text.count("-->>") == 2  # the interleaving passes from the task to the handler and back


def test_a_lasso_is_a_mermaid_loop_and_a_blue_arrow_back_in_dot():
    from fair_lock import FairLock
    from checker.live import graph_for, liveness_checks
    from checker.language.compile import Model

    point = param_points(FairLock, {"fair": (1,)}, "explore")[0]
    model = Model(FairLock, point)
    (c,) = [c for c in liveness_checks(FairLock, model, graph_for(model, None), 0)
            if c.property == "waiter_gets_the_lock"]
    text = to_mermaid(c.trace_shown, "lasso")
    assert mermaid_problems(text) == [] and "    loop steps 2..4 repeat forever" in text
    dot = to_dot(c.trace_shown, "lasso")
    assert re.search(r'-> r\d+_\d+ \[style=bold, color="#2e6fd8", arrowhead=normal, constraint=false, '
                     r'label="repeats"\]', dot)


def test_the_dot_chart_has_a_lifeline_per_actor_and_a_box_per_step(lost_inc):
    pydot = pytest.importorskip("pydot", reason="pydot is not installed: pip install '.[graph]'")
    (g,) = pydot.graph_from_dot_data(to_dot(lost_inc.trace_shown, "this_cpu_inc.no_lost_inc"))
    nodes = {n.get_name(): n for n in g.get_nodes() if n.get_name() not in ("node", "edge", "graph")}
    heads = sorted(n.get("label").strip('"') for k, n in nodes.items() if k.startswith("h"))
    assert heads == ["irq on cpu0", "task1 on cpu0"]
    boxes = [n for n in nodes.values() if (n.get("shape") or "") == "box" and (n.get("style") or "").find("rounded") > 0]
    assert len(boxes) == 3
    assert "counter[0] = 1 (same)" in boxes[2].get("label") and "tasks.py:40" in boxes[2].get("label")
    order = [e for e in g.get_edges() if (e.get("color") or "").strip('"') == "#c0392b"]
    assert len(order) == 2  # the red arrows of the interleaving: task to handler, handler to task
    lifeline = [e for e in g.get_edges() if e.get("weight") == "100"]
    assert len(lifeline) == 3 * 2  # each lane goes on through every row


def test_graph_trace_only_writes_mermaid_and_an_svg(cli, lost_inc):
    r = cli("graph", "up_add_race", "--set", "ops=1", "--set", "irq=1", "--trace", "every_add_kept",
            "--trace-only", "--format", "mermaid")
    assert r.returncode == 0, r.stderr
    assert mermaid_problems(r.stdout) == [] and "participant L1 as irq on cpu0" in r.stdout
    assert "every_add_kept violated, 3 steps drawn (mermaid)" in r.stderr
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz; CI installs it)")
    svg = chart(lost_inc.trace_shown, "this_cpu_inc.no_lost_inc", "svg")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "irq on cpu0" in svg
    assert "counter[0] = 1 (same)" in svg and "tasks.py:40" in svg


@pytest.mark.parametrize("argv, message", [
    (["--trace-only", "--format", "mermaid"], "--trace PROPERTY"),
    (["--format", "mermaid", "--trace", "every_add_kept"], "add --trace-only"),
    (["--format", "json", "--trace", "every_add_kept", "--trace-only"], "--format dot , mermaid , svg"),
    (["--trace", "no_such", "--trace-only"], "no such property"),
])
def test_graph_trace_only_says_what_is_missing(argv, message):
    args = build_parser().parse_args(["graph", f"{FIXTURES / 'fair_lock.py'}:FairLock", *argv])
    with pytest.raises(UsageError, match=re.escape(message)):
        graphcmd.main(args)


def test_a_width_too_narrow_to_draw_is_refused():
    with pytest.raises(UsageError, match="--width 20: draw at least 40 columns wide"):
        output_width(20)
    assert output_width(75) == 75 and output_width(None, io.StringIO()) == 100  # not a terminal: 100
