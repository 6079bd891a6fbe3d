# SPDX-License-Identifier: GPL-2.0-only
"""K-UP-ADD-RACE: the uniprocessor percpu_counter_add() under preempt_disable().

Before Manfred Spraul's 88ad32a799dd ("include/linux/percpu_counter.h: race
in uniprocessor percpu_counter_add()", Message-Id
20221216150441.200533-2-manfred@colorfullife.com) the !CONFIG_SMP add was
``preempt_disable(); fbc->count += amount; preempt_enable();``. Preemption
off does not keep interrupts out: an interrupt adding between the load and
the store of ``count += amount`` is overwritten. Shortest counterexample
(3 steps): load, the interrupt's add, the store. ``percpu_up`` (interrupts
off) holds.
"""
from checker import And, action, when
from checker.specs.percpu_up import ADD, PercpuUp


class UpAddRace(PercpuUp, expect_violated=("read_is_exact", "every_add_kept")):
    """The UP percpu_counter_add with preempt_disable() instead of local_irq_save()."""

    kernel = "include/linux/percpu_counter.h !CONFIG_SMP percpu_counter_add before 88ad32a799dd"
    # at 64 bits (its add_load replaces the one that follows irq_save at 32; the race is the same there)
    explore_sweeps = ({"ops": (1, 2), "irq": (1, 2), "bits": 64},)

    @action(role="cpu", choose={"amount": (-1, 1)},
            uses={"percpu_counter_add": "include/linux/percpu_counter.h percpu_counter_add"})
    def add_load(s, cpu, amount):
        """percpu_counter_add(): (the bug) preempt_disable(); load fbc->count for count += amount."""
        return when(And(s.pc[cpu] == ADD.idle, s.ops_left[cpu] > 0), pc={cpu: ADD.loaded},
                    loaded={cpu: s.count}, pending={cpu: amount}, ops_left={cpu: s.ops_left[cpu] - 1},
                    preempt={cpu: 1})
