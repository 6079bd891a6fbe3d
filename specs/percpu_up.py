"""The eager counter without CONFIG_SMP: include/linux/percpu_counter.h.

On a uniprocessor build ``struct percpu_counter`` is one ``s64 count``; the
add is a read-modify-write of it inside ``local_irq_save()`` since Manfred
Spraul's 88ad32a799dd ("include/linux/percpu_counter.h: race in
uniprocessor percpu_counter_add()"), under ``preempt_disable()`` before
(``bugs/up_add_race.py``). ``percpu_counter_read`` and ``percpu_counter_sum``
both return ``count``: on UP the counter is exact.
"""
from checker import (IRQS_OFF, PREEMPT_COUNT, S64, AllOf, And, Enum, Ghost, Param, PerCpu, Role, Shared, Spec,
                     action, invariant, sometimes, terminal, when)
from checker.kernel.config import CONFIG, UP, Api

#: Where the task is inside percpu_counter_add().
ADD = Enum("idle", "loaded", name="up_add_pc")


class PercpuUp(Spec):
    """percpu_counter_add() on !CONFIG_SMP with an interrupt handler adding on the one CPU."""

    kernel = ("include/linux/percpu_counter.h, the !CONFIG_SMP percpu_counter_add, percpu_counter_read and "
              "percpu_counter_sum as of 88ad32a799dd (local_irq_save around count += amount)")
    assumptions = (
        "count += amount compiles to a load and a store of fbc->count (an interrupt can run between them "
        "unless interrupts are off); the interrupt handler's own add runs to completion",
    )

    config = Param(UP, domain=(UP,), names=CONFIG, doc="the configuration: !CONFIG_SMP")
    ops = Param(2, domain=range(0, 17), explore=(1, 2), doc="percpu_counter_add calls by the task")
    irq = Param(1, domain=range(0, 9), explore=(0, 1, 2), doc="adds made by the interrupt handler")

    cpu = Role(1, doc="the one CPU: a task and its interrupt handler")

    count = Shared(0, type=S64, doc="fbc->count, the whole counter")
    pc = PerCpu(ADD.idle, type=ADD, role="cpu")
    loaded = PerCpu(0, role="cpu", doc="the value the task's count += amount loaded")
    pending = PerCpu(0, role="cpu", doc="the amount of the task's add")
    ops_left = PerCpu(lambda p: p.ops, role="cpu")
    irqs = PerCpu(0, type=IRQS_OFF, role="cpu", doc="interrupts off")
    preempt = PerCpu(0, type=PREEMPT_COUNT, role="cpu", doc="the task's preempt_count")
    irq_left = PerCpu(lambda p: p.irq, role="cpu")
    exact = Ghost(0, doc="E: every add past its store")

    api = Api("config", {"percpu_counter_add": (UP,), "percpu_counter_read": (UP,)})

    @action(role="cpu", choose={"amount": (-1, 1)},
            uses={"percpu_counter_add": "include/linux/percpu_counter.h percpu_counter_add"})
    def add_load(s, cpu, amount):
        """percpu_counter_add(): local_irq_save(flags); load fbc->count for count += amount."""
        return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0), pc={cpu: ADD.loaded},
                    loaded={cpu: s.count}, pending={cpu: amount}, ops_left={cpu: s.ops_left[cpu] - 1},
                    irqs={cpu: 1})

    @action(role="cpu")
    def add_store(s, cpu):
        """percpu_counter_add(): store the sum to fbc->count; local_irq_restore(flags)."""
        return when(s.pc[cpu] == ADD.loaded, count=s.loaded[cpu] + s.pending[cpu], exact=s.exact + s.pending[cpu],
                    pc={cpu: ADD.idle}, loaded={cpu: 0}, pending={cpu: 0}, irqs={cpu: 0}, preempt={cpu: 0})

    @action(role="cpu", choose={"amount": (-1, 1)}, irq=True,
            uses={"percpu_counter_add": "include/linux/percpu_counter.h percpu_counter_add"})
    def irq_add(s, cpu, amount):
        """Interrupt: percpu_counter_add(fbc, amount), run to completion on the CPU."""
        return when(s.irq_left[cpu] > 0, count=s.count + amount, exact=s.exact + amount,
                    irq_left={cpu: s.irq_left[cpu] - 1})

    @terminal
    def task_done(s):
        return AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0) for c in s.cpu])

    @invariant
    def read_is_exact(s):
        """UP semantics: percpu_counter_read and percpu_counter_sum return count, and count is E: no add
        is lost (PC-CONS with no locals)."""
        return s.count == s.exact

    @sometimes(applies=lambda p: p.irq > 0 and p.ops > 0)
    def an_interrupt_adds(s):
        """The interrupt handler's add has run (and so can race with the task's)."""
        return AllOf([s.irq_left[c] < s.irq for c in s.cpu])
