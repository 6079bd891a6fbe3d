# SPDX-License-Identifier: GPL-2.0-only
"""Process functions run by tasks on the task model (specs/percpu_eager_tasks.py) against the hand-written pc
machine it replaced (tests/pc_machines/percpu_eager_tasks.py, variants A and C).

The claim: at the same point, the same distinct states, transitions, depth, verdicts and shortest trace lengths,
on both explorers. Where tasks share a CPU the port has fewer states: it resets ``amount`` once the fold has
used it (it is dead there), while the hand-written spec keeps ``pending`` until ``zero``; against the
hand-written spec with ``pending`` reset at the fold (``DeadPendingReset``) the two are equal again.
"""
from __future__ import annotations

import importlib.util
import textwrap

import pytest

from checker import If, Select, action, when
from checker.errors import SpecError
from checker.explore import explore
from checker.language.compile import Model
from checker.specs.percpu_eager_tasks import VARIANT as PORT_VARIANT
from checker.specs.percpu_eager_tasks import PercpuEagerTasks
from pc_machines.percpu_eager_tasks import ADD, VARIANT
from pc_machines.percpu_eager_tasks import PercpuEagerTasks as PcMachine


class DeadPendingReset(PcMachine):
    """The hand-written spec with ``pending`` reset where the port's ``amount`` dies (at the fold)."""

    @action(role="tasks", fair="weak")
    def fold(s, t):
        """fbc->count += count (+ amount), ``pending`` dead after it."""
        c = If(s.variant == VARIANT.A, s.seen[t], Select(s.local, s.task_cpu[t]))
        return when(s.pc[t] == ADD.fold, count=s.count + c + s.pending[t], exact=s.exact + s.pending[t],
                    seen={t: c}, pc={t: ADD.zero}, pending={t: 0})


def compare(params: dict, engine: str = "interpreted", hand: type = PcMachine, variant: str = "C"):
    h = explore(Model(hand, hand(variant=getattr(VARIANT, variant), **params).params), engine=engine)
    port = PercpuEagerTasks(variant=getattr(PORT_VARIANT, variant), **params)
    p = explore(Model(PercpuEagerTasks, port.params), engine=engine)
    assert h.complete and p.complete and p.engine == h.engine == engine
    assert {n: (o.verdict, len(o.trace or ())) for n, o in h.outcomes.items()} == \
        {n: (o.verdict, len(o.trace or ())) for n, o in p.outcomes.items()}
    return h, p


# the first points of percpu_eager_tasks's variant-C sweeps: one task per CPU (with and without migration)
@pytest.mark.parametrize("params", [dict(ncpus=1), dict(ncpus=2, migrations=1)],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_port_on_tasks_equals_the_pc_machine(params):
    h, p = compare(params)
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)
    if params.get("migrations"):
        assert p.outcomes["a_task_migrates"].verdict == "holds"


# variant A's first points, and without its preempt_disable (the scheduler then gets between read and update)
@pytest.mark.parametrize("params", [dict(ncpus=2, migrations=1), dict(ncpus=1, ntasks=2, preemptions=1),
                                    dict(ncpus=1, ntasks=2, preemptions=1, preempt_disable=0)],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_port_of_variant_a_on_tasks_equals_the_pc_machine(params):
    h, p = compare(params, variant="A")
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)
    if not params.get("preempt_disable", 1):
        assert p.outcomes["read_bound"].verdict == "violated"
        assert p.outcomes["an_add_is_preempted"].verdict == "holds"


def test_port_on_shared_cpu_differs_only_by_the_dead_register():
    params = dict(ncpus=1, ntasks=2, preemptions=1)
    h, p = compare(params)
    assert p.states < h.states
    h2, p = compare(params, hand=DeadPendingReset)
    assert (p.states, p.transitions, p.depth) == (h2.states, h2.transitions, h2.depth)
    # the scheduler preempts the port's task between its read and its cmpxchg (at(..., "loop"))
    assert p.outcomes["an_add_is_preempted"].verdict == "holds"


@pytest.mark.differential
def test_port_on_tasks_on_the_compiled_explorer():
    h, p = compare(dict(ncpus=1, ntasks=2, preemptions=1), engine="compiled", hand=DeadPendingReset)
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)


@pytest.mark.differential
def test_port_on_tasks_with_interrupts():
    h, p = compare(dict(ncpus=1, ntasks=2, irq=1, preemptions=1), hand=DeadPendingReset)
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)


def _load(tmp_path, body: str, name: str = "spec_tasks_ctx"):
    src = tmp_path / f"{name}.py"
    src.write_text(textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_context_primitive_without_the_task_variable_is_refused(tmp_path):
    with pytest.raises(SpecError) as e:
        _load(tmp_path, '''
            from checker import Param, PerTask, Role, Spec, Task
            from checker.language.process import process

            class T(Spec):
                """t."""
                ncpus = Param(1, domain=range(1, 3))
                cpus = Role("ncpus")
                tasks = Task("ncpus", cpus="cpus")
                x = PerTask(0, role="tasks")

                @process(role="tasks")
                def f(k, s, t):
                    """f."""
                    k.preempt_disable()
                    s.x[t] = 1
                    k.preempt_enable()
            ''')
    msg = str(e.value)
    assert "k.preempt_disable()" in msg and "PREEMPT_COUNT" in msg and "spec_tasks_ctx.py" in msg


def test_preempt_and_migrate_disable_keep_the_task_in_place(tmp_path):
    """preempt_disable() keeps the task on its CPU's run (and on the CPU), migrate_disable() keeps it on the CPU
    only: between their two steps the scheduler may switch the task out or move it only where they allow."""
    mod = _load(tmp_path, '''
        from checker import MIGRATE_DISABLED, PREEMPT_COUNT, AllOf, And, AnyOf, Param, PerCpu, PerTask, Role, Spec
        from checker import If, Select, Task, sometimes, terminal
        from checker.language.process import process

        class Pin(Spec):
            """Two steps on this CPU's slot, inside preempt_disable (guard=1), migrate_disable (2) or neither."""
            kernel = "a test of the task model's context rules"
            ncpus = Param(1, domain=range(1, 3))
            ntasks = Param(2, domain=range(1, 4))
            guard = Param(0, domain=(0, 1, 2), doc="0: none, 1: preempt_disable, 2: migrate_disable")
            preemptions = Param(1, domain=range(-1, 3))
            migrations = Param(0, domain=range(-1, 3))
            cpus = Role("ncpus")
            tasks = Task("ntasks", cpus="cpus")
            slot = PerCpu(0, role="cpus")
            pcount = PerTask(0, type=PREEMPT_COUNT, role="tasks")
            pinned_now = PerTask(0, type=MIGRATE_DISABLED, role="tasks")

            @process(role="tasks", applies=lambda p: p.guard == 0)
            def plain(k, s, t):
                """neither."""
                k.this_cpu_inc(s.slot)
                k.this_cpu_dec(s.slot)

            @process(role="tasks", applies=lambda p: p.guard == 1)
            def nopreempt(k, s, t):
                """preempt_disable."""
                with k.atomic():
                    k.preempt_disable()
                    k.this_cpu_inc(s.slot)
                with k.atomic():
                    k.this_cpu_dec(s.slot)
                    k.preempt_enable()

            @process(role="tasks", applies=lambda p: p.guard == 2)
            def nomigrate(k, s, t):
                """migrate_disable."""
                with k.atomic():
                    k.migrate_disable()
                    k.this_cpu_inc(s.slot)
                with k.atomic():
                    k.this_cpu_dec(s.slot)
                    k.migrate_enable()

            @terminal
            def finished(s):
                """Every task returned."""
                return AllOf([s.tasks_pc[t] == 1 for t in s.tasks])

            @sometimes
            def switched_out_mid_way(s):
                """A task is switched out between its two steps."""
                return AnyOf([And(s.tasks_pc[t] > 1, Select(s.curr, s.task_cpu[t]) != t) for t in s.tasks])

            @sometimes
            def moved_mid_way(s):
                """A CPU's slot is left off zero: a task moved between its inc and its dec."""
                return AnyOf([And(s.slot[c] != 0, AllOf([s.tasks_pc[t] == 1 for t in s.tasks])) for c in s.cpus])
        ''', "spec_tasks_pin")
    Pin = mod.Pin
    switched = {g: explore(Model(Pin, Pin(guard=g).params)).outcomes["switched_out_mid_way"].verdict
                for g in (0, 1, 2)}
    moved = {g: explore(Model(Pin, Pin(guard=g, ncpus=2, ntasks=1, preemptions=0, migrations=1).params))
             .outcomes["moved_mid_way"].verdict for g in (0, 1, 2)}
    assert switched[0] == "holds" and switched[1] != "holds" and switched[2] == "holds", switched
    assert moved[0] == "holds" and moved[1] != "holds" and moved[2] != "holds", moved


def test_a_spec_with_tasks_is_annotated():
    """A task's accesses use its CPU's store buffer and views (tests/test_weak_tasks.py), so a process spec
    with tasks gets access= and the memory parameter, as one without tasks does."""
    from checker.language.model import info
    i = info(PercpuEagerTasks)
    assert "memory" in i.params
    assert any(a.access for a in i.actions.values() if not a.builtin)


HANDLER = '''
    from checker import Bool, Ghost, Param, PerCpu, Role, Select, Shared, Spec, Task, And, Or, invariant, sometimes
    from checker import terminal
    from checker.language.process import process

    def _no_handler_inside(s, t):
        """The task's CPU has no handler inside its code: the task waits while one is."""
        return Select(s.cpus_pc, s.task_cpu[t]) == 0

    class H(Spec):
        """A task and its CPU's interrupt handler each increment x with a load and a store (two steps)."""
        kernel = "a test of the lowering"
        ncpus = Param(1, domain=range(1, 2))
        ntasks = Param(1, domain=range(1, 2))
        cpus = Role("ncpus")
        tasks = Task("ntasks", cpus="cpus")
        x = Shared(0)
        left = PerCpu(1, role="cpus", doc="the handler's calls")
        stepped_inside = Ghost(0, type=Bool, doc="the task stepped while its CPU's handler was inside")
        nested = Ghost(0, type=Bool, doc="the handler's load came between the task's load and store")

        @process(role="tasks", runs=_no_handler_inside)
        def inc(k, s, t):
            """x = READ_ONCE(x) + 1, in two steps."""
            a = k.READ_ONCE(s.x)
            s.stepped_inside = 1 if Select(s.cpus_pc, s.task_cpu[t]) != 0 else s.stepped_inside
            k.WRITE_ONCE(s.x, a + 1)

        @process(role="cpus", irq=True, calls="left")
        def handler(k, s, cpu):
            """The interrupt's x = READ_ONCE(x) + 1, in two steps."""
            b = k.READ_ONCE(s.x)
            s.nested = 1 if s.tasks_pc[s.tasks[0]] > 1 else s.nested
            k.WRITE_ONCE(s.x, b + 1)

        @terminal
        def finished(s):
            """The task returned and the handler ran."""
            t, c = s.tasks[0], s.cpus[0]
            return And(s.tasks_pc[t] == 1, s.left[c] == 0, s.cpus_pc[c] == 0)

        @invariant
        def the_task_waits_for_its_handler(s):
            """No step of the task lands inside its CPU's handler."""
            return s.stepped_inside == 0

        @invariant
        def no_increment_lost(s):
            """False on purpose: the handler between the task's load and store loses the task's increment."""
            t, c = s.tasks[0], s.cpus[0]
            return Or(s.tasks_pc[t] != 1, s.cpus_pc[c] != 0, s.left[c] != 0, s.x == 2)

        @sometimes
        def the_handler_lands_inside_the_task(s):
            """The handler's load between the task's load and store."""
            return s.nested == 1
'''


def test_a_handler_with_steps_runs_over_its_task_which_waits(tmp_path):
    """An interrupt handler of several steps, on a role of handlers only: its own pc and registers; it lands
    between two steps of the task (losing the task's increment), and the task (runs=) takes no step inside it."""
    H = _load(tmp_path, HANDLER, "spec_handler_steps").H
    r = explore(Model(H, H().params))
    v = {n: o.verdict for n, o in r.outcomes.items()}
    assert v["the_task_waits_for_its_handler"] == "holds" and v["the_handler_lands_inside_the_task"] == "holds"
    assert v["no_increment_lost"] == "violated" and len(r.outcomes["no_increment_lost"].trace) == 4
    assert {"cpus_pc", "cpus_b", "tasks_pc", "tasks_a"} <= set(Model(H, H().params).index)


def test_a_handler_with_steps_on_a_role_running_task_code_is_refused(tmp_path):
    bad = HANDLER.replace('runs=_no_handler_inside)', 'runs=_no_handler_inside)\n        def other(k, s, c):\n'
                          '            """other."""\n            k.WRITE_ONCE(s.x, 0)\n\n'
                          '        @process(role="cpus")')
    with pytest.raises(SpecError, match="needs a program counter of its own"):
        _load(tmp_path, bad, "spec_handler_mixed")
