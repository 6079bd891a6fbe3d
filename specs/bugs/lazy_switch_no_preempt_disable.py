# SPDX-License-Identifier: GPL-2.0-only
"""lazy_percpu_counter_switch_to_pcpu() without its preempt_disable(): a retry after a migration counts twice.

The switch copies the atomic value into *this* CPU's slot of its new storage and publishes the storage
with a cmpxchg; when an add changes the word in between, the loop copies again::

    preempt_disable();                        /* left out here */
    v = atomic64_read(&c->v);
    do {
            ...
            *this_cpu_ptr(pcpu_v) = lazy_percpu_counter_atomic_val(v);
    } while ((v = atomic64_cmpxchg(&c->v, old, new)) != old);
    preempt_enable();                         /* left out here */

percpu_lazy's reference (section 4.3) says why the preempt_disable() is there: "without it, a retry after
migration would write a second CPU's slot while the first CPU's slot still holds the earlier copy (double
counting)". The pc-machine ``percpu_lazy`` cannot say it (its CPUs are its adders: nothing migrates); its
process-function port runs the adds in tasks the scheduler moves, so leaving the pair out is one parameter
(``preempt_off=0``): with one migration and one preemption, a task's publish fails, the task moves, and its
second copy lands in the new CPU's slot beside the first (``no_update_lost`` violated). With the pair the
scheduler may not move a task inside the switch (its preempt_count() is 1), and the same bounds hold
(``percpu_lazy``'s third sweep).

Under ``--memory tso`` and ``lkmm`` the first copy is what the kernel makes it, a plain store
(``*this_cpu_ptr(pcpu_v) = ...``) of the first CPU's slot, program-ordered before the migration and the
publishing cmpxchg; the model places it in the step of that cmpxchg, before it, from the CPU the task moved
to (a full barrier lies between the two on the kernel's path, and nobody reads the storage before it is
published). The bug is found under both: 17 steps under tso as under sc, 14 under lkmm, where the switch's
``atomic64_read`` may return the word before another task's add, so its first cmpxchg fails without a
third add (tests/test_process_lazy.py).
"""
from checker import Param
from checker.specs.percpu_lazy import PercpuLazy


class LazySwitchNoPreemptDisable(PercpuLazy, expect_violated=("no_update_lost",)):
    """L-K's switch_to_pcpu() without preempt_disable()/preempt_enable(), on tasks the scheduler migrates."""

    kernel = ("koverstreet/bcachefs lib/lazy-percpu-counter.c (79ded5acf1ac) = ZhangPeng RFC 1/3, with the "
              "preempt_disable()/preempt_enable() of lazy_percpu_counter_switch_to_pcpu left out")
    lemmas = None  # (the word lemmas are percpu_lazy's; this bug is not in the word)
    explore_sweeps = ({},)
    preempt_off = Param(0, domain=(0,), doc="switch_to_pcpu without its preempt_disable()")
    ncpus = Param(2, domain=(2,), explore=(2,), doc="CPUs")
    mod_bits = Param(0, domain=(0,), explore=(0,), doc="COUNTER_MOD_BITS: 0, every add runs the wrap check")
    ops = Param(2, domain=range(0, 4), doc="lazy_percpu_counter_add calls per task")
    neg = Param(0, domain=(0,), doc="amounts +1")
    readers = Param(0, domain=(0, 1), doc="a CPU doing one lazy_percpu_counter_read")
    preemptions = Param(1, domain=range(-1, 3), doc="preemptions in a run")
    migrations = Param(1, domain=range(0, 2), doc="migrations in a run (the stale copy is exact up to 1)")
