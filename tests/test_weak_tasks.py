# SPDX-License-Identifier: GPL-2.0-only
"""Tasks under the weak memory models: a store buffer and views belong to a CPU, not to a task.

A task's accesses use the buffer (tso) and views (lkmm) of the CPU it runs on
(``task_cpu``), so an interrupt handler on that CPU sees the task's stores and
the task sees the handler's, as on hardware. The scheduler's steps are full
barriers as in the kernel: __schedule() takes the rq lock and issues
smp_mb__after_spinlock() (kernel/sched/core.c), and a migration passes the task
from one runqueue's lock to the other's (move_queued_task(), or the old CPU
switching it out first), so its program order continues on the new CPU.
"""
from __future__ import annotations

import pytest

from checker import (And, Ghost, Implies, PerTask, Role, Shared, Spec, Task, action, invariant, smp_load_acquire, sometimes,
                     terminal, when, READ_ONCE, WRITE_ONCE)
from checker.explore import explore
from checker.ordering.declare import MEMORY

SC, TSO, LKMM = MEMORY.sc, MEMORY.tso, MEMORY.lkmm


class TaskAndIrq(Spec):
    """One CPU, one task: the task stores x; an interrupt on that CPU loads x and stores y; the task, once the
    handler ran, loads y. One CPU's accesses are in its program order to itself (an interrupt is that CPU's
    code): the handler sees the task's store, the task the handler's."""
    kernel = "test: WRITE_ONCE(x, 1) ... READ_ONCE(y) || irq on the same CPU: READ_ONCE(x); WRITE_ONCE(y, 1)"
    cpus = Role(1)
    tasks = Task(1, cpus="cpus")
    x = Shared(0)
    y = Shared(0)
    pc = PerTask(0, role="tasks")
    got_y = PerTask(-1, role="tasks")
    irq_ran = Ghost(0)
    irq_after = Ghost(0)  # the task had stored x when the handler ran
    seen_x = Ghost(-1)

    @action(role="tasks", access=WRITE_ONCE("x"))
    def store_x(s, t):
        return when(s.pc[t] == 0, x=1, pc={t: 1})

    @action(role="cpus", irq=True, access=(READ_ONCE("x"), WRITE_ONCE("y")))
    def irq(s, c):
        return when(s.irq_ran == 0, irq_ran=1, irq_after=s.pc[1], seen_x=s.x, y=1)

    @action(role="tasks", access=READ_ONCE("y"))
    def load_y(s, t):
        return when(And(s.pc[t] == 1, s.irq_ran == 1), got_y={t: s.y}, pc={t: 2})

    @terminal
    def done(s):
        return And(s.pc[1] == 2, s.irq_ran == 1)

    @invariant
    def irq_sees_the_tasks_store(s):
        return Implies(And(s.irq_ran == 1, s.irq_after == 1), s.seen_x == 1)

    @invariant
    def task_sees_the_irqs_store(s):
        return Implies(s.pc[1] == 2, s.got_y[1] == 1)

    @sometimes
    def irq_after_the_store(s):
        return And(s.irq_ran == 1, s.irq_after == 1)


class MigrateCarries(Spec):
    """One task (id 2: CPUs and tasks share one numbering) stores x, may be migrated to the other CPU, then
    stores y and loads x: it reads its own store (its program order continues on the new CPU). An interrupt on
    either CPU loads y (acquire) then x: having seen y it sees x, as the old CPU's buffer drained before the
    task left it (tso: x and y in two CPUs' buffers would otherwise reach memory in either order)."""
    kernel = "test: WRITE_ONCE(x, 1); <migrate>; WRITE_ONCE(y, 1); READ_ONCE(x) || irq: acquire y; READ_ONCE(x)"
    cpus = Role(2)
    tasks = Task(1, cpus="cpus")
    x = Shared(0)
    y = Shared(0)
    pc = PerTask(0, role="tasks")
    got_x = PerTask(-1, role="tasks")
    stored_on = PerTask(-1, role="tasks")
    moved = PerTask(False, role="tasks")
    obs_y = Ghost(-1)
    obs_x = Ghost(-1)

    @action(role="tasks", access=WRITE_ONCE("x"))
    def store_x(s, t):
        return when(s.pc[t] == 0, x=1, pc={t: 1}, stored_on={t: s.task_cpu[t]})

    @action(role="tasks", access=WRITE_ONCE("y"))
    def store_y(s, t):
        return when(s.pc[t] == 1, y=1, pc={t: 2}, moved={t: s.task_cpu[t] != s.stored_on[t]})

    @action(role="tasks", access=READ_ONCE("x"))
    def load_x(s, t):
        return when(s.pc[t] == 2, got_x={t: s.x}, pc={t: 3})

    @action(role="cpus", irq=True, access=(smp_load_acquire("y"), READ_ONCE("x")))
    def observe(s, c):
        return when(s.obs_y == -1, obs_y=s.y, obs_x=s.x)

    @terminal
    def done(s):
        return And(s.pc[2] == 3, s.obs_y != -1)

    @invariant
    def reads_its_own_store(s):
        return Implies(s.pc[2] == 3, s.got_x[2] == 1)

    @invariant
    def observer_sees_x_after_y(s):
        """The migration between the stores is the scheduler's smp_mb(): x before y, under lkmm too."""
        return Implies(And(s.obs_y == 1, s.moved[2]), s.obs_x == 1)

    @sometimes
    def unmoved_y_before_x(s):
        """Without the migration the two WRITE_ONCE()s are unordered under lkmm (message passing without
        smp_wmb()): seen; never on x86 (FIFO buffer) nor at sc."""
        return And(s.obs_y == 1, s.obs_x == 0)

    @sometimes
    def observed_after_the_move(s):
        return And(s.obs_y == 1, s.moved[2])


def test_a_task_and_an_interrupt_on_its_cpu_see_each_others_stores():
    """Before the buffers were the CPU's, the task's store sat in a buffer (tso) or view (lkmm) of its own and
    the handler on its CPU missed it: a false violation."""
    for mem in (SC, TSO, LKMM):
        r = explore(TaskAndIrq(memory=mem))
        assert r.complete, mem
        assert {k: v for k, v in r.verdicts.items() if k not in ("store_buffer_fills", "history_fills")} == \
            {"irq_sees_the_tasks_store": "holds", "task_sees_the_irqs_store": "holds",
                              "irq_after_the_store": "holds", "no_deadlock": "holds"}, (mem, r.verdicts)


def test_a_migration_carries_the_tasks_program_order():
    for mem in (SC, TSO, LKMM):
        r = explore(MigrateCarries(memory=mem, migrations=1))
        assert r.complete, mem
        mp = "holds" if mem == LKMM else "violated"
        assert {k: v for k, v in r.verdicts.items() if k not in ("store_buffer_fills", "history_fills")} == \
            {"reads_its_own_store": "holds", "observer_sees_x_after_y": "holds", "observed_after_the_move": "holds",
             "unmoved_y_before_x": mp, "no_deadlock": "holds"}, (mem, r.verdicts)


@pytest.mark.parametrize("cls,params", [(TaskAndIrq, {}), pytest.param(MigrateCarries, {"migrations": 1},
                                                                         marks=pytest.mark.differential)],
                         ids=["task-and-irq", "migrate"])
@pytest.mark.parametrize("mem", [TSO, LKMM], ids=["tso", "lkmm"])
def test_both_engines_agree_state_for_state(cls, params, mem):
    a = explore(cls(memory=mem, **params), engine="compiled")
    b = explore(cls(memory=mem, **params), engine="interpreted")
    assert a.engine == "compiled", a.engine_note
    assert (a.states, a.transitions, a.depth) == (b.states, b.transitions, b.depth)
    assert a.verdicts == b.verdicts
    assert {k: [(st.action, st.cpu, st.choices) for st in o.trace] for k, o in a.outcomes.items()} == \
        {k: [(st.action, st.cpu, st.choices) for st in o.trace] for k, o in b.outcomes.items()}
