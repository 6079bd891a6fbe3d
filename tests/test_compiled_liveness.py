# SPDX-License-Identifier: GPL-2.0-only
"""Liveness on the compiled engine (checker/compiled/liveness.py) agrees with the interpreter's state graph.

Per property the same verdict, and the same graph (node and edge counts); a violation's lasso may be
another one, but it is replayed on the interpreter and checked to be a fair run violating the property
before it is reported (``replay_lasso``: the tests below forge lassos it must refuse). The default tier
runs one small fixture compiled; ``pytest -m differential`` runs every point of every built-in spec and
bug spec with liveness properties, the fixtures, and random small specs with liveness properties.
"""
import pytest
from hypothesis import HealthCheck, given, settings

from checker.compiled import liveness as cliveness
from checker.compiled.engine import Fallback, InternalError
from checker.explore.graph import build_graph
from checker.explore.liveness import check_liveness
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.loader import builtin_specs
from checker.verify import explore_checks, param_points, verify
from fair_lock import FairLock

LIVE = ("eventually", "leads_to")


def live(cls, engine, **params):
    """The liveness checks of one point on ``engine``, by property name."""
    checks = explore_checks(cls, resolve_params(cls, params), engine=engine)
    return {c.property: c for c in checks if c.kind in LIVE}


def same_liveness(model_of):
    """The interpreter's verdicts and graph counts against the compiled engine's, on the model ``model_of()``
    makes (a fresh one per engine). Returns the compiled graph."""
    m = model_of()
    sg = build_graph(m, None)
    want = {p.name: check_liveness(sg, p).verdict for p in m.liveness}
    g = cliveness.compiled_liveness(model_of())
    assert (g.nodes, g.edges) == (sg.graph.number_of_nodes(), sg.graph.number_of_edges()), m.params
    assert {n: o.verdict for n, o in g.outcomes.items()} == want, m.params
    for o in g.outcomes.values():  # (replayed and checked in compiled_liveness: here, only that it is shown)
        assert (o.lasso is not None) == (o.verdict == "violated")
    return g


def test_weak_fairness_lasso_step_goal_and_always_as_the_interpreter_says():
    interp, comp = live(FairLock, "interpreted", fair=1), live(FairLock, "compiled", fair=1)
    assert {n: c.verdict for n, c in comp.items()} == {n: c.verdict for n, c in interp.items()} == {
        "waiter_gets_the_lock": "violated", "cpu0_takes_the_lock_unfairly": "violated",
        "someone_takes_the_lock": "holds"}
    for n, c in comp.items():
        assert (c.states, c.transitions) == (interp[n].states, interp[n].transitions) == (8, 14)
        assert (c.engine, c.engine_note) == ("compiled", "compiled liveness")
    starve = comp["waiter_gets_the_lock"]
    assert starve.trace_text[1].startswith("-- loop: steps")  # rendered as the interpreter renders a lasso
    assert {s.action for s in starve.trace[starve.loop_start:]} >= {"acquire_weak", "release"}


def test_the_json_report_of_a_compiled_lasso_is_schema_valid():
    import json
    from pathlib import Path

    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the test extra: pip install '.[test]'")
    schema = json.loads((Path(__file__).parent.parent / "checker" / "report" / "schema.json").read_text())
    data = verify([FairLock], sets={"fair": (1,)}, mode="explore", engine="compiled").to_json()
    jsonschema.validate(data, schema)
    c = next(c for c in data["checks"] if c["property"] == "waiter_gets_the_lock")
    assert (c["verdict"], c["engine"], c["engine_note"]) == ("violated", "compiled", "compiled liveness")
    assert c["loop_start"] is not None and c["trace"]


def _fair_lock_lasso():
    m = Model(FairLock, resolve_params(FairLock, {"fair": 1}))
    g = cliveness.compiled_liveness(m)
    low, _terms, _exe = cliveness.prepare(m)
    p = next(p for p in m.liveness if p.name == "waiter_gets_the_lock")
    lasso = g.outcomes[p.name].lasso
    edges = [(u, k, v) for u, v, k in lasso.edges]
    fairness = {a.index: a.info.fair for a in m.actions if a.info.fair}
    return m, low, p, g.states, edges, g.triggers[p.name], lasso.loop_start, fairness


def test_a_forged_lasso_is_refused():
    m, low, p, states, edges, (trig, at), loop_start, fairness = _fair_lock_lasso()
    cliveness.replay_lasso(m, low, p, states, edges, trig, at, loop_start, False, fairness)  # the real one passes
    with pytest.raises(InternalError, match="where P does not hold|does not pass its trigger"):
        cliveness.replay_lasso(m, low, p, states, edges, edges[0][0], 0, loop_start, False, fairness)
    acquire = next(a.index for a in m.actions if a.info.name == "acquire_weak")
    with pytest.raises(InternalError, match="is not fair: acquire_weak on cpu0 \\(strong\\)"):
        cliveness.replay_lasso(m, low, p, states, edges, trig, at, loop_start, False, {**fairness, acquire: "strong"})
    u, k, v = edges[-1]
    wrong_step = next(j for j, st in enumerate(low.steps) if st.index != k)
    with pytest.raises(InternalError, match="does not replay|is not a path"):
        cliveness.replay_lasso(m, low, p, states, edges[:-1] + [(u, wrong_step, v)], trig, at, loop_start, False,
                               fairness)
    with pytest.raises(InternalError, match="stops in a state with steps enabled"):
        cliveness.replay_lasso(m, low, p, states, edges[:loop_start], trig, at, loop_start, True, fairness)


def test_auto_keeps_a_small_graph_on_the_interpreter_and_a_fallback_says_why(monkeypatch):
    small = live(FairLock, "auto", fair=2)["waiter_gets_the_lock"]
    assert (small.verdict, small.engine, small.engine_note) == ("holds", None, None)

    def refuse(model):
        raise Fallback("a construct the test refuses")

    monkeypatch.setattr(cliveness, "prepare", refuse)
    c = live(FairLock, "compiled", fair=2)["waiter_gets_the_lock"]
    assert (c.verdict, c.engine, c.engine_note) == ("holds", "interpreted", "interpreted: a construct the test refuses")


# -- the differential tier ------------------------------------------------------------------------------------

SPECS = builtin_specs()


def live_points():
    """Every explore point of every built-in spec where a liveness property applies (from the declarations:
    collecting builds no model)."""
    out = []
    for name, cls in sorted(SPECS.items()):
        props = [p for p in cls.__countercheck_info__.properties.values() if p.kind in LIVE]
        if not props:
            continue
        for params in param_points(cls, {}, "explore"):
            if any(p.applies is None or p.applies(params) for p in props):
                out.append(pytest.param(cls, params, id=f"{name}-{params}"))
    return out


@pytest.mark.differential
@pytest.mark.parametrize("cls,params", live_points())
def test_every_liveness_point_agrees(cls, params):
    same_liveness(lambda: Model(cls, params))


@pytest.mark.differential
@pytest.mark.parametrize("kw", [{"fair": 1}, {"fair": 2}, {"fair": 1, "ncpus": 3}, {"fair": 2, "ncpus": 3}])
def test_fair_lock_points_agree(kw):
    same_liveness(lambda: Model(FairLock, resolve_params(FairLock, kw)))


@pytest.mark.differential
def test_the_liveness_fixtures_agree():
    from test_liveness import Stops, TasLockEager

    g = same_liveness(lambda: Model(Stops))
    assert g.outcomes["reaches_two"].lasso.stops
    g = same_liveness(lambda: Model(TasLockEager, resolve_params(TasLockEager, {"forever": 1, "ncpus": 2,
                                                                                 "batch": 2})))
    assert g.outcomes["every_started_fold_completes"].verdict == "violated"


@pytest.mark.differential
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=__import__("random_specs").random_models(liveness=True))
def test_random_specs_with_liveness_agree(model):
    from random_specs import load

    same_liveness(lambda: load(model.source))
