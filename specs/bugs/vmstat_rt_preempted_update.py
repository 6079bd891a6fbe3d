# SPDX-License-Identifier: GPL-2.0-only
"""__mod_zone_page_state preempted on PREEMPT_RT: a lost update (fixed by aa3bdc05710e).

The __ functions of mm/vmstat.c are "for use when we know that interrupts
are disabled, or when we know that preemption is disabled and that
particular counter cannot be updated from interrupt context". Their callers
hold a lock taken with interrupts off (``spin_lock_irq(&lruvec->lru_lock)``
around ``update_lru_size`` -> ``__update_lru_size`` ->
``__mod_zone_page_state(NR_ZONE_LRU_BASE + lru)``; ``zone->lock`` around
``account_freepages``) or a ``local_lock_irq``. On PREEMPT_RT those are
sleeping locks that disable neither interrupts nor preemption, only
migration: the read-modify-write of the diff can be preempted, and another
task on that CPU can update the same item in between (two memcgs' lruvecs
have two locks but share a zone's NR_ZONE_* diffs). Its update is then
overwritten. Mainline commit aa3bdc05710e ("mm/vmstat: protect per cpu
variables with preempt disable on RT", title and id read in a mainline
shortlog; the RT tree had carried it as "mm/vmstat: Protect per cpu
variables with preempt disable on RT") added the ``preempt_disable_nested()``
now in every __ function, with the comment read in mm/vmstat.c @00c010e130e5:
"On PREEMPT_RT, local_lock_irq only disables CPU migrations and preemption
potentially corrupts a counter so disable preemption."

Modelled as ``ctx=migrate_off`` (no preempt_disable_nested) with the other
task's update run to completion between the two steps of this one; it is
the spec's interrupt-handler action, standing for that task (on RT,
interrupt handlers are threads too).

Shortest counterexample (3 steps, 1 CPU): the task's ``x = delta +
__this_cpu_read(*p)`` reads 0 for -1; the other task's -1 makes the diff -1;
the task's ``__this_cpu_write(*p, x)`` writes -1: one -1 is lost (vm_stat +
diff = -1, E = -2). With it go the snapshot at quiescence, the drift bound
(each lost update widens the gap) and the model's own bookkeeping
(``owed_is_held``).
"""
from checker import Param
from checker.specs.vmstat import CTX, VARIANT, Vmstat


class VmstatRtPreemptedUpdate(Vmstat, expect_violated=("no_update_lost", "snapshot_exact_at_quiescence",
                                                       "zone_drift_bound", "owed_is_held")):
    """The __ functions on PREEMPT_RT before aa3bdc05710e, with another task's update of the item."""

    kernel = Vmstat.kernel + "; the __ functions without preempt_disable_nested (PREEMPT_RT before aa3bdc05710e)"
    explore_sweeps = ({"ncpus": (1, 2)},)
    variant = Param(VARIANT.irqoff, domain=VARIANT, doc="irqoff: the __ functions")
    ctx = Param(CTX.migrate_off, domain=CTX, doc="migrate_off: a spinlock_t / local_lock_irq on PREEMPT_RT")
    ncpus = Param(1, domain=range(1, 8193), explore=(1, 2), doc="CPUs")
    ops = Param(2, domain=range(0, 1 << 16), doc="updates per CPU's task")
    irq = Param(1, domain=range(0, 9), doc="updates of the item by another task on each CPU")
    refreshes = Param(0, domain=range(0, 9), doc="refresh_cpu_vm_stats runs on each CPU")
