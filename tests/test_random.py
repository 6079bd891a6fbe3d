# SPDX-License-Identifier: GPL-2.0-only
"""Hypothesis drives the specs far past the exhaustive bound (DESIGN principle 1):
random runs at 64 CPUs keep every invariant that is claimed to hold, and the
canonical form is the same for every renaming of the CPUs."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.language.compile import Model
from checker.specs.percpu_eager import PercpuEager
from checker.specs.rss_split import RssSplit

BIG_EAGER = Model(PercpuEager, PercpuEager(ncpus=64, batch=4, ops=12, readers=1, summers=1).params)
BIG_RSS = Model(RssSplit, RssSplit(threads=64, T=3, U=4, unmaps=1, readers=1).params)


def _walk(model, picks):
    s = model.initial_states()[0]
    claims = [p for p in model.invariants if p.expect == "holds"]
    for pick in picks:
        succ = model.successors(s)
        if not succ:
            break
        s = succ[pick % len(succ)][1]
        broken = [p.name for p in claims if not p.fn(s)]
        assert not broken, (broken, s)
    return s


@pytest.mark.differential  # (15 s; the 64-thread rss walks and the 64-CPU simulations stay in the default tier)
@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=50, max_size=400))
def test_random_runs_at_64_cpus_keep_the_eager_invariants(picks):
    _walk(BIG_EAGER, picks)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=50, max_size=400))
def test_random_runs_with_64_threads_keep_the_rss_invariants(picks):
    _walk(BIG_RSS, picks)


SMALL = Model(PercpuEager, PercpuEager(ncpus=5, batch=3, ops=3, readers=1, summers=1).params)


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=0, max_size=40), st.randoms())
def test_canonical_form_is_the_same_for_every_renaming(picks, rnd: random.Random):
    s = _walk(SMALL, picks)
    adders = list(SMALL.roles["adders"])
    shuffled = adders[:]
    rnd.shuffle(shuffled)
    renamed = SMALL.symmetry.permute(s, dict(zip(adders, shuffled)))
    assert SMALL.symmetry.canonical(renamed) == SMALL.symmetry.canonical(s)
