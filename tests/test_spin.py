# SPDX-License-Identifier: GPL-2.0-only
"""Differential checking against SPIN: every exportable built-in spec, at its smallest explore point,
exported to Promela and searched by SPIN without its reductions, must give the explorer's verdict for
every property and exactly the explorer's states (without symmetry) plus SPIN's start state; every
bug spec's planted bug must be found by SPIN too."""
from functools import lru_cache

import pytest

from checker import And, AllOf, Implies, Shared, Spec, action, invariant, sometimes, terminal, when
from checker.explore import explore
from checker.export import NotExportable, export_promela, spin
from checker.kernel.context import RULE_DOCS
from checker.loader import builtin_specs
from checker.language.compile import LIVENESS, Model
from checker.language.model import info
from checker.verify import param_points

pytestmark = pytest.mark.skipif(not spin.available(), reason="SPIN is not installed: apt-get install spin gcc "
                                "(as .ci/run does); the differential check against it cannot run")

#: Built-in specs Promela cannot express, and the construct each refusal names.
REFUSED = {
    "percpu_lazy": "no_update_lost uses the value 36028797018963968 \\(beyond Promela's 32-bit int\\)",
    "percpu_lazy_rfc": "beyond Promela's 32-bit int",
    "lazy_decode_logical_shift": "beyond Promela's 32-bit int",
    "lazy_rfc_double_init": "beyond Promela's 32-bit int",
    "lazy_rfc_read_positive": "beyond Promela's 32-bit int",
    "lazy_switch_loser_preempt": "beyond Promela's 32-bit int",
    "lazy_cmpxchg_stale_old": "beyond Promela's 32-bit int",
    "lazy_mmdrop_reads_uninit_index": "reports reads of the uninitialised i \\(explorer-only\\)",
    "lazy_irq_switch_loser_preempt": "beyond Promela's 32-bit int",
    "percpu_lazy_publish": "beyond Promela's 32-bit int",
    "lazy_switch_no_preempt_disable": "beyond Promela's 32-bit int",
    "lazy_publish_plain_store": "beyond Promela's 32-bit int",
    "lazy_publish_relaxed": "memory=sc",
    "check_mm_mmput_relaxed": "memory=sc",  # its only points are lkmm's
    "stack_drain_online_cpu": "memory=sc",  # its points are tso's and lkmm's
    "up_read_torn_32bit": "32-bit kernel's accesses in halves",
    "lazy_read_torn_32bit": "32-bit kernel's accesses in halves",
    "percpu_lazy_32bit": "32-bit kernel's accesses in halves",
}


@lru_cache(maxsize=None)
def _specs():
    return builtin_specs()


def state_bugs(cls):
    """The bugs SPIN searches for: not a build error (no state property) and not liveness (the explorer's
    graph check; the export asserts state properties)."""
    live = {n for n, p in info(cls).properties.items() if p.kind in LIVENESS}
    return [p for p in cls.expect_violated if p != "builds" and p not in live]


def smallest_point(cls):
    """The explore point with the fewest CPUs (then the smallest values) where every state property the
    spec expects violated applies, so that a bug spec's bug is there to be found."""
    bugs = state_bugs(cls)
    # 32-bit points (bits=32) last: they are explorer-only, so a spec with 64-bit points is exported at one
    key = lambda p: (p.as_dict().get("bits", 64) == 32, p.ncpus_total, tuple(p.as_dict().values()))  # noqa: E731
    points = sorted(param_points(cls, {}, "explore"), key=key)
    applying = [sum(p in {q.name for q in Model(cls, params).properties} for p in bugs) for params in points]
    # a bug that applies under a weak memory model only (no_data_race) is not SPIN's to find: the first point
    # where the most apply (every one, for all but such specs)
    best = max(range(len(points)), key=lambda i: (applying[i], -i))
    assert applying[best] or not bugs, f"{cls.spec_name}: no explore point where any of {bugs} applies"
    return points[best]


def agree(model: Model, tmp_path) -> dict[str, str]:
    """Run both tools; assert the same states (SPIN's start state aside) and verdicts; SPIN's verdicts."""
    exported = export_promela(model, sometimes=True, expected_violations=True)
    ours = explore(model, symmetry=False, engine="auto")  # the explorer as verify runs it (same states either way)
    theirs = spin.run(exported, tmp_path, flags=spin.cflags(reduce=False, optimize="-O0"),
                      expected_states=ours.states)
    assert theirs.stored == ours.states + exported.extra_states
    got = spin.verdicts(exported, theirs)
    # the context rules (lockdep's) are the explorer's: they judge its transitions, not a state SPIN asserts on
    assert got == {name: o.verdict for name, o in ours.outcomes.items() if name not in RULE_DOCS}
    return got


#: 10 s against SPIN (the counter tree's 8 CPUs), and stack_cache's bug specs at 1.6-2.8 s each (stack_cache
#: itself stays): in the differential tier.
SLOW_SPIN = ("percpu_counter_tree_deep", "stack_release_read_write", "stack_cmpxchg_stale_old",
             "stack_charge_before_zeroing", "stack_stranded_dead_cpu", "stack_stale", "stack_drain_online_cpu",
             "stack_cache_2019", "stack_teardown_keeps_pointer", "stack_memcg_charge_fail")


@pytest.mark.parametrize("name", [n if n not in SLOW_SPIN else pytest.param(n, marks=pytest.mark.differential)
                                  for n in _specs()])
def test_spin_agrees_with_the_explorer_on_every_builtin_spec(name, tmp_path):
    cls = _specs()[name]
    model = Model(cls, smallest_point(cls))
    if name in REFUSED:
        with pytest.raises(NotExportable, match=REFUSED[name]):
            export_promela(model)
        return
    got = agree(model, tmp_path)
    for prop in state_bugs(cls):
        if prop in {p.name for p in model.properties}:
            assert got[prop] == "violated", f"SPIN misses the bug {name}.{prop}"


class FloorAndSwap(Spec):
    """Python's floor division and remainder on negative values, a swap, two initial states."""

    kernel = "a test of the Promela export, not kernel code"
    x = Shared(0)
    q = Shared(0)
    r = Shared(0)
    a = Shared(1)
    b = Shared(2)

    @action
    def down(s):
        return when(s.x > -5, x=s.x - 1, q=(s.x - 1) // 2, r=(s.x - 1) % 3)

    @action
    def swap(s):
        return when(s.x == -2, a=s.b, b=s.a)

    @terminal
    def done(s):
        return s.x == -5

    @invariant
    def floor_semantics(s):
        return AllOf([Implies(s.x == v, And(s.q == v // 2, s.r == v % 3)) for v in range(-5, 1)])

    @invariant
    def swapped_pair(s):
        return s.a + s.b == 3

    @sometimes
    def swapped(s):
        return s.a == 2


def test_spin_agrees_on_floor_division_remainder_and_a_swap(tmp_path):
    got = agree(Model(FloorAndSwap()), tmp_path)
    assert got == {"floor_semantics": "holds", "swapped_pair": "holds", "swapped": "holds", "no_deadlock": "holds"}


class Stuck(Spec):
    """Stops one step short of its terminal state: a deadlock."""

    kernel = "a test of the Promela export, not kernel code"
    x = Shared(0)

    @action
    def step(s):
        return when(s.x < 1, x=s.x + 1)

    @terminal
    def done(s):
        return s.x == 2

    @invariant
    def small(s):
        return s.x <= 2


def test_a_deadlock_is_spins_invalid_end_state(tmp_path):
    assert agree(Model(Stuck()), tmp_path)["no_deadlock"] == "violated"
