# SPDX-License-Identifier: GPL-2.0-only
"""The explorer's claims: verdicts, shortest traces, symmetry, limits, determinism."""
import pytest

from checker import explore
from checker.language.compile import Model
from checker.specs.bugs.eager_fold_gt import EagerFoldGt
from checker.specs.bugs.eager_sum_unlocked import EagerSumUnlocked
from checker.specs.percpu_eager import PercpuEager
from malformed import Overflows, Stuck


def replay(model, initial_state, trace):
    """Apply each step by its action, CPU and choices; return the final state."""
    s = model.initial_states()[0]
    assert model.state_dict(s) == initial_state
    for step in trace:
        matches = []
        for label, t in model.successors(s):
            name, cpu, choices = model.label_parts(label)
            if (name, cpu, choices) == (step.action, step.cpu, step.choices):
                matches.append(t)
        assert matches, f"step {step} is not enabled"
        t = matches[0]
        assert model.changes(s, t) == step.changes
        s = t
    return s


#: A reader and a summer at 2 CPUs; at 3 (a group of six renamings) a reader alone: 4,418 states, not 47,443.
@pytest.mark.parametrize("ncpus,summers", [(2, 1), (3, 0)])
def test_symmetry_keeps_verdicts_and_shrinks_percpu_eager(ncpus, summers):
    full = explore(PercpuEager(ncpus=ncpus, readers=1, summers=summers, batch=2), symmetry=False)
    reduced = explore(PercpuEager(ncpus=ncpus, readers=1, summers=summers, batch=2), symmetry=True)
    assert full.verdicts == reduced.verdicts
    assert reduced.states < full.states


@pytest.mark.parametrize("spec", [EagerFoldGt(ncpus=3, batch=2), EagerSumUnlocked(ncpus=2, batch=2),
                                  PercpuEager(ncpus=3, batch=2, readers=1)])
def test_every_trace_under_symmetry_replays_without_it(spec):
    reduced = explore(spec, symmetry=True)
    full = explore(spec, symmetry=False)
    plain = Model(spec)
    checked = 0
    for name, out in reduced.outcomes.items():
        if not out.trace:
            continue
        final = replay(plain, reduced.initial_state, out.trace)
        prop = next((p for p in plain.properties if p.name == name), None)
        if prop is not None:
            assert bool(prop.fn(final)) == (out.kind == "sometimes")
        # shortest either way
        assert len(out.trace) == len(full.outcomes[name].trace)
        checked += 1
    assert checked >= 2


#: percpu_eager's generated steps (variant B's add_batch; eager_sum_unlocked's sum, its lines from its own def)
FAST, SLOW = "percpu_counter_add_batch_b_L17_atomic_ret", "percpu_counter_add_batch_b_L17_atomic_L25"
LOCK, FOLD = "percpu_counter_add_batch_b_L25_raw_spin_lock", "percpu_counter_add_batch_b_L26_atomic"
SUM_COUNT, SUM_LOCAL, SUM_RETURN = "percpu_counter_sum_L3_atomic", "percpu_counter_sum_L7_per_cpu", \
    "percpu_counter_sum_L5_local"


@pytest.mark.parametrize("ncpus,batch", [(1, 2), (2, 2), (2, 3), (3, 2), (3, 3)])
def test_fold_gt_bug_found_with_shortest_trace(ncpus, batch):
    r = explore(EagerFoldGt(ncpus=ncpus, batch=batch))
    out = r.outcomes["read_bound"]
    assert out.verdict == "violated"
    assert len(out.trace) == ncpus * (batch - 1) + 1
    assert all(step.action == FAST for step in out.trace)


def test_unlocked_summer_double_counts_a_fold():
    out = explore(EagerSumUnlocked(ncpus=1, batch=2)).outcomes["sum_exact_without_overlap"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == [FAST, SLOW, LOCK, FOLD, SUM_COUNT, SUM_LOCAL, SUM_RETURN]


def test_unlocked_summer_misses_folds_past_the_sum_bound():
    """sum_within_bound can fail: the unlocked sum reads fbc->count (0), a fold moves 2 into it, the sum reads the
    emptied local, a third add lands: the sum returns 0 with E = 3, past 2 * ncpus * (batch - 1) = 2."""
    out = explore(EagerSumUnlocked(ncpus=1, batch=2, ops=3)).outcomes["sum_within_bound"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == [FAST, SLOW, LOCK, SUM_COUNT, FOLD, "percpu_counter_add_batch_b_L29_raw_cpu_sub",
                                             "percpu_counter_add_batch_b_L30_raw_spin_unlock", SUM_LOCAL, FAST,
                                             SUM_RETURN]


def test_tightness_witness_fills_every_local():
    r = explore(PercpuEager(ncpus=3, batch=3, readers=0, summers=0))
    out = r.outcomes["read_bound_is_tight"]
    assert out.verdict == "holds" and len(out.trace) == 3 * 2
    assert r.outcomes["read_bound_minus_one"].verdict == "violated"


def test_same_input_same_trace():
    a = explore(EagerFoldGt(ncpus=3, batch=3)).outcomes["read_bound"].trace
    b = explore(EagerFoldGt(ncpus=3, batch=3)).outcomes["read_bound"].trace
    assert a == b
    # tie-break: declared choice order (-1 before +1), then CPUs ascending; the bug lets
    # each local reach -batch, so 3 + 3 + 1 units exceed the bound 3 * (3 - 1)
    assert [(s.cpu, s.choices["amount"]) for s in a] == [(0, -1), (0, -1), (0, -1), (1, -1), (1, -1), (1, -1), (2, -1)]


def test_max_states_makes_unfinished_verdicts_inconclusive():
    r = explore(PercpuEager(ncpus=3, batch=2), max_states=50)
    assert r.states == 50 and not r.complete
    assert r.outcomes["read_bound"].verdict == "inconclusive"
    assert r.outcomes["read_bound"].reason == "max_states"
    # a violation found before the limit is final
    assert r.outcomes["read_bound_minus_one"].verdict == "violated"


def test_timeout_is_inconclusive():
    r = explore(PercpuEager(ncpus=3, batch=3, readers=1, summers=1), timeout=0.05)
    assert r.stopped_because == "timeout"
    assert r.outcomes["conservation"].verdict == "inconclusive"


def test_deadlock_found_with_trace():
    r = explore(Stuck(ncpus=2))
    out = r.outcomes["no_deadlock"]
    assert out.verdict == "violated" and [s.action for s in out.trace] == ["take"]


def test_overflow_reported_or_wrapped_as_declared():
    r = explore(Overflows())
    out = r.outcomes["no_overflow"]
    assert out.verdict == "violated" and len(out.trace) == 2
    assert out.trace[-1].changes["w"] == -(2 ** 31)  # wrapped, as declared
    assert out.trace[-1].changes["v"] == 2 ** 31  # reported, not wrapped


def test_vacuous_spec_is_a_failure():
    # ops < batch - 1: no fold is reachable, so the tightness witness must fail
    r = explore(PercpuEager(ncpus=1, batch=3, ops=1, readers=0, summers=0))
    assert r.outcomes["a_fold_happens"].verdict == "violated"


def test_a_timeout_stops_the_search_at_the_next_state_however_slow_states_are():
    """At hundreds of CPUs one expansion takes a second: the limit is looked at after every state, not every 256
    (a 1 s --timeout at 512 CPUs ran four minutes). Here each expansion takes 0.2 s."""
    import time

    m = Model(PercpuEager(ncpus=2, batch=2))
    expansions = []
    successors = m.successors

    def slow(s):
        expansions.append(s)
        time.sleep(0.2)
        return successors(s)

    m.successors = slow
    r = explore(m, engine="interpreted", timeout=0.5)
    assert not r.complete and r.stopped_because == "timeout"
    assert len(expansions) <= 4


def test_an_interrupt_python_swallowed_still_stops_the_search_at_the_next_state():
    """A signal raised inside a destructor (a Z3 term collected mid-search) is swallowed by Python and only
    noted: the search asks after every state, or it ran on past a SIGTERM (a CI run killed 120 s later)."""
    from checker import interrupts

    class Collected:
        def __del__(self):
            interrupts.stop(interrupts.INTERRUPTED)  # what the signal handler does, here in a destructor

    m = Model(PercpuEager(ncpus=2, batch=2))
    expansions = []
    successors = m.successors

    def swallowing(s):
        expansions.append(s)
        if len(expansions) == 2:
            Collected()  # its KeyboardInterrupt never reaches this frame
        return successors(s)

    m.successors = swallowing
    with interrupts.interruptible(), pytest.raises(KeyboardInterrupt):
        explore(m, engine="interpreted")
    assert len(expansions) <= 3  # (the symmetry sample expands a state too)
