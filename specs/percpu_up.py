# SPDX-License-Identifier: GPL-2.0-only
"""The eager counter without CONFIG_SMP: include/linux/percpu_counter.h.

On a uniprocessor build ``struct percpu_counter`` is one ``s64 count``; the
add is a read-modify-write of it inside ``local_irq_save()`` since Manfred
Spraul's 88ad32a799dd ("include/linux/percpu_counter.h: race in
uniprocessor percpu_counter_add()"), under ``preempt_disable()`` before
(``bugs/up_add_race.py``). ``percpu_counter_read`` and ``percpu_counter_sum``
both return ``count``: on UP the counter is exact.

32-bit (``bits=32``, ``CONFIG_64BIT=n``, most UP configurations): ``count``
is a plain ``s64``, so each load and store of it is two 32-bit accesses
(``checker.kernel.tearing``). The add's halves are inside
``local_irq_save()`` and nothing else runs on the one CPU, so the add stays
exact (``read_is_exact`` holds at 32 bits). ``percpu_counter_read()`` is
``return fbc->count;`` with interrupts on: an interrupt handler's add
between its two loads gives a value ``count`` never held when the add
carries across bit 32 (0 - 1 = 0xffffffff_ffffffff). With ``reads=1``
that is ``read_within_interrupt_adds`` violated at 32 bits in 4 steps
(the read's low half, the interrupt's ``-1`` in two halves, the read's
high half: -2^32),
a finding about 32-bit UP kernels kept as the bug spec
``bugs/up_read_torn_32bit.py``; at 64 bits it holds.
"""
from checker import (IRQS_OFF, PREEMPT_COUNT, S64, AllOf, And, Enum, Implies, Ghost, Param, PerCpu, Role, Shared, Spec,
                     action, invariant, sometimes, terminal, when)
from checker.kernel.config import CONFIG, UP, Api, Bits

#: Where the task is inside percpu_counter_add().
ADD = Enum("idle", "loaded", "saved", name="up_add_pc")


class PercpuUp(Spec):
    """percpu_counter_add() on !CONFIG_SMP with an interrupt handler adding on the one CPU."""

    kernel = ("include/linux/percpu_counter.h, the !CONFIG_SMP percpu_counter_add, percpu_counter_read and "
              "percpu_counter_sum as of 88ad32a799dd (local_irq_save around count += amount)")
    assumptions = (
        "count += amount compiles to a load and a store of fbc->count (an interrupt can run between them "
        "unless interrupts are off); the interrupt handler's own add runs to completion",
        "a read is judged against E at its last access; interrupt handlers do not nest",
    )

    config = Param(UP, domain=(UP,), names=CONFIG, doc="the configuration: !CONFIG_SMP")
    ops = Param(2, domain=range(0, 17), explore=(1, 2), doc="percpu_counter_add calls by the task")
    irq = Param(1, domain=range(0, 9), explore=(0, 1, 2), doc="adds made by the interrupt handler")
    bits = Bits(64, explore=(64, 32), doc="CONFIG_64BIT: 64, or 32 (a plain s64 access is two 32-bit halves)")
    reads = Param(0, domain=range(0, 3), explore=(0,),
                  doc="percpu_counter_read() calls by the task, with interrupts on (1 in the default sweep at 64 "
                      "bits; at 32 it is the torn read of bugs/up_read_torn_32bit.py)")

    # The adds at both word sizes; the read at 64 bits (at 32 it tears: the bug spec).
    explore_sweeps = ({}, {"bits": 64, "reads": 1, "ops": 1, "irq": (1, 2)})

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
    reads_left = PerCpu(lambda p: p.reads, role="cpu", doc="percpu_counter_read calls still to make")
    read_val = Ghost(0, doc="what the last percpu_counter_read returned")
    read_at = Ghost(0, doc="E when that read returned")

    api = Api("config", {"percpu_counter_add": (UP,), "percpu_counter_read": (UP,)})

    @action(role="cpu", applies=lambda p: p.bits == 32,
            uses={"percpu_counter_add": "include/linux/percpu_counter.h percpu_counter_add"})
    def irq_save(s, cpu):
        """percpu_counter_add(): local_irq_save(flags); (a step of its own at 32 bits, where the load after it
        is two: at 64 bits it is merged into the load, as nothing can run between them on UP)"""
        return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0), pc={cpu: ADD.saved}, irqs={cpu: 1})

    @action(role="cpu", choose={"amount": (-1, 1)},
            uses={"percpu_counter_add": "include/linux/percpu_counter.h percpu_counter_add"})
    def add_load(s, cpu, amount):
        """percpu_counter_add(): local_irq_save(flags) (at 32 bits: after irq_save); load fbc->count for
        count += amount."""
        start = ADD.idle if s.bits == 64 else ADD.saved
        return when(And(s.pc[cpu] == start, s.ops_left[cpu] > 0), pc={cpu: ADD.loaded},
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

    @action(role="cpu", applies=lambda p: p.reads > 0,
            uses={"percpu_counter_read": "include/linux/percpu_counter.h percpu_counter_read"})
    def read(s, cpu):
        """percpu_counter_read(): return fbc->count; (a plain load, interrupts on: two halves on 32-bit)"""
        return when(And(s.pc[cpu] == ADD.idle, s.reads_left[cpu] > 0), reads_left={cpu: s.reads_left[cpu] - 1},
                    read_val=s.count, read_at=s.exact)

    @terminal
    def task_done(s):
        return AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0, s.reads_left[c] == 0) for c in s.cpu])

    @invariant(applies=lambda p: p.bits == 64)
    def read_is_exact(s):
        """UP semantics: percpu_counter_read and percpu_counter_sum return count, and count is E: no add
        is lost (PC-CONS with no locals). (At 32 bits memory holds half-stored words in between, which
        nobody reads: every_add_kept and read_within_interrupt_adds state it through what is read.)"""
        return s.count == s.exact

    @invariant
    def every_add_kept(s):
        """Once the task and the interrupt handler have made all their adds, count is E: no add is lost."""
        done = AllOf([And(s.pc[c] == ADD.idle, s.ops_left[c] == 0, s.irq_left[c] == 0) for c in s.cpu])
        return Implies(done, s.count == s.exact)

    @invariant(applies=lambda p: p.reads > 0)
    def read_within_interrupt_adds(s):
        """percpu_counter_read returns a value count held: within the interrupt's adds (each +-1) of E at
        its return, the only updates that can come between its accesses."""
        return abs(s.read_val - s.read_at) <= s.irq

    @sometimes(applies=lambda p: p.reads > 0 and p.irq > 0)
    def a_read_returns_after_an_interrupt_add(s):
        """A read returns after the interrupt added (it read a non-zero count)."""
        return And(AllOf([s.reads_left[c] == 0 for c in s.cpu]), s.read_at != 0)

    @sometimes(applies=lambda p: p.irq > 0 and p.ops > 0)
    def an_interrupt_adds(s):
        """The interrupt handler's add has run (and so can race with the task's)."""
        return AllOf([s.irq_left[c] < s.irq for c in s.cpu])
