# SPDX-License-Identifier: GPL-2.0-only
"""Context rules, as lockdep would: each a verdict (exit 1) with its shortest traces and both places named."""
import re

import pytest
from conftest import FIXTURES

F = str(FIXTURES / "contexts.py")


def _line(text):
    return next(i for i, line in enumerate((FIXTURES / "contexts.py").read_text().splitlines(), 1) if text in line)


def test_sleeping_with_interrupts_off_is_a_violation_naming_both_places(cli):
    r = cli("verify", f"{F}:SleepsWithIrqsOff")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    r.stderr = r.stdout
    assert "SleepsWithIrqsOff.alloc_gfp_kernel" in r.stderr and "may sleep but cpu0 has interrupts off" in r.stderr
    assert f"since SleepsWithIrqsOff.local_irq_save ({F}:{_line('def local_irq_save') - 1})" in r.stderr
    assert "sleeping function called from invalid context" in r.stderr


def test_inverted_lock_order_is_an_inversion_with_two_shortest_traces(cli):
    r = cli("verify", f"{F}:AbbaLocks")
    assert r.returncode == 1
    assert "inconsistent lock order" in r.stdout
    assert "b taken while holding a in AbbaLocks.take_second on cpu0" in r.stdout
    assert "a taken while holding b in AbbaLocks.take_second on cpu1" in r.stdout
    from checker import explore
    from contexts import AbbaLocks

    out = explore(AbbaLocks()).outcomes["lock_order"]
    assert out.verdict == "violated" and out.kind == "inversion"
    assert [(s.action, s.cpu) for s in out.trace] == [("take_first", 0), ("take_second", 0)]
    assert [(s.action, s.cpu) for s in out.second_trace] == [("take_first", 1), ("take_second", 1)]


def test_the_built_in_specs_follow_the_rules(cli):
    assert cli("verify", "percpu_grouped", "--set", "counters=2", "--mode", "explore").returncode == 0


def test_a_lock_taken_in_irq_context_and_with_irqs_on_is_an_inversion(cli):
    r = cli("verify", f"{F}:IrqUnsafeLock")
    assert r.returncode == 1
    assert "lock is taken in interrupt context by irq_handler_locks" in r.stdout
    assert "with interrupts on by spin_lock" in r.stdout and "spin_lock_irqsave" in r.stdout
    from checker import explore
    from contexts import IrqUnsafeLock

    r = explore(IrqUnsafeLock())
    out = r.outcomes["irq_safe_locks"]
    assert [s.action for s in out.trace] == ["irq_handler", "irq_handler_locks"]
    assert [s.action for s in out.second_trace] == ["spin_lock"]
    # and the state the second trace reaches is a deadlock: the handler would spin on the task's lock
    dead = r.outcomes["no_irq_deadlock"]
    assert dead.verdict == "violated" and [s.action for s in dead.trace] == ["spin_lock"]


def test_a_return_path_that_leaves_interrupts_off_is_a_violation_with_its_trace(cli):
    r = cli("verify", f"{F}:ForgetsIrqRestore")
    assert r.returncode == 1
    assert "forgets_irq_restore.context_restored violated after 3 steps (shortest)" in r.stdout
    assert re.search(r"^  #  cpu0 +source$", r.stdout, re.M)  # a lane per actor, then each step's source line
    assert re.search(r"^  1  local_irq_save +contexts\.py:\d+$", r.stdout, re.M)


def test_interrupt_handlers_run_only_with_interrupts_on(cli):
    r = cli("verify", f"{F}:IrqOnlyWhenEnabled")
    assert r.returncode == 0, r.stdout + r.stderr


def test_reading_an_uninitialised_index_is_reported_by_default():
    from checker import explore
    from contexts import DestroyFromUninitIndex

    r = explore(DestroyFromUninitIndex(uninit=0))
    out = r.outcomes["no_uninit_read"]
    assert out.verdict == "violated"
    # the read happens in the step that uses i, not in the steps before it whose guard is false
    assert [s.action for s in out.trace] == ["start", "destroy_one"]
    assert r.outcomes["no_deadlock"].verdict == "holds"


def test_an_uninitialised_index_taking_any_value_walks_out_of_the_array():
    from checker import explore
    from checker.kernel.memory import MEM_ERROR
    from contexts import DestroyFromUninitIndex

    r = explore(DestroyFromUninitIndex(uninit=1))
    out = r.outcomes["memory_safe"]
    assert out.verdict == "violated"
    assert out.trace[-1].changes["heap_error"] == MEM_ERROR.out_of_bounds
    assert "no_uninit_read" not in r.outcomes  # that mode does not report reads


def test_z3_leaves_an_uninitialised_value_unconstrained():
    from checker.prove import bmc_checks
    from checker.language.model import resolve_params
    from contexts import DestroyFromUninitIndex

    checks = {c.property: c for c in bmc_checks(DestroyFromUninitIndex, resolve_params(
        DestroyFromUninitIndex, {"uninit": 1}), 6)}
    assert checks["memory_safe"].verdict == "violated" and len(checks["memory_safe"].trace) == 2


def test_a_spinlock_t_with_interrupts_off_is_rejected_only_on_preempt_rt(cli):
    ok = cli("verify", f"{F}:SpinlockTUnderRawLock", "--set", "preempt_rt=0")
    assert ok.returncode == 0, ok.stderr
    rt = cli("verify", f"{F}:SpinlockTUnderRawLock", "--set", "preempt_rt=1")
    assert rt.returncode == 1
    assert "SpinlockTUnderRawLock.spin_lock_list" in rt.stdout and "has interrupts off" in rt.stdout
    assert "list_lock is a spinlock_t, which sleeps on PREEMPT_RT" in rt.stdout
    assert "since SpinlockTUnderRawLock.local_irq_save" in rt.stdout


def test_migration_only_where_preemption_is_enabled():
    from checker import explore
    from contexts import ThisCpuAddAcrossMigration as S

    safe = explore(S(preempt_off=1))
    assert safe.outcomes["no_lost_add"].verdict == "holds"
    assert safe.outcomes["the_task_migrates"].verdict == "holds"  # it does move, outside the section
    racy = explore(S(preempt_off=0))
    out = racy.outcomes["no_lost_add"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == ["this_cpu_read", "other_task_adds", "this_cpu_write"]
    # and a run where the task is moved between the read and the write loses an update too
    model_moves = [s for s in explore(S(preempt_off=0), symmetry=False).outcomes["the_task_migrates"].trace]
    assert model_moves and model_moves[-1].action == "migrate"


def test_a_bug_spec_can_expect_a_context_rule_violated(cli, tmp_path):
    spec = tmp_path / "abba_bug.py"
    spec.write_text(f"import sys\nsys.path.insert(0, {str(FIXTURES)!r})\nfrom contexts import AbbaLocks\n\n\n"
                    "class AbbaBug(AbbaLocks, expect_violated=('lock_order', 'no_deadlock', 'no_lock_deadlock')):\n"
                    "    \"\"\"ABBA, shipped as a bug.\"\"\"\n")
    r = cli("verify", f"{spec}:AbbaBug", "-v")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[expected violated; bug found]" in next(x for x in r.stdout.splitlines() if ".lock_order" in x)


def test_a_spec_malformed_as_a_spec_is_still_exit_2(cli):
    r = cli("verify", f"{F}:AbbaLocks", "--set", "n=3")
    assert r.returncode == 2 and "outside its domain" in r.stderr


def test_list_shows_the_context_rules_a_spec_has(cli):
    r = cli("list", f"{F}:AbbaLocks")
    assert "inversion  lock_order: every two spinlocks are taken in one order" in r.stdout
    r = cli("list", f"{F}:SleepsWithIrqsOff")
    assert "invariant  no_sleep_in_atomic:" in r.stdout and "lock_order" not in r.stdout


def test_tasks_waiting_in_a_cycle_are_a_deadlock_while_others_still_run():
    from checker import explore
    from contexts import AbbaWithBystander

    for jobs in (1, 2):
        r = explore(AbbaWithBystander(), jobs=jobs)
        out = r.outcomes["no_lock_deadlock"]
        assert out.verdict == "violated" and out.kind == "deadlock"
        assert [(s.action, s.cpu) for s in out.trace] == [("take_first", 0), ("take_first", 1)]
        assert out.finding == "a cycle of waiters: cpu0 waits for b, held by cpu1, cpu1 waits for a, held by cpu0"
        # the global deadlock comes only once the bystander has finished
        assert len(r.outcomes["no_deadlock"].trace) == 5
    from contexts import IrqOnlyWhenEnabled

    assert "no_lock_deadlock" not in explore(IrqOnlyWhenEnabled()).outcomes  # (no locks: no such check)


def test_the_compiled_engine_finds_a_spinning_interrupt_handler_as_the_interpreter_does():
    """no_irq_deadlock in C: the same verdict and shortest trace as the interpreter's (it was a false holds)."""
    from checker import explore
    from contexts import IrqUnsafeLock

    out = {e: explore(IrqUnsafeLock(), engine=e) for e in ("interpreted", "compiled")}
    assert out["compiled"].engine == "compiled", out["compiled"].engine_note
    dead = {e: r.outcomes["no_irq_deadlock"] for e, r in out.items()}
    assert {e: d.verdict for e, d in dead.items()} == {"interpreted": "violated", "compiled": "violated"}
    assert [(s.action, s.cpu) for s in dead["compiled"].trace] == [(s.action, s.cpu) for s in dead["interpreted"].trace]
    assert out["compiled"].states == out["interpreted"].states


def _moved_holder(runs_on: bool, moves: bool):
    """Each CPU runs a task of its own (the role is both, as percpu_eager's adders are); task 0 takes a spinlock
    with interrupts on (spin_lock), after the scheduler moved it to CPU 1 if ``moves``; CPU 0's interrupt
    handler takes the same lock."""
    from checker import And, Bool, If, Lock, PerCpu, Role, Spec, action, terminal, when, NOBODY

    class MovedHolder(Spec):
        """A test of whose code an interrupt handler interrupts."""
        kernel = "test: spin_lock() by a task, and an interrupt handler taking the lock"
        cpus = Role(2, cpu=(lambda s, c: If(s.away[c] == 1, 1, c)) if runs_on else None,
                    cpus="cpus" if runs_on else None)
        lock = Lock()
        away = PerCpu(0, type=Bool, role="cpus", doc="the task moved to CPU 1")
        pc = PerCpu(0, role="cpus")
        done = PerCpu(0, role="cpus")

        @action(role="cpus")
        def migrate(s, t):
            return when(And(t == 0, s.pc[t] == 0, s.away[t] == 0, moves), away={t: 1})

        @action(role="cpus")
        def spin_lock(s, t):
            return when(And(t == 0, s.pc[t] == 0, s.lock == NOBODY, s.away[t] == (1 if moves else 0)), lock=t,
                        pc={t: 1})

        @action(role="cpus")
        def spin_unlock(s, t):
            return when(s.pc[t] == 1, lock=NOBODY, pc={t: 2})

        @action(role="cpus", irq=True)
        def irq_handler_locks(s, c):
            return when(And(c == 0, s.done[c] == 0, s.lock == NOBODY), done={c: 1})

        finished = terminal(lambda s: And(s.pc[0] == 2, s.done[0] == 1))

    return MovedHolder


@pytest.mark.parametrize("engine", ["interpreted", "compiled"])
def test_an_interrupt_handler_interrupts_the_members_on_its_cpu_only(engine):
    """Role(cpu=): a handler on CPU 0 spins on a lock held by the task on CPU 0, not by task 0 once the
    scheduler moved it to CPU 1. Without cpu= the task's id is taken for its CPU: a false deadlock."""
    from checker import explore

    def verdict(runs_on, moves):
        return explore(_moved_holder(runs_on, moves)(), engine=engine).outcomes["no_irq_deadlock"].verdict

    assert verdict(True, False) == "violated"
    assert verdict(True, True) == "holds"
    assert verdict(False, True) == "violated"
