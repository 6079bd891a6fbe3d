# SPDX-License-Identifier: GPL-2.0-only
"""percpu_eager_tasks: add_batch A and C on the task model, against percpu_eager's one task per CPU.

On the hand-written pc machines (tests/pc_machines/), whose steps have names these traces follow; the built-in
ports equal them state for state (tests/test_process_port.py, tests/test_process_tasks.py)."""
import pytest

from checker import explore
from checker.specs.percpu_eager import VARIANT as EV
from checker.specs.percpu_eager_tasks import VARIANT as TV
from pc_machines.percpu_eager import PercpuEager
from pc_machines.percpu_eager_tasks import PercpuEagerTasks


@pytest.mark.parametrize("variant", ["A", "C"])
@pytest.mark.parametrize("ncpus,irq", [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0)])
def test_without_preemption_or_migration_the_state_counts_are_percpu_eagers(variant, ncpus, irq):
    for sym in (False, True):
        tasks = explore(PercpuEagerTasks(variant=getattr(TV, variant), ncpus=ncpus, batch=2, irq=irq), symmetry=sym)
        eager = explore(PercpuEager(variant=getattr(EV, variant), ncpus=ncpus, batch=2, irq=irq, readers=0,
                                    summers=0), symmetry=sym)
        assert tasks.states == eager.states
        assert all(o.verdict == eager.outcomes[n].verdict for n, o in tasks.outcomes.items() if n in eager.outcomes)


def test_variant_c_keeps_its_bounds_when_tasks_migrate_and_are_preempted():
    r = explore(PercpuEagerTasks(variant=TV.C, ncpus=2, batch=2, migrations=1, preemptions=1))
    assert r.states == 973
    assert {n: o.verdict for n, o in r.outcomes.items() if o.kind != "sometimes"} == dict.fromkeys(
        ["read_bound", "local_bound", "conservation", "context_restored", "no_overflow", "no_deadlock"], "holds")
    assert r.outcomes["read_bound"].bounded == "<= 1 preemption, <= 1 migration"
    assert r.outcomes["a_task_migrates"].verdict == "holds"
    # the hand-rolled model of percpu_eager (a moved task runs beside its new CPU's own one) agrees
    hand = explore(PercpuEager(variant=EV.C, ncpus=2, batch=2, migrations=1, readers=0, summers=0))
    assert (hand.states, hand.outcomes["read_bound"].verdict) == (1007, "holds")


def test_variant_a_without_preempt_disable_overfills_a_local_by_migration():
    r = explore(PercpuEagerTasks(variant=TV.A, ncpus=2, batch=2, migrations=1, preemptions=1, preempt_disable=0))
    out = r.outcomes["local_bound"]
    assert out.verdict == "violated"
    assert [(s.action, s.cpu) for s in out.trace] == [("preempt_read", 2), ("preempt_read", 3), ("this_cpu_add", 2),
                                                     ("migrate", 3), ("schedule", 0), ("this_cpu_add", 3)]
    safe = explore(PercpuEagerTasks(variant=TV.A, ncpus=2, batch=2, migrations=1, preemptions=1))
    assert safe.outcomes["local_bound"].verdict == "holds"


def test_variant_a_without_preempt_disable_overfills_a_local_by_preemption():
    r = explore(PercpuEagerTasks(variant=TV.A, ncpus=1, ntasks=2, batch=2, preemptions=1, preempt_disable=0))
    assert r.outcomes["local_bound"].verdict == "violated"
    assert "schedule" in [s.action for s in r.outcomes["local_bound"].trace]
    assert explore(PercpuEagerTasks(variant=TV.A, ncpus=1, ntasks=2, batch=2,
                                    preemptions=1)).outcomes["local_bound"].verdict == "holds"


def test_variant_a_is_never_preempted_inside_its_preempt_disable_and_c_is():
    from checker.language.compile import Model

    for variant, inside in ((TV.A, False), (TV.C, True)):
        m = Model(PercpuEagerTasks(variant=variant, ncpus=1, ntasks=2, batch=2, preemptions=2))
        pc, curr = m.index["pc"], m.index["curr"]
        seen, todo, preempted_inside = set(m.initial_states()), list(m.initial_states()), False
        while todo:
            s = todo.pop()
            for label, t in m.successors(s):
                name, who, _ = m.label_parts(label)
                if name == "schedule" and s[curr][who] >= 0 and s[pc][s[curr][who]] == 1:  # ADD.read
                    preempted_inside = True
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        assert preempted_inside == inside
