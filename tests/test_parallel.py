# SPDX-License-Identifier: GPL-2.0-only
"""``--jobs N`` explores on N processes with the sequential search's result:
the same counts, verdicts and shortest traces, the same cut at a state limit,
the same context-rule errors."""
import json

import pytest
from conftest import FIXTURES

from checker import loader
from checker.explore import explore
from checker.language.compile import Model
from checker.verify import own_sets, param_points, parse_set

POINTS = [
    ("percpu_eager", "ncpus=2 ops=2 batch=2 readers=1 summers=1"),
    ("percpu_eager", "variant=C ncpus=2 ops=2 batch=2 migrations=1"),
    ("eager_fold_gt", "ncpus=2 batch=2 ops=3"),
    ("eager_limited_overshoot", ""),
    ("percpu_lazy", "mod_bits=0 readers=0"),
    ("stack_cache", ""),
    ("unlink_batch_free_before_final", ""),
    ("stack_stale", ""),
    ("lazy_mmdrop_uninit_index", ""),
    ("hotplug_dying_partial", ""),
]


def _model(spec, sets=""):
    cls = loader.resolve([spec])[0]
    own = own_sets(cls, parse_set(sets.split()) if sets else {})
    return Model(cls, param_points(cls, own, "explore")[0])


def _summary(r):
    return (r.states, r.transitions, r.depth, r.complete, r.stopped_because,
            {n: (o.verdict, o.reason, o.trace, o.initial_state) for n, o in r.outcomes.items()})


@pytest.mark.parametrize("spec,sets", POINTS, ids=[f"{s}[{p}]" for s, p in POINTS])
def test_two_and_three_jobs_give_the_sequential_result(spec, sets):
    one = _summary(explore(_model(spec, sets)))
    assert one[0] > 10  # a search worth splitting
    for jobs in (2, 3):
        assert _summary(explore(_model(spec, sets), jobs=jobs)) == one


@pytest.mark.parametrize("limit", [1, 7, 200])
def test_a_state_limit_cuts_where_the_sequential_search_stops(limit):
    seq = _summary(explore(_model("percpu_eager", "ncpus=2 ops=2 batch=2 readers=1"), max_states=limit,
                           symmetry=False))
    par = _summary(explore(_model("percpu_eager", "ncpus=2 ops=2 batch=2 readers=1"), max_states=limit,
                           symmetry=False, jobs=2))
    assert seq == par and seq[0] == limit and seq[4] == "max_states"


@pytest.mark.parametrize("name,rule", [("SleepsWithIrqsOff", "no_sleep_in_atomic"), ("AbbaLocks", "lock_order"),
                                       ("IrqUnsafeLock", "irq_safe_locks"), ("IrqUnsafeLock", "no_irq_deadlock"),
                                       ("AbbaWithBystander", "no_lock_deadlock"),
                                       ("ForgetsIrqRestore", "context_restored")])
def test_context_rule_verdicts_are_the_same(name, rule):
    cls = loader.resolve([f"{FIXTURES / 'contexts.py'}:{name}"])[0]
    found = []
    for jobs in (1, 2):
        out = explore(Model(cls), jobs=jobs).outcomes[rule]
        found.append((out.verdict, out.trace, out.second_trace, out.finding))
    assert found[0][0] == "violated" and found[0] == found[1]


def test_cli_jobs_gives_the_same_report(cli):
    args = ("verify", "eager_fold_gt", "--set", "ncpus=2", "--set", "batch=2", "--set", "ops=3", "--set", "variant=B", "--mode", "explore",
            "--format", "json")

    def checks(r):
        assert r.returncode == 0, r.stderr
        return [{k: v for k, v in c.items() if k != "seconds"} for c in json.loads(r.stdout)["checks"]]

    par = checks(cli(*args, "--jobs", "2"))
    assert par == checks(cli(*args)) and any(c["verdict"] == "violated" and c["trace"] for c in par)


def test_jobs_below_one_is_a_usage_error(cli):
    r = cli("verify", "percpu_eager", "--jobs", "0")
    assert r.returncode == 2 and "--jobs must be at least 1" in r.stderr
