# SPDX-License-Identifier: GPL-2.0-only
"""Liveness: eventually / leads_to on the state graph, fairness, lassos, the built-in claims and bug."""
import json
from pathlib import Path

import pytest

from checker import Param, PerCpu, Role, Spec, action, eventually, leads_to, terminal, when
from checker.errors import SpecError, UsageError
from checker.specs.bugs.lazy_cmpxchg_stale_old import LazyCmpxchgStaleOld
from checker.specs.bugs.unlink_batch_no_final import UnlinkBatchNoFinal
from checker.specs.percpu_eager import PercpuEager, _variant
from pc_machines.percpu_eager import PercpuEager as PcMachine
from checker.specs.percpu_lazy import PercpuLazy
from checker.specs.percpu_lazy import SLOW_LOOP
from checker.specs.vma_unlink_batch import VmaUnlinkBatch
from checker.language.model import resolve_params
from checker.verify import explore_checks, verify
from fair_lock import FairLock


def live(cls, **params):
    """The liveness checks of one point, by property name."""
    checks = explore_checks(cls, resolve_params(cls, params))
    return {c.property: c for c in checks if c.kind in ("eventually", "leads_to")}


def test_weak_fairness_alone_starves_a_lock_waiter_and_strong_does_not():
    weak = live(FairLock, fair=1)["waiter_gets_the_lock"]
    strong = live(FairLock, fair=2)["waiter_gets_the_lock"]
    assert (weak.verdict, strong.verdict) == ("violated", "holds")
    assert weak.loop_start == 1
    assert [(s.cpu, s.action) for s in weak.trace] == [(0, "want"), (1, "want"), (1, "acquire_weak"), (1, "release")]
    assert weak.trace_text[1] == "-- loop: steps 2..4 repeat forever --"
    assert weak.trace_text[-1] == "-- back to the state after step 1"


def test_without_fairness_any_cycle_counts_and_a_step_goal_works():
    c = live(FairLock)
    assert c["cpu0_takes_the_lock_unfairly"].verdict == "violated"
    assert c["cpu0_takes_the_lock_unfairly"].loop_start == 0
    assert c["someone_takes_the_lock"].verdict == "holds"  # always eventually, a step predicate, unfair runs


class Stops(Spec):
    """One CPU that may stop at 1 or go on to 2: a run that stops short violates eventually."""

    kernel = "a test fixture"
    n = Param(1, domain=(1,))
    cpus = Role("n")
    x = PerCpu(0)

    @action(role="cpus", fair="weak", choose={"d": (1, 2)})
    def step(s, cpu, d):
        return when(s.x[cpu] == 0, x={cpu: d})

    @terminal
    def done(s):
        return s.x[0] != 0

    @eventually
    def reaches_two(s):
        """x reaches 2 (false: a run may stop at 1)."""
        return s.x[0] == 2


def test_a_run_that_stops_short_violates_eventually():
    c = live(Stops)["reaches_two"]
    assert (c.verdict, len(c.trace), c.loop_start) == ("violated", 1, 1)
    assert c.trace[0].choices == {"d": 1}
    assert c.trace_text[-1].startswith("-- the run stops here")


def test_every_started_fold_completes_with_the_queued_spinlock():
    for variant in ("B", "C"):
        c = live(PercpuEager, forever=1, ncpus=2, batch=2, variant=PercpuEager.variant.lookup(variant)[0])
        fold = c["every_started_fold_completes"]
        assert fold.verdict == "holds" and fold.symmetry is False
        lock = "percpu_counter_add_batch_b_L25_raw_spin_lock" if variant == "B" else \
            "percpu_counter_add_batch_L19_raw_spin_lock_irqsave"
        assert fold.extra["fairness"][lock] == "strong"


class TasLockEager(PcMachine, name="eager_tas_lock_test"):
    """fbc->lock as a test-and-set lock (alpha, parisc, sparc32): acquisition only weakly fair (on the pc machine,
    whose acquire is a step a subclass can replace)."""

    @action(role="adders", applies=_variant("B"), fair="weak")
    def acquire(s, t):
        return PcMachine.acquire(s, t)


def test_weak_fairness_on_fbc_lock_gives_a_starvation_lasso():
    c = live(TasLockEager, forever=1, ncpus=2, batch=2)["every_started_fold_completes"]
    assert (c.verdict, c.loop_start, len(c.trace)) == ("violated", 2, 8)
    assert [s.action for s in c.trace[:2]] == ["add_fast", "add_slow"]
    assert all(s.cpu == 1 for s in c.trace[2:])  # the loop: cpu1 takes the lock again and again


def test_lazy_cmpxchg_loops_are_lock_free_and_the_stale_old_bug_is_not():
    ok = live(PercpuLazy, forever=1, mod_bits=0, ncpus=2, readers=0)["cmpxchg_loops_are_lock_free"]
    assert (ok.verdict, ok.states, ok.extra["fairness"]) == ("holds", 1635, "none")
    bug = live(LazyCmpxchgStaleOld, forever=1, mod_bits=0, ncpus=2, readers=0)["cmpxchg_loops_are_lock_free"]
    assert (bug.verdict, bug.expected, bug.loop_start, len(bug.trace)) == ("violated", "violated", 5, 6)
    # the loop: task 3's slow-path cmpxchg fails on the stale old, stores nothing and goes back to the loop head
    assert (bug.trace[-1].cpu, bug.trace[-1].changes, bug.states) == (3, {}, 1731)
    assert bug.trace[-1].action.startswith("lazy_percpu_counter_add_") and bug.trace[-1].action.endswith(
        f"_atomic_L{SLOW_LOOP}")


def test_a_queued_vma_batch_is_flushed_and_no_final_is_caught():
    ok = live(VmaUnlinkBatch, forever=1, layout=3, size=2)["a_queued_batch_is_flushed"]
    assert (ok.verdict, ok.states) == ("holds", 808)
    bug = live(UnlinkBatchNoFinal, forever=1, layout=0)["a_queued_batch_is_flushed"]
    assert (bug.verdict, bug.bug) == ("violated", True)
    assert bug.loop_start is not None and bug.loop_start < len(bug.trace)


def test_abstraction_refuses_points_that_read_dropped_values():
    with pytest.raises(UsageError, match="readers=0 and summers=0"):
        live(PercpuEager, forever=1, ncpus=2, batch=2, readers=1)


def test_liveness_in_json_report_is_schema_valid_and_prove_skips_it():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the test extra: pip install '.[test]'")
    schema = json.loads((Path(__file__).parent.parent / "checker" / "report" / "schema.json").read_text())
    report = verify([FairLock], sets={"fair": (1,)}, mode="all")
    data = report.to_json()
    jsonschema.validate(data, schema)
    kinds = {(c["kind"], c["backend"]) for c in data["checks"]}
    assert ("leads_to", "explore") in kinds and not any(k in ("eventually", "leads_to") for k, b in kinds if b == "z3")
    lasso = next(c for c in data["checks"] if c["property"] == "waiter_gets_the_lock")
    assert (lasso["verdict"], lasso["loop_start"], len(lasso["trace"])) == ("violated", 1, 4)


def test_leads_to_must_return_a_pair():
    class NotAPair(FairLock):
        @leads_to
        def broken(s):
            return s.pc[0] == 1

    with pytest.raises(SpecError, match=r"returns the pair \(P, Q\)"):
        live(NotAPair)
