# SPDX-License-Identifier: GPL-2.0-only
"""The state graph: export (json, graphml, dot), trace highlighting, the size limit, coverage."""
import io
import json
import shutil
import subprocess
import sys

import networkx as nx
import pytest

from checker import explore
from checker.errors import UsageError
from checker.explore.graph import build_graph
from checker.graphcmd import trace_edges
from checker.report.graph_export import export_graph
from checker.language.compile import Model
from checker.specs.percpu_eager import PercpuEager
from checker.verify import verify
from fair_lock import FairLock

POINT = dict(ncpus=2, ops=2, batch=2, readers=0, summers=0)


@pytest.fixture(scope="module")
def eager():
    return build_graph(Model(PercpuEager(**POINT)))


def test_graph_counts_are_the_explorers_unreduced_counts(eager):
    full = explore(PercpuEager(**POINT), symmetry=False)
    assert (eager.graph.number_of_nodes(), eager.graph.number_of_edges()) == (full.states, full.transitions)
    assert (full.states, full.transitions) == (154, 294)
    assert sum(eager.fired.values()) == full.transitions


def test_json_and_graphml_exports_keep_every_state_and_step(eager):
    data = json.loads(export_graph(eager, "json"))
    assert (len(data["nodes"]), len(data["edges"])) == (154, 294)
    assert data["nodes"][0]["state"]["adders_pc"] == [0, 0] and data["nodes"][0]["initial"] == 1
    g = nx.read_graphml(io.BytesIO(export_graph(eager, "graphml").encode()))
    assert (g.number_of_nodes(), g.number_of_edges()) == (154, 294)
    actions = {d["action"] for _u, _v, d in g.edges(data=True)}
    # variant B's generated steps: the fast path, the decision to fold, lock, fold, sub, unlock
    assert actions == {f"percpu_counter_add_batch_b_{x}" for x in (
        "L17_atomic_ret", "L17_atomic_L25", "L25_raw_spin_lock", "L26_atomic", "L29_raw_cpu_sub", "L30_raw_spin_unlock")}


def test_dot_export_keeps_every_state_and_step():
    pydot = pytest.importorskip("pydot", reason="pydot is the graph extra: pip install '.[graph]'")
    full = explore(FairLock(fair=1), symmetry=False)
    (g,) = pydot.graph_from_dot_data(export_graph(build_graph(Model(FairLock(fair=1))), "dot"))
    nodes = [n for n in g.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    assert (len(nodes), len(g.get_edges())) == (full.states, full.transitions) == (8, 14)


def test_dot_without_pydot_names_the_dependency(eager, monkeypatch):
    monkeypatch.setitem(sys.modules, "pydot", None)
    with pytest.raises(UsageError, match=r"pip install 'pydot>=1.4'"):
        export_graph(eager, "dot")


def test_trace_highlights_the_shortest_counterexample(eager):
    edges, loop = trace_edges(eager, "read_bound_minus_one")
    full = explore(PercpuEager(**POINT), symmetry=False)
    assert len(edges) == len(full.outcomes["read_bound_minus_one"].trace) == 2 and loop is None
    data = json.loads(export_graph(eager, "json", edges))
    marked = sorted(e["step"] for e in data["edges"] if e["trace"])
    assert marked == [1, 2]
    assert sum(n["trace"] for n in data["nodes"]) == 3


def test_trace_highlights_a_lasso_loop():
    sg = build_graph(Model(FairLock(fair=1)))
    edges, loop = trace_edges(sg, "waiter_gets_the_lock")
    assert (len(edges), loop) == (4, 1)
    data = json.loads(export_graph(sg, "json", edges, loop))
    assert sorted(e["step"] for e in data["edges"] if e["loop"]) == [2, 3, 4]


def test_graph_command_renders_with_graphviz(cli, tmp_path):
    pytest.importorskip("pydot", reason="pydot is the graph extra: pip install '.[graph]'")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed: apt-get install graphviz (as .ci/run does)")
    out = tmp_path / "eager.dot"
    r = cli("graph", "percpu_eager", "--set", "ncpus=2", "--format", "dot", "--output", str(out),
            "--trace", "read_bound_minus_one")
    assert r.returncode == 0, r.stderr
    assert "154 states, 294 transitions (unreduced); read_bound_minus_one: 2 steps highlighted" in r.stderr
    svg = subprocess.run(["dot", "-Tsvg", str(out)], capture_output=True, text=True, timeout=120)
    assert svg.returncode == 0, svg.stderr
    assert "<svg" in svg.stdout and "raw_spin_lock" in svg.stdout


def test_graph_command_refuses_a_graph_past_the_limit(cli):
    r = cli("graph", "percpu_eager", "--set", "ncpus=3", "--format", "json", "--max-states", "100")
    assert r.returncode == 2
    assert "more than 100 states" in r.stderr and "smaller --set values" in r.stderr
    r = cli("graph", "percpu_eager", "--set", "ncpus=1,2", "--format", "json")
    assert r.returncode == 2 and "one parameter point" in r.stderr


def test_coverage_counts_every_transition_and_flags_dead_actions():
    from checker import And, action, when
    from fair_lock import PC

    class DeadRelease(FairLock):
        """A release whose guard can never hold (a spec bug a coverage run shows)."""

        @action(role="cpus")
        def release_twice(s, cpu):
            return when(And(s.pc[cpu] == PC.held, s.pc[cpu] == PC.idle), pc={cpu: PC.idle})

    ok = verify([FairLock], sets={"fair": (1, 2)}, mode="explore", coverage=True)
    cov = [c for c in ok.checks if c.kind == "coverage"]
    assert len(cov) == 1 and cov[0].verdict == "holds"
    assert cov[0].extra["fired"] == {"want": 12, "release": 8, "acquire_weak": 4, "acquire_strong": 4}
    assert sum(cov[0].extra["fired"].values()) == cov[0].transitions == 28
    bad = verify([DeadRelease], mode="explore", coverage=True)
    (c,) = [c for c in bad.checks if c.kind == "coverage"]
    assert (c.verdict, c.extra["dead"]) == ("violated", ["release_twice"])
    assert bad.exit_code == 1
