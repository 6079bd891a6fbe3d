# SPDX-License-Identifier: GPL-2.0-only
"""The swarm search (verify --search swarm): bugs found with traces the interpreter replays, never `holds`
for an invariant, the same seed giving the same result, no worker left behind, and every bug spec found
at its explore points (differential tier)."""
import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from checker import loader
from checker.cli import main
from checker.compiled import swarm as csw
from checker.engines.swarm import swarm_checks
from checker.language.compile import Model
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED
from checker.verify import own_sets, param_points

pytestmark = pytest.mark.skipif(subprocess.run(["sh", "-c", "command -v ${CC:-cc}"], capture_output=True)
                                .returncode != 0, reason="no C compiler ($CC, else cc): apt-get install gcc")


def point(name, **sets):
    cls = loader.resolve([name])[0]
    pts = param_points(cls, own_sets(cls, {k: (v,) for k, v in sets.items()}))
    return cls, pts[0]


def replay(model, initial, steps):
    """Fire each reported step in turn; every one enabled and changing what the report says."""
    acts = {a.info.name: a for a in model.actions}
    s = initial
    for i, st in enumerate(steps, 1):
        act = acts[st.action]
        t = model.fire(s, act, st.cpu, tuple(st.choices[n] for n in act.arg_names))
        assert t is not None, f"step {i} ({st.action} on cpu{st.cpu}) is not enabled"
        assert model.changes(s, t) == st.changes
        s = t
    return s


@pytest.mark.parametrize("name,sets,prop", [
    ("eager_irq_add", {}, "local_bound"),
    ("counters_lock_irq_unsafe", {}, "no_self_deadlock"),
    ("hotplug_sum_dead", {"ncpus": 2, "batch_floor": 1}, "sum_exact_without_overlap"),
])
def test_a_bug_is_found_with_a_replayed_trace_and_the_same_seed_repeats_it(name, sets, prop):
    cls, p = point(name, **sets)
    checks = swarm_checks(cls, p, csw.SwarmOptions(seed=0, workers=2))
    c = next(c for c in checks if c.property == prop)
    assert (c.backend, c.verdict, c.status, c.bug, c.extra["method"]) == ("simulate", VIOLATED, "ok", True, "swarm")
    assert 0 < len(c.trace) <= c.extra["original_steps"]
    model = Model(cls, p)
    start = next(s for s in model.initial_states() if model.state_dict(s) == c.initial_state)
    end = replay(model, start, c.trace)
    assert not next(q for q in model.properties if q.name == prop).fn(end)
    again = next(c2 for c2 in swarm_checks(cls, p, csw.SwarmOptions(seed=0, workers=2)) if c2.property == prop)
    assert again.trace == c.trace and again.states == c.states


def test_a_correct_spec_is_inconclusive_never_holds_and_reports_its_coverage():
    cls, p = point("percpu_eager", variant="B", ncpus=3, batch=2, ops=2)
    checks = swarm_checks(cls, p, csw.SwarmOptions(seed=1, workers=1), max_states=5000)
    invariants = [c for c in checks if c.kind in ("invariant", "deadlock")]
    assert invariants and not [c for c in invariants if c.verdict == HOLDS]
    undecided = [c for c in invariants if c.verdict == INCONCLUSIVE]
    assert undecided and "swarm: " in undecided[0].reason and "estimated coverage >= " in undecided[0].reason
    assert undecided[0].states <= 5000 + 1  # the budget, shared by the workers
    witnessed = [c for c in checks if c.kind == "sometimes" and c.verdict == HOLDS]
    assert witnessed and all(c.trace or c.initial_state for c in witnessed)


def test_cli_search_swarm_exits_3_and_refuses_what_cannot_mean_anything(capsys):
    code = main(["verify", "eager_set_skips_a_cpu", "--search", "swarm", "--jobs", "1", "--seed", "3",
                 "--depth", "50", "--traces", "bugs"])
    out = capsys.readouterr()
    assert code == 3, out.out + out.err  # the bugs found; the other invariants inconclusive
    assert "2 bugs found" in out.out and "--search swarm --depth 50 --seed 3" in out.out
    code = main(["verify", "percpu_eager", "--search", "swarm", "--simulate", "4"])
    assert code == 2 and "pick one" in capsys.readouterr().err
    code = main(["verify", "percpu_eager", "--search", "swarm", "--mode", "prove"])
    assert code == 2 and "cannot prove" in capsys.readouterr().err


def _children(pid):
    try:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [int(x) for x in out.split()]


def test_killing_the_checker_leaves_no_worker_behind(tmp_path):
    code = ("import sys; from checker import loader; from checker.compiled import swarm as s; "
            "from checker.language.compile import Model; from checker.verify import own_sets, param_points; "
            "cls = loader.resolve(['percpu_eager'])[0]; "
            "p = param_points(cls, own_sets(cls, {'ncpus': (3,), 'variant': ('C',), 'readers': (1,)}))[0]; "
            "s.search(Model(cls, p), s.SwarmOptions(workers=2), timeout=120)")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    workers = []
    for _ in range(600):  # until both workers run (the program may be compiled first)
        workers = _children(proc.pid)
        if len(workers) >= 2:
            break
        time.sleep(0.05)
    assert len(workers) >= 2, "the swarm's workers did not start"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for _ in range(100):
        alive = [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in _state(w)]
        if not alive:
            break
        time.sleep(0.05)
    assert not alive, f"workers {alive} outlived the checker"


def _state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


BUG_SPECS = sorted(Path(f).stem for f in glob.glob(str(ROOT / "specs" / "bugs" / "*.py"))
                   if not f.endswith("__init__.py"))


@pytest.mark.differential
@pytest.mark.parametrize("name", BUG_SPECS)
def test_every_bug_spec_is_found_at_its_explore_points(name):
    """Every expected violation of an invariant (or deadlock) at every explore point where it applies is
    found: the liveness, context-rule and expected-unreached `sometimes` ones are the exhaustive search's."""
    for cls in loader.resolve([name]):
        for p in param_points(cls, own_sets(cls, {})):
            checks = swarm_checks(cls, p, csw.SwarmOptions(seed=0, workers=2))
            missed = [c.property for c in checks if c.bug and c.kind in ("invariant", "deadlock", "build")
                      and c.verdict != VIOLATED]
            assert not missed, f"{cls.spec_name} [{p}]: not found: {missed}"


def test_a_value_beyond_64_bits_hands_the_point_to_the_interpreter_saying_so():
    """cc_fail in a worker: its path is replayed on the interpreter (Python's ints do not overflow), and the
    point runs on the interpreter's breadth-first search, still never `holds`."""
    cls = loader.resolve([str(ROOT / "tests" / "fixtures" / "arith.py") + ":Squares"])[0]
    (p,) = param_points(cls, own_sets(cls, {}))
    checks = swarm_checks(cls, p, csw.SwarmOptions(workers=1))
    assert {c.engine for c in checks} == {"interpreted"}
    assert all("a 64-bit" in c.engine_note or "overflow" in c.engine_note for c in checks)
    assert {c.verdict for c in checks} == {INCONCLUSIVE}
    assert "every reachable state" in checks[0].reason
