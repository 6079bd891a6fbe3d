# SPDX-License-Identifier: GPL-2.0-only
"""Random simulation (verify --simulate): bugs found at 64 CPUs from a committed seed, traces that
replay, the same seed giving the same trace, and never `holds` for an invariant."""
import json
import re
import shlex

import jsonschema
import pytest
from conftest import ROOT
from malformed import Overflows, Stuck
from simulate_cases import CASES

from checker import loader
from checker.cli import main
from checker.result import HOLDS, VIOLATED
from checker.simulate import simulate
from checker.simulate.checks import SimulateOptions
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.verify import own_sets, param_points, verify


def replay(model, initial, steps):
    """Fire each reported step in turn (by action, CPU and choices); every one must be enabled
    and change exactly what the report says. Returns the final state."""
    acts = {a.info.name: a for a in model.actions}
    s = initial
    for i, st in enumerate(steps, 1):
        act = acts[st.action]
        args = tuple(st.choices[n] for n in act.arg_names)
        t = model.fire(s, act, st.cpu, args)
        assert t is not None, f"step {i} ({st.action} on cpu{st.cpu}) is not enabled"
        assert model.changes(s, t) == st.changes, f"step {i} changes differ"
        s = t
    return s


#: 14 s (two runs at 64 CPUs, each simulated twice): the differential tier; the other 64-CPU eager bugs stay.
SLOW = ("eager_sum_unlocked",)


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.differential) if c[0] in SLOW else c
                                  for c in CASES], ids=[f"{c[0]}.{c[5]}" for c in CASES])
def test_committed_bug_is_found_replays_and_repeats(case):
    name, params, runs, depth, seed, prop = case
    cls = loader.resolve([name])[0]
    opts = SimulateOptions(runs, depth, seed)
    sets = {k: (v,) for k, v in params.items()}
    points = param_points(cls, own_sets(cls, sets))
    assert len(points) == 1  # every swept parameter is set: one simulation
    first = verify([cls], sets=sets, simulate=opts)
    assert not first.errors, first.errors
    check = next(c for c in first.checks if c.property == prop)
    assert (check.backend, check.verdict, check.status, check.bug) == ("simulate", VIOLATED, "ok", True)
    assert 0 < len(check.trace) <= check.extra["original_steps"]
    assert check.extra["strategy"].split()[0] in ("uniform", "swarm", "sticky", "priority")
    model = Model(cls, points[0])
    start = next(s for s in model.initial_states() if model.state_dict(s) == check.initial_state)
    end = replay(model, start, check.trace)
    p = next(p for p in model.properties if p.name == prop)
    assert not p.fn(end)
    again = next(c for c in verify([cls], sets=sets, simulate=opts).checks if c.property == prop)
    assert again.trace == check.trace and again.extra == check.extra


SMALL_EAGER = ["percpu_eager", "--set", "variant=B", "--set", "ncpus=3", "--set", "batch=2", "--set", "ops=2"]


def run_cli(capsys, *args):
    """The command line in this process (a fresh interpreter would load every spec again)."""
    code = main(["verify", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_correct_spec_is_inconclusive_with_coverage_never_holds(capsys):
    code, out, err = run_cli(capsys, *SMALL_EAGER, "--simulate", "4", "--depth", "30", "--format", "json")
    assert code == 3, out + err
    data = json.loads(out)
    jsonschema.validate(data, json.loads((ROOT / "checker" / "report" / "schema.json").read_text()))
    checks = data["checks"]
    invariants = [c for c in checks if c["kind"] == "invariant"]
    assert invariants and all(c["backend"] == "simulate" for c in checks)
    assert all(c["verdict"] != HOLDS for c in invariants)
    unsure = [c for c in invariants if c["expected"] == HOLDS]
    assert unsure and all(c["verdict"] == "inconclusive" for c in unsure)
    m = re.fullmatch(r"simulated: 4 runs x depth 30, (\d+) distinct states, (\d+)/(\d+) actions seen",
                     unsure[0]["reason"])
    assert m and int(m[1]) > 10 and 0 < int(m[2]) <= int(m[3])
    # A sometimes seen holds, with a witness.
    seen = [c for c in checks if c["kind"] == "sometimes" and c["verdict"] == HOLDS]
    assert seen and all(c["trace"] for c in seen)


def test_same_seed_same_report_other_seed_other_runs():
    cls = loader.resolve(["percpu_eager"])[0]
    sets = {"variant": ("B",), "ncpus": (3,), "batch": (2,), "ops": (2,)}

    def outcome(seed):
        report = verify([cls], sets=sets, simulate=SimulateOptions(3, 40, seed))
        return [(c.property, c.verdict, c.reason, c.trace) for c in report.checks]

    assert outcome(5) == outcome(5)
    assert outcome(5) != outcome(6)


def test_the_reproduce_line_repeats_the_simulation(capsys):
    code, out, err = run_cli(capsys, "eager_fold_gt", "--set", "variant=B", "--set", "ncpus=3", "--set", "batch=2",
                             "--simulate", "2", "--depth", "20", "--seed", "1", "--traces", "bugs")
    assert code == 3, out + err  # the bug found; the other invariants not decided
    lines = out.splitlines()
    at = next(i for i, x in enumerate(lines) if "local_bound violated after" in x)
    assert re.search(r"violated after \d+ steps \(shrunk from \d+; simulation run \d+, strategy ", lines[at])
    end = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("reproduce:"))
    command = shlex.split(lines[end].split("reproduce:", 1)[1])
    assert command[:4] == ["python", "-m", "checker", "verify"] and command[-6:] == [
        "--simulate", "2", "--depth", "20", "--seed", "1"]
    code, again, err = run_cli(capsys, *command[4:], "--traces", "bugs")
    block = lines[at:end + 1]
    assert code == 3 and again.splitlines()[again.splitlines().index(block[0]):][:len(block)] == block


def test_shrinking_removes_bystander_cpus():
    cls = loader.resolve(["eager_fold_gt"])[0]
    model = Model(cls, resolve_params(cls, {"variant": 1, "ncpus": 64, "batch": 2, "ops": 2}))
    sim = simulate(model, runs=1, depth=200, seed=0)
    found = sim.found["local_bound"]
    assert found["original_steps"] > found["shrunk_steps"] == 2  # one CPU's two adds
    assert len({s.cpu for s in sim.outcomes["local_bound"].trace}) == 1


def test_a_deadlock_and_an_overflow_are_found_with_short_traces():
    stuck = simulate(Model(Stuck, Stuck(ncpus=4).params), runs=1, depth=50, seed=0)
    dead = stuck.outcomes["no_deadlock"]
    assert dead.verdict == VIOLATED and [s.action for s in dead.trace] == ["take"]
    over = simulate(Model(Overflows, Overflows(n=2).params), runs=1, depth=50, seed=0)
    assert over.outcomes["no_overflow"].verdict == VIOLATED and len(over.outcomes["no_overflow"].trace) == 2


def test_a_timeout_is_inconclusive_never_a_pass():
    cls = loader.resolve(["eager_fold_gt"])[0]
    model = Model(cls, resolve_params(cls, {"variant": 1, "ncpus": 64, "batch": 2}))
    sim = simulate(model, runs=1000, depth=1000, seed=0, timeout=1e-9)
    assert sim.walks.runs == 0 and sim.walks.stopped == "timeout"
    assert {o.verdict for o in sim.outcomes.values()} == {"inconclusive"}
    assert sim.outcomes["read_bound"].reason.endswith("; stopped: timeout")


@pytest.mark.parametrize("args, message", [
    (("--depth", "5"), "--depth and --seed go with --simulate"),
    (("--simulate", "0"), "--simulate must be at least 1"),
    (("--simulate", "2", "--depth", "0"), "--depth must be at least 1"),
    (("--simulate", "2", "--bmc", "3"), "--bmc is for exploring and proving"),
    (("--simulate", "2", "--jobs", "2"), "--jobs is for exploring and proving"),
])
def test_simulate_usage_errors_exit_2(capsys, args, message):
    code, out, err = run_cli(capsys, "percpu_up", *args)
    assert code == 2 and message in err
