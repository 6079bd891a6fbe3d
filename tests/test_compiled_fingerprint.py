# SPDX-License-Identifier: GPL-2.0-only
"""``--fingerprint`` on the compiled engine: 64-bit hashes of the states, TLC's hash compaction.

On small points no two states share a hash, so the counts, verdicts and traces are the exact search's;
the result says it kept fingerprints, with the chance that a state was missed.
"""
import pytest

from checker.explore import explore
from checker.language.compile import Model
from checker.loader import builtin_specs
from checker.verify import param_points
from eager_table import EagerTable

SPECS = builtin_specs()


def outcome_view(r):
    return {n: (o.verdict, o.reason, o.trace, o.initial_state) for n, o in r.outcomes.items()}


def same_with_fingerprints(model_of, *, symmetry=True, max_states=None):
    exact = explore(model_of(), symmetry=symmetry, engine="compiled", max_states=max_states)
    fp = explore(model_of(), symmetry=symmetry, engine="compiled", max_states=max_states, fingerprint=True)
    assert (exact.engine, fp.engine) == ("compiled", "compiled"), fp.engine_note
    assert "64-bit fingerprints" in fp.engine_note
    assert (exact.states, exact.transitions, exact.depth, exact.complete, exact.stopped_because) == \
        (fp.states, fp.transitions, fp.depth, fp.complete, fp.stopped_because)
    assert outcome_view(exact) == outcome_view(fp)
    n = fp.states
    assert exact.omission_probability is None and fp.omission_probability == n * (n - 1) / 2 / 2.0 ** 64
    return fp


@pytest.mark.parametrize("name", ["percpu_eager", "stack_cache", "eager_irq_add", "counters_lock_irq_unsafe",
                                  "hotplug_sum_dead"])
def test_fingerprints_give_the_exact_counts_verdicts_and_traces(name):
    cls = SPECS[name]
    point = next(p for p in param_points(cls, {}, "explore") if Model(cls, p).abstraction is None)
    same_with_fingerprints(lambda: Model(cls, point))


@pytest.mark.parametrize("limit", [None, 1000])
def test_fingerprints_without_symmetry_and_at_a_state_limit(limit):
    r = same_with_fingerprints(lambda: EagerTable(ncpus=3, ops=3, batch=3), symmetry=False, max_states=limit)
    assert r.states == (limit or 4202)


def test_the_report_says_fingerprints_and_the_omission_probability():
    from checker.engines.explore import explore_checks

    cls = SPECS["percpu_eager"]
    point = param_points(cls, {}, "explore")[0]
    checks = explore_checks(cls, point, fingerprint=True, engine="compiled")
    assert checks and all(c.engine == "compiled" and c.extra.get("fingerprint") for c in checks
                          if c.backend == "explore" and c.verdict != "not_applicable")
    assert all(0 < c.extra["omission_probability"] < 1e-6 for c in checks if c.extra.get("fingerprint"))



@pytest.mark.differential
def test_fingerprints_on_many_random_specs():
    """(the default tier runs a few of these in test_compiled_jobs.py, sharing their programs)"""
    from random_specs import load, sample_models

    for model in sample_models(20, seed=27):
        for symmetry in (True, False):
            same_with_fingerprints(lambda m=model: load(m.source), symmetry=symmetry, max_states=20000)
