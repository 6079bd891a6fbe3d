# SPDX-License-Identifier: GPL-2.0-only
"""stack_cache (seed 003, kernel/fork.c 5.18-2024), its 2018-19 structure, and their bug specs.

Pinned: state counts, the shortest counterexamples of the known bugs
(K-STACK-STALE, K-STACK-MEMCG before each of its two fixes) and of the
realistic mutants, and that the equivalent mutant reaches exactly the
states of the real code and is not reported.
"""
import re

import pytest

from checker import explore
from checker.kernel.memory import MEM_ERROR
from checker.specs.bugs.stack_charge_before_zeroing import StackChargeBeforeZeroing
from checker.specs.bugs.stack_cmpxchg_stale_old import StackCmpxchgStaleOld
from checker.specs.bugs.stack_memcg_charge_fail import StackMemcgChargeFail
from checker.specs.bugs.stack_release_read_write import StackReleaseReadWrite
from checker.specs.bugs.stack_stale import StackStale
from checker.specs.bugs.stack_stranded_dead_cpu import StackStrandedDeadCpu
from checker.specs.bugs.stack_teardown_keeps_pointer import StackTeardownKeepsPointer
from checker.specs.stack_cache import StackCache
from checker.specs.stack_cache_2019 import StackCache2019

#: The steps of task_stack by the control point they leave, named as the hand-written pc machine's actions
#: (tests/pc_machines/stack_cache.py): the traces below read as they did.
LEAVING = {"idle": "this_cpu_xchg", "alloc": "this_cpu_xchg", "reuse": "clear_reused_stack",
           "might_sleep": "vmalloc_stack", "charge": "memcg_charge_kernel_stack", "zero": "zero_after_charge",
           "free": "this_cpu_cmpxchg", "write": "this_cpu_write_slot", "delayed": "thread_stack_delayed_free",
           "clear": "free_thread_stack_clear"}


def named(e, spec) -> list[str]:
    """The actions of a trace of ``spec``: a step of task_stack by the point it leaves (``live``: the child's exit,
    or the fork failing; ``dead``: finish_task_switch's first cmpxchg, or a holder taking the release)."""
    reg = spec.__countercheck_processes__["task_stack"]
    points = {p.label: p.prim for p in reg["points"].values()}
    out = []
    for st in e:
        if not st.action.startswith("task_stack_"):
            out.append(getattr(getattr(spec, st.action), "__countercheck_step__", (st.action,))[0])
            continue
        start = re.search(r"from (\S+) to", getattr(spec, st.action).__doc__).group(1)
        where = points.get(start, start)
        if where == "live":
            out.append("fork_fails_after_stack" if st.choices.get("__choice_fails") else "exit_task_stack_account")
        elif where == "dead":
            out.append("put_task_stack_holder" if st.choices.get("__choice_holder") else "this_cpu_cmpxchg")
        else:
            out.append(LEAVING[where])
    return out


def goes_to(spec, st) -> str:
    """The control point of task_stack a step goes to (by its label)."""
    points = {p.label: p.prim for p in spec.__countercheck_processes__["task_stack"]["points"].values()}
    dest = re.search(r" to (\S+?)[,.]", getattr(spec, st.action).__doc__).group(1)
    return points.get(dest, dest)


#: (nr_cached, hotplug, ntasks) -> distinct states under symmetry (2 CPUs, one migration, failures on; the
#: 3-task point without migration or failures). CPUs and tasks are both symmetric, so a state stands for up
#: to 4. Issue 18 (the 5.18+ release paths: preemptible holders, get_wchan, hard-irq sched_show_task, the
#: fork failure unwind; no softirq release from delayed_put_task_struct) took them from 269, 1504, 263,
#: 1430 and (with migration and failures) 7014; the hand-written pc machine had 1595, 8817, 1313, 7429 and 6110
#: (4593 and 3692 without symmetry): the process-function port resets the dead loop index it kept
#: (tests/test_process_stack.py).
STATES = {(1, 0, 2): 1391, (1, 1, 2): 7256, (2, 0, 2): 1146, (2, 1, 2): 5948, (2, 0, 3): 4117}
FULL = {(1, 0, 2): 4067, (2, 0, 2): 3260}


def _point(nr, hotplug, ntasks):
    small = dict(migrations=0, failures=0) if ntasks == 3 else {}
    return StackCache(nr_cached=nr, hotplug=hotplug, ntasks=ntasks, **small)


@pytest.mark.parametrize("nr, hotplug, ntasks", sorted(STATES))
def test_every_property_holds_with_pinned_state_counts(nr, hotplug, ntasks):
    e = explore(_point(nr, hotplug, ntasks), engine="compiled")  # the interpreter's count: tests/test_compiled.py
    assert e.engine == "compiled", e.engine_note
    assert e.complete
    assert set(e.verdicts.values()) == {"holds"}, {k: v for k, v in e.verdicts.items() if v != "holds"}
    assert e.states == STATES[nr, hotplug, ntasks]


@pytest.mark.parametrize("nr, hotplug, ntasks", sorted(FULL))
def test_symmetry_changes_the_count_not_the_state_space(nr, hotplug, ntasks):
    full = explore(StackCache(nr_cached=nr, hotplug=hotplug, ntasks=ntasks), symmetry=False)
    assert full.states == FULL[nr, hotplug, ntasks] and set(full.verdicts.values()) == {"holds"}


def test_the_rcu_path_at_the_kernels_two_slots_needs_a_third_task():
    two = explore(StackCache(nr_cached=2, ntasks=2))
    assert "an_rcu_callback_caches_its_stack" not in two.verdicts  # does not apply: the slots never fill
    three = explore(_point(2, 0, 3), engine="compiled")
    assert three.engine == "compiled", three.engine_note
    assert three.verdicts["an_rcu_callback_caches_its_stack"] == "holds"
    assert three.verdicts["an_rcu_callback_frees_its_stack"] == "holds"
    # release with both slots full: through thread_stack_delayed_free to the callback
    t = three.outcomes["an_rcu_callback_frees_its_stack"].trace
    assert named(t, StackCache)[-1] == "thread_stack_free_rcu"


def test_hard_irq_release_inside_a_task_context_release_is_explored():
    e = explore(StackCache(nr_cached=1))
    t = e.outcomes["an_interrupt_frees_inside_a_task_free"].trace
    assert named(t, StackCache)[-2:] == ["this_cpu_cmpxchg", "put_task_stack_hardirq"]
    assert "free_thread_stack_softirq" not in StackCache.__dict__  # no release from delayed_put_task_struct


def test_fork_failure_unwinds_charge_and_stack_and_a_preemptible_release_migrates():
    e = explore(StackCache(nr_cached=2))
    assert set(e.verdicts.values()) == {"holds"}
    t = e.outcomes["a_failed_fork_uncharges_and_releases_its_stack"].trace
    assert named(t, StackCache)[-3:] == ["fork_fails_after_stack", "this_cpu_cmpxchg", "free_thread_stack_clear"]
    assert t[-3].changes["charged[0]"] == 0  # exit_task_stack_account's uncharge comes first
    m = e.outcomes["a_preemptible_release_migrates"].trace
    assert named(m, StackCache)[-2:] == ["fork_fails_after_stack", "migrate"]


def test_a_dead_cpus_cache_is_freed_and_nothing_leaks():
    e = explore(StackCache(nr_cached=1, hotplug=1))
    t = e.outcomes["a_dead_cpus_cache_is_freed"].trace
    assert named(t, StackCache)[-2:] == ["cpu_down", "free_vm_stack_cache"]
    assert e.verdicts["dead_cpu_cache_empty"] == "holds" and e.verdicts["stack_in_one_place"] == "holds"


# -- K-STACK-STALE ------------------------------------------------------------------------------------------

def test_stale_stack_reaches_a_new_task_in_eight_steps():
    e = explore(StackStale(nr_cached=1))
    t = e.outcomes["reused_stack_zeroed"].trace
    assert list(zip(named(t, StackStale), [s.cpu for s in t])) == [
        ("this_cpu_xchg", 2), ("vmalloc_stack", 2), ("memcg_charge_kernel_stack", 2),
        ("exit_task_stack_account", 2), ("put_task_stack_irqs_off", 0),
        ("this_cpu_xchg", 3), ("clear_reused_stack", 3), ("memcg_charge_kernel_stack", 3)]
    # get_wchan's put is a step of the CPU it runs on (CPU 0), releasing task 2's stack
    assert t[4].choices == {"t": 2}
    assert {k for k, v in e.verdicts.items() if v == "violated"} == {"reused_stack_zeroed"}


# -- K-STACK-MEMCG ------------------------------------------------------------------------------------------

def test_memcg_charge_failure_before_the_first_fix_frees_garbage():
    e = explore(StackMemcgChargeFail(fixes=0))
    t = e.outcomes["memory_safe"].trace
    assert len(t) == 9
    steps = named(t, StackMemcgChargeFail)
    assert [s.choices.get("__choice_ok") for s, n in zip(t, steps) if n == "memcg_charge_kernel_stack"] == [False, False]
    assert steps[-1] == "thread_stack_delayed_free"  # vfree_atomic(tsk->stack)
    assert t[-1].changes["heap_error"] == MEM_ERROR.invalid_free
    assert len(e.outcomes["failed_charge_frees_its_stack"].trace) == 10  # and the fresh stack is leaked


def test_memcg_charge_failure_between_the_fixes_needs_a_cached_stack():
    e = explore(StackMemcgChargeFail(fixes=1))
    t = e.outcomes["memory_safe"].trace
    assert len(t) == 13
    steps = named(t, StackMemcgChargeFail)
    failing = next(s.cpu for s, n in zip(t, steps) if n == "clear_reused_stack")  # took its stack from the cache
    assert t[-1].cpu == failing and steps[-1] == "thread_stack_delayed_free"
    assert t[-1].changes["heap_error"] == MEM_ERROR.invalid_free


@pytest.mark.parametrize("params", [dict(), dict(nr_cached=2),
                                    dict(ncpus=1, ntasks=3, nr_cached=1, migrations=0)])
def test_the_2019_structure_with_both_fixes_passes(params):
    e = explore(StackCache2019(fixes=2, **params))
    assert set(e.verdicts.values()) == {"holds"}


# -- realistic mutants ---------------------------------------------------------------------------------------

def test_teardown_that_keeps_the_pointer_hands_a_freed_stack_out_after_cpu_up():
    e = explore(StackTeardownKeepsPointer())
    assert len(e.outcomes["freed_never_handed_out"].trace) == 7
    t = e.outcomes["memory_safe"].trace
    assert named(t, StackTeardownKeepsPointer)[-5:] == ["free_vm_stack_cache", "cpu_up", "migrate", "this_cpu_xchg",
                                                         "clear_reused_stack"]
    assert t[-1].changes["heap_error"] == MEM_ERROR.use_after_free


def test_release_by_read_and_write_loses_a_stack_to_an_irqs_off_put():
    e = explore(StackReleaseReadWrite(nr_cached=1))
    t = e.outcomes["stack_in_one_place"].trace
    assert len(t) == 11
    # every step is a path 5.18+ has: a failed fork's preemptible release, get_wchan's put in between
    assert named(t, StackReleaseReadWrite)[-5:] == ["fork_fails_after_stack", "exit_task_stack_account",
                                                    "this_cpu_cmpxchg", "put_task_stack_irqs_off", "this_cpu_write_slot"]


#: (the hotplug points, 7-9k states on the interpreter twice, in the differential tier: the mutant's early charge
#: does not meet the hotplug teardown)
@pytest.mark.parametrize("nr, hotplug", [(1, 0), pytest.param(1, 1, marks=pytest.mark.differential), (2, 0),
                                         pytest.param(2, 1, marks=pytest.mark.differential)])
def test_equivalent_mutant_is_not_reported_and_reaches_as_many_states(nr, hotplug):
    base = explore(StackCache(nr_cached=nr, hotplug=hotplug))
    mutant = explore(StackChargeBeforeZeroing(nr_cached=nr, hotplug=hotplug))
    assert set(mutant.verdicts.values()) == {"holds"}
    assert mutant.states == base.states == STATES[nr, hotplug, 2]


# -- issue 18, point 10: bugs from the history of this code ---------------------------------------------------

def test_stale_try_cmpxchg_old_skips_an_empty_slot_in_thirteen_steps():
    e = explore(StackCmpxchgStaleOld(nr_cached=2))
    t = e.outcomes["an_empty_slot_takes_the_stack"].trace
    assert len(t) == 13 and named(t, StackCmpxchgStaleOld)[-3:] == ["this_cpu_cmpxchg"] * 3
    assert t[-2].changes["tasks_try_release_thread_stack_to_cache_tmp[3]"] == 1 and goes_to(StackCmpxchgStaleOld, t[-1]) == "delayed"  # past slot 1
    assert {k for k, v in e.verdicts.items() if v == "violated"} == {"an_empty_slot_takes_the_stack"}


def test_without_the_2017_teardown_a_dead_cpu_keeps_its_cached_stacks():
    """Caught by the promise (a dead CPU's cached stacks are freed), not only by the fix's mechanism (NULL slots)."""
    e = explore(StackStrandedDeadCpu(nr_cached=1))
    for prop in ("dead_cpus_cached_stacks_are_freed", "dead_cpu_cache_empty"):
        t = e.outcomes[prop].trace
        assert len(t) == 7 and named(t, StackStrandedDeadCpu)[-2:] == ["cpu_down", "free_vm_stack_cache"]
    assert {k for k, v in e.verdicts.items() if v == "violated"} == {"dead_cpus_cached_stacks_are_freed",
                                                                     "dead_cpu_cache_empty"}
