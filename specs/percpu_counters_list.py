# SPDX-License-Identifier: GPL-2.0-only
"""The percpu_counters list under percpu_counters_lock, from task and interrupt context (CONFIG_HOTPLUG_CPU).

lib/percpu_counter.c keeps every counter on ``percpu_counters`` for the
hotplug fold. From v3.14 to v3.17 ``__percpu_counter_init`` and
``percpu_counter_destroy`` take ``spin_lock(&percpu_counters_lock)``, with
interrupts on (read in a v3.13/v3.14-era lib/percpu_counter.c in the index),
and no caller initialises a counter from interrupt context: there was no
``gfp`` argument, ``alloc_percpu()`` may sleep. Tejun Heo's v3.18 series
(2014) added ``@gfp`` to ``percpu_counter_init()`` ("percpu_counter: add
@gfp to percpu_counter_init()", 908c7f1949cb, an id not verified) so counters can be
initialised from atomic context, and in the same merge window made the lock
irq-safe ("percpu_counter: make percpu_counters_lock irq-safe", 1a4d76076cda,
not verified either: the two titles, in that order, are in Tejun Heo's part of
a linux-mm shortlog of the 3.18 merge window in the index, the ids are not):
``spin_lock_irqsave``, and the
hotplug callback ``spin_lock_irq``. So no released kernel deadlocks: the
combination that does is v3.14-v3.17's locking with a v3.18+ caller that
initialises or destroys a counter from a hard interrupt (a backport of such
a caller to a 3.17 tree, say). The 2025 tree read has the irq-safe locking
(``__percpu_counter_init_many``, ``percpu_counter_destroy_many``,
``percpu_counter_cpu_dead``). ``irqsafe=0`` is the v3.14 locking with an
interrupt-context user: a task holding the lock is interrupted on its CPU
by a handler that initialises (GFP_ATOMIC) and destroys a counter of its
own, and the handler spins on a lock its own CPU holds: a deadlock
(``bugs/counters_lock_irq_unsafe.py``).

The lock is written out as a variable holding its owner rather than as a
``Lock()``: the checker's lock rules reject, as lockdep does, a lock taken in
an interrupt and elsewhere with interrupts on, and here that is the bug
whose deadlock is to be shown as a trace.
"""
from checker import (IRQS_OFF, NOBODY, And, Bool, CpuId, Enum, Ghost, If, Or, Param, PerCpu, Role, Shared, Spec,
                     Sum, action, invariant, sometimes, terminal, when)

#: Where a CPU's task is: its counter's init (list_add) and destroy (list_del).
TASK = Enum("idle", "add_locked", "live", "del_locked", "done", name="task_pc")


class PercpuCountersList(Spec):
    """percpu_counters_lock around list_add / list_del in __percpu_counter_init and percpu_counter_destroy,
    taken from a task and from an interrupt handler on each CPU."""

    kernel = ("lib/percpu_counter.c: __percpu_counter_init, percpu_counter_destroy (v3.14: spin_lock; v3.18+ and "
              "__percpu_counter_init_many / percpu_counter_destroy_many today: spin_lock_irqsave)")
    assumptions = (
        "one counter per task and one per interrupt handler; the list is modelled by its length",
        "the handler's init and destroy (GFP_ATOMIC, in hard-irq context) run to completion once it has the "
        "lock: one step; if the lock is held on another CPU it waits, if its own CPU holds it, it spins for ever",
        "spinlock_t as a raw spinlock (!PREEMPT_RT): spin_lock leaves interrupts as they are",
    )

    irqsafe = Param(1, domain=(0, 1), doc="1: spin_lock_irqsave (v3.18+); 0: spin_lock (v3.14)")
    ncpus = Param(2, domain=range(1, 4), explore=(1, 2), doc="CPUs, each with a task and an interrupt handler")

    cpus = Role("ncpus", symmetric=True, doc="CPUs: a task initialising and destroying a counter, an interrupt")

    owner = Shared(NOBODY, type=CpuId, doc="percpu_counters_lock: the CPU whose task holds it")
    listed = Shared(0, doc="counters on percpu_counters")
    irqs = PerCpu(0, type=IRQS_OFF, role="cpus")
    pc = PerCpu(TASK.idle, type=TASK, role="cpus")
    handled = PerCpu(0, type=Bool, role="cpus", doc="this CPU's interrupt has run its init and destroy")
    spinning = Ghost(0, type=Bool, doc="an interrupt handler spins on the lock its own CPU's task holds")
    nested = Ghost(0, type=Bool, doc="an interrupt handler used the lock while a task on another CPU held it")

    # -- the task: percpu_counter_init() then percpu_counter_destroy() --------------------------------------
    @action(role="cpus")
    def init_lock(s, cpu):
        """__percpu_counter_init(): spin_lock_irqsave(&percpu_counters_lock, flags) (v3.14: spin_lock)."""
        return when(And(s.pc[cpu] == TASK.idle, s.owner == NOBODY), owner=cpu, irqs={cpu: s.irqsafe},
                    pc={cpu: TASK.add_locked})

    @action(role="cpus")
    def init_unlock(s, cpu):
        """list_add(&fbc->list, &percpu_counters); spin_unlock_irqrestore() (v3.14: spin_unlock)."""
        return when(s.pc[cpu] == TASK.add_locked, owner=NOBODY, irqs={cpu: 0}, listed=s.listed + 1,
                    pc={cpu: TASK.live})

    @action(role="cpus")
    def destroy_lock(s, cpu):
        """percpu_counter_destroy(): spin_lock_irqsave(&percpu_counters_lock, flags) (v3.14: spin_lock)."""
        return when(And(s.pc[cpu] == TASK.live, s.owner == NOBODY), owner=cpu, irqs={cpu: s.irqsafe},
                    pc={cpu: TASK.del_locked})

    @action(role="cpus")
    def destroy_unlock(s, cpu):
        """list_del(&fbc->list); spin_unlock_irqrestore(); free_percpu(fbc->counters)."""
        return when(s.pc[cpu] == TASK.del_locked, owner=NOBODY, irqs={cpu: 0}, listed=s.listed - 1,
                    pc={cpu: TASK.done})

    # -- the interrupt handler ---------------------------------------------------------------------------------
    @action(role="cpus", irq=True)
    def irq_init_destroy(s, cpu):
        """A hard-irq user: percpu_counter_init(&c, 0, GFP_ATOMIC) then percpu_counter_destroy(&c), each
        taking percpu_counters_lock: one step once the lock is free (list_add, list_del)."""
        return when(And(s.handled[cpu] == 0, s.owner == NOBODY), handled={cpu: 1},
                    nested=If(Or(*[And(s.pc[c] != TASK.idle, s.pc[c] != TASK.done) for c in s.cpus]), 1,
                              s.nested))

    @action(role="cpus", irq=True)
    def irq_spins_on_own_cpu(s, cpu):
        """The handler's spin_lock finds the lock held by the task it interrupted: it spins, and that task
        cannot run again to release it."""
        return when(And(s.handled[cpu] == 0, s.owner == cpu), handled={cpu: 1}, spinning=1)

    @terminal
    def finished(s):
        return And(*[And(s.pc[c] == TASK.done, s.handled[c] == 1) for c in s.cpus])

    # -- properties ---------------------------------------------------------------------------------------------
    @invariant
    def no_self_deadlock(s):
        """No interrupt handler spins on percpu_counters_lock held by its own CPU (lockdep's
        {SOFTIRQ,HARDIRQ}-ON-W -> IN-HARDIRQ-W inversion)."""
        return s.spinning == 0

    @invariant
    def list_balanced(s):
        """Every counter on the list is a live task's counter (the handler's are added and removed in one
        step)."""
        return s.listed == Sum(If(s.pc[c] == TASK.live, 1, 0) + If(s.pc[c] == TASK.del_locked, 1, 0)
                               for c in s.cpus)

    @sometimes(applies=lambda p: p.ncpus >= 2)
    def an_interrupt_registers_while_another_cpu_works(s):
        """A handler's init and destroy run while a task elsewhere is between its init and destroy."""
        return s.nested == 1

    @sometimes
    def every_counter_registers_and_leaves(s):
        """Every task's and handler's counter went on the list and off it."""
        return And(*[And(s.pc[c] == TASK.done, s.handled[c] == 1) for c in s.cpus], s.listed == 0)
