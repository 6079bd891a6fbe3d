# SPDX-License-Identifier: GPL-2.0-only
"""``verify --cluster ray``: the parallel explorer's workers as Ray actors give
the single-process explorer's counts, verdicts and shortest traces on every
built-in spec; so does the compiled search on Ray actors (one compiled
process's, also at a state limit); a killed actor stops the run as
inconclusive (the interpreter's run resumes from its checkpoint to the same
result; the compiled run keeps what it decided) and leaves no actor behind,
nor does a killed coordinator; a per-N proof sweep on Ray tasks gives the
sequential verdicts; without Ray, ``--cluster`` says how to install it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from checker import loader
from checker.cli import main
from checker.errors import UsageError
from checker.explore import explore
from checker.explore.parallel import parallel_search
from checker.prove import prove_checks
from checker.language.compile import Model
from checker.verify import own_sets, param_points

ROOT = str(Path(__file__).resolve().parents[1])
#: Points with more states than this are left to the fork pool's tests: this file stays fast.
MAX_STATES = 20_000
SPECS = list(loader.builtin_specs())
#: At their smallest explore point these have 15k states (10 s of this file's time); without the
#: reader, their adds, switches and decodes still race, at 1.8k to 4.4k states.
SMALLER = {s: {"readers": (0,)} for s in ("percpu_lazy", "lazy_decode_logical_shift",
                                       "lazy_rfc_read_positive")}


@pytest.fixture(scope="module")
def ray_pool():
    pytest.importorskip("ray", reason="Ray is the cluster extra: pip install '.[cluster]'")
    from checker import cluster
    from checker.explore import ray_pool

    cluster.connect(None, num_cpus=2)  # one local Ray for the module: it takes seconds to start
    yield ray_pool
    cluster.disconnect()


def _model(spec):
    cls = loader.builtin_specs()[spec]
    return Model(cls, param_points(cls, own_sets(cls, SMALLER.get(spec, {})), "explore")[0])


def _summary(r):
    return (r.states, r.transitions, r.depth, r.complete, r.stopped_because,
            {n: (o.verdict, o.reason, o.trace, o.initial_state) for n, o in r.outcomes.items()})


#: Ray against one process at a few specs in the default tier (tasks, locks, hotplug, the eager counter); every
#: built-in spec in the differential tier (pytest -m differential): a second each is minutes in all.
RAY_DEFAULT = ("check_mm_refcount", "percpu_eager", "percpu_hotplug", "percpu_eager_tasks")


@pytest.mark.parametrize("spec", [s if s in RAY_DEFAULT else pytest.param(s, marks=pytest.mark.differential)
                                  for s in SPECS])
def test_two_ray_workers_give_the_single_process_result(ray_pool, spec):
    one = explore(_model(spec), max_states=MAX_STATES + 1)
    if not one.complete:
        pytest.skip(f"more than {MAX_STATES} states at its smallest explore point")
    assert _summary(explore(_model(spec), cluster="ray", jobs=2)) == _summary(one)


def test_a_process_specs_state_layout_is_the_same_in_every_python_process():
    """A Ray actor builds the model again in its own process: a process function's registers once came out of a
    frozenset of names, in an order salted per process, so the actor's states were laid out differently and
    its traces named the wrong registers."""
    names = ("percpu_eager", "percpu_eager_tasks", "vma_unlink_batch")
    code = ("import sys; from checker import loader; from checker.language.compile import Model\n"
            "for n in sys.argv[1:]:\n"
            "    m = Model(loader.builtin_specs()[n]); print(list(m.state_dict(m.initial_states()[0])))")
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    out = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": ROOT}).stdout.splitlines()
    here = []
    for n in names:
        m = Model(loader.builtin_specs()[n])
        here.append(str(list(m.state_dict(m.initial_states()[0]))))
    assert out == here


def test_a_killed_actor_stops_the_run_and_the_resumed_run_is_the_uninterrupted_one(ray_pool, tmp_path):
    import ray

    class KillsAnActor(ray_pool.RayPool):
        """Kills actor 1 when level 3 is to be expanded (levels 0..2 are saved)."""
        expands = 0

        def call(self, name, per_worker):
            if name == "expand":
                KillsAnActor.expands += 1
                if KillsAnActor.expands == 3:
                    ray.kill(self.actors[1])
            return super().call(name, per_worker)

    full = _summary(explore(_model("hotplug_sum_dead")))
    st = parallel_search(_model("hotplug_sum_dead"), jobs=2, symmetry=True, pool=KillsAnActor,
                         checkpoint_root=tmp_path)
    assert st.stopped.startswith("worker_lost: worker 1") and f"--resume {tmp_path}" in st.stopped
    assert not st.found and st.depth == 2
    resumed = explore(_model("hotplug_sum_dead"), cluster="ray", jobs=2, checkpoint=tmp_path, resume=True)
    assert _summary(resumed) == full


def test_a_per_n_proof_sweep_on_ray_tasks_gives_the_sequential_verdicts(ray_pool):
    cls = loader.resolve([f"{FIXTURES / 'per_n.py'}:FirstCpuCounter"])[0]  # a spec file: tasks load it by path
    explore(Model(cls), cluster="ray", jobs=2)  # its actors stay, holding both CPUs, until the sweep needs them

    def outcome(c):
        # The counterexample to induction is Z3's model, which depends on the terms its process made
        # before: the one found may differ, the conjunct it breaks may not.
        return (c.property, c.verdict, c.reason, c.params, c.extra["method"], c.extra["obligations"],
                c.extra.get("broken"), c.extra.get("notes"))

    seq = [outcome(c) for c in prove_checks(cls, {})]
    assert [outcome(c) for c in prove_checks(cls, {}, cluster="ray")] == seq
    assert {o[2] for o in seq} == {"not_inductive", "unproved_support: relies on total_at_most_ten"}
    assert seq[0][3] == {"ncpus": "1..6"} and seq[0][4] == "per-n"


def test_more_workers_than_the_cluster_has_cpus_is_a_usage_error(ray_pool):
    with pytest.raises(UsageError, match="--jobs 64 with --cluster: the cluster has 2 CPUs"):
        explore(_model("eager_fold_gt"), cluster="ray", jobs=64)


def test_cluster_without_ray_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # ``import ray`` now raises ImportError
    assert main(["verify", "eager_fold_gt", "--mode", "explore", "--cluster", "ray"]) == 2
    assert "pip install 'ray>=2.9'" in capsys.readouterr().err


def test_a_cluster_address_is_ray_or_ray_url(capsys):
    assert main(["verify", "eager_fold_gt", "--cluster", "head:10001"]) == 2
    assert "--cluster ray://HOST:PORT" in capsys.readouterr().err


# -- the compiled search on Ray actors (checker/compiled/ray_search.py) --------------------------------------------

#: The compiled engine on 2 actors against one compiled process in the default tier (a point of 2k states with a
#: deadlock); every built-in spec in the slow tier.
RAY_COMPILED_DEFAULT = ("hotplug_sum_dead",)


@pytest.mark.parametrize("spec", [s if s in RAY_COMPILED_DEFAULT else pytest.param(s, marks=pytest.mark.differential)
                                  for s in SPECS])
def test_two_ray_actors_give_one_compiled_process_result(ray_pool, spec):
    one = explore(_model(spec), engine="compiled", max_states=MAX_STATES + 1)
    if not one.complete:
        pytest.skip(f"more than {MAX_STATES} states at its smallest explore point")
    two = explore(_model(spec), engine="compiled", cluster="ray", jobs=2)
    assert _summary(two) == _summary(one)
    if one.engine == "compiled":  # (a point the compiled engine hands to the interpreter: so does Ray)
        assert two.engine == "compiled" and two.engine_note.startswith("compiled on 2 Ray actors")


def _pids_gone(pids, within=30.0):
    import time

    end = time.monotonic() + within
    while time.monotonic() < end:
        alive = [p for p in pids if os.path.exists(f"/proc/{p}") and
                 "zombie" not in open(f"/proc/{p}/status").read().lower()]
        if not alive:
            return True
        time.sleep(0.2)
    return False


def test_a_killed_compiled_actor_ends_the_run_inconclusive_keeping_what_was_decided(ray_pool):
    import ray

    from checker.compiled import ray_search

    class KillsAnActor(ray_search.RaySlices):
        """Kills actor 1 when level 7 is to be expanded (what depths 0..6 decided stays)."""
        levels = 0
        pids: list = []

        def exchange(self, *args):
            KillsAnActor.levels += 1
            if KillsAnActor.levels == 7:
                KillsAnActor.pids = self.all("pid", [()] * self.jobs)
                ray.kill(self.actors[1])
            return super().exchange(*args)

    one = explore(_model("hotplug_sum_dead"), engine="compiled")
    model = _model("hotplug_sum_dead")
    st = ray_search.compiled_ray_search(model, jobs=2, symmetry=True, workers=KillsAnActor(2))
    assert st.stopped.startswith("worker_lost: worker 1") and st.depth == 6
    assert _pids_gone(KillsAnActor.pids)  # the killed actor and the other one: none kept idle
    from checker.explore import _verdicts

    two = _verdicts(model, st, True, "compiled", None)
    decided = {n for n, o in two.outcomes.items() if o.verdict != "inconclusive"}
    assert decided  # what the first levels decided, with its trace
    for n, o in two.outcomes.items():
        assert o.verdict == "inconclusive" or (o.verdict, o.trace) == (one.outcomes[n].verdict, one.outcomes[n].trace)


def test_the_compiled_slices_cut_a_state_limit_where_one_process_does():
    """The distributed levels on in-process slices (no Ray): at each limit the same states, transitions, parents
    and deciding states as one compiled process."""
    pytest.importorskip("numpy", reason="the coordinator sorts a level's keys with numpy, which the cluster extra "
                                        "brings with Ray: pip install '.[cluster]'")
    from checker.compiled.engine import compiled_search
    from checker.compiled.ray_search import LocalSlices, compiled_ray_search

    def summary(st):
        return (st.states, st.transitions, st.depth, st.stopped, dict(st.parents), dict(st.found), st.deadlock)

    for limit in (1, 100, 777, None):
        one = compiled_search(_model("hotplug_sum_dead"), symmetry=True, max_states=limit)
        three = compiled_ray_search(_model("hotplug_sum_dead"), jobs=3, symmetry=True, max_states=limit,
                                    workers=LocalSlices(3))
        assert summary(three) == summary(one)
    assert (one.states, one.transitions) == (2153, 3965)


_COORDINATOR = """
import sys, time
from checker import cluster, loader
from checker.compiled import ray_search
from checker.language.compile import Model

class Stalls(ray_search.RaySlices):
    levels = 0
    def exchange(self, *args):
        Stalls.levels += 1
        if Stalls.levels == 3:  # the actors hold their slices: the coordinator is killed here
            print(*self.all("pid", [()] * self.jobs), flush=True)
            time.sleep(600)
        return super().exchange(*args)

cluster.connect(None, num_cpus=2)
ray_search.compiled_ray_search(Model(loader.builtin_specs()["hotplug_sum_dead"]), jobs=2, symmetry=True,
                               workers=Stalls(2))
"""


@pytest.mark.differential
def test_a_killed_coordinator_leaves_no_process_behind():
    """The coordinator (here with its own local Ray) killed mid-search: its actors, and the Ray it started,
    end with it."""
    import signal

    pytest.importorskip("ray", reason="Ray is the cluster extra: pip install '.[cluster]'")
    proc = subprocess.Popen([sys.executable, "-c", _COORDINATOR], stdout=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONPATH": ROOT})
    try:
        actors = [int(p) for p in proc.stdout.readline().split()]
        assert len(actors) == 2
        session = [int(line.split()[0]) for line in subprocess.run(
            ["ps", "-eo", "pid,sid"], capture_output=True, text=True).stdout.splitlines()[1:]
            if line.split()[1] == str(proc.pid)]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert set(actors) <= set(session)
    assert _pids_gone(session, within=60)
