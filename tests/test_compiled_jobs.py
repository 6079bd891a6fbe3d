# SPDX-License-Identifier: GPL-2.0-only
"""``--jobs N`` on the compiled engine: the search on N threads gives one thread's result, state for state.

The threads take one state at a time here (COUNTERCHECK_THREAD_CHUNK=1), so that they interleave even on
the small points a quick test can afford; what is compared is everything a run reports: the counts, every
verdict, every trace and its initial state.
"""
import os
import signal
import threading
import time

import pytest

from checker.compiled import engine as cengine
from checker.explore import explore
from checker.loader import builtin_specs
from checker.language.compile import Model
from checker.verify import param_points
from eager_table import EagerTable

SPECS = builtin_specs()


@pytest.fixture(autouse=True)
def interleaved(monkeypatch):
    monkeypatch.setenv("COUNTERCHECK_THREAD_CHUNK", "1")


def outcome_view(r):
    return {n: (o.verdict, o.reason, o.trace, o.initial_state) for n, o in r.outcomes.items()}


def same_with_threads(model_of, *, symmetry=True, max_states=None, jobs=2):
    one = explore(model_of(), symmetry=symmetry, engine="compiled", max_states=max_states)
    many = explore(model_of(), symmetry=symmetry, engine="compiled", max_states=max_states, jobs=jobs)
    assert (one.engine, many.engine) == ("compiled", "compiled"), (one.engine_note, many.engine_note)
    assert f"{jobs} threads" in many.engine_note
    assert (one.states, one.transitions, one.depth, one.complete, one.stopped_because) == \
        (many.states, many.transitions, many.depth, many.complete, many.stopped_because)
    assert outcome_view(one) == outcome_view(many)
    return many


#: Specs with context rules (events), deadlocks, several initial states, symmetry and none: their first
#: explore point, and bug specs whose violations come with traces.
NAMES = ["percpu_eager", "stack_cache", "vma_unlink_batch", "percpu_counter_tree", "eager_irq_add",
         "counters_lock_irq_unsafe", "hotplug_sum_dead"]
#: More of them in the differential tier.
MORE = ["check_mm_refcount", "percpu_hotplug", "lazy_mmdrop", "eager_fold_gt", "percpu_lazy", "percpu_grouped"]


@pytest.mark.parametrize("name", NAMES + [pytest.param(n, marks=pytest.mark.differential) for n in MORE])
def test_two_threads_give_one_threads_states_verdicts_and_traces(name):
    cls = SPECS[name]
    point = next(p for p in param_points(cls, {}, "explore") if Model(cls, p).abstraction is None)
    same_with_threads(lambda: Model(cls, point), symmetry=name != "percpu_hotplug")


def test_three_threads_without_symmetry_at_a_larger_point():
    r = same_with_threads(lambda: EagerTable(ncpus=3, ops=3, batch=3), symmetry=False, jobs=3)
    assert r.complete and r.states == 4202


@pytest.mark.parametrize("limit", [1, 1000, 4202])
def test_a_state_limit_stops_where_one_thread_stops(limit):
    """The one-thread search stops at the first new state past the limit, halfway through a parent's
    successors: the same states, transitions and verdicts with threads."""
    r = same_with_threads(lambda: EagerTable(ncpus=3, ops=3, batch=3), symmetry=False, max_states=limit)
    assert r.states == limit
    assert r.stopped_because == ("max_states" if limit < 4202 else None)  # 4,202: every state, exactly


def test_threads_and_fingerprints_agree_on_random_specs():
    """Hypothesis-generated small specs (tests/random_specs.py), with and without symmetry: two threads, and
    fingerprints, give one thread's exact result."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from random_specs import load, random_models
    from test_compiled_fingerprint import same_with_fingerprints

    @settings(max_examples=2, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(model=random_models(), symmetry=st.booleans())
    def check(model, symmetry):  # (a program each: a compile is most of a second; fingerprints share it)
        same_with_threads(lambda: load(model.source), symmetry=symmetry, max_states=5000)
        same_with_fingerprints(lambda: load(model.source), symmetry=symmetry, max_states=5000)

    check()


@pytest.mark.differential
def test_threads_agree_on_many_random_specs():
    from random_specs import load, sample_models

    for model in sample_models(30, seed=26):
        for symmetry in (True, False):
            same_with_threads(lambda m=model: load(m.source), symmetry=symmetry, max_states=20000, jobs=3)


def _searches() -> set[int]:
    """This process's children that are compiled searches."""
    me = str(os.getpid())
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    name, rest = f.read().rsplit(")", 1)
                if rest.split()[1] == me and "(search-" in name:
                    out.add(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def test_killing_the_threaded_search_is_inconclusive_and_leaves_nothing_behind():
    model = Model(EagerTable(ncpus=3, ops=9, batch=3))  # 1.3 M states, seconds: the program of the tests above
    cengine.prepare(model, False, cengine.Timings())
    before = _searches()
    box = {}
    t = threading.Thread(target=lambda: box.update(r=explore(model, symmetry=False, engine="compiled", jobs=2)))
    t.start()
    victims = set()
    for _ in range(200):
        victims = _searches() - before
        if victims:
            break
        time.sleep(0.02)
    assert victims, "the search did not start"
    time.sleep(0.2)
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    t.join(60)
    r = box["r"]
    assert r.engine == "compiled" and r.stopped_because == "killed" and not r.complete
    assert "holds" not in set(r.verdicts.values())
    assert not (_searches() - before)
