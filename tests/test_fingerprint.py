# SPDX-License-Identifier: GPL-2.0-only
"""--fingerprint: a visited set of 64-bit hashes gives the same counts,
verdicts and shortest traces, and says how likely a collision was."""
import json

import pytest
from test_parallel import _model, _summary

from checker.explore import explore


@pytest.mark.parametrize("spec,sets", [("percpu_eager", "ncpus=2 ops=2 batch=2 readers=1 summers=1"),
                                       ("eager_fold_gt", "ncpus=2 batch=2 ops=3"),
                                       ("lazy_mmdrop_uninit_index", "")])
@pytest.mark.parametrize("symmetry", [True, False])
def test_fingerprints_give_the_same_result(spec, sets, symmetry):
    full = explore(_model(spec, sets), symmetry=symmetry)
    fp = explore(_model(spec, sets), symmetry=symmetry, fingerprint=True)
    assert _summary(fp) == _summary(full)
    assert full.omission_probability is None
    n = fp.states
    assert fp.omission_probability == pytest.approx(n * (n - 1) / 2 / 2 ** 64)


def test_the_report_gives_the_omission_probability(cli):
    r = cli("verify", "eager_fold_gt", "--set", "variant=B", "--set", "ncpus=2", "--set", "batch=2", "--set", "ops=3",
            "--mode", "explore", "--fingerprint", "--format", "json")
    assert r.returncode == 0, r.stderr
    checks = json.loads(r.stdout)["checks"]
    assert all(c["fingerprint"] and 0 < c["omission_probability"] < 1e-12 for c in checks if c["kind"] != "build")
    text = cli("verify", "eager_fold_gt", "--set", "variant=B", "--set", "ncpus=2", "--set", "batch=2",
               "--set", "ops=3", "--mode", "explore", "--fingerprint", "-v").stdout
    assert "149 states (fingerprints: P(a state missed) <= 6.0e-16)" in text


def test_fingerprints_with_several_processes_is_a_usage_error(cli):
    r = cli("verify", "percpu_eager", "--fingerprint", "--jobs", "2")
    assert r.returncode == 2 and "--fingerprint works with one process" in r.stderr


def test_equal_states_have_equal_fingerprints_whatever_objects_they_share():
    from checker.explore.search import fingerprint_of

    row = (0, -1, 2)
    shared, copied = (row, row, 5), (row, tuple(list(row)), 5)
    assert shared == copied and fingerprint_of(shared) == fingerprint_of(copied)
    assert fingerprint_of((0, -1)) != fingerprint_of((0, -2))  # Python's hash(-1) == hash(-2)


def test_initial_bools_are_stored_as_ints():
    """``apply`` stores a bool as an int; the initial state does too, so a state reached again after
    ``x = 0`` is the same state as the initial ``x = False`` in every encoding."""
    from checker import Shared, Spec, action, terminal, when
    from checker.language.compile import Model

    class Flag(Spec):
        kernel = "a test, not kernel code"
        up = Shared(False)

        @action
        def flip(s):
            return when(True, up=s.up == 0)

        @terminal
        def never(s):
            return False

    s0 = Model(Flag).initial_states()[0]
    assert type(s0[0]) is int
    assert explore(Flag(), fingerprint=True).states == explore(Flag()).states == 2
