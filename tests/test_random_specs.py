# SPDX-License-Identifier: GPL-2.0-only
"""On random small specs (tests/random_specs.py): symmetry changes no verdict, and the C canonical form is the
interpreter's on every reachable state."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from canonical_harness import any_values, compiled_canonical, compiler, reachable
from checker import explore
from checker.compiled.canonical import Layout, flatten, reference_canonical, unflatten, widths
from checker.types import NOBODY
from random_specs import random_models, sample_models

#: A generated spec whose full state space is larger is skipped (the generator keeps most far below).
LIMIT = 5000
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def shortest(e) -> dict[str, int]:
    return {n: len(o.trace) for n, o in e.outcomes.items()}


@settings(max_examples=40, **SETTINGS)
@given(model=random_models())
def test_symmetry_keeps_verdicts_and_never_adds_states(model):
    full = explore(model, symmetry=False, max_states=LIMIT)
    assume(full.complete)
    reduced = explore(model, symmetry=True)  # samples the symmetry too: a broken one raises SymmetryError
    assert reduced.complete
    assert reduced.verdicts == full.verdicts, model.source
    assert shortest(reduced) == shortest(full), model.source  # renaming keeps the BFS depth of every state
    assert reduced.depth == full.depth
    assert reduced.states <= full.states


@pytest.mark.skipif(compiler() is None, reason="no C compiler ($CC, else cc): apt-get install gcc")
@settings(max_examples=25, **SETTINGS)
@given(model=random_models(), data=st.data())
def test_c_canonical_is_the_interpreters_on_random_specs(model, data):
    states = reachable(model, LIMIT)
    run = compiled_canonical(model)
    vs = [flatten(model, s) for s in states]
    lay = Layout(model)
    want = [flatten(model, model.symmetry.canonical(s)) for s in states]
    assert run(vs) == want, model.source
    assert [reference_canonical(model, v, lay) for v in vs] == want
    # a renamed reachable state has the same form
    s = data.draw(st.sampled_from(states))
    mapping = {}
    for g in model.symmetry.groups:
        mapping.update(zip(g, data.draw(st.permutations(g))))
    r = flatten(model, model.symmetry.permute(s, mapping))
    assert run([r]) == [flatten(model, model.symmetry.canonical(s))]
    # and any vector at all: the same function where no run goes
    v = [data.draw(st.sampled_from(any_values(model, n))) for n, w in zip(model.var_names, widths(model))
         for _ in range(1 if w is None else w)]
    assert run([v]) == [flatten(model, model.symmetry.canonical(unflatten(model, v)))], model.source


def test_the_generator_reaches_both_paths_and_reduces():
    """Not vacuous: among 40 generated specs some have two symmetric roles, some states take the brute path,
    in some a fixed CPU's slot names a symmetric CPU (a sort-key flag), and symmetry merges states."""
    two = brute = flagged = reduced = 0
    for model in sample_models(40):
        lay = Layout(model)
        two += len(lay.groups) == 2
        vs = [flatten(model, s) for s in reachable(model, LIMIT)]
        brute += any(lay.brute and any(v[q + c] != NOBODY for q in lay.cper for c in lay.group_cpus) for v in vs)
        flagged += any(v[q + d] in lay.group_cpus for v in vs for q in lay.cper for d in lay.fixed)
        if len(vs) < LIMIT:
            reduced += explore(model, symmetry=True).states < len(vs)
    assert two >= 3 and brute >= 3 and flagged >= 1 and reduced >= 20, (two, brute, flagged, reduced)
