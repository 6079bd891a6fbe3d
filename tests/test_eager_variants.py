# SPDX-License-Identifier: GPL-2.0-only
"""Issue 5: the add_batch variants, interrupts and migration, compare and limited_add, UP, hotplug."""
import json

import pytest

from checker import Param, Role, Shared, Spec, action, explore, invariant, terminal, when
from checker.prove import prove_checks
from checker.language.model import info
from checker.specs.bugs.eager_cmpxchg_paren import EagerCmpxchgParen
from checker.specs.bugs.eager_irq_add import EagerIrqAdd
from checker.specs.bugs.eager_limited_overshoot import EagerLimitedOvershoot
from checker.specs.bugs.hotplug_compare_dying import HotplugCompareDying
from checker.specs.bugs.hotplug_check_mm_online_sum import HotplugCheckMmOnlineSum
from checker.specs.bugs.hotplug_compare_shrink import HotplugCompareShrink
from checker.specs.bugs.hotplug_dying_partial import HotplugDyingPartial
from checker.specs.bugs.hotplug_notifier_dead_only import HotplugNotifierDeadOnly
from checker.specs.bugs.hotplug_sum_dead import HotplugSumDead
from checker.specs.bugs.up_add_race import UpAddRace
from checker.specs.percpu_eager import VARIANT, PercpuEager
from checker.specs.percpu_hotplug import ADDV, DESIGN, PercpuHotplug
from checker.specs.percpu_up import PercpuUp


def verdicts(r):
    return {k: o.verdict for k, o in r.outcomes.items()}


def failing(r, cls=None):
    """Properties whose verdict is not the one the spec expects."""
    props = info(cls).properties if cls else {}
    return {k for k, o in r.outcomes.items()
            if o.verdict != (props[k].expect if k in props else "holds")}


# -- the three variants -----------------------------------------------------------------------
@pytest.mark.parametrize("variant", [VARIANT.B, VARIANT.C])
@pytest.mark.parametrize("ncpus", [1, 2])
def test_b_and_c_keep_every_bound_with_an_interrupt_adder(variant, ncpus):
    r = explore(PercpuEager(variant=variant, irq=1, ncpus=ncpus, batch=2, readers=0, summers=0))
    assert not failing(r, PercpuEager), failing(r, PercpuEager)
    assert r.outcomes["local_bound"].verdict == "holds" and r.outcomes["read_bound"].verdict == "holds"


def test_variant_a_holds_without_interrupts_and_breaks_with_them():
    assert not failing(explore(PercpuEager(variant=VARIANT.A, ncpus=2, batch=3, readers=1, summers=1)), PercpuEager)
    r = explore(EagerIrqAdd(ncpus=1, batch=2))
    out = r.outcomes["local_bound"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == ["percpu_counter_add_batch_a_L17_raw_cpu_read_L26", "percpu_counter_add_L4_atomic_ret_2",
                                             "percpu_counter_add_batch_a_L26_this_cpu_add"]
    assert abs(out.trace[-1].changes["local[0]"]) == 2  # 2 * (batch - 1)


def test_an_interrupt_makes_the_cmpxchg_fail_and_retry():
    r = explore(PercpuEager(variant=VARIANT.C, irq=1, ncpus=1, batch=3, readers=0, summers=0))
    assert r.outcomes["an_add_is_interrupted"].verdict == "holds"
    names = [s.action for s in r.outcomes["an_add_is_interrupted"].trace]
    assert names[0] == "percpu_counter_add_batch_L16_this_cpu_read" and "percpu_counter_add_L4_atomic_ret_2" in names


def test_migration_between_read_and_cmpxchg_keeps_the_bounds():
    r = explore(PercpuEager(variant=VARIANT.C, migrations=1, ncpus=2, batch=2, readers=0, summers=1))
    assert not failing(r, PercpuEager), failing(r, PercpuEager)
    assert [s.action for s in r.outcomes["a_task_adds_on_another_cpu"].trace][-1] == "migrate"


def test_misplaced_parenthesis_never_folds():
    r = explore(EagerCmpxchgParen(ncpus=1, batch=2))
    assert r.outcomes["a_fold_happens"].verdict == "violated"  # fbc->count keeps its initial value
    tr = r.outcomes["read_bound"].trace
    assert [s.action for s in tr] == ["percpu_counter_add_batch_L16_this_cpu_read",
                                      "percpu_counter_add_batch_L27_this_cpu_try_cmpxchg_ret"] * 2
    assert not failing(explore(PercpuEager(variant=VARIANT.C, ncpus=1, batch=2)), PercpuEager)


def test_variant_range_on_the_command_line(cli):
    r = cli("verify", "percpu_eager", "--mode", "explore", "--set", "variant=A..C", "--set", "irq=1",
            "--set", "ncpus=1", "--set", "batch=2", "--set", "readers=0", "--set", "summers=0", "--format", "json")
    assert r.returncode == 1  # variant A with an interrupt adder loses its bounds
    checks = json.loads(r.stdout)["checks"]
    bad = {(c["params"]["variant"], c["property"]) for c in checks if c["verdict"] != c["expected"]}
    assert {v for v, _ in bad} == {"A"} and ("A", "local_bound") in bad
    assert {c["params"]["variant"] for c in checks} == {"A", "B", "C"}


def test_unknown_variant_lists_the_names(cli):
    r = cli("verify", "percpu_eager", "--set", "variant=D")
    assert r.returncode == 2 and "'D' is not one of A, B, C" in r.stderr


# -- limited_add ----------------------------------------------------------------------------------
def test_limited_add_bound_is_ncpus_times_batch():
    r = explore(PercpuEager(limited=1, ncpus=2, batch=2, readers=0, summers=0))
    assert r.outcomes["read_bound_limited"].verdict == "holds"
    assert r.outcomes["read_bound_limited_is_tight"].verdict == "holds"
    assert r.outcomes["add_batch_bound_with_limited_add"].verdict == "violated"
    assert r.outcomes["limit_exceeded_by_at_most_racing_adds"].verdict == "holds"


def test_limited_add_goes_past_its_limit():
    out = explore(EagerLimitedOvershoot(ncpus=2)).outcomes["limit_respected"]
    # (13 steps: the pc machine, tests/pc_machines/percpu_eager.py, takes 14, its scan's end a step of its own)
    assert out.verdict == "violated" and len(out.trace) == 13
    assert out.trace[-1].action == "percpu_counter_limited_add_L61_atomic_ret_1" and out.trace[-1].changes["exact"] == 5


# -- the Z3 proofs ------------------------------------------------------------------------------
@pytest.mark.parametrize("variant,limited", [(VARIANT.C, 0), (VARIANT.B, 1)])
def test_bounds_and_compare_margin_proved_for_every_cpu_count(variant, limited):
    checks = prove_checks(PercpuEager, {"variant": (variant,), "limited": (limited,), "batch": ("symbolic",)},
                          smt_timeout=120)
    got = {c.property: c for c in checks if c.kind == "proof"}
    bound = "read_bound_limited" if limited else "read_bound"
    for name in (bound, "compare_margin_sound", "local_bound_limited" if limited else "local_bound"):
        assert got[name].verdict == "holds" and got[name].extra["method"] == "parametric", name
        assert got[name].params["ncpus"] == "1..8192" and got[name].params["irq"] == "symbolic"
    if limited:
        assert "limit_exceeded_by_at_most_racing_adds" not in got  # left to the explorer, and said so
        assert any("limit_exceeded_by_at_most_racing_adds" in n for n in got["types"].extra["notes"])


class _Unsupported(Spec):
    """x climbs to 3; `small` and `nonneg` are inductive, `below_four` follows from them."""

    kernel = "test fixture"
    n = Param(1, domain=range(1, 4), prove=("symbolic",))
    cpus = Role("n")
    x = Shared(0)

    @action(role="cpus")
    def inc(s, cpu):
        return when(s.x < 3, x=s.x + 1)

    @terminal
    def done(s):
        return s.x == 3

    @invariant(inductive=True)
    def small(s):
        return s.x <= 3

    @invariant(inductive=True)
    def nonneg(s):
        return s.x >= 0

    @invariant
    def below_four(s):
        return s.x < 4


def test_a_goal_resting_on_an_unproved_conjunct_is_not_proved():
    class Weak(_Unsupported):
        @invariant(inductive=True)
        def odd_claim(s):
            """Not inductive: x == 2 steps to 3."""
            return s.x != 3

    got = {c.property: c for c in prove_checks(Weak, smt_timeout=60) if c.kind == "proof"}
    assert got["odd_claim"].verdict == "inconclusive" and got["odd_claim"].reason == "not_inductive"
    assert got["below_four"].verdict == "inconclusive"
    assert got["below_four"].reason == "unproved_support: relies on odd_claim"
    plain = {c.property: c.verdict for c in prove_checks(_Unsupported, smt_timeout=60) if c.kind == "proof"}
    assert plain["below_four"] == "holds"


# -- UP -----------------------------------------------------------------------------------------
def test_up_add_is_exact_with_interrupts_off_and_loses_an_update_without():
    assert not failing(explore(PercpuUp(ops=2, irq=2)), PercpuUp)
    out = explore(UpAddRace(ops=1, irq=1)).outcomes["read_is_exact"]
    assert [s.action for s in out.trace] == ["add_load", "irq_add", "add_store"]


# -- hotplug ----------------------------------------------------------------------------------------
def test_each_hotplug_design_gets_its_verdict():
    h3 = explore(PercpuHotplug(design=DESIGN.H3, ncpus=2, reonline=1))
    assert not failing(h3, PercpuHotplug) and h3.outcomes["a_hotplug_fold_moves_a_count"].verdict == "holds"
    h2 = explore(PercpuHotplug(design=DESIGN.H2, ncpus=2, reonline=1, ops=1))  # full transitions, C adds
    assert not failing(h2, PercpuHotplug) and h2.outcomes["sum_exact_without_overlap"].verdict == "holds"
    out = explore(HotplugSumDead(ncpus=2)).outcomes["sum_exact_without_overlap"]
    assert out.verdict == "violated" and len(out.trace) == 6
    assert "take_cpu_down" in [s.action for s in out.trace]
    partial = explore(HotplugDyingPartial()).outcomes["sum_exact_without_overlap"]
    assert partial.verdict == "violated" and "cpu_up_start" in [s.action for s in partial.trace]
    assert "percpu_counter_cpu_dead" not in [s.action for s in partial.trace]


def test_compare_margin_misses_the_dying_cpu_but_not_under_h3():
    dying = explore(HotplugCompareDying()).outcomes["compare_margin_sound"]
    assert dying.verdict == "violated" and len(dying.trace) == 11  # C adds: a read and a cmpxchg each
    assert dying.trace[-1].action == "take_cpu_down"
    fixed = explore(PercpuHotplug(design=DESIGN.H3, ncpus=2, ops=3, summers=0))
    assert fixed.outcomes["compare_margin_sound"].verdict == "holds"
    assert explore(HotplugCompareShrink()).outcomes["compare_margin_sound"].verdict == "violated"


def test_read_bound_uses_the_largest_batch_since_the_fold():
    r = explore(PercpuHotplug(design=DESIGN.H3, ncpus=2, ops=3, batch_floor=1, summers=0))
    assert r.outcomes["read_bound"].verdict == "holds" and r.outcomes["local_bound"].verdict == "holds"


#: Distinct states under symmetry (2 CPUs, batch 4, a local filled to batch - 1).
H2_C_STATES = 7229
LIMITED_STATES = (404, 280)


# -- issue 18, point 1: the design that ships, deep enough to matter -------------------------------
def test_mainline_h2_with_its_c_adds_fills_a_local_and_fails_compare_as_expected():
    r = explore(PercpuHotplug(design=DESIGN.H2, ncpus=2, summers=0))
    assert PercpuHotplug(design=DESIGN.H2).params.add == ADDV.C and not failing(r, PercpuHotplug)
    out = r.outcomes["compare_margin_misses_an_offline_cpu"]
    assert out.verdict == "violated" and len(out.trace) == 11 and out.trace[-1].action == "take_cpu_down"
    assert r.outcomes["a_local_reaches_its_slack"].verdict == "holds"
    assert r.outcomes["an_add_migrates_across_an_offline"].verdict == "holds"
    assert r.states == H2_C_STATES


def test_limited_add_margin_misses_the_offline_cpu_under_h2_only():
    h2 = explore(PercpuHotplug(design=DESIGN.H2, limited=1, summers=0))
    out = h2.outcomes["limited_add_misses_an_offline_cpu"]
    assert out.verdict == "violated" and "take_cpu_down" in [s.action for s in out.trace]
    assert len(out.trace) == 11 and out.trace[-1].action in ("limited_fast", "limited_lock")
    h3 = explore(PercpuHotplug(design=DESIGN.H3, limited=1, summers=0))
    assert h3.outcomes["limited_add_keeps_the_limit"].verdict == "holds" and not failing(h3, PercpuHotplug)
    assert h3.outcomes["a_limited_add_is_refused"].verdict == "holds"
    assert (h2.states, h3.states) == LIMITED_STATES


def test_check_mm_needs_sum_all_under_h1():
    fixed = explore(PercpuHotplug(design=DESIGN.H1, checkmm=2))
    assert fixed.outcomes["check_mm_no_false_alarm"].verdict == "holds" and not failing(fixed, PercpuHotplug)
    assert fixed.outcomes["check_mm_falls_back_to_sum_all"].verdict == "holds"
    out = explore(HotplugCheckMmOnlineSum()).outcomes["check_mm_no_false_alarm"]
    assert out.verdict == "violated" and len(out.trace) == 7
    assert [s.action for s in out.trace][:3] == ["add_fast", "add_fast", "take_cpu_down"]


def test_notifier_that_ignores_cpu_dead_frozen_strands_a_suspended_cpus_local():
    r = explore(PercpuHotplug(design=DESIGN.N, suspend=1))
    assert not failing(r, PercpuHotplug) and r.outcomes["sum_exact_once_folded"].verdict == "holds"
    assert r.outcomes["a_cpu_goes_down_for_suspend"].verdict == "holds"
    out = explore(HotplugNotifierDeadOnly()).outcomes["sum_exact_once_folded"]
    assert out.verdict == "violated" and len(out.trace) == 7
    down = [s for s in out.trace if s.action == "take_cpu_down"]
    assert len(down) == 1 and down[0].choices["suspended"] == 1
