# SPDX-License-Identifier: GPL-2.0-only
"""``__mmdrop`` destroys the rss counters from ``&mm->rss_stat[i]`` with ``int i;`` never assigned.

ZhangPeng's RFC 3/3 (seed 001, kernel/fork.c)::

    void __mmdrop(struct mm_struct *mm)
    {
            int i;
            ...
            lazy_percpu_counter_destroy_many(&mm->rss_stat[i], NR_MM_COUNTERS);
            free_mm(mm);
    }

``i`` holds whatever the stack held (K-LAZY-IDX). With ``uninit=0`` the
checker reports the read itself, as KMSAN would; with ``uninit=1`` ``i``
takes any value (the explorer tries 0, 1, 3, -1 and 4; the Z3 backend leaves
it unconstrained and names the value it found). Unless ``i`` is 0 by luck:
``destroy_many`` reads entries outside ``rss_stat`` (``memory_safe``:
out of bounds), and counters ``0 .. i-1`` that went per-CPU are never
destroyed, so their per-CPU storage leaks (``no_leak``) and their embedded
``percpu_counter`` stays on the hotplug list after ``free_mm``
(``listed_only_while_alive``), where the next ``percpu_counter_cpu_dead``
walks freed memory (``fold_never_walks_freed_memory``; ``memory_safe``
records only the first misuse, the out-of-bounds read).
"""
from checker import Param, Uninit, action, sometimes
from checker.specs.lazy_mmdrop import STEP, LazyMmdrop, destroy_read


class LazyMmdropUninitIndex(LazyMmdrop, expect_violated=("memory_safe", "no_leak", "listed_only_while_alive",
                                                          "fold_never_walks_freed_memory")):
    """__mmdrop() as posted: lazy_percpu_counter_destroy_many(&mm->rss_stat[i], NR_MM_COUNTERS), i any value."""

    kernel = ("ZhangPeng RFC 3/3 (seed 001) kernel/fork.c __mmdrop as posted, with RFC 2/3 "
              "lazy_percpu_counter_destroy_many and v6.6 percpu_counter_destroy / percpu_counter_cpu_dead")

    uninit = Param(1, domain=(0, 1), explore=(1,), doc="1: i holds any value (0: report the read, as KMSAN)")
    i = Uninit((0, 1, 3, -1, 4), doc="int i; in __mmdrop, never assigned")

    # Z3 too, with i unconstrained: all runs are covered at depth 13 (see LazyMmdrop.bmc).
    bmc = (13, {"uninit": (1,), "counters": (2,)})

    @action(role="task")
    def lazy_percpu_counter_destroy_many(s, cpu):
        """lazy_percpu_counter_destroy_many(&mm->rss_stat[i], NR_MM_COUNTERS): reads rss_stat[i + j].v."""
        return destroy_read(s, s.i)


class LazyMmdropReadsUninitIndex(LazyMmdropUninitIndex, expect_violated=("no_uninit_read",)):
    """The same __mmdrop, reporting the read of the uninitialised i (as KMSAN would) where it happens."""

    uninit = Param(0, domain=(0, 1), explore=(0,), doc="0: report the read of i (KMSAN)")
    bmc = None  # (the Z3 backend leaves i unconstrained; reporting the read is the explorer's)

    @sometimes(applies=lambda p: p.uninit == 1)
    def a_switched_counter_is_destroyed(s):
        """(Not applicable with uninit=0: the run stops at the read of i, before any destroy.)"""
        return s.step == STEP.destroy
