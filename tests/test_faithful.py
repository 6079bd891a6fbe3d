# SPDX-License-Identifier: GPL-2.0-only
"""Issue 18: RFC v2's atomic-mode percpu_counter and the percpu_counters_lock list, with their bugs."""
from checker import explore
from checker.specs.bugs.counters_lock_irq_unsafe import CountersLockIrqUnsafe
from checker.specs.percpu_atomic_mode_rfc import FOLD, PercpuAtomicModeRfc
from checker.specs.percpu_counters_list import PercpuCountersList


def test_v2_atomic_mode_loses_an_atomic_add_to_the_plain_fold():
    r = explore(PercpuAtomicModeRfc(ncpus=2))
    assert {k for k, v in r.verdicts.items() if v != "holds"} == {"posted_fold_loses_an_atomic_add"}
    t = r.outcomes["posted_fold_loses_an_atomic_add"].trace
    assert [s.action for s in t] == ["add_mm_counter", "switch_to_pcpu", "add_mm_counter", "add_batch_fast",
                                     "add_mm_counter", "add_batch_lock", "atomic64_add", "add_batch_store"]
    assert t[-2].changes["late_atomic"] == 1  # the add that tested counters == NULL lands after the switch
    assert r.states == 1822


def test_v2_with_an_atomic_fold_keeps_every_update():
    r = explore(PercpuAtomicModeRfc(ncpus=2, fold=FOLD.atomic))
    assert set(r.verdicts.values()) == {"holds"} and r.states == 1710
    assert r.outcomes["an_atomic_add_lands_after_the_switch"].verdict == "holds"


def test_counters_lock_irqsave_holds_and_plain_spin_lock_self_deadlocks():
    ok = explore(PercpuCountersList(ncpus=2))
    assert set(ok.verdicts.values()) == {"holds"}
    out = explore(CountersLockIrqUnsafe(ncpus=1)).outcomes["no_self_deadlock"]
    assert out.verdict == "violated" and [s.action for s in out.trace] == ["init_lock", "irq_spins_on_own_cpu"]
